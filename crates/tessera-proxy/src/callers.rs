//! One upstream connection per caller, for an upstream whose credentials
//! depend on the caller ([`crate::caller_auth`]): the HTTP client transport
//! sets its `Authorization` per connection, not per request, so callers with
//! different tokens cannot share one.
//!
//! The pool is keyed by the SHA-256 of the caller's token. It holds at most
//! [`MAX_CALLERS`] connections: a new caller takes the place of the least
//! recently used connection with no request in flight, and is refused (with
//! an error naming the limit) when every connection is busy. A connection
//! idle for [`IDLE`] is closed by [`Callers::reap`], which the upstream's
//! supervisor runs, so nothing a caller leaves behind stays open. A
//! connection that carries a resource subscription of its caller (see
//! [`crate::hub`]) is neither idle nor made room from: closing it would end
//! the subscription.
//!
//! Such a connection that ends (the upstream restarted, forgot the
//! session, or ended its list stream) is made again by the upstream's
//! supervisor with the same caller's credentials, and its subscriptions
//! with it ([`Callers::lost`], [`Callers::restore`]); a caller whose
//! credentials no longer work gets a new connection, and its subscriptions
//! again, with its next request.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tessera_proto::ConnectMode;
use tessera_runtime::Request;
use tessera_types::{Era, ErrorObject};
use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::caller_auth::{CallerCredentials, CallerToken};
use crate::calls::Calls;
use crate::hub::{Hub, Origin};
use crate::member::{MemberSink, list_changes};
use crate::naming::Naming;
use crate::refusal::RefusalData;
use crate::upstream::{Upstream, UpstreamOptions, all_client_capabilities, proxy_identity};

/// The most callers with a connection of their own to one upstream.
pub const MAX_CALLERS: usize = 256;
/// How long a caller's connection may stay unused before it is closed.
pub const IDLE: Duration = Duration::from_secs(120);

/// How long a listen stream opened on a 2026-07-28 upstream is waited for
/// to be acknowledged, when requests have no timeout.
pub(crate) const ACKNOWLEDGEMENT_WAIT: Duration = Duration::from_secs(10);

/// The number of the next caller's connection (see [`Origin`]).
static NEXT_CONNECTION: AtomicU64 = AtomicU64::new(1);

/// The first wait before a lost connection is made again; it doubles up
/// to [`MOST_RETRY`].
const FIRST_RETRY: Duration = Duration::from_millis(200);
/// The longest wait between two tries to make a lost connection again.
const MOST_RETRY: Duration = Duration::from_secs(5);

/// One caller's connection.
pub(crate) struct Entry {
    /// The connection, once made; connecting holds the lock, so one caller
    /// connects once however many of its requests arrive together.
    conn: tokio::sync::Mutex<Option<Arc<Upstream>>>,
    calls: Arc<Calls>,
    last: Mutex<Instant>,
    /// How the connection was made, to make it again.
    kept: Mutex<Kept>,
    /// Cancelled when the entry goes: ends the watch on its connection.
    gone: CancellationToken,
    _gone_on_drop: DropGuard,
}

/// What a caller's connection needs to be made again once lost.
#[derive(Default)]
struct Kept {
    /// The caller's token it was made with (`None` once it no longer
    /// works: the caller's next request brings another).
    caller: Option<CallerToken>,
    /// Its list stream (2026-07-28): cancelled when the stream ended.
    lists: Option<CancellationToken>,
    /// When to try again after a failed try, and the wait after the next.
    retry_at: Option<Instant>,
    delay: Duration,
    /// A connection was made for this caller before.
    made: bool,
    /// When the connection now held was made.
    since: Option<Instant>,
}

