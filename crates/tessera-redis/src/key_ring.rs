//! [`RedisKeyRing`]: the `requestState` key ring (2026-07-28 multi
//! round-trip requests) shared by every instance through Redis, with
//! rotation.
//!
//! The ring is a sorted set `{prefix}mrtr:ring` of random 256-bit keys (hex)
//! scored by the Unix millisecond from which each one seals. Every instance
//! runs one Lua script on start and then every refresh interval; the script
//! is atomic, so however many instances run it, the ring evolves once:
//!
//! - an empty ring gets a key that seals at once;
//! - when the newest key has sealed for almost a rotation period, a new key
//!   is added that seals only `lead` from now (three refresh intervals), so
//!   every instance has learned it before anyone seals with it: a state
//!   sealed anywhere opens everywhere;
//! - a key is dropped once its successor has sealed for longer than the
//!   state lifetime plus that lead, so every state it sealed has expired;
//! - the set's own TTL is a period plus the retention: a ring nobody
//!   refreshes vanishes.
//!
//! Between refreshes an instance seals and opens with its local copy (one
//! read lock and an `Arc` clone: no round trip on the request path).
//! Instance clocks should agree within the lead time.

use std::sync::{Arc, RwLock, Weak};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use redis::Script;
use tessera_server::mrtr::StateKeySource;

use crate::connection::{Conn, Redis};
use crate::error::Error;

