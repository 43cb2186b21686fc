//! Resumability: SSE event ids and the [`EventStore`] that keeps sent events
//! so that a client reconnecting with `Last-Event-ID` gets what it missed.
//!
//! An event id names its stream and its position in it: `"{stream}-{seq}"`.
//! Stream 0 of a session is its standalone (GET) stream; every POST that
//! answers with SSE gets the next stream number. Replay after `S-N` only
//! returns events of stream `S` with a sequence number above `N`, so a
//! message is never replayed on a stream it did not belong to.

use std::collections::VecDeque;

use foldhash::HashMap;
use std::fmt;
use std::str::FromStr;
use std::sync::Mutex;

use bytes::Bytes;
use tessera_runtime::BoxFuture;

/// The id of one SSE event: its stream and its sequence number in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EventId {
    /// The stream (0 = the session's standalone GET stream).
    pub stream: u64,
    /// The position in the stream, from 0 (the priming event).
    pub seq: u64,
}

impl fmt::Display for EventId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut buf = [0u8; 41];
        f.write_str(self.encode(&mut buf))
    }
}

impl EventId {
    /// Writes `stream-seq` into `buf` and returns it (no formatting
    /// machinery: every SSE event of a resumable stream gets one).
    pub(crate) fn encode<'a>(&self, buf: &'a mut [u8; 41]) -> &'a str {
        let mut digits = itoa::Buffer::new();
        let stream = digits.format(self.stream).as_bytes();
        let mut at = stream.len();
        buf[..at].copy_from_slice(stream);
        buf[at] = b'-';
        at += 1;
        let seq = digits.format(self.seq).as_bytes();
        buf[at..at + seq.len()].copy_from_slice(seq);
        at += seq.len();
        std::str::from_utf8(&buf[..at]).unwrap_or_default()
    }
}

/// A `Last-Event-ID` this server did not issue.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not an event id of this server: {0:?}")]
pub struct BadEventId(pub String);

impl FromStr for EventId {
    type Err = BadEventId;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || BadEventId(s.to_owned());
        let (a, b) = s.trim().split_once('-').ok_or_else(bad)?;
        Ok(EventId {
            stream: a.parse().map_err(|_| bad())?,
            seq: b.parse().map_err(|_| bad())?,
        })
    }
}

/// One stored event: its id and its `data` (one JSON-RPC message; empty for
/// a priming event).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEvent {
    /// The event id.
    pub id: EventId,
    /// The data.
    pub data: Bytes,
}

/// Keeps the events sent on a session's SSE streams for replay.
///
/// Implementations must be bounded: a store that grows without limit lets a
/// client that never reconnects consume memory.
///
/// [`replay_after`](Self::replay_after) and
/// [`remove_session`](Self::remove_session) are `async fn`s in an
/// implementation. [`store`](Self::store) takes the event when it is called
/// (the order of calls is the order of events), so it is a plain `fn` that
/// does that and returns an `async` block owning what it still waits for:
///
/// ```
/// use tessera_http::{EventId, EventStore, InMemoryEventStore, StoredEvent};
///
/// /// Keeps events in memory and counts replays.
/// #[derive(Default)]
/// struct Counted {
///     inner: InMemoryEventStore,
///     replays: std::sync::atomic::AtomicUsize,
/// }
///
/// impl EventStore for Counted {
///     fn store(
///         &self,
///         session: &str,
///         event: StoredEvent,
///     ) -> impl Future<Output = ()> + Send + 'static {
///         // Taken now; the returned future resolves once it is kept.
///         let kept = self.inner.store(session, event);
///         async move { kept.await }
///     }
///
///     async fn replay_after(&self, session: &str, after: EventId) -> Vec<StoredEvent> {
///         self.replays.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
///         self.inner.replay_after(session, after).await
///     }
///
///     async fn remove_session(&self, session: &str) {
///         self.inner.remove_session(session).await
///     }
/// }
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let server = tessera_server::Server::builder().build()?;
/// let builder = tessera_http::McpHttp::builder(server).event_store(Counted::default());
/// # let _ = builder;
/// # Ok(())
/// # }
/// ```
pub trait EventStore: Send + Sync + 'static {
    /// Records an event sent (or to be sent) on a stream of `session`.
    ///
    /// The event is taken when `store` is called: the order of calls is the
    /// order of the events, whether or not the returned futures are polled
    /// in that order. The future resolves once the event is kept (or failed
    /// to be). A session writes the event to its client without waiting for
    /// the future, and ends the event's stream only after it resolved; it
    /// waits for every pending future of the session before it replays.
    fn store(&self, session: &str, event: StoredEvent)
    -> impl Future<Output = ()> + Send + 'static;

    /// The events of `after.stream` with a sequence number above `after.seq`,
    /// oldest first, among them every event whose [`store`](Self::store)
    /// future has resolved. Events already evicted are simply missing.
    fn replay_after(
        &self,
        session: &str,
        after: EventId,
    ) -> impl Future<Output = Vec<StoredEvent>> + Send;

    /// Forgets everything about a session (it ended).
    fn remove_session(&self, session: &str) -> impl Future<Output = ()> + Send;
}