impl Entry {
    fn new() -> Entry {
        let gone = CancellationToken::new();
        Entry {
            conn: tokio::sync::Mutex::new(None),
            calls: Arc::new(Calls::default()),
            last: Mutex::new(Instant::now()),
            kept: Mutex::new(Kept::default()),
            _gone_on_drop: gone.clone().drop_guard(),
            gone,
        }
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.kept.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether `up`, its connection, still serves: open, and its list
    /// stream (if it has one) not ended.
    fn usable(&self, up: &Upstream) -> bool {
        up.is_open() && !self.kept().lists.as_ref().is_some_and(|t| t.is_cancelled())
    }
}

/// A caller's connection, lent to one request (the connection counts as
/// busy while a lease lives).
pub(crate) struct Lease {
    /// The connection.
    pub up: Arc<Upstream>,
    /// Its requests in flight.
    pub calls: Arc<Calls>,
    /// The caller's key.
    pub key: [u8; 32],
    /// The connection was made again for this request, after the caller's
    /// earlier one was lost (the caller's subscriptions are then made again
    /// on it).
    pub again: bool,
    _entry: Arc<Entry>,
}

/// Why a caller's connection could not be lent: the error its request
/// gets, and whether the upstream failed.
#[derive(Debug)]
pub(crate) struct Refused {
    /// The error the caller gets.
    pub error: ErrorObject,
    /// The upstream could not be reached or failed to connect: this counts
    /// toward its circuit breaker. A refusal of the proxy's own (no token,
    /// a failed token exchange, no room) or of the upstream's (it answered
    /// with an error) does not.
    pub upstream_failed: bool,
}

impl From<ErrorObject> for Refused {
    fn from(error: ErrorObject) -> Self {
        Refused {
            error,
            upstream_failed: false,
        }
    }
}

/// The per-caller connections of one upstream.
pub(crate) struct Callers {
    creds: CallerCredentials,
    upstream: String,
    /// How the upstream's names are shown (its notifications' URIs).
    naming: Naming,
    hub: Arc<Hub>,
    entries: Mutex<HashMap<[u8; 32], Arc<Entry>>>,
    /// Told when a connection ends.
    lost: Arc<Notify>,
}

impl Callers {
    /// A pool for the upstream named by `naming`, reached with `creds`;
    /// its connections tell `hub` of the upstream's changes.
    pub fn new(creds: CallerCredentials, naming: Naming, hub: Arc<Hub>) -> Self {
        Callers {
            creds,
            upstream: naming.upstream().to_owned(),
            naming,
            hub,
            entries: Mutex::new(HashMap::new()),
            lost: Arc::new(Notify::new()),
        }
    }

    /// Where it announces its changes.
    pub fn hub(&self) -> &Arc<Hub> {
        &self.hub
    }

    /// Completes when a caller's connection has ended since the last time
    /// (see [`Callers::lost`]).
    pub async fn one_lost(&self) {
        self.lost.notified().await
    }

    fn entries(&self) -> std::sync::MutexGuard<'_, HashMap<[u8; 32], Arc<Entry>>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How many callers have a connection now.
    pub fn len(&self) -> usize {
        self.entries().len()
    }

    /// The key of the caller of `r`; refused, with the error its caller
    /// gets, when it has no token this upstream may be reached with.
    pub fn key(&self, r: &Request) -> Result<[u8; 32], ErrorObject> {
        self.creds.caller(r, &self.upstream).map(|c| c.key)
    }

    /// The open connection of the caller `key`, if it has one now (none is
    /// made).
    pub fn open(&self, key: &[u8; 32]) -> Option<Arc<Upstream>> {
        let entry = self.entries().get(key)?.clone();
        let conn = entry.conn.try_lock().ok()?;
        conn.as_ref().filter(|u| u.is_open()).cloned()
    }

