//! Several instances, one endpoint: how a legacy (Streamable HTTP) session
//! is served by whichever instance a request reaches.
//!
//! # How state moves
//!
//! Every instance is built with the same [`SessionStore`] and [`Bus`]
//! ([`McpHttpBuilder::session_store`](super::McpHttpBuilder::session_store),
//! [`McpHttpBuilder::bus`](super::McpHttpBuilder::bus)) and, for resumable
//! streams, the same [`EventStore`](super::EventStore).
//!
//! - The instance that answers `initialize` saves the session's
//!   [`SessionState`] before the answer leaves (a store that is down makes
//!   the handshake fail with `503`), and saves it again whenever it changes
//!   (`notifications/initialized`, `logging/setLevel`, `resources/subscribe`
//!   and `unsubscribe`, the standalone stream moving): the connection core
//!   exports its state after each change, and the session's router saves it
//!   before writing the next message. The TTL is the session idle timeout;
//!   while the session is used, each instance refreshes it at most once per
//!   quarter of it ([`SessionStore::touch`]).
//! - Only Streamable HTTP sessions are shared; a 2024-11-05 HTTP+SSE session
//!   lives on the instance holding its one stream.
//! - A request naming a session this instance does not hold loads the state
//!   and restores a local copy of the session: a connection core that starts
//!   where the handshake left it, with the stored log level and the server's
//!   per-session data (resource subscriptions). The principal the session is
//!   bound to is checked first: anyone else gets `404` and no handler runs.
//!   Requests for a session held locally need no store round trip.
//! - Each copy subscribes to its session's topic (below) while it lives. A
//!   copy ending on its own (idle, shutdown) leaves the stored state alone;
//!   `DELETE` removes it from the store and tells every copy to end, and so
//!   does an instance that evicts a session from its table to make room.
//! - The session caps are also counted by the store
//!   ([`SessionStore::admit`], in Redis for `RedisSessionStore`) when
//!   `initialize` opens a session: the sessions it forgets to make room are
//!   ended here and, through the bus, on every other instance.
//!
//! Without a bus the instance is alone and nothing is published. Given a
//! store (a persistent one, say), it still saves there, so that sessions
//! outlive a restart; with the default in-memory store it stores nothing,
//! since nothing could read it back (a session that ends locally is over).
//!
//! # Topics
//!
//! `tessera/session/{id}` carries [`Note`]s about one session, each tagged
//! with the sending instance's origin (an instance ignores its own):
//!
//! - `State`: the session's new state; copies with an older revision take it
//!   (log level, handshake, subscriptions, who holds the standalone stream).
//! - `Response { to }`: the client's answer to a request the server sent
//!   (elicitation, sampling, roots), POSTed to an instance that did not send
//!   it. Server-to-client request ids carry the sender's instance tag in
//!   their upper bits (`tag << 32 | n`), so the receiver knows where it goes.
//! - `Cancelled`: the client's `notifications/cancelled`; every copy hands it
//!   to its core, and the one running the request stops it.
//! - `Standalone { to }`: a message for the session's standalone (GET)
//!   stream produced on a copy that does not hold it. The holder is part of
//!   the stored state (the instance that answered `initialize`, then the one
//!   where the latest GET opened). Server-wide notifications
//!   (`resources/updated`, `*/list_changed`) are produced by every copy from
//!   the same event, so copies that do not hold the stream drop theirs: the
//!   client gets each exactly once. (So a handler that sends one of those
//!   notifications itself, unrelated to its request, rather than through the
//!   server's change announcements, reaches the client only when it runs on
//!   the holder.)
//! - `Ended`: the session was deleted.
//! - `Attach { to }`, `StreamEvent { to }`, `StreamEnd { to }`: a POST
//!   stream resumed (`Last-Event-ID`) on an instance other than the one
//!   running its request is relayed there until the request is answered
//!   (see `session::resume`).
//!
//! `tessera/events` (published and read by `tessera-server` when the factory
//! is a `Server`) carries server-wide events — a resource updated, a list
//! changed — to every instance, whose sessions and `subscriptions/listen`
//! streams are told as if the event had happened there.
//!
//! # Event ids
//!
//! An SSE event id is `{stream}-{seq}`. Stream numbers carry the instance tag
//! in their upper 32 bits: the standalone stream of a session on instance `t`
//! is `t << 32`, its POST streams `t << 32 | n`. Ids are therefore unique
//! across instances, and a `Last-Event-ID` replayed from the shared event
//! store on any instance returns the events of the stream it names. A lone
//! instance has tag 0, and its ids are those of earlier releases (`0-N` for
//! the standalone stream).

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use bytes::Bytes;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use tessera_runtime::{Bus, DynBus, DynSessionStore, SessionState, StoreError};
use tessera_types::{NotificationMethod, RequestId};