impl<S: EventStore + ?Sized> EventStore for std::sync::Arc<S> {
    fn store(
        &self,
        session: &str,
        event: StoredEvent,
    ) -> impl Future<Output = ()> + Send + 'static {
        (**self).store(session, event)
    }
    fn replay_after(
        &self,
        session: &str,
        after: EventId,
    ) -> impl Future<Output = Vec<StoredEvent>> + Send {
        (**self).replay_after(session, after)
    }
    fn remove_session(&self, session: &str) -> impl Future<Output = ()> + Send {
        (**self).remove_session(session)
    }
}

/// The object-safe form of [`EventStore`] that a session holds (one box
/// per call); every `EventStore` is one.
pub(crate) trait DynEventStore: Send + Sync + 'static {
    fn store_boxed(&self, session: &str, event: StoredEvent) -> BoxFuture<'static, ()>;
    fn replay_after_boxed<'a>(
        &'a self,
        session: &'a str,
        after: EventId,
    ) -> BoxFuture<'a, Vec<StoredEvent>>;
    fn remove_session_boxed<'a>(&'a self, session: &'a str) -> BoxFuture<'a, ()>;
}

impl<S: EventStore> DynEventStore for S {
    fn store_boxed(&self, session: &str, event: StoredEvent) -> BoxFuture<'static, ()> {
        Box::pin(self.store(session, event))
    }
    fn replay_after_boxed<'a>(
        &'a self,
        session: &'a str,
        after: EventId,
    ) -> BoxFuture<'a, Vec<StoredEvent>> {
        Box::pin(self.replay_after(session, after))
    }
    fn remove_session_boxed<'a>(&'a self, session: &'a str) -> BoxFuture<'a, ()> {
        Box::pin(self.remove_session(session))
    }
}

impl EventStore for dyn DynEventStore {
    fn store(
        &self,
        session: &str,
        event: StoredEvent,
    ) -> impl Future<Output = ()> + Send + 'static {
        self.store_boxed(session, event)
    }
    async fn replay_after(&self, session: &str, after: EventId) -> Vec<StoredEvent> {
        self.replay_after_boxed(session, after).await
    }
    async fn remove_session(&self, session: &str) {
        self.remove_session_boxed(session).await
    }
}

/// The bytes an event is counted for: its data plus a fixed overhead (id,
/// queue slot, allocation).
fn weight(e: &StoredEvent) -> usize {
    e.data.len() + EVENT_OVERHEAD
}

/// What an event costs beside its data, in bytes, when accounting.
const EVENT_OVERHEAD: usize = 64;

/// The default bytes kept per session (see [`InMemoryEventStore::with_bytes`]).
pub const DEFAULT_EVENT_BYTES_PER_SESSION: usize = 4 << 20;

/// The default bytes kept for every session together.
pub const DEFAULT_EVENT_BYTES_TOTAL: usize = 64 << 20;

/// A bounded in-memory [`EventStore`]: the last `per_session` events of each
/// session, at most [`DEFAULT_EVENT_BYTES_PER_SESSION`] bytes of them
/// (oldest evicted first), for at most `sessions` sessions and
/// [`DEFAULT_EVENT_BYTES_TOTAL`] bytes in all (the least recently written
/// session is evicted first). An event bigger than a session's byte budget
/// is not kept: a resumption simply misses it.
#[derive(Debug)]
pub struct InMemoryEventStore {
    per_session: usize,
    sessions: usize,
    bytes_per_session: usize,
    bytes_total: usize,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    logs: HashMap<String, Log>,
    /// Counts writes; a log's `written` is the count at its last write.
    clock: u64,
    /// The accounted bytes of every log.
    bytes: usize,
}