/// The rotation script. KEYS: the ring. ARGV: now, period, lead, retain,
/// a candidate key (hex), the ring's TTL (ms). Returns the ring as
/// `{key, from, key, from, …}`, oldest first.
const ROTATE: &str = r"
local now = tonumber(ARGV[1])
local period = tonumber(ARGV[2])
local lead = tonumber(ARGV[3])
local retain = tonumber(ARGV[4])
local newest = redis.call('ZREVRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if #newest == 0 then
  redis.call('ZADD', KEYS[1], now, ARGV[5])
elseif tonumber(newest[2]) + period <= now + lead then
  redis.call('ZADD', KEYS[1], math.max(tonumber(newest[2]) + period, now + lead), ARGV[5])
end
local all = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
for i = 1, #all / 2 - 1 do
  if tonumber(all[2 * i + 2]) + retain <= now then
    redis.call('ZREM', KEYS[1], all[2 * i - 1])
  end
end
redis.call('PEXPIRE', KEYS[1], ARGV[6])
return redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
";

/// The `requestState` key ring kept in Redis: a [`StateKeySource`] for
/// [`ServerBuilder::request_state_key_source`](tessera_server::ServerBuilder::request_state_key_source).
///
/// The ring of a [`Redis`] handle ([`Redis::key_ring`]) refreshes itself
/// in the background; [`RedisKeyRing::detached`] makes one that changes only
/// when [`refresh_at`](RedisKeyRing::refresh_at) is called (for tests and
/// for programs that drive the clock themselves).
pub struct RedisKeyRing {
    conn: Conn,
    key: String,
    timing: Timing,
    script: Script,
    local: RwLock<Arc<[[u8; 32]]>>,
}

/// The periods of a ring, in milliseconds.
#[derive(Debug, Clone, Copy)]
struct Timing {
    period: u64,
    refresh: u64,
    lead: u64,
    retain: u64,
}

impl Timing {
    fn new(state_ttl: Duration, period: Duration) -> Timing {
        let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        let period = ms(period).max(1_000);
        let refresh = (period / 4).clamp(250, 10_000);
        let lead = 3 * refresh;
        Timing {
            period,
            refresh,
            lead,
            retain: ms(state_ttl).saturating_add(lead + refresh),
        }
    }
}

impl std::fmt::Debug for RedisKeyRing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisKeyRing")
            .field("key", &self.key)
            .field("timing", &self.timing)
            .field("keys", &self.keys().len())
            .finish()
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

fn hex(key: &[u8; 32]) -> String {
    key.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<[u8; 32]> {
    let bytes = text.as_bytes();
    if bytes.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, pair) in bytes.chunks(2).enumerate() {
        let s = std::str::from_utf8(pair).ok()?;
        out[i] = u8::from_str_radix(s, 16).ok()?;
    }
    Some(out)
}

/// The ring as a sealer reads it at `now`: the newest key whose time has
/// come first, then every other key (newest first).
fn arrange(entries: &[([u8; 32], u64)], now: u64) -> Vec<[u8; 32]> {
    let mut sorted: Vec<_> = entries.to_vec();
    sorted.sort_by_key(|e| std::cmp::Reverse(e.1));
    let sealing = sorted.iter().position(|(_, from)| *from <= now);
    let mut out = Vec::with_capacity(sorted.len());
    if let Some(i) = sealing {
        out.push(sorted[i].0);
    }
    for (j, (k, _)) in sorted.iter().enumerate() {
        if Some(j) != sealing {
            out.push(*k);
        }
    }
    out
}

impl RedisKeyRing {
    fn new(conn: Conn, key: String, state_ttl: Duration, period: Duration) -> Self {
        RedisKeyRing {
            conn,
            key,
            timing: Timing::new(state_ttl, period),
            script: Script::new(ROTATE),
            local: RwLock::new(Arc::new([])),
        }
    }

    /// Loads the ring (creating it if needed) and refreshes it in the
    /// background for as long as the returned ring is alive.
    pub(crate) async fn start(
        conn: Conn,
        key: String,
        state_ttl: Duration,
        period: Duration,
    ) -> Result<Arc<Self>, Error> {
        let ring = Arc::new(RedisKeyRing::new(conn, key, state_ttl, period));
        ring.refresh_at(now_ms()).await?;
        let weak: Weak<RedisKeyRing> = Arc::downgrade(&ring);
        let every = Duration::from_millis(ring.timing.refresh);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            tick.tick().await;
            loop {
                tick.tick().await;
                let Some(ring) = weak.upgrade() else { return };
                if let Err(e) = ring.refresh_at(now_ms()).await {
                    tracing::warn!(error = %e, "requestState key ring not refreshed; keeping the last one");
                }
            }
        });
        Ok(ring)
    }

    /// A ring named `name` (key `{prefix}mrtr:{name}`) with the handle's
    /// state lifetime and rotation period, changed only by
    /// [`refresh_at`](RedisKeyRing::refresh_at).
    pub fn detached(redis: &Redis, name: &str) -> Self {
        let o = redis.settings();
        RedisKeyRing::new(
            redis.inner.conn.clone(),
            redis.key(&format!("mrtr:{name}")),
            o.state_ttl,
            o.key_period,
        )
    }

    /// Runs the rotation at `now_ms` (Unix milliseconds) and replaces the
    /// local copy with the ring Redis holds after it.
    pub async fn refresh_at(&self, now_ms: u64) -> Result<(), Error> {
        let mut candidate = [0u8; 32];
        rand::Rng::fill(&mut rand::rng(), &mut candidate);
        let t = self.timing;
        let ttl = t.period.saturating_add(t.lead).saturating_add(t.retain);
        let script = &self.script;
        let key = &self.key;
        let reply: Vec<(String, f64)> = self
            .conn
            .run(|mut c| async move {
                script
                    .key(key)
                    .arg(now_ms.to_string())
                    .arg(t.period)
                    .arg(t.lead)
                    .arg(t.retain)
                    .arg(hex(&candidate))
                    .arg(ttl)
                    .invoke_async(&mut c)
                    .await
            })
            .await?;
        let entries: Vec<([u8; 32], u64)> = reply
            .iter()
            .filter_map(|(k, from)| {
                let key = unhex(k)?;
                // Scores are whole milliseconds well inside f64's exact range.
                let from = if from.is_finite() && *from >= 0.0 {
                    *from as u64
                } else {
                    0
                };
                Some((key, from))
            })
            .collect();
        if entries.is_empty() {
            return Err(Error::Corrupt(format!(
                "the key ring {} is empty",
                self.key
            )));
        }
        let arranged: Arc<[[u8; 32]]> = arrange(&entries, now_ms).into();
        *self
            .local
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = arranged;
        Ok(())
    }

    /// The local copy: the sealing key first, then every key that opens.
    pub fn keys(&self) -> Arc<[[u8; 32]]> {
        self.local
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// How often the background refresh runs.
    pub fn refresh_interval(&self) -> Duration {
        Duration::from_millis(self.timing.refresh)
    }
}

impl StateKeySource for RedisKeyRing {
    fn ring(&self) -> Arc<[[u8; 32]]> {
        self.keys()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips() {
        let k = [0xab; 32];
        assert_eq!(unhex(&hex(&k)), Some(k));
        assert_eq!(unhex("zz"), None);
        assert_eq!(unhex(&"g".repeat(64)), None);
    }

    #[test]
    fn the_newest_due_key_seals() {
        let (a, b, c) = ([1; 32], [2; 32], [3; 32]);
        let ring = [(a, 0), (b, 100), (c, 200)];
        assert_eq!(arrange(&ring, 150), vec![b, c, a]);
        assert_eq!(arrange(&ring, 200), vec![c, b, a]);
        // Nothing due yet (clock behind): every key still opens.
        assert_eq!(arrange(&[(c, 200)], 10), vec![c]);
    }

    #[test]
    fn timing_keeps_old_keys_past_the_state_lifetime() {
        let t = Timing::new(Duration::from_secs(600), Duration::from_secs(3600));
        assert_eq!(t.refresh, 10_000);
        assert_eq!(t.lead, 30_000);
        assert!(t.retain >= 600_000 + t.lead + t.refresh);
        let fast = Timing::new(Duration::from_secs(1), Duration::from_secs(1));
        assert_eq!(fast.refresh, 250);
    }
}
