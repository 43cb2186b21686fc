//! The reserved `_meta` keys and typed views of request, result and
//! notification metadata.
//!
//! Every `_meta` member in this crate is an open [`MetaObject`] (a JSON
//! object), so nothing is lost. [`RequestMeta`], [`ResultMeta`] and
//! [`NotificationMeta`] read and write the keys the protocol reserves.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::JsonObject;
use crate::capabilities::ClientCapabilities;
use crate::jsonrpc::{ProgressToken, RequestId};
use crate::lifecycle::Implementation;
use crate::logging::LoggingLevel;
use crate::version::ProtocolVersion;

/// The contents of a `_meta` member (schema `MetaObject`).
pub type MetaObject = JsonObject;

/// The member of params, results and notifications that holds their
/// metadata.
pub const META: &str = "_meta";

/// `progressToken`: asks for progress notifications for a request.
pub const PROGRESS_TOKEN: &str = "progressToken";
/// The protocol version of a request. 2026-07-28 (required on client requests).
pub const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// The client's capabilities for a request. 2026-07-28 (required on client requests).
pub const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// The client's identity on a request. 2026-07-28.
pub const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// The lowest log level wanted for a request; without it the server sends
/// no log messages for the request. 2026-07-28.
pub const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// A tag a client puts in a request's `_meta` (a short string or an
/// integer) for the server to copy onto what it sends about that request.
/// A Tessera key.
pub const REQUEST_TAG: &str = "io.tessera/requestTag";
/// The id of the `subscriptions/listen` request a notification belongs to. 2026-07-28.
pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
/// The server's identity on a result. 2026-07-28.
pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// The task a message relates to (`RelatedTaskMetadata`). 2025-11-25 tasks.
pub const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";
/// Text for the model while a task runs, on a `CreateTaskResult`. 2025-11-25 tasks.
pub const MODEL_IMMEDIATE_RESPONSE: &str = "io.modelcontextprotocol/model-immediate-response";
/// W3C trace context `traceparent`. 2026-07-28 reserves it for OpenTelemetry.
pub const TRACEPARENT: &str = "traceparent";
/// W3C trace context `tracestate`. 2026-07-28 reserves it for OpenTelemetry.
pub const TRACESTATE: &str = "tracestate";
/// W3C `baggage`. 2026-07-28 reserves it for OpenTelemetry.
pub const BAGGAGE: &str = "baggage";

/// Whether a `_meta` key's prefix is reserved for MCP: its second label is
/// `modelcontextprotocol` or `mcp` (e.g. `io.modelcontextprotocol/`,
/// `dev.mcp/`).
pub fn is_reserved_key(key: &str) -> bool {
    match key.split_once('/') {
        Some((prefix, _)) => {
            matches!(
                prefix.split('.').nth(1),
                Some("modelcontextprotocol" | "mcp")
            )
        }
        None => false,
    }
}

/// Whether `key` follows the `_meta` key naming rules: an optional prefix of
/// dot-separated labels (letter first, letter or digit last, hyphens inside)
/// ending in `/`, then a name that is empty or starts and ends with an
/// alphanumeric and contains only alphanumerics, `-`, `_` and `.`.
pub fn is_valid_key(key: &str) -> bool {
    let (prefix, name) = match key.rsplit_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    if let Some(prefix) = prefix {
        let label_ok = |l: &str| {
            let b = l.as_bytes();
            !b.is_empty()
                && b[0].is_ascii_alphabetic()
                && b[b.len() - 1].is_ascii_alphanumeric()
                && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
        };
        if !prefix.split('.').all(label_ok) {
            return false;
        }
    }
    let b = name.as_bytes();
    b.is_empty()
        || (b[0].is_ascii_alphanumeric()
            && b[b.len() - 1].is_ascii_alphanumeric()
            && b.iter()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.')))
}

/// A typed view of a request's `_meta` (schema `RequestMetaObject`).
///
/// In 2026-07-28 `protocolVersion` and `clientCapabilities` are required on
/// every client request; in legacy versions only `progressToken` is defined.
/// Other keys are kept in `other`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RequestMeta {
    /// Asks for progress notifications with this token.
    #[serde(
        rename = "progressToken",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub progress_token: Option<ProgressToken>,
    /// The protocol version of the request. 2026-07-28.
    #[serde(
        rename = "io.modelcontextprotocol/protocolVersion",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub protocol_version: Option<String>,
    /// The client's capabilities. 2026-07-28.
    #[serde(
        rename = "io.modelcontextprotocol/clientCapabilities",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub client_capabilities: Option<ClientCapabilities>,
    /// The client's identity. 2026-07-28.
    #[serde(
        rename = "io.modelcontextprotocol/clientInfo",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub client_info: Option<Implementation>,
    /// The lowest log level wanted. 2026-07-28.
    #[serde(
        rename = "io.modelcontextprotocol/logLevel",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub log_level: Option<LoggingLevel>,
    /// Every other key.
    #[serde(flatten)]
    pub other: JsonObject,
}

