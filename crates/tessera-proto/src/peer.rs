//! What the other side of a conversation declared it supports.

use std::sync::{Arc, LazyLock, OnceLock};

use serde_json::Value;
use tessera_types::{ClientCapabilities, JsonObject, ReceivedMeta, ServerCapabilities};

use crate::engine::meta_keys;

/// The peer's capabilities, typed by the peer's role: a server engine's peer
/// is a client, a client engine's peer is a server.
///
/// Cheap to clone (every request's context holds one). A 2026-07-28 request
/// brings its own client capabilities in `_meta`: they are read where they
/// are, in the request's shared `_meta`, and typed on first use of
/// [`PeerCapabilities::client`], so a request whose handler never looks
/// costs no parse and no copy. [`PeerCapabilities::declares`] and
/// [`PeerCapabilities::has_extension`] answer without typing them.
#[derive(Debug, Clone)]
pub struct PeerCapabilities(Repr);

#[derive(Debug, Clone)]
enum Repr {
    Client(Arc<ClientCapabilities>),
    Server(Arc<ServerCapabilities>),
    Request(Arc<RequestCapabilities>),
}

/// A modern request's client capabilities: its `_meta` (text), the member
/// read into an object once if asked, and typed once if asked.
struct RequestCapabilities {
    meta: ReceivedMeta,
    typed: OnceLock<ClientCapabilities>,
}

static EMPTY_OBJECT: LazyLock<JsonObject> = LazyLock::new(JsonObject::new);

impl RequestCapabilities {
    /// The capabilities object as sent (the engine checked it is one).
    fn raw(&self) -> &JsonObject {
        self.meta
            .get(meta_keys::CLIENT_CAPABILITIES)
            .and_then(Value::as_object)
            .unwrap_or(&EMPTY_OBJECT)
    }

    fn typed(&self) -> &ClientCapabilities {
        self.typed
            .get_or_init(|| ClientCapabilities::from_object(self.raw()))
    }
}

impl std::fmt::Debug for RequestCapabilities {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("RequestCapabilities")
            .field(self.raw())
            .finish()
    }
}

static NO_CLIENT_CAPABILITIES: LazyLock<ClientCapabilities> =
    LazyLock::new(ClientCapabilities::default);

impl Default for PeerCapabilities {
    /// A client that declared nothing.
    fn default() -> Self {
        PeerCapabilities(Repr::Client(Arc::default()))
    }
}

impl PartialEq for PeerCapabilities {
    fn eq(&self, other: &Self) -> bool {
        match (self.server(), other.server()) {
            (Some(a), Some(b)) => a == b,
            (None, None) => self.client() == other.client(),
            _ => false,
        }
    }
}

impl PeerCapabilities {
    /// The client capabilities in a 2026-07-28 request's `_meta`
    /// (`io.modelcontextprotocol/clientCapabilities`), shared with it, not
    /// copied, and read from its text on first use.
    pub fn from_request_meta(meta: ReceivedMeta) -> Self {
        PeerCapabilities(Repr::Request(Arc::new(RequestCapabilities {
            meta,
            typed: OnceLock::new(),
        })))
    }

    /// The client's capabilities shared (typed now if they were not yet),
    /// when the peer is a client.
    pub(crate) fn client_shared(&self) -> Option<Arc<ClientCapabilities>> {
        match &self.0 {
            Repr::Client(c) => Some(c.clone()),
            Repr::Request(r) => Some(Arc::new(r.typed().clone())),
            Repr::Server(_) => None,
        }
    }

    /// The client's capabilities, when the peer is a client.
    pub fn client(&self) -> Option<&ClientCapabilities> {
        match &self.0 {
            Repr::Client(c) => Some(c),
            Repr::Request(r) => Some(r.typed()),
            Repr::Server(_) => None,
        }
    }

    /// The client's capabilities; none declared when the peer is a server.
    pub fn client_or_none(&self) -> &ClientCapabilities {
        self.client().unwrap_or(&NO_CLIENT_CAPABILITIES)
    }

    /// The server's capabilities, when the peer is a server.
    pub fn server(&self) -> Option<&ServerCapabilities> {
        match &self.0 {
            Repr::Server(s) => Some(s),
            Repr::Client(_) | Repr::Request(_) => None,
        }
    }

    /// Whether the peer declared the top-level member `name` (`"sampling"`,
    /// `"tools"`, or one Tessera does not model).
    pub fn declares(&self, name: &str) -> bool {
        match &self.0 {
            Repr::Client(c) => c.declares(name),
            Repr::Server(s) => s.declares(name),
            // Every member sent is either typed or kept: the same answer.
            Repr::Request(r) => r.raw().contains_key(name),
        }
    }

    /// Whether the peer declared the extension `id`.
    pub fn has_extension(&self, id: &str) -> bool {
        match &self.0 {
            Repr::Client(c) => c.has_extension(id),
            Repr::Server(s) => s.has_extension(id),
            Repr::Request(r) => r
                .raw()
                .get("extensions")
                .and_then(Value::as_object)
                .is_some_and(|e| e.contains_key(id)),
        }
    }

