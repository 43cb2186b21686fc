//! Typed views of the JSON-RPC messages the HTTP client looks into on their
//! way through: whether a server message answers a request (and which), the
//! version an `initialize` answer negotiated, the members of an outgoing
//! request that its HTTP headers mirror.

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tessera_types::{JsonObject, Loose, Present, RequestId};

/// Reads `v` as `T` when it is an object; the default otherwise (a batch,
/// a scalar: none of the members are there).
pub(crate) fn object_view<T: DeserializeOwned + Default>(v: &Value) -> T {
    match v {
        Value::Object(_) => T::deserialize(v).unwrap_or_default(),
        _ => T::default(),
    }
}

/// A message from the server, as far as telling what it is.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Envelope {
    /// `jsonrpc`.
    pub jsonrpc: Present,
    /// `method`: a request or a notification.
    pub method: Present,
    /// `id`.
    pub id: Loose<RequestId>,
    /// `result`: a result response.
    pub result: Present,
    /// `error`: an error response.
    pub error: Present,
}

impl Envelope {
    /// Whether the message is a response (a result or an error).
    pub fn is_response(&self) -> bool {
        self.jsonrpc.0 && (self.result.0 || self.error.0)
    }

    /// The id of the request the message answers (`None` for a request or
    /// a notification, or an id that does not read).
    pub fn answers(self) -> Option<RequestId> {
        if self.method.0 {
            return None;
        }
        self.id.into_valid()
    }
}

/// An `initialize` response, as far as the version it negotiated.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct InitializeAnswer {
    /// `result`.
    pub result: Loose<Negotiated>,
}

/// The version of an `initialize` result.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct Negotiated {
    /// `protocolVersion`.
    pub protocol_version: Loose<String>,
    /// Other members (ignored; they make only objects read as a result).
    #[serde(flatten)]
    _others: JsonObject,
}

/// The members of outgoing params that the HTTP headers mirror.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct Mirrored {
    /// `_meta` (its protocol version marks a 2026-07-28 request).
    #[serde(rename = "_meta")]
    pub meta: Loose<VersionMeta>,
    /// `name`.
    pub name: Loose<String>,
    /// `uri`.
    pub uri: Loose<String>,
    /// `taskId` (the Tasks extension's methods).
    pub task_id: Loose<String>,
    /// `requestId` (`notifications/cancelled`).
    pub request_id: Loose<RequestId>,
}

/// The protocol version in a request's `_meta` (the other keys skipped).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct VersionMeta {
    /// [`tessera_proto::meta_keys::PROTOCOL_VERSION`].
    #[serde(rename = "io.modelcontextprotocol/protocolVersion")]
    pub protocol_version: Loose<String>,
    /// Other keys (ignored; they make only objects read as `_meta`).
    #[serde(flatten)]
    _others: JsonObject,
}

/// The arguments of an outgoing `tools/call`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct CallArguments {
    /// `arguments`, whatever their shape.
    pub arguments: Loose<Value>,
}

/// A `tools/list` response, with the tools the client checks.
#[derive(Debug, Default, Deserialize, serde::Serialize)]
#[serde(default)]
pub(crate) struct ToolsAnswer {
    /// `result`.
    #[serde(skip_serializing_if = "Loose::is_absent")]
    pub result: Loose<ToolsPage>,
    /// The other members, as they came.
    #[serde(flatten)]
    pub rest: JsonObject,
}

/// A `tools/list` result: its tools, and the rest as it came.
#[derive(Debug, Default, Deserialize, serde::Serialize)]
#[serde(default)]
pub(crate) struct ToolsPage {
    /// `tools`.
    #[serde(skip_serializing_if = "Loose::is_absent")]
    pub tools: Loose<Vec<Value>>,
    /// The other members, as they came.
    #[serde(flatten)]
    pub rest: JsonObject,
}

/// The `type` of a (sub)schema (the other members skipped).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct SchemaType {
    /// `type`.
    #[serde(rename = "type")]
    pub kind: Loose<String>,
}

/// A listed tool's name and input schema (the other members skipped).
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct ListedTool {
    /// `name`.
    pub name: Loose<String>,
    /// `inputSchema`.
    pub input_schema: Loose<JsonObject>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_is_read_under_its_meta_key() {
        let mut meta = JsonObject::new();
        meta.insert(
            tessera_proto::meta_keys::PROTOCOL_VERSION.to_owned(),
            Value::from("2026-07-28"),
        );
        let mut params = JsonObject::new();
        params.insert("_meta".to_owned(), Value::Object(meta));
        let m: Mirrored = object_view(&Value::Object(params));
        let version = m.meta.valid().and_then(|m| m.protocol_version.valid());
        assert_eq!(version.map(String::as_str), Some("2026-07-28"));
    }

    #[test]
    fn only_a_message_without_a_method_answers() {
        let answer: Envelope =
            serde_json::from_str(r#"{"jsonrpc":"2.0","id":3,"result":{}}"#).unwrap();
        assert!(answer.is_response());
        assert_eq!(answer.answers(), Some(RequestId::Number(3)));
        let request: Envelope =
            serde_json::from_str(r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#).unwrap();
        assert!(!request.is_response());
        assert_eq!(request.answers(), None);
        let batch: Envelope = object_view(&serde_json::json!([{"id": 1}]));
        assert_eq!(batch.answers(), None);
    }
}