    /// The connection of the caller of `r`, made (with its upstream token
    /// obtained first) when it has none. Refused, without reaching the
    /// upstream, when the caller has no usable token or the exchange fails.
    pub async fn lease(&self, r: &Request, options: &UpstreamOptions) -> Result<Lease, Refused> {
        let caller = self.creds.caller(r, &self.upstream)?;
        let key = caller.key;
        let entry = self.entry(key)?;
        *entry.last.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
        let mut conn = tokio::select! {
            c = entry.conn.lock() => c,
            _ = r.cancel.cancelled() => return Err(ErrorObject::internal("cancelled by the client").into()),
        };
        // The upstream token first, under the caller's lock (its requests
        // arriving together exchange once): a refused exchange never
        // reaches the upstream, and a cached token costs nothing.
        if let Err(e) = self.creds.upstream_token(&caller, &self.upstream).await {
            if conn.is_none() {
                // Nothing of this caller is open: it holds no place.
                drop(conn);
                let mut entries = self.entries();
                if entries.get(&key).is_some_and(|e| Arc::ptr_eq(e, &entry)) {
                    entries.remove(&key);
                }
            }
            return Err(e.into());
        }
        let (up, again) = match conn.as_ref().filter(|u| entry.usable(u)) {
            Some(up) => (up.clone(), false),
            None => {
                let again = entry.kept().made;
                let up = self.connect(&entry, caller, options, &r.cancel).await?;
                *conn = Some(up.clone());
                (up, again)
            }
        };
        drop(conn);
        Ok(Lease {
            up,
            calls: entry.calls.clone(),
            key,
            again,
            _entry: entry,
        })
    }

