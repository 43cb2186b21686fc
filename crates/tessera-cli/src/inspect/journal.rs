//! The journal: everything the inspector's page is told about, in order —
//! each JSON-RPC message on every connection, log messages, progress,
//! connection changes. It keeps the most recent events within a byte and a
//! count budget (so a page opened late, or reloaded, sees the history) and
//! hands each new event to the live event streams.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::Serialize;
use serde_json::{Map, Value};
use tokio::sync::broadcast;

/// The bytes of history kept (the serialised events).
pub const MAX_BYTES: usize = 8 * 1024 * 1024;
/// The number of events kept.
pub const MAX_EVENTS: usize = 20_000;
/// A message larger than this is kept as its first bytes and its size.
pub const MAX_MESSAGE_BYTES: usize = 256 * 1024;
/// How far a live stream may fall behind before it is told it lagged.
const LIVE_CAPACITY: usize = 2048;

/// A body that is not an object, recorded as the event's `value`.
#[derive(Serialize)]
struct Wrapped {
    value: Value,
}

/// An event: its body's members and the journal's own.
#[derive(Serialize)]
struct Stamped<'a> {
    #[serde(flatten)]
    body: Map<String, Value>,
    seq: u64,
    #[serde(rename = "type")]
    kind: &'a str,
    at: f64,
}

/// The first bytes of something too large to show whole, and its size.
#[derive(Debug, Clone, Serialize)]
pub struct Head {
    /// Whether it was cut.
    pub truncated: bool,
    /// Its size in bytes.
    pub bytes: usize,
    /// Its first bytes, as text.
    pub head: String,
}

/// A message (or body) as an event shows it.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Shown {
    /// The JSON as sent.
    Json(Value),
    /// Too large: its head.
    Truncated(Head),
    /// Not JSON: the text.
    Unparsed {
        /// The bytes as text.
        unparsed: String,
    },
}

/// A `protocol` event: one JSON-RPC message on one connection.
#[derive(Serialize)]
struct ProtocolEvent<'a> {
    connection: u64,
    dir: &'a str,
    message: Shown,
}

/// One event, serialised once.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Its position in the journal (1, 2, …).
    pub seq: u64,
    /// The event as JSON text (an object with `seq`, `type` and `at`).
    pub text: Arc<str>,
}

/// The journal. Cheap to clone.
#[derive(Clone)]
pub struct Journal {
    inner: Arc<Inner>,
}

struct Inner {
    started: Instant,
    state: Mutex<State>,
    live: broadcast::Sender<Entry>,
}

#[derive(Default)]
struct State {
    next: u64,
    bytes: usize,
    kept: VecDeque<Entry>,
    dropped: u64,
}