/// The events of one session.
#[derive(Debug, Default)]
struct Log {
    events: VecDeque<StoredEvent>,
    written: u64,
    /// The accounted bytes of `events`.
    bytes: usize,
}

impl InMemoryEventStore {
    /// A store keeping `per_session` events for each of at most `sessions`
    /// sessions, within the default byte budgets.
    pub fn new(per_session: usize, sessions: usize) -> Self {
        Self::with_bytes(
            per_session,
            sessions,
            DEFAULT_EVENT_BYTES_PER_SESSION,
            DEFAULT_EVENT_BYTES_TOTAL,
        )
    }

    /// A store keeping `per_session` events and `bytes_per_session` bytes
    /// for each of at most `sessions` sessions, and `bytes_total` bytes in
    /// all (an event counts its data plus 64 bytes).
    pub fn with_bytes(
        per_session: usize,
        sessions: usize,
        bytes_per_session: usize,
        bytes_total: usize,
    ) -> Self {
        InMemoryEventStore {
            per_session: per_session.max(1),
            sessions: sessions.max(1),
            bytes_per_session: bytes_per_session.max(EVENT_OVERHEAD),
            bytes_total: bytes_total.max(EVENT_OVERHEAD),
            inner: Mutex::new(Inner::default()),
        }
    }

