//! [`SessionState`]: what a legacy session needs to go on in a fresh process.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tessera_proto::SessionSnapshot;
use tessera_types::{ClientCapabilities, JsonObject, ProtocolVersion};

/// A connection's legacy session as its driver exported it after a change
/// (see [`PeerInfo::session`](crate::PeerInfo::session)): the engine's part
/// and the service's data.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionExport {
    /// Moves with every change the export reflects.
    pub revision: u64,
    /// The engine's part.
    pub snapshot: SessionSnapshot,
    /// What [`Service::session_data`](crate::Service::session_data) gave.
    pub data: JsonObject,
}

/// The stored state of one legacy session: everything a fresh process needs
/// to carry on serving it, and nothing tied to a connection.
///
/// Serialised with stable field names (camelCase, below) and a format number
/// (`"v"`); fields added later are optional, and unknown fields are ignored,
/// so instances of neighbouring releases can share a store.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionState {
    /// The format of this record ([`SessionState::FORMAT`] when written).
    #[serde(rename = "v")]
    pub format: u32,
    /// The session id (`Mcp-Session-Id`).
    pub id: String,
    /// Counts the saves of this session: every save writes one more than the
    /// state it started from, so a reader can tell a newer copy from an older.
    #[serde(default)]
    pub revision: u64,
    /// The protocol version negotiated by `initialize`.
    pub protocol_version: ProtocolVersion,
    /// The client's `clientInfo` from `initialize`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_info: Option<JsonObject>,
    /// The client's capabilities from `initialize` (every member kept, as
    /// [`ClientCapabilities::from_object`] reads them).
    #[serde(default, deserialize_with = "lenient_capabilities")]
    pub client_capabilities: ClientCapabilities,
    /// Whether `notifications/initialized` has arrived.
    #[serde(default)]
    pub initialized: bool,
    /// The minimum level set by `logging/setLevel`, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_level: Option<String>,
    /// The authenticated principal (subject) the session is bound to: every
    /// request of the session must be made by it. `None`: opened without
    /// authentication.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub principal: Option<String>,
    /// Who the session counts against for per-client limits (the transport's
    /// key: a principal or a peer address), as text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_key: Option<String>,
    /// Data the server keeps per session, by key (for example
    /// `tessera-server`'s resource subscriptions). Opaque to the store.
    #[serde(default, skip_serializing_if = "JsonObject::is_empty")]
    pub data: JsonObject,
}

impl SessionState {
    /// The format number this release writes.
    pub const FORMAT: u32 = 1;

    /// The state of a session whose `initialize` was just answered at `version`.
    pub fn new(id: impl Into<String>, protocol_version: ProtocolVersion) -> Self {
        SessionState {
            format: Self::FORMAT,
            id: id.into(),
            revision: 0,
            protocol_version,
            client_info: None,
            client_capabilities: ClientCapabilities::default(),
            initialized: false,
            log_level: None,
            principal: None,
            client_key: None,
            data: JsonObject::new(),
        }
    }

    /// The engine's part of the state, for
    /// [`Engine::restore_session`](tessera_proto::Engine::restore_session).
    pub fn snapshot(&self) -> SessionSnapshot {
        let mut s = SessionSnapshot::new(self.protocol_version).with_peer(
            Arc::new(self.client_capabilities.clone()),
            self.client_info.clone().map(Arc::new),
        );
        s.initialized = self.initialized;
        s.log_level = self.log_level.clone();
        s
    }

    /// Takes the engine's and the service's part from a connection's
    /// [`SessionExport`]: the export's data replaces `data` whole (a
    /// transport that keeps keys of its own there puts them back).
    pub fn update_from(&mut self, export: &SessionExport) {
        let s = &export.snapshot;
        self.protocol_version = s.version;
        self.initialized = s.initialized;
        self.client_capabilities.clone_from(&s.peer_capabilities);
        self.client_info = s.peer_info.as_deref().cloned();
        self.log_level = s.log_level.clone();
        self.data.clone_from(&export.data);
    }

    /// Serialises the state (JSON).
    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// Reads a state written by [`SessionState::to_bytes`] (this release or a
    /// neighbouring one).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, crate::StoreError> {
        serde_json::from_slice(bytes)
            .map_err(|e| crate::StoreError::Corrupt(format!("session state: {e}")))
    }
}

/// Stored capabilities are what a client sent, misfits included: read them
/// the way the engine did.
fn lenient_capabilities<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<ClientCapabilities, D::Error> {
    JsonObject::deserialize(d).map(|raw| ClientCapabilities::from_object(&raw))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn field_names_are_stable() {
        let mut s = SessionState::new("abc", ProtocolVersion::V2025_06_18);
        s.log_level = Some("warning".into());
        s.principal = Some("alice".into());
        s.initialized = true;
        s.data.insert("x".into(), json!([1]));
        let v: serde_json::Value = serde_json::from_slice(&s.to_bytes()).unwrap();
        assert_eq!(
            v,
            json!({"v": 1, "id": "abc", "revision": 0, "protocolVersion": "2025-06-18",
                   "clientCapabilities": {}, "initialized": true, "logLevel": "warning",
                   "principal": "alice", "data": {"x": [1]}})
        );
        assert_eq!(SessionState::from_bytes(&s.to_bytes()).unwrap(), s);
        // Unknown fields of a newer release are ignored; missing optional ones default.
        let newer = br#"{"v":2,"id":"a","protocolVersion":"2025-11-25","future":1}"#;
        let old = SessionState::from_bytes(newer).unwrap();
        assert_eq!(old.format, 2);
        assert!(!old.initialized);
        assert!(SessionState::from_bytes(b"{").is_err());
    }

    #[test]
    fn stored_capabilities_keep_every_member() {
        // What a client sent, misfits and unknown members included, comes
        // back as it was stored.
        let stored = br#"{"v":1,"id":"a","protocolVersion":"2025-11-25",
            "clientCapabilities":{"roots":true,"sampling":{},"com.example/x":[1]}}"#;
        let s = SessionState::from_bytes(stored).unwrap();
        assert!(s.client_capabilities.sampling.is_some());
        assert!(s.client_capabilities.declares("roots"));
        let v: serde_json::Value = serde_json::from_slice(&s.to_bytes()).unwrap();
        assert_eq!(
            v["clientCapabilities"],
            json!({"roots": true, "sampling": {}, "com.example/x": [1]})
        );
    }
}
