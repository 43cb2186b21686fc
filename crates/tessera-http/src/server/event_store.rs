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
pub trait EventStore: Send + Sync + 'static {
    /// Records an event sent (or to be sent) on a stream of `session`.
    ///
    /// The event is taken when `store` is called: the order of calls is the
    /// order of the events, whether or not the returned futures are polled
    /// in that order. The future resolves once the event is kept (or failed
    /// to be). A session writes the event to its client without waiting for
    /// the future, and ends the event's stream only after it resolved; it
    /// waits for every pending future of the session before it replays.
    fn store(&self, session: &str, event: StoredEvent) -> BoxFuture<'static, ()>;

    /// The events of `after.stream` with a sequence number above `after.seq`,
    /// oldest first, among them every event whose [`store`](Self::store)
    /// future has resolved. Events already evicted are simply missing.
    fn replay_after(&self, session: &str, after: EventId) -> BoxFuture<'_, Vec<StoredEvent>>;

    /// Forgets everything about a session (it ended).
    fn remove_session(&self, session: &str) -> BoxFuture<'_, ()>;
}

/// A bounded in-memory [`EventStore`]: the last `per_session` events of each
/// session (oldest evicted first), for at most `sessions` sessions (the
/// least recently written session is evicted first).
#[derive(Debug)]
pub struct InMemoryEventStore {
    per_session: usize,
    sessions: usize,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    logs: HashMap<String, Log>,
    /// Counts writes; a log's `written` is the count at its last write.
    clock: u64,
}

/// The events of one session.
#[derive(Debug, Default)]
struct Log {
    events: VecDeque<StoredEvent>,
    written: u64,
}

impl InMemoryEventStore {
    /// A store keeping `per_session` events for each of at most `sessions` sessions.
    pub fn new(per_session: usize, sessions: usize) -> Self {
        InMemoryEventStore {
            per_session: per_session.max(1),
            sessions: sessions.max(1),
            inner: Mutex::new(Inner::default()),
        }
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
}

impl Default for InMemoryEventStore {
    /// 256 events per session, 1024 sessions.
    fn default() -> Self {
        InMemoryEventStore::new(256, 1024)
    }
}

impl EventStore for InMemoryEventStore {
    fn store(&self, session: &str, event: StoredEvent) -> BoxFuture<'static, ()> {
        let mut g = self.lock();
        g.clock += 1;
        let clock = g.clock;
        let log = match g.logs.get_mut(session) {
            Some(log) => log,
            None => {
                if g.logs.len() >= self.sessions {
                    // Evict the least recently written session (a scan, only
                    // when a new session finds the store full).
                    let oldest = g
                        .logs
                        .iter()
                        .min_by_key(|(_, l)| l.written)
                        .map(|(k, _)| k.clone());
                    if let Some(k) = oldest {
                        g.logs.remove(&k);
                    }
                }
                g.logs.entry(session.to_owned()).or_default()
            }
        };
        log.written = clock;
        if log.events.len() >= self.per_session {
            log.events.pop_front();
        }
        log.events.push_back(event);
        Box::pin(async {})
    }

    fn replay_after(&self, session: &str, after: EventId) -> BoxFuture<'_, Vec<StoredEvent>> {
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
        Box::pin(async move { out })
    }

    fn remove_session(&self, session: &str) -> BoxFuture<'_, ()> {
        self.lock().logs.remove(session);
        Box::pin(async {})
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
}