    /// Adds an event of weight `w` to a session's log (written at `clock`),
    /// dropping its oldest events while it is over a per-session limit or
    /// the store over its total (`total`: the bytes of every log).
    fn append(&self, log: &mut Log, total: &mut usize, clock: u64, event: StoredEvent, w: usize) {
        log.written = clock;
        while !log.events.is_empty()
            && (log.events.len() >= self.per_session
                || log.bytes + w > self.bytes_per_session
                || *total + w > self.bytes_total)
        {
            if let Some(old) = log.events.pop_front() {
                let ow = weight(&old);
                log.bytes -= ow;
                *total -= ow;
            }
        }
        log.bytes += w;
        *total += w;
        log.events.push_back(event);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// How many events are held in total (for tests and metrics).
    pub fn len(&self) -> usize {
        self.lock().logs.values().map(|l| l.events.len()).sum()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes held in total, as accounted against the budgets (for
    /// tests and metrics).
    pub fn bytes(&self) -> usize {
        self.lock().bytes
    }

    /// The bytes held for `session`, as accounted.
    pub fn session_bytes(&self, session: &str) -> usize {
        self.lock().logs.get(session).map_or(0, |l| l.bytes)
    }
}

impl Default for InMemoryEventStore {
    /// 256 events and 4 MiB per session, 1024 sessions, 64 MiB in all.
    fn default() -> Self {
        InMemoryEventStore::new(256, 1024)
    }
}

impl Inner {
    /// Evicts the least recently written session other than `keep`;
    /// `false` when there is none.
    fn evict_oldest_except(&mut self, keep: &str) -> bool {
        // A scan, only when a new session finds the store full or the
        // total budget is exceeded.
        let oldest = self
            .logs
            .iter()
            .filter(|(k, _)| k.as_str() != keep)
            .min_by_key(|(_, l)| l.written)
            .map(|(k, _)| k.clone());
        match oldest.and_then(|k| self.logs.remove(&k)) {
            Some(log) => {
                self.bytes -= log.bytes;
                true
            }
            None => false,
        }
    }
}

impl EventStore for InMemoryEventStore {
    fn store(
        &self,
        session: &str,
        event: StoredEvent,
    ) -> impl Future<Output = ()> + Send + 'static {
        let w = weight(&event);
        let mut g = self.lock();
        if w > self.bytes_per_session.min(self.bytes_total) {
            tracing::debug!(
                session,
                bytes = event.data.len(),
                "an event over the store's byte budget is not kept"
            );
            return std::future::ready(());
        }
        g.clock += 1;
        let clock = g.clock;
        let inner = &mut *g;
        // A session already kept, within the total budget (nearly every
        // event): one lookup, nothing else to evict.
        if inner.bytes + w <= self.bytes_total {
            if let Some(log) = inner.logs.get_mut(session) {
                self.append(log, &mut inner.bytes, clock, event, w);
                return std::future::ready(());
            }
        }
        if !inner.logs.contains_key(session) && inner.logs.len() >= self.sessions {
            inner.evict_oldest_except(session);
        }
        // The total budget: other sessions go first, least recently written first.
        while inner.bytes + w > self.bytes_total && inner.evict_oldest_except(session) {}
        // The session's id is copied only for its first event.
        if !inner.logs.contains_key(session) {
            inner.logs.insert(session.to_owned(), Log::default());
        }
        let Some(log) = inner.logs.get_mut(session) else {
            return std::future::ready(());
        };
        self.append(log, &mut inner.bytes, clock, event, w);
        std::future::ready(())
    }

    async fn replay_after(&self, session: &str, after: EventId) -> Vec<StoredEvent> {
        let out: Vec<StoredEvent> = self
            .lock()
            .logs
            .get(session)
            .map(|l| {
                l.events
                    .iter()
                    .filter(|e| e.id.stream == after.stream && e.id.seq > after.seq)
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        out
    }

    async fn remove_session(&self, session: &str) {
        let mut g = self.lock();
        if let Some(log) = g.logs.remove(session) {
            g.bytes -= log.bytes;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(stream: u64, seq: u64) -> StoredEvent {
        StoredEvent {
            id: EventId { stream, seq },
            data: Bytes::from(format!("{stream}/{seq}")),
        }
    }

    #[tokio::test]
    async fn replays_one_stream_and_stays_bounded() {
        let s = InMemoryEventStore::new(3, 2);
        for seq in 0..4 {
            s.store("a", ev(1, seq)).await;
        }
        s.store("a", ev(2, 0)).await;
        // 3 per session: 1-0 and 1-1 were evicted.
        let r = s.replay_after("a", EventId { stream: 1, seq: 0 }).await;
        assert_eq!(r.iter().map(|e| e.id.seq).collect::<Vec<_>>(), vec![2, 3]);
        s.store("b", ev(0, 0)).await;
        s.store("c", ev(0, 0)).await; // evicts session a
        assert!(
            s.replay_after("a", EventId { stream: 1, seq: 0 })
                .await
                .is_empty()
        );
        assert_eq!(s.len(), 2);
        s.remove_session("b").await;
        assert_eq!(s.len(), 1);
        assert_eq!(
            "12-7".parse::<EventId>().unwrap(),
            EventId { stream: 12, seq: 7 }
        );
        assert!("x".parse::<EventId>().is_err());
        let max = EventId {
            stream: u64::MAX,
            seq: 0,
        };
        assert_eq!(max.to_string(), format!("{}-0", u64::MAX));
        assert_eq!(max.to_string().parse::<EventId>().unwrap(), max);
        let widest = EventId {
            stream: u64::MAX,
            seq: u64::MAX,
        };
        assert_eq!(widest.to_string(), format!("{0}-{0}", u64::MAX));
        assert_eq!(EventId { stream: 0, seq: 0 }.to_string(), "0-0");
    }

    fn big(stream: u64, seq: u64, n: usize) -> StoredEvent {
        StoredEvent {
            id: EventId { stream, seq },
            data: Bytes::from(vec![b'x'; n]),
        }
    }

    #[tokio::test]
    async fn bounded_by_bytes_per_session_and_in_all() {
        // 1,000 events, 10 KiB per session, 25 KiB in all.
        let s = InMemoryEventStore::with_bytes(1000, 100, 10 << 10, 25 << 10);
        for seq in 0..100 {
            s.store("a", big(1, seq, 1000)).await;
            assert!(s.session_bytes("a") <= 10 << 10);
        }
        // The newest events are kept, the oldest evicted.
        let r = s.replay_after("a", EventId { stream: 1, seq: 0 }).await;
        assert_eq!(r.last().map(|e| e.id.seq), Some(99));
        assert_eq!(r.len(), (10 << 10) / (1000 + EVENT_OVERHEAD));
        for name in ["b", "c", "d"] {
            for seq in 0..20 {
                s.store(name, big(1, seq, 1000)).await;
                assert!(s.bytes() <= 25 << 10, "{}", s.bytes());
            }
        }
        // The least recently written session went first.
        assert_eq!(s.session_bytes("a"), 0);
        assert!(s.session_bytes("d") > 0);
        // An event over the budget is not kept at all.
        s.store("e", big(1, 0, 11 << 10)).await;
        assert_eq!(s.session_bytes("e"), 0);
        let before = s.bytes();
        s.remove_session("d").await;
        assert!(s.bytes() < before);
        let total: usize = ["b", "c", "d", "e"]
            .iter()
            .map(|n| s.session_bytes(n))
            .sum();
        assert_eq!(s.bytes(), total, "the total is the sum of the sessions");
    }
}