/// The key of the standalone stream's holder in the session's stored data.
pub(crate) const HOLDER_KEY: &str = "tessera-http/holder";

/// The prefix of per-session topics.
const SESSION_TOPIC: &str = "tessera/session/";

/// This instance's place among those serving one endpoint.
pub(crate) struct Cluster {
    pub store: Arc<dyn DynSessionStore>,
    pub bus: Option<Arc<dyn DynBus>>,
    /// Whether session state is stored at all: with a bus, or a store the
    /// builder was given. A lone instance with the default in-memory store
    /// would only write what nobody can read (every local end of a session
    /// removes it, and the process holds the only copy): it stores nothing.
    pub stores: bool,
    /// This instance's tag (in request ids and stream numbers); 0 when alone.
    pub tag: u32,
    /// Tells this instance's messages from the others'.
    pub origin: u64,
    /// The TTL of stored session state.
    pub ttl: Duration,
}

/// Tags are 20 bits, so that `tag << 32 | n` stays within the integers a
/// JavaScript client reads exactly (2^53).
const TAG_BITS: u32 = 20;

/// Instances in one process get distinct tags (tests run several).
static NEXT_TAG: AtomicU32 = AtomicU32::new(0);

fn fresh_tag() -> u32 {
    use rand::Rng;
    static BASE: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    let base = *BASE.get_or_init(|| rand::rng().random_range(1..(1 << TAG_BITS)));
    let n = NEXT_TAG.fetch_add(1, Ordering::Relaxed);
    let tag = (base + n) % (1 << TAG_BITS);
    if tag == 0 { 1 } else { tag }
}

impl Cluster {
    /// `store`: the one the builder was given, if any.
    pub(crate) fn new(
        store: Option<Arc<dyn DynSessionStore>>,
        bus: Option<Arc<dyn DynBus>>,
        ttl: Duration,
    ) -> Self {
        let tag = if bus.is_some() { fresh_tag() } else { 0 };
        Cluster {
            stores: store.is_some() || bus.is_some(),
            store: store
                .unwrap_or_else(|| Arc::new(tessera_runtime::MemorySessionStore::default())),
            bus,
            tag,
            origin: rand::random(),
            ttl,
        }
    }

    /// How often a session's TTL is refreshed while it is used.
    pub(crate) fn touch_every(&self) -> Duration {
        self.ttl / 4
    }

    /// Server-to-client requests of this instance are numbered from here.
    pub(crate) fn request_id_base(&self) -> i64 {
        i64::from(self.tag) << 32
    }

    /// The stream number of a session's standalone stream on this instance
    /// (its POST streams follow it).
    pub(crate) fn stream_base(&self) -> u64 {
        u64::from(self.tag) << 32
    }

    /// The instance that sent request `id` to the client, when it is
    /// another one.
    pub(crate) fn elsewhere(&self, id: &RequestId) -> Option<u32> {
        self.bus.as_ref()?;
        match id {
            RequestId::Number(n) if *n > 0 => {
                let tag = u32::try_from(*n >> 32).ok()?;
                (tag != 0 && tag != self.tag && tag < (1 << TAG_BITS)).then_some(tag)
            }
            _ => None,
        }
    }

    pub(crate) fn session_topic(id: &str) -> String {
        let mut t = String::with_capacity(SESSION_TOPIC.len() + id.len());
        t.push_str(SESSION_TOPIC);
        t.push_str(id);
        t
    }

    /// Publishes a note about session `id` (nothing without a bus).
    pub(crate) async fn publish(&self, id: &str, note: Note) -> Result<(), StoreError> {
        let Some(bus) = &self.bus else {
            return Ok(());
        };
        let envelope = Envelope {
            o: self.origin,
            n: note,
        };
        let bytes = Bytes::from(serde_json::to_vec(&envelope).unwrap_or_default());
        bus.publish(&Cluster::session_topic(id), bytes).await
    }

    /// Reads a note published by another instance (`None`: ours, or unreadable).
    pub(crate) fn read(&self, bytes: &[u8]) -> Option<Note> {
        match serde_json::from_slice::<Envelope>(bytes) {
            Ok(e) if e.o != self.origin => Some(e.n),
            Ok(_) => None,
            Err(e) => {
                tracing::warn!(%e, "unreadable message on a session topic: ignored");
                None
            }
        }
    }
}

