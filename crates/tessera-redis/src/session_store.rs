//! [`RedisSessionStore`]: the stored state of legacy sessions in Redis, so
//! that a session opened on one instance is served by every other, and the
//! session caps, counted in Redis so that they hold across instances.
//!
//! One string key per session, `{prefix}sess:{id}`, holds the state's JSON
//! ([`SessionState::to_bytes`]) with the session's TTL. The sessions are
//! counted in a sorted set `{prefix}sessidx` (id → when it expires, in
//! Redis's milliseconds), each one's client in a hash `{prefix}sessclient`
//! and a client's sessions in a sorted set `{prefix}sessc:{client}`
//! ([`SessionStore::admit`]). At a cap the least recently used session of
//! the group is forgotten (its state deleted, the id returned so that the
//! instances end their copies, and a marker `{prefix}sessgone:{id}` kept for
//! a minute at most, while they hear of it): a forgotten session is not saved again, so it does not come
//! back with a late save from the instance that held it.
//! Every operation is one command (a script where several keys change), so
//! one round trip.

use std::time::Duration;

use redis::Script;
use tessera_runtime::{SessionCaps, SessionState, SessionStore, StoreError};

use crate::connection::Redis;

/// Frees the counts of sessions whose time ran out, then makes room for
/// session ARGV[1] of client ARGV[2] (empty: no per-client cap) and counts
/// it. KEYS: the index, the client hash, the client's set (unused when the
/// client is empty). ARGV: id, client, max, per client, TTL in ms, the
/// state key prefix, the client set prefix, the marker prefix. Returns the
/// ids forgotten.
const ADMIT: &str = r"
local index, clients, mine = KEYS[1], KEYS[2], KEYS[3]
local id, client = ARGV[1], ARGV[2]
local max, per_client, ttl = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local state_prefix, client_prefix, gone_prefix = ARGV[6], ARGV[7], ARGV[8]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function uncount(victim)
  local c = redis.call('HGET', clients, victim)
  if c and c ~= '' then redis.call('ZREM', client_prefix .. c, victim) end
  redis.call('HDEL', clients, victim)
  redis.call('ZREM', index, victim)
end
for _, gone in ipairs(redis.call('ZRANGEBYSCORE', index, '-inf', now)) do
  uncount(gone)
end
local forgotten = {}
local function forget(victim)
  uncount(victim)
  redis.call('DEL', state_prefix .. victim)
  redis.call('SET', gone_prefix .. victim, '1', 'PX', math.min(ttl, 60000))
  table.insert(forgotten, victim)
end
if client ~= '' then
  redis.call('ZREMRANGEBYSCORE', mine, '-inf', now)
  while redis.call('ZCARD', mine) >= per_client do
    local victim = redis.call('ZRANGE', mine, 0, 0)[1]
    if not victim then break end
    forget(victim)
  end
end
while redis.call('ZCARD', index) >= max do
  local victim = redis.call('ZRANGE', index, 0, 0)[1]
  if not victim then break end
  forget(victim)
end
local expires = now + ttl
redis.call('ZADD', index, expires, id)
redis.call('HSET', clients, id, client)
redis.call('PEXPIRE', index, ttl)
redis.call('PEXPIRE', clients, ttl)
if client ~= '' then
  redis.call('ZADD', mine, expires, id)
  redis.call('PEXPIRE', mine, ttl)
end
return forgotten
";

/// Saves a state unless its session was forgotten to make room. KEYS: the
/// state, the session's marker. ARGV: the state, the TTL in ms. Returns 1
/// when saved.
const SAVE: &str = r"
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
";

/// Pushes a session's expiry and its place in the counts. KEYS: the state,
/// the index, the client hash. ARGV: the id, the TTL in ms, the client set
/// prefix. Returns 1 when the session exists.
const TOUCH: &str = r"
if redis.call('PEXPIRE', KEYS[1], ARGV[2]) == 0 then return 0 end
local t = redis.call('TIME')
local expires = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[2])
redis.call('ZADD', KEYS[2], 'XX', expires, ARGV[1])
local c = redis.call('HGET', KEYS[3], ARGV[1])
if c and c ~= '' then redis.call('ZADD', ARGV[3] .. c, 'XX', expires, ARGV[1]) end
return 1
";

/// Forgets a session and its counts. KEYS: the state, the index, the client
/// hash. ARGV: the id, the client set prefix.
const REMOVE: &str = r"
redis.call('DEL', KEYS[1])
local c = redis.call('HGET', KEYS[3], ARGV[1])
if c and c ~= '' then redis.call('ZREM', ARGV[2] .. c, ARGV[1]) end
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return 1
";

/// Legacy session states in Redis (see the module documentation).
#[derive(Debug, Clone)]
pub struct RedisSessionStore {
    redis: Redis,
}