impl Journal {
    /// An empty journal.
    pub fn new() -> Journal {
        let (live, _) = broadcast::channel(LIVE_CAPACITY);
        Journal {
            inner: Arc::new(Inner {
                started: Instant::now(),
                state: Mutex::new(State {
                    next: 1,
                    ..State::default()
                }),
                live,
            }),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.inner
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Records an event of `kind` with the members of `body` (an object;
    /// anything else is recorded as its `value`), adding `seq`, `type` and
    /// `at` (milliseconds since launch). The event is written with its
    /// members in name order, whatever the order of `body`'s fields.
    pub fn record(&self, kind: &str, body: impl Serialize) {
        let body = match serde_json::to_value(&body) {
            Ok(Value::Object(o)) => o,
            Ok(other) => match serde_json::to_value(Wrapped { value: other }) {
                Ok(Value::Object(o)) => o,
                _ => Map::new(),
            },
            Err(_) => Map::new(),
        };
        let at = self.inner.started.elapsed().as_secs_f64() * 1000.0;
        let mut state = self.state();
        let seq = state.next;
        state.next += 1;
        let stamped = Stamped {
            body,
            seq,
            kind,
            at: (at * 10.0).round() / 10.0,
        };
        // Through a `Value`, whose members are kept in name order.
        let text: Arc<str> = serde_json::to_value(&stamped)
            .unwrap_or(Value::Null)
            .to_string()
            .into();
        let entry = Entry { seq, text };
        state.bytes += entry.text.len();
        state.kept.push_back(entry.clone());
        while state.bytes > MAX_BYTES || state.kept.len() > MAX_EVENTS {
            match state.kept.pop_front() {
                Some(old) => {
                    state.bytes -= old.text.len();
                    state.dropped += 1;
                }
                None => break,
            }
        }
        // Sent under the lock, so that live streams see the journal's order.
        let _ = self.inner.live.send(entry);
    }

    /// Records one JSON-RPC message (`dir` is `"out"` to the server or
    /// `"in"` from it) of connection `conn`, given as the bytes on the wire.
    pub fn message(&self, conn: u64, dir: &str, bytes: &[u8]) {
        let message = if bytes.len() > MAX_MESSAGE_BYTES {
            Shown::Truncated(Head {
                truncated: true,
                bytes: bytes.len(),
                head: String::from_utf8_lossy(&bytes[..MAX_MESSAGE_BYTES.min(4096)]).into_owned(),
            })
        } else {
            match serde_json::from_slice::<Value>(bytes) {
                Ok(v) => Shown::Json(v),
                Err(_) => Shown::Unparsed {
                    unparsed: String::from_utf8_lossy(bytes).into_owned(),
                },
            }
        };
        self.record(
            "protocol",
            ProtocolEvent {
                connection: conn,
                dir,
                message,
            },
        );
    }

    /// The events kept, oldest first, and a live stream of the ones after
    /// them (subscribed before the snapshot is taken, so none is missed).
    pub fn follow(&self) -> (Vec<Entry>, u64, broadcast::Receiver<Entry>) {
        let state = self.state();
        let live = self.inner.live.subscribe();
        let kept: Vec<Entry> = state.kept.iter().cloned().collect();
        (kept, state.dropped, live)
    }

    /// The bytes and count of the history kept.
    #[cfg(test)]
    pub fn size(&self) -> (usize, usize) {
        let s = self.state();
        (s.bytes, s.kept.len())
    }
}

impl Default for Journal {
    fn default() -> Self {
        Journal::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_is_written_in_name_order_and_the_journal_members_win() {
        #[derive(Serialize)]
        struct Body {
            zeta: u8,
            alpha: &'static str,
            seq: u8,
        }
        let j = Journal::new();
        let (_, _, mut live) = j.follow();
        j.record(
            "x",
            Body {
                zeta: 1,
                alpha: "a",
                seq: 99,
            },
        );
        let text = live.try_recv().unwrap().text;
        assert!(text.starts_with(r#"{"alpha":"a","at":"#), "{text}");
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            (v["seq"].clone(), v["type"].clone()),
            (json!(1), json!("x"))
        );
        assert_eq!(v["zeta"], 1);
        j.record("y", json!(5));
        let v: Value = serde_json::from_str(&live.try_recv().unwrap().text).unwrap();
        assert_eq!(v["value"], 5);
        j.message(2, "in", b"not json");
        let v: Value = serde_json::from_str(&live.try_recv().unwrap().text).unwrap();
        assert_eq!(
            (
                v["connection"].clone(),
                v["dir"].clone(),
                v["message"].clone()
            ),
            (json!(2), json!("in"), json!({"unparsed": "not json"}))
        );
    }
    use serde_json::json;

    #[test]
    fn keeps_order_and_stays_within_its_budget() {
        let j = Journal::new();
        let (_, _, mut live) = j.follow();
        j.record("log", json!({"text": "a"}));
        j.message(1, "out", br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
        let first = live.try_recv().unwrap();
        let second = live.try_recv().unwrap();
        assert_eq!((first.seq, second.seq), (1, 2));
        let v: Value = serde_json::from_str(&second.text).unwrap();
        assert_eq!(v["type"], "protocol");
        assert_eq!(v["message"]["method"], "ping");
        let big = "x".repeat(MAX_MESSAGE_BYTES - 100);
        for _ in 0..(MAX_BYTES / MAX_MESSAGE_BYTES + 8) {
            j.message(1, "in", format!("\"{big}\"").as_bytes());
        }
        let (bytes, count) = j.size();
        assert!(bytes <= MAX_BYTES, "{bytes} bytes kept");
        let (kept, dropped, _) = j.follow();
        assert!(dropped > 0 && kept.len() == count);
        assert!(kept.windows(2).all(|w| w[0].seq < w[1].seq));
    }

    #[test]
    fn an_oversized_message_is_kept_as_its_head() {
        let j = Journal::new();
        let (_, _, mut live) = j.follow();
        let huge = vec![b'a'; MAX_MESSAGE_BYTES + 1];
        j.message(7, "in", &huge);
        let v: Value = serde_json::from_str(&live.try_recv().unwrap().text).unwrap();
        assert_eq!(v["message"]["truncated"], true);
        assert_eq!(v["message"]["bytes"], MAX_MESSAGE_BYTES + 1);
        assert!(v.to_string().len() < 8 * 1024);
    }
}