impl RequestMeta {
    /// The metadata every 2026-07-28 client request must carry.
    pub fn modern(version: ProtocolVersion, capabilities: ClientCapabilities) -> Self {
        RequestMeta {
            protocol_version: Some(version.as_str().to_owned()),
            client_capabilities: Some(capabilities),
            ..RequestMeta::default()
        }
    }

    /// Reads a `_meta` object (absent means empty).
    pub fn from_meta(meta: Option<&JsonObject>) -> Result<Self, serde_json::Error> {
        serde_json::from_value(Value::Object(meta.cloned().unwrap_or_default()))
    }

    /// Converts back into a `_meta` object.
    pub fn into_meta(self) -> JsonObject {
        match serde_json::to_value(self) {
            Ok(Value::Object(m)) => m,
            _ => JsonObject::new(),
        }
    }

    /// The protocol version, if present and known to this crate.
    pub fn version(&self) -> Option<ProtocolVersion> {
        self.protocol_version
            .as_deref()
            .and_then(ProtocolVersion::parse)
    }

    /// Sets the client identity.
    pub fn with_client_info(mut self, info: Implementation) -> Self {
        self.client_info = Some(info);
        self
    }

    /// Sets the log level.
    pub fn with_log_level(mut self, level: LoggingLevel) -> Self {
        self.log_level = Some(level);
        self
    }

    /// Sets the progress token.
    pub fn with_progress_token(mut self, token: ProgressToken) -> Self {
        self.progress_token = Some(token);
        self
    }
}

/// A typed view of a result's `_meta` (schemas `ResultMetaObject` and
/// `SubscriptionsListenResultMetaObject`). 2026-07-28 keys; other keys are
/// kept in `other`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ResultMeta {
    /// The server's identity.
    #[serde(
        rename = "io.modelcontextprotocol/serverInfo",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub server_info: Option<Implementation>,
    /// The subscription id; only on `subscriptions/listen` results (required there).
    #[serde(
        rename = "io.modelcontextprotocol/subscriptionId",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub subscription_id: Option<RequestId>,
    /// Every other key.
    #[serde(flatten)]
    pub other: JsonObject,
}

impl ResultMeta {
    /// Reads a `_meta` object (absent means empty).
    pub fn from_meta(meta: Option<&JsonObject>) -> Result<Self, serde_json::Error> {
        serde_json::from_value(Value::Object(meta.cloned().unwrap_or_default()))
    }

    /// Converts back into a `_meta` object.
    pub fn into_meta(self) -> JsonObject {
        match serde_json::to_value(self) {
            Ok(Value::Object(m)) => m,
            _ => JsonObject::new(),
        }
    }
}

/// A typed view of a notification's `_meta` (schema
/// `NotificationMetaObject`). 2026-07-28 keys; other keys are kept in `other`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct NotificationMeta {
    /// The subscription the notification was delivered on.
    #[serde(
        rename = "io.modelcontextprotocol/subscriptionId",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub subscription_id: Option<RequestId>,
    /// Every other key.
    #[serde(flatten)]
    pub other: JsonObject,
}

impl NotificationMeta {
    /// Reads a `_meta` object (absent means empty).
    pub fn from_meta(meta: Option<&JsonObject>) -> Result<Self, serde_json::Error> {
        serde_json::from_value(Value::Object(meta.cloned().unwrap_or_default()))
    }

    /// Converts back into a `_meta` object.
    pub fn into_meta(self) -> JsonObject {
        match serde_json::to_value(self) {
            Ok(Value::Object(m)) => m,
            _ => JsonObject::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn request_meta_round_trips() {
        let v = json!({
            PROTOCOL_VERSION: "2026-07-28",
            CLIENT_CAPABILITIES: {"roots": {}},
            CLIENT_INFO: {"name": "c", "version": "1"},
            LOG_LEVEL: "warning",
            PROGRESS_TOKEN: 7,
            "com.example/x": true
        });
        let m = RequestMeta::from_meta(v.as_object()).unwrap();
        assert_eq!(m.version(), Some(ProtocolVersion::V2026_07_28));
        assert_eq!(m.log_level, Some(LoggingLevel::Warning));
        assert_eq!(m.other.len(), 1);
        assert_eq!(Value::Object(m.into_meta()), v);
    }

    #[test]
    fn key_rules() {
        assert!(is_reserved_key(PROTOCOL_VERSION));
        assert!(is_reserved_key("dev.mcp/x"));
        assert!(!is_reserved_key("com.example.mcp/x"));
        assert!(!is_reserved_key(PROGRESS_TOKEN));
        for ok in [PROGRESS_TOKEN, SERVER_INFO, "a/", "com.example/x.y_z-1", ""] {
            assert!(is_valid_key(ok), "{ok}");
        }
        for bad in ["1a/x", "com./x", "-x", "x-", "a b"] {
            assert!(!is_valid_key(bad), "{bad}");
        }
    }
}