/// Who holds a session's standalone stream, from its stored state.
pub(crate) fn holder_of(state: &SessionState) -> u32 {
    state
        .data
        .get(HOLDER_KEY)
        .and_then(serde_json::Value::as_u64)
        .and_then(|t| u32::try_from(t).ok())
        .unwrap_or(0)
}

/// Whether a notification is one every copy of a session produces from the
/// same server-wide event (only the standalone stream's holder sends it on).
pub(crate) fn is_broadcast(method: &str) -> bool {
    use tessera_types::{
        PromptListChangedNotification, ResourceListChangedNotification,
        ResourceUpdatedNotification, ToolListChangedNotification,
    };
    method == ResourceUpdatedNotification::METHOD
        || method == ToolListChangedNotification::METHOD
        || method == ResourceListChangedNotification::METHOD
        || method == PromptListChangedNotification::METHOD
}

/// What travels on a session's topic.
#[derive(Serialize, Deserialize)]
struct Envelope {
    /// The sender's origin.
    o: u64,
    n: Note,
}

/// A message about one session between its copies (see the module
/// documentation).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum Note {
    State(Box<SessionState>),
    Response {
        to: u32,
        message: Box<RawValue>,
    },
    Cancelled {
        message: Box<RawValue>,
    },
    Standalone {
        to: u32,
        message: Box<RawValue>,
    },
    Ended,
    Attach {
        to: u32,
        stream: u64,
        after: u64,
        from: u32,
    },
    StreamEvent {
        to: u32,
        stream: u64,
        seq: u64,
        message: Box<RawValue>,
    },
    StreamEnd {
        to: u32,
        stream: u64,
    },
}

impl Note {
    /// A JSON message as a raw value (`None` if it is not JSON).
    pub(crate) fn raw(bytes: &[u8]) -> Option<Box<RawValue>> {
        let s = std::str::from_utf8(bytes).ok()?;
        RawValue::from_string(s.to_owned()).ok()
    }
}

/// The JSON-RPC error of a request that needs the session store while it is
/// down.
pub(crate) fn store_down(e: &StoreError) -> tessera_types::ErrorObject {
    tessera_types::ErrorObject::internal(format!(
        "Service Unavailable: the session store is down ({e}); retry later"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_types::ProtocolVersion;
    use tessera_types::methods;

    #[test]
    fn notes_round_trip_and_ids_name_their_instance() {
        let c = Cluster::new(
            None,
            Some(Arc::new(tessera_runtime::LocalBus::new())),
            Duration::from_secs(60),
        );
        assert!(c.stores);
        let mut other = Cluster::new(Some(c.store.clone()), c.bus.clone(), c.ttl);
        assert_ne!(c.tag, other.tag);
        assert_ne!(c.tag, 0);
        let mine = RequestId::Number(c.request_id_base() + 3);
        assert_eq!(c.elsewhere(&mine), None);
        assert_eq!(other.elsewhere(&mine), Some(c.tag));
        assert_eq!(other.elsewhere(&RequestId::Number(5)), None);
        assert_eq!(other.elsewhere(&RequestId::String("x".into())), None);
        let state = SessionState::new("s", ProtocolVersion::V2025_11_25);
        let note = Note::State(Box::new(state.clone()));
        let bytes = serde_json::to_vec(&Envelope {
            o: c.origin,
            n: note,
        })
        .unwrap();
        assert!(c.read(&bytes).is_none(), "own messages are skipped");
        assert!(matches!(other.read(&bytes), Some(Note::State(s)) if *s == state));
        let raw = Note::raw(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#).unwrap();
        let bytes = serde_json::to_vec(&Envelope {
            o: c.origin,
            n: Note::Response {
                to: 7,
                message: raw,
            },
        })
        .unwrap();
        match other.read(&bytes) {
            Some(Note::Response { to, message }) => {
                assert_eq!(to, 7);
                assert_eq!(message.get(), r#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
            }
            other => panic!("{other:?}"),
        }
        other.bus = None;
        assert_eq!(other.elsewhere(&mine), None, "alone, every id is local");
        assert!(is_broadcast(methods::NOTIFICATIONS_RESOURCES_UPDATED));
        assert!(!is_broadcast(methods::NOTIFICATIONS_MESSAGE));
    }
}
