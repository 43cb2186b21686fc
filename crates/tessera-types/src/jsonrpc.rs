//! The JSON-RPC 2.0 envelope every MCP message travels in.
//!
//! These types describe *valid* messages. Turning arbitrary bytes into one of
//! them, with the right error for each kind of bad input, is the job of the
//! decoder in `tessera-proto`.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{JsonObject, Params};

/// The `jsonrpc` member: always the string `"2.0"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct JsonRpcVersion;

impl Serialize for JsonRpcVersion {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str("2.0")
    }
}

impl<'de> Deserialize<'de> for JsonRpcVersion {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = crate::borrowed::BorrowedStr::deserialize(d)?;
        if s == "2.0" {
            Ok(JsonRpcVersion)
        } else {
            Err(serde::de::Error::custom("jsonrpc must be \"2.0\""))
        }
    }
}

/// A request id: a string or an integer, never null.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RequestId {
    /// An integer id.
    Number(i64),
    /// A string id.
    String(String),
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        RequestId::Number(n)
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        RequestId::String(s.to_owned())
    }
}

impl From<String> for RequestId {
    fn from(s: String) -> Self {
        RequestId::String(s)
    }
}

/// A progress token (`_meta.progressToken`): a string or an integer.
pub type ProgressToken = RequestId;

/// A request: expects exactly one response with the same id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonRpcRequest {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The request id.
    pub id: RequestId,
    /// The method name.
    pub method: String,
    /// The parameters, always an object in MCP (as received, until read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Params>,
}

/// A notification: a one-way message with no id and no response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonRpcNotification {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The method name.
    pub method: String,
    /// The parameters, always an object in MCP (as received, until read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Params>,
}

/// A successful response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonRpcResultResponse {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The id of the request this answers.
    pub id: RequestId,
    /// The result object.
    pub result: JsonObject,
}

/// An error response. `id` is absent (serialised as `null`) only when the
/// request's id could not be read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonRpcErrorResponse {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The id of the request this answers, or `None` for an unreadable request.
    pub id: Option<RequestId>,
    /// What went wrong.
    pub error: ErrorObject,
}

/// A response: success or error (schema `JSONRPCResponse` of 2025-11-25
/// and later; earlier schemas use that name for the success case only).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum JsonRpcResponse {
    /// A successful response.
    Result(JsonRpcResultResponse),
    /// An error response.
    Error(JsonRpcErrorResponse),
}

impl JsonRpcResponse {
    /// The id of the request this answers (`None` for an error about an
    /// unreadable request).
    pub fn id(&self) -> Option<&RequestId> {
        match self {
            JsonRpcResponse::Result(r) => Some(&r.id),
            JsonRpcResponse::Error(e) => e.id.as_ref(),
        }
    }
}

impl From<JsonRpcResponse> for JsonRpcMessage {
    fn from(r: JsonRpcResponse) -> Self {
        match r {
            JsonRpcResponse::Result(r) => JsonRpcMessage::Result(r),
            JsonRpcResponse::Error(e) => JsonRpcMessage::Error(e),
        }
    }
}

/// A JSON-RPC batch: an array of messages (2025-03-26 only, schemas
/// `JSONRPCBatchRequest` and `JSONRPCBatchResponse`).
pub type JsonRpcBatch = Vec<JsonRpcMessage>;

/// Any single JSON-RPC message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum JsonRpcMessage {
    /// A request.
    Request(JsonRpcRequest),
    /// A notification.
    Notification(JsonRpcNotification),
    /// A successful response.
    Result(JsonRpcResultResponse),
    /// An error response.
    Error(JsonRpcErrorResponse),
}

impl JsonRpcMessage {
    /// Builds a request.
    pub fn request(id: RequestId, method: impl Into<String>, params: Option<JsonObject>) -> Self {
        JsonRpcMessage::Request(JsonRpcRequest {
            jsonrpc: JsonRpcVersion,
            id,
            method: method.into(),
            params: params.map(Params::from),
        })
    }

    /// Builds a notification.
    pub fn notification(method: impl Into<String>, params: Option<JsonObject>) -> Self {
        JsonRpcMessage::Notification(JsonRpcNotification {
            jsonrpc: JsonRpcVersion,
            method: method.into(),
            params: params.map(Params::from),
        })
    }

    /// Builds a successful response.
    pub fn result(id: RequestId, result: JsonObject) -> Self {
        JsonRpcMessage::Result(JsonRpcResultResponse {
            jsonrpc: JsonRpcVersion,
            id,
            result,
        })
    }

    /// Builds an error response.
    pub fn error(id: Option<RequestId>, error: ErrorObject) -> Self {
        JsonRpcMessage::Error(JsonRpcErrorResponse {
            jsonrpc: JsonRpcVersion,
            id,
            error,
        })
    }

    /// The method, for requests and notifications.
    pub fn method(&self) -> Option<&str> {
        match self {
            JsonRpcMessage::Request(r) => Some(&r.method),
            JsonRpcMessage::Notification(n) => Some(&n.method),
            _ => None,
        }
    }

    /// The id, for requests and responses.
    pub fn id(&self) -> Option<&RequestId> {
        match self {
            JsonRpcMessage::Request(r) => Some(&r.id),
            JsonRpcMessage::Result(r) => Some(&r.id),
            JsonRpcMessage::Error(e) => e.id.as_ref(),
            JsonRpcMessage::Notification(_) => None,
        }
    }
}

