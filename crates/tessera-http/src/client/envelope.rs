//! Typed views of the JSON-RPC messages the HTTP client looks into on their
//! way through: whether a server message answers a request (and which), the
//! version an `initialize` answer negotiated, the tools of a `tools/list`
//! answer.

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

    /// Whether the message is an error that names no request: its `id`
    /// null, absent or unreadable (the spec allows that when the server
    /// could not read the request's id). Sent as the answer to a POST, it
    /// refuses what that POST carried.
    pub fn is_unattributed_error(&self) -> bool {
        self.jsonrpc.0 && self.error.0 && !self.method.0 && self.id.valid().is_none()
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

/// What a server message's text is, as far as the client looks.
pub(crate) enum Shape {
    /// A JSON array (a batch).
    Batch,
    /// A JSON object, read as far as [`Envelope`].
    Object(Envelope),
    /// Other JSON.
    Other,
}

/// Reads `text` as far as [`Shape`] without building a tree: an object's
/// members other than the envelope's, and a batch's elements, are skipped.
/// Text the quick reading refuses (a member given twice, say) is read
/// through a tree, as it always was. `None` when it is not JSON.
pub(crate) fn shape_of(text: &[u8]) -> Option<Shape> {
    match text.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{') => {
            if let Ok(e) = serde_json::from_slice::<Envelope>(text) {
                return Some(Shape::Object(e));
            }
        }
        Some(b'[') if serde_json::from_slice::<serde::de::IgnoredAny>(text).is_ok() => {
            return Some(Shape::Batch);
        }
        _ => {}
    }
    let v: Value = serde_json::from_slice(text).ok()?;
    Some(match &v {
        Value::Array(_) => Shape::Batch,
        Value::Object(_) => Shape::Object(object_view(&v)),
        _ => Shape::Other,
    })
}

/// An error response, as far as its error's code and message.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ErrorAnswer {
    /// `error`.
    pub error: Loose<ErrorHead>,
}

/// The code and message of an `error` (its `data` skipped).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ErrorHead {
    /// `code`.
    pub code: Loose<i64>,
    /// `message`.
    pub message: Loose<String>,
    /// Other members (ignored; they make only objects read as an error).
    #[serde(flatten)]
    _others: JsonObject,
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

    #[test]
    fn a_message_is_told_apart_without_a_tree_and_repeated_members_as_before() {
        let answers = |text: &str| match shape_of(text.as_bytes()) {
            Some(Shape::Object(e)) => e.is_response().then(|| e.answers()),
            _ => None,
        };
        assert_eq!(
            answers(r#" {"jsonrpc":"2.0","result":{"content":[{"a":[1,2]}]},"id":"x"}"#),
            Some(Some(RequestId::from("x")))
        );
        assert_eq!(answers(r#"{"jsonrpc":"2.0","method":"m","id":1}"#), None);
        // A member given twice: read through a tree, the last one kept.
        assert_eq!(
            answers(r#"{"jsonrpc":"2.0","id":1,"id":2,"result":{}}"#),
            Some(Some(RequestId::Number(2)))
        );
        assert!(matches!(shape_of(b"[1, {}]"), Some(Shape::Batch)));
        assert!(matches!(shape_of(b"7"), Some(Shape::Other)));
        for bad in [&b"[1,"[..], b"{\"a\":}", b"", b"nope"] {
            assert!(shape_of(bad).is_none());
        }
    }
}