impl Redis {
    /// The session store of this instance.
    pub fn session_store(&self) -> RedisSessionStore {
        RedisSessionStore {
            redis: self.clone(),
        }
    }
}

/// The scripts, built once (a script hashes its text when made).
struct Scripts {
    admit: Script,
    save: Script,
    touch: Script,
    remove: Script,
}

fn scripts() -> &'static Scripts {
    static SCRIPTS: std::sync::OnceLock<Scripts> = std::sync::OnceLock::new();
    SCRIPTS.get_or_init(|| Scripts {
        admit: Script::new(ADMIT),
        save: Script::new(SAVE),
        touch: Script::new(TOUCH),
        remove: Script::new(REMOVE),
    })
}

impl RedisSessionStore {
    fn key(&self, id: &str) -> String {
        self.redis.key(&format!("sess:{id}"))
    }

    fn index_key(&self) -> String {
        self.redis.key("sessidx")
    }

    fn clients_key(&self) -> String {
        self.redis.key("sessclient")
    }

    fn gone_key(&self, id: &str) -> String {
        self.redis.key(&format!("sessgone:{id}"))
    }

    fn client_prefix(&self) -> String {
        self.redis.key("sessc:")
    }

    /// How many sessions are counted against the caps (every instance's),
    /// those whose time ran out included until the next admission.
    pub async fn counted(&self) -> Result<u64, StoreError> {
        let index = self.index_key();
        let n: u64 = self
            .redis
            .run(|mut c| async move { redis::cmd("ZCARD").arg(&index).query_async(&mut c).await })
            .await?;
        Ok(n)
    }
}

/// Milliseconds for `PX`/`PEXPIRE`: at least 1 (0 is refused by Redis).
fn px(ttl: Duration) -> u64 {
    u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1)
}

impl SessionStore for RedisSessionStore {
    async fn load(&self, id: &str) -> Result<Option<SessionState>, StoreError> {
        let key = self.key(id);
        let bytes: Option<Vec<u8>> = self
            .redis
            .run(|mut c| async move { redis::cmd("GET").arg(&key).query_async(&mut c).await })
            .await?;
        bytes.map(|b| SessionState::from_bytes(&b)).transpose()
    }

    async fn save(&self, state: &SessionState, ttl: Duration) -> Result<(), StoreError> {
        let (key, gone) = (self.key(&state.id), self.gone_key(&state.id));
        let bytes = state.to_bytes();
        let saved: i64 = self
            .redis
            .run(|mut c| async move {
                scripts()
                    .save
                    .key(&key)
                    .key(&gone)
                    .arg(bytes)
                    .arg(px(ttl))
                    .invoke_async(&mut c)
                    .await
            })
            .await?;
        if saved == 0 {
            tracing::debug!(session = %state.id, "state not saved: the session was ended to make room for another");
        }
        Ok(())
    }

    async fn touch(&self, id: &str, ttl: Duration) -> Result<bool, StoreError> {
        let (key, index, clients) = (self.key(id), self.index_key(), self.clients_key());
        let prefix = self.client_prefix();
        let n: i64 = self
            .redis
            .run(|mut c| async move {
                scripts()
                    .touch
                    .key(&key)
                    .key(&index)
                    .key(&clients)
                    .arg(id)
                    .arg(px(ttl))
                    .arg(&prefix)
                    .invoke_async(&mut c)
                    .await
            })
            .await?;
        Ok(n == 1)
    }

    async fn remove(&self, id: &str) -> Result<(), StoreError> {
        let (key, index, clients) = (self.key(id), self.index_key(), self.clients_key());
        let prefix = self.client_prefix();
        self.redis
            .run(|mut c| async move {
                scripts()
                    .remove
                    .key(&key)
                    .key(&index)
                    .key(&clients)
                    .arg(id)
                    .arg(&prefix)
                    .invoke_async::<i64>(&mut c)
                    .await
            })
            .await?;
        Ok(())
    }

    async fn admit(
        &self,
        id: &str,
        client: &str,
        caps: SessionCaps,
        ttl: Duration,
    ) -> Result<Vec<String>, StoreError> {
        let (index, clients) = (self.index_key(), self.clients_key());
        let prefix = self.client_prefix();
        let mine = format!("{prefix}{client}");
        let state_prefix = self.redis.key("sess:");
        let gone_prefix = self.redis.key("sessgone:");
        let forgotten: Vec<String> = self
            .redis
            .run(|mut c| async move {
                scripts()
                    .admit
                    .key(&index)
                    .key(&clients)
                    .key(&mine)
                    .arg(id)
                    .arg(client)
                    .arg(caps.max.max(1))
                    .arg(caps.per_client.max(1))
                    .arg(px(ttl))
                    .arg(&state_prefix)
                    .arg(&prefix)
                    .arg(&gone_prefix)
                    .invoke_async(&mut c)
                    .await
            })
            .await?;
        Ok(forgotten)
    }
}