/// The `error` member of an error response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The error code; see [`ErrorCode`] for the ones MCP defines.
    pub code: i64,
    /// A short, single-sentence description.
    pub message: String,
    /// Extra information defined by the sender.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    /// Builds an error with a code and message and no data.
    pub fn new(code: impl Into<i64>, message: impl Into<String>) -> Self {
        ErrorObject {
            code: code.into(),
            message: message.into(),
            data: None,
        }
    }

    /// Adds `data`.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// `-32700`: the bytes were not JSON.
    pub fn parse_error(message: impl Into<String>) -> Self {
        ErrorObject::new(ErrorCode::PARSE_ERROR, message)
    }

    /// `-32600`: JSON, but not a valid request.
    pub fn invalid_request(message: impl Into<String>) -> Self {
        ErrorObject::new(ErrorCode::INVALID_REQUEST, message)
    }

    /// `-32601`: no such method. The name is quoted as [`excerpt`] of it:
    /// a peer cannot make the error larger than a short prefix.
    pub fn method_not_found(method: &str) -> Self {
        ErrorObject::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("Method not found: {}", excerpt(method)),
        )
    }

    /// `-32602`: the parameters are wrong.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        ErrorObject::new(ErrorCode::INVALID_PARAMS, message)
    }

    /// `-32603`: the receiver failed.
    pub fn internal(message: impl Into<String>) -> Self {
        ErrorObject::new(ErrorCode::INTERNAL_ERROR, message)
    }
}

/// How many characters of peer-supplied text an error message quotes.
pub const EXCERPT_CHARS: usize = 64;

/// Peer-supplied text as error messages quote it: whole when it is at most
/// [`EXCERPT_CHARS`] characters, else its first characters followed by how
/// long it was, so an error never echoes more than a short prefix.
pub fn excerpt(text: &str) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(EXCERPT_CHARS) {
        None => std::borrow::Cow::Borrowed(text),
        Some((cut, _)) => {
            std::borrow::Cow::Owned(format!("{}… ({} bytes in all)", &text[..cut], text.len()))
        }
    }
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (code {})", self.message, self.code)
    }
}

impl std::error::Error for ErrorObject {}

/// Error codes used by JSON-RPC and MCP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ErrorCode(pub i64);

impl ErrorCode {
    /// Invalid JSON.
    pub const PARSE_ERROR: ErrorCode = ErrorCode(-32700);
    /// Not a valid JSON-RPC request.
    pub const INVALID_REQUEST: ErrorCode = ErrorCode(-32600);
    /// Unknown method.
    pub const METHOD_NOT_FOUND: ErrorCode = ErrorCode(-32601);
    /// Bad parameters.
    pub const INVALID_PARAMS: ErrorCode = ErrorCode(-32602);
    /// Internal error.
    pub const INTERNAL_ERROR: ErrorCode = ErrorCode(-32603);
    /// Resource not found (2025-11-25 and earlier; 2026-07-28 uses -32602).
    pub const RESOURCE_NOT_FOUND: ErrorCode = ErrorCode(-32002);
    /// HTTP headers disagree with the body (2026-07-28).
    pub const HEADER_MISMATCH: ErrorCode = ErrorCode(-32020);
    /// The request needs a client capability that was not declared (2026-07-28).
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: ErrorCode = ErrorCode(-32021);
    /// The requested protocol version is not supported (2026-07-28).
    pub const UNSUPPORTED_PROTOCOL_VERSION: ErrorCode = ErrorCode(-32022);
    /// URL elicitation required (2025-11-25 only).
    pub const URL_ELICITATION_REQUIRED: ErrorCode = ErrorCode(-32042);
}

impl From<ErrorCode> for i64 {
    fn from(c: ErrorCode) -> i64 {
        c.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn errors_quote_only_a_short_prefix_of_peer_text() {
        assert_eq!(excerpt("tools/list"), "tools/list");
        let huge = "é".repeat(1 << 20);
        let e = ErrorObject::method_not_found(&huge);
        assert!(e.message.len() < 200, "{}", e.message.len());
        assert!(e.message.contains("(2097152 bytes in all)"));
    }

    #[test]
    fn messages_round_trip() {
        let cases = [
            json!({"jsonrpc":"2.0","id":1,"method":"ping"}),
            json!({"jsonrpc":"2.0","id":"a","method":"tools/list","params":{}}),
            json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
            json!({"jsonrpc":"2.0","id":1,"result":{}}),
            json!({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}),
            json!({"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"x","data":[1]}}),
        ];
        for c in cases {
            let m: JsonRpcMessage = serde_json::from_value(c.clone()).unwrap();
            assert_eq!(serde_json::to_value(&m).unwrap(), c);
        }
    }

    #[test]
    fn variants_are_told_apart() {
        let m: JsonRpcMessage =
            serde_json::from_value(json!({"jsonrpc":"2.0","id":1,"method":"ping"})).unwrap();
        assert!(matches!(m, JsonRpcMessage::Request(_)));
        let m: JsonRpcMessage =
            serde_json::from_value(json!({"jsonrpc":"2.0","method":"x"})).unwrap();
        assert!(matches!(m, JsonRpcMessage::Notification(_)));
        assert!(
            serde_json::from_value::<JsonRpcMessage>(json!({"jsonrpc":"1.0","method":"x"}))
                .is_err()
        );
    }
}