    /// Makes `entry`'s connection as `caller` (whose upstream token was
    /// obtained), and watches it: its end is told to [`Callers::one_lost`].
    /// Given up when `cancel` fires.
    async fn connect(
        &self,
        entry: &Arc<Entry>,
        caller: CallerToken,
        options: &UpstreamOptions,
        cancel: &CancellationToken,
    ) -> Result<Arc<Upstream>, Refused> {
        let spec = self.creds.spec_for(caller.clone(), &self.upstream);
        let sink = Arc::new(MemberSink::new(
            self.naming.clone(),
            entry.calls.clone(),
            self.hub.clone(),
            Some(Origin {
                conn: NEXT_CONNECTION.fetch_add(1, Ordering::Relaxed),
                caller: caller.key,
            }),
        ));
        let connecting = Upstream::connect(
            &spec,
            ConnectMode::Auto,
            proxy_identity(all_client_capabilities()),
            sink,
            options,
            None,
        );
        let up = tokio::select! {
            c = connecting => c,
            _ = cancel.cancelled() => return Err(ErrorObject::internal("cancelled by the client").into()),
        }
        .map_err(|e| {
            let mut o = ErrorObject::internal(format!(
                "upstream {} cannot be reached for this caller: {e}",
                self.upstream
            ));
            o.data = Some(RefusalData::upstream(&self.upstream).to_value());
            Refused {
                error: o,
                upstream_failed: e.is_upstream_failure(),
            }
        })?;
        // Its own list changes, as the pooled connection's (their repeats
        // across callers are dropped by the hub): lent once the upstream
        // has acknowledged the listen stream (or refused it), so that no
        // change after the caller's first request goes unheard.
        let mut lists = None;
        if up.era() == Era::Modern {
            let wait = options.request_timeout.unwrap_or(ACKNOWLEDGEMENT_WAIT);
            match up
                .acks
                .listen(up.peer.clone(), list_changes(), wait, cancel)
                .await
            {
                Ok(stop) => lists = Some(stop),
                Err(e) => {
                    if cancel.is_cancelled() {
                        return Err(e.into());
                    }
                    tracing::debug!(upstream = %self.upstream, error = %e.message, "no list changes for this caller");
                }
            }
        }
        let up = Arc::new(up);
        let watched = (up.closed_token(), lists.clone());
        {
            // The wait before another try, after a restore, stays: a
            // connection that ends as soon as it is made is not made again
            // at once, over and over.
            let mut kept = entry.kept();
            kept.caller = Some(caller);
            kept.lists = lists;
            kept.made = true;
            kept.since = Some(Instant::now());
        }
        let (lost, gone) = (self.lost.clone(), entry.gone.clone());
        tokio::spawn(async move {
            let (closed, lists) = watched;
            let lists_ended = async {
                match lists {
                    Some(t) => t.cancelled().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = closed.cancelled() => lost.notify_one(),
                _ = lists_ended => lost.notify_one(),
                _ = gone.cancelled() => {}
            }
        });
        Ok(up)
    }

    /// The callers whose connection ended while it carried one of their
    /// subscriptions, and who are due for another try at `now`.
    pub fn lost(&self, now: Instant) -> Vec<([u8; 32], Arc<Entry>)> {
        self.entries()
            .iter()
            .filter(|(k, e)| {
                let due = {
                    let kept = e.kept();
                    kept.caller.is_some() && kept.retry_at.is_none_or(|at| at <= now)
                };
                // A connection being made (its lock held) is not lost.
                due && self.hub.holds(k)
                    && e.conn
                        .try_lock()
                        .is_ok_and(|c| c.as_ref().is_none_or(|u| !e.usable(u)))
            })
            .map(|(k, e)| (*k, e.clone()))
            .collect()
    }

    /// When the next lost connection is due for another try, if any is
    /// waiting.
    pub fn next_retry(&self) -> Option<Instant> {
        self.entries()
            .values()
            .filter_map(|e| e.kept().retry_at)
            .min()
    }

    /// Makes the lost connection of `entry` again with the credentials it
    /// was made with; `None` when it no longer needs it (made meanwhile,
    /// or its caller's credentials were given up). A failed try is tried
    /// again later when the upstream failed; credentials that no longer
    /// work are given up (the caller's next request brings new ones).
    pub async fn restore(
        &self,
        entry: &Arc<Entry>,
        options: &UpstreamOptions,
        stop: &CancellationToken,
    ) -> Result<Option<Arc<Upstream>>, Refused> {
        let mut conn = entry.conn.lock().await;
        if conn.as_ref().is_some_and(|u| entry.usable(u)) {
            return Ok(None);
        }
        let caller = {
            let mut kept = entry.kept();
            let Some(caller) = kept.caller.clone() else {
                return Ok(None);
            };
            // A connection that served a while starts the waits afresh.
            let now = Instant::now();
            if kept.since.take().is_some_and(|at| now - at >= MOST_RETRY) {
                kept.delay = FIRST_RETRY;
            }
            kept.delay = kept.delay.max(FIRST_RETRY);
            caller
        };
        let made = match self.creds.upstream_token(&caller, &self.upstream).await {
            Ok(_) => self.connect(entry, caller, options, stop).await,
            Err(e) => Err(e.into()),
        };
        // Whatever came of it, the next try waits (doubling up to
        // MOST_RETRY): a failed one, or a loss right after this one.
        let mut kept = entry.kept();
        let now = Instant::now();
        kept.retry_at = Some(now + kept.delay);
        kept.delay = (kept.delay * 2).min(MOST_RETRY);
        match made {
            Ok(up) => {
                *conn = Some(up.clone());
                Ok(Some(up))
            }
            Err(refused) => {
                *conn = None;
                if !refused.upstream_failed {
                    kept.caller = None;
                    kept.retry_at = None;
                }
                Err(refused)
            }
        }
    }

    /// The entry of `key`, made room for when new.
    fn entry(&self, key: [u8; 32]) -> Result<Arc<Entry>, ErrorObject> {
        let mut entries = self.entries();
        if let Some(e) = entries.get(&key) {
            return Ok(e.clone());
        }
        if entries.len() >= MAX_CALLERS {
            // The least recently used connection that no request holds.
            let idle = entries
                .iter()
                .filter(|(k, e)| Arc::strong_count(e) == 1 && !self.hub.holds(k))
                .min_by_key(|(_, e)| *e.last.lock().unwrap_or_else(|p| p.into_inner()))
                .map(|(k, _)| *k);
            match idle {
                Some(k) => {
                    entries.remove(&k);
                }
                None => {
                    let mut e = ErrorObject::internal(format!(
                        "upstream {} already has its limit of {MAX_CALLERS} callers with requests \
                         in flight or resource subscriptions, each on a connection of its own; \
                         try again later",
                        self.upstream
                    ));
                    e.data = Some(
                        RefusalData::upstream(&self.upstream)
                            .limit("callers")
                            .max(MAX_CALLERS)
                            .to_value(),
                    );
                    return Err(e);
                }
            }
        }
        let e = Arc::new(Entry::new());
        entries.insert(key, e.clone());
        Ok(e)
    }

    /// Drops the connection `lease` used when it is still the caller's (it
    /// died: the next request of that caller connects again, or the
    /// supervisor does when it carried subscriptions).
    pub fn forget(&self, lease: &Lease) {
        let Some(entry) = self.entries().get(&lease.key).cloned() else {
            return;
        };
        if let Ok(mut c) = entry.conn.try_lock() {
            if c.as_ref().is_some_and(|u| Arc::ptr_eq(u, &lease.up)) {
                *c = None;
                self.lost.notify_one();
            }
        }
    }

    /// Closes the connections unused for [`IDLE`] with no request in flight
    /// and no subscription; how many are left.
    pub fn reap(&self, now: Instant) -> usize {
        let mut entries = self.entries();
        entries.retain(|k, e| {
            Arc::strong_count(e) > 1
                || self.hub.holds(k)
                || now.duration_since(*e.last.lock().unwrap_or_else(|p| p.into_inner())) < IDLE
        });
        entries.len()
    }

    /// Closes every connection.
    pub fn clear(&self) {
        self.entries().clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::caller_auth::Kind;

    fn pool() -> Callers {
        let creds = CallerCredentials::new(
            "http://127.0.0.1:1/mcp".into(),
            tessera_http::http::HeaderMap::new(),
            Kind::Forward {
                audience: "http://127.0.0.1:1/mcp".into(),
            },
        );
        Callers::new(
            creds,
            crate::Naming::prefixed("up"),
            Arc::new(Hub::default()),
        )
    }

    fn key(i: usize) -> [u8; 32] {
        let mut k = [0; 32];
        k[..8].copy_from_slice(&(i as u64).to_le_bytes());
        k
    }

    #[tokio::test(start_paused = true)]
    async fn bounded_busy_callers_refused_idle_ones_make_room_and_are_reaped() {
        let p = pool();
        // Every place taken by a caller with a request in flight.
        let base = Instant::now();
        let busy: Vec<Arc<Entry>> = (0..MAX_CALLERS)
            .map(|i| {
                let e = p.entry(key(i)).unwrap();
                // Caller i was last seen i ms in.
                *e.last.lock().unwrap() = base + Duration::from_millis(i as u64);
                e
            })
            .collect();
        let refused = p.entry(key(MAX_CALLERS)).err().expect("no room");
        assert!(
            refused.message.contains("limit of 256 callers"),
            "{}",
            refused.message
        );
        assert_eq!(refused.data.as_ref().unwrap()["limit"], "callers");
        // A known caller still gets its own.
        assert!(Arc::ptr_eq(&p.entry(key(3)).unwrap(), &busy[3]));
        // The requests end: the newcomer takes the place of the least
        // recently used (caller 0, unless seen again, as caller 8 is).
        tokio::time::advance(Duration::from_secs(1)).await;
        *busy[8].last.lock().unwrap() = Instant::now();
        drop(busy);
        p.entry(key(MAX_CALLERS)).expect("room made");
        assert_eq!(p.len(), MAX_CALLERS);
        assert!(
            !p.entries().contains_key(&key(0)),
            "the least recently used went"
        );
        assert!(p.entries().contains_key(&key(8)), "a recent one stays");
        // Idle connections are closed once IDLE has passed, busy ones never.
        let held = p.entry(key(5)).unwrap();
        assert_eq!(p.reap(Instant::now()), MAX_CALLERS, "none idle long enough");
        tokio::time::advance(IDLE).await;
        assert_eq!(p.reap(Instant::now()), 1, "only the busy one is left");
        assert!(Arc::ptr_eq(&p.entry(key(5)).unwrap(), &held));
        drop(held);
        // A connection carrying its caller's subscription is never idle.
        let topic = crate::hub::Topic {
            caller: Some(key(7)),
            naming: crate::Naming::prefixed("up"),
            uri: "up+mem://doc".into(),
        };
        assert!(p.hub.subscribe(&topic));
        p.entry(key(7)).unwrap();
        tokio::time::advance(IDLE).await;
        assert_eq!(
            p.reap(Instant::now()),
            1,
            "the subscriber's connection stays"
        );
        assert!(p.entries().contains_key(&key(7)));
        assert!(p.hub.unsubscribe(&topic));
        assert_eq!(p.reap(Instant::now() + IDLE), 0);
        p.clear();
        assert_eq!(p.len(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn only_lost_connections_carrying_subscriptions_are_made_again_with_backoff() {
        let p = pool();
        let caller = CallerToken::of("alice's token");
        let key = caller.key;
        let entry = p.entry(key).unwrap();
        // Never connected: nothing to make again, subscribed or not.
        assert!(p.lost(Instant::now()).is_empty());
        entry.kept().caller = Some(caller);
        assert!(p.lost(Instant::now()).is_empty(), "no subscription");
        let topic = crate::hub::Topic {
            caller: Some(key),
            naming: crate::Naming::prefixed("up"),
            uri: "up+mem://doc".into(),
        };
        assert!(p.hub.subscribe(&topic));
        let lost = p.lost(Instant::now());
        assert_eq!(lost.len(), 1);
        assert!(Arc::ptr_eq(&lost[0].1, &entry));
        // The upstream cannot be reached: tried again after 200 ms, then
        // 400 ms, never sooner.
        let options = UpstreamOptions::default();
        let stop = CancellationToken::new();
        let refused = p.restore(&entry, &options, &stop).await.err().unwrap();
        assert!(refused.upstream_failed, "{}", refused.error.message);
        let first = p.next_retry().expect("a retry");
        assert_eq!(first - Instant::now(), FIRST_RETRY);
        assert!(p.lost(Instant::now()).is_empty(), "not due yet");
        tokio::time::advance(FIRST_RETRY).await;
        assert_eq!(p.lost(Instant::now()).len(), 1);
        p.restore(&entry, &options, &stop).await.err().unwrap();
        assert_eq!(p.next_retry().unwrap() - Instant::now(), FIRST_RETRY * 2);
        // A connection lost soon after it was made keeps the waits
        // growing; one that served a while starts them afresh.
        tokio::time::advance(MOST_RETRY).await;
        entry.kept().since = Some(Instant::now() - Duration::from_secs(1));
        p.restore(&entry, &options, &stop).await.err().unwrap();
        assert_eq!(p.next_retry().unwrap() - Instant::now(), FIRST_RETRY * 4);
        tokio::time::advance(MOST_RETRY).await;
        entry.kept().since = Some(Instant::now() - MOST_RETRY);
        p.restore(&entry, &options, &stop).await.err().unwrap();
        assert_eq!(p.next_retry().unwrap() - Instant::now(), FIRST_RETRY);
        // The subscription ends: nothing is made again.
        tokio::time::advance(MOST_RETRY).await;
        assert!(p.hub.unsubscribe(&topic));
        assert!(p.lost(Instant::now()).is_empty());
    }
}