    /// The capabilities as a JSON object, as they go on the wire.
    pub fn to_object(&self) -> JsonObject {
        let value = match &self.0 {
            Repr::Client(c) => serde_json::to_value(&**c),
            Repr::Server(s) => serde_json::to_value(&**s),
            Repr::Request(r) => return r.raw().clone(),
        };
        match value {
            Ok(Value::Object(o)) => o,
            // Both types serialise to an object (string keys only).
            _ => JsonObject::new(),
        }
    }
}

/// The peer's `Implementation` info (`name`, `version`, …) as a JSON
/// object: the session's (legacy), or the `clientInfo` in a 2026-07-28
/// request's `_meta`, read from its text on first use. Derefs to the object.
#[derive(Clone)]
pub struct PeerInfo(InfoRepr);

#[derive(Clone)]
enum InfoRepr {
    Shared(Arc<JsonObject>),
    /// A `_meta` whose [`meta_keys::CLIENT_INFO`] is an object.
    Request(ReceivedMeta),
}

impl PeerInfo {
    /// The `io.modelcontextprotocol/clientInfo` of a 2026-07-28 request's
    /// `_meta`, when it is an object (not read until used).
    pub fn from_request_meta(meta: &ReceivedMeta) -> Option<Self> {
        meta.member_text(meta_keys::CLIENT_INFO)
            .is_some_and(|t| t.starts_with('{'))
            .then(|| PeerInfo(InfoRepr::Request(meta.clone())))
    }
}

impl std::ops::Deref for PeerInfo {
    type Target = JsonObject;

    fn deref(&self) -> &JsonObject {
        match &self.0 {
            InfoRepr::Shared(o) => o,
            InfoRepr::Request(m) => m
                .get(meta_keys::CLIENT_INFO)
                .and_then(Value::as_object)
                .unwrap_or(&EMPTY_OBJECT),
        }
    }
}

impl From<Arc<JsonObject>> for PeerInfo {
    fn from(o: Arc<JsonObject>) -> Self {
        PeerInfo(InfoRepr::Shared(o))
    }
}

impl From<JsonObject> for PeerInfo {
    fn from(o: JsonObject) -> Self {
        PeerInfo(InfoRepr::Shared(Arc::new(o)))
    }
}

impl PartialEq for PeerInfo {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl std::fmt::Debug for PeerInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("PeerInfo").field(&**self).finish()
    }
}

impl From<ClientCapabilities> for PeerCapabilities {
    fn from(c: ClientCapabilities) -> Self {
        PeerCapabilities(Repr::Client(Arc::new(c)))
    }
}

impl From<ServerCapabilities> for PeerCapabilities {
    fn from(s: ServerCapabilities) -> Self {
        PeerCapabilities(Repr::Server(Arc::new(s)))
    }
}

impl From<Arc<ClientCapabilities>> for PeerCapabilities {
    fn from(c: Arc<ClientCapabilities>) -> Self {
        PeerCapabilities(Repr::Client(c))
    }
}

impl From<Arc<ServerCapabilities>> for PeerCapabilities {
    fn from(s: Arc<ServerCapabilities>) -> Self {
        PeerCapabilities(Repr::Server(s))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn request_capabilities_are_typed_on_first_use_and_answer_the_same() {
        let caps = json!({"sampling": {}, "roots": true,
                          "extensions": {"io.modelcontextprotocol/tasks": {}}});
        let mut meta = JsonObject::new();
        meta.insert(meta_keys::CLIENT_CAPABILITIES.into(), caps.clone());
        let lazy = PeerCapabilities::from_request_meta(ReceivedMeta::from(meta));
        let Value::Object(raw) = caps else {
            unreachable!()
        };
        let eager = PeerCapabilities::from(ClientCapabilities::from_object(&raw));
        for name in ["sampling", "roots", "elicitation", "extensions", "x"] {
            assert_eq!(lazy.declares(name), eager.declares(name), "{name}");
        }
        for id in ["io.modelcontextprotocol/tasks", "other"] {
            assert_eq!(lazy.has_extension(id), eager.has_extension(id), "{id}");
        }
        assert_eq!(lazy.to_object(), raw);
        assert_eq!(eager.to_object(), raw);
        assert_eq!(lazy, eager);
        assert!(lazy.client().unwrap().sampling.is_some());
        assert!(lazy.server().is_none());
        let server = PeerCapabilities::from(ServerCapabilities::default());
        assert_ne!(server, eager);
        assert_eq!(server.client_or_none(), &ClientCapabilities::default());
    }

    #[test]
    fn request_client_info_is_read_from_the_meta_text_when_used() {
        let meta = ReceivedMeta::from_text(
            r#"{"io.modelcontextprotocol/clientInfo":{"name":"c","version":"\u0031"},"x":1}"#,
        )
        .unwrap();
        let info = PeerInfo::from_request_meta(&meta).unwrap();
        assert_eq!(info.get("version"), Some(&json!("1")));
        assert_eq!(
            info,
            PeerInfo::from(
                json!({"name": "c", "version": "1"})
                    .as_object()
                    .unwrap()
                    .clone()
            )
        );
        for text in [
            r#"{"io.modelcontextprotocol/clientInfo":"c"}"#,
            r#"{"io.modelcontextprotocol/clientInfo":null}"#,
            r#"{}"#,
        ] {
            let meta = ReceivedMeta::from_text(text).unwrap();
            assert!(PeerInfo::from_request_meta(&meta).is_none(), "{text}");
        }
    }
}
