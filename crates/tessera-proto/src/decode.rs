//! Turning bytes into JSON-RPC messages, with the right error for each kind of
//! bad input.
//!
//! | input                                                        | outcome                     |
//! |--------------------------------------------------------------|-----------------------------|
//! | not JSON (or nested deeper than serde_json allows)           | `-32700`, id `null`         |
//! | a key starting with `$serde_json::private::` (see [`parse`]) | `-32600`, id `null`         |
//! | JSON, but not an object or array                             | `-32600`, id `null`         |
//! | `[]`                                                         | `-32600`, id `null`         |
//! | object without a string `method`, or with `jsonrpc` ≠ "2.0"  | `-32600`                    |
//! | `id` that is null, a float, a bool, an object or an array    | `-32600`, id `null`         |
//! | `params` that is not an object                               | `-32600`                    |
//! | non-empty array                                              | [`Inbound::Batch`]          |
//! | a malformed response (`result` or `error`, no `method`)       | dropped, never answered     |
//!
//! A malformed response (a missing or wrong `jsonrpc`, a missing or invalid
//! `id` on a result, a `result` that is not an object, a malformed `error`) is
//! a [`InvalidMessage`] with `silent` set: answering it would send a response to a
//! response, which the peer could mistake for the answer to one of its own
//! requests with the same id.
//!
//! Whether a batch is *allowed* depends on the negotiated version; that is the
//! engine's decision, not the decoder's.

use serde_json::value::RawValue;
use serde_json::{Map, Value};

pub use crate::envelope::Frame;
use crate::envelope::{self, Kind, ParamsText, kind};
use tessera_types::params::MAX_NESTING;
use tessera_types::{
    ErrorObject, JsonObject, JsonRpcErrorResponse, JsonRpcMessage, JsonRpcNotification,
    JsonRpcRequest, JsonRpcResultResponse, JsonRpcVersion, Params, ReceivedMeta, RequestId,
};

/// What one frame (a stdio line, an HTTP body) decoded into.
#[derive(Debug, Clone, PartialEq)]
pub enum Inbound {
    /// One valid message.
    Message(JsonRpcMessage),
    /// A JSON array: a batch, each element decoded on its own.
    Batch(Vec<Decoded>),
    /// Bad input that deserves an error response (with the id when it could be read).
    Invalid(InvalidMessage),
}

/// One element of a batch.
pub type Decoded = Result<JsonRpcMessage, InvalidMessage>;

/// Input that is not a valid message.
#[derive(Debug, Clone, PartialEq)]
pub struct InvalidMessage {
    /// The request id, when one could be read. `None` means respond with `id: null`.
    pub id: Option<RequestId>,
    /// The error to answer with.
    pub error: ErrorObject,
    /// True when the bad input was a response (`result` or `error`, no
    /// `method`): it must not be answered, only dropped and reported. A
    /// malformed request or notification is answered (with `id: null` when no
    /// valid id could be read), as JSON-RPC 2.0 does.
    pub silent: bool,
}

impl InvalidMessage {
    fn answer(id: Option<RequestId>, error: ErrorObject) -> Self {
        InvalidMessage {
            id,
            error,
            silent: false,
        }
    }

    fn silent(error: ErrorObject) -> Self {
        InvalidMessage {
            id: None,
            error,
            silent: true,
        }
    }
}

/// Decodes one frame of bytes.
pub fn decode(bytes: &[u8]) -> Inbound {
    match split(bytes) {
        Ok(Some(frame)) => decode_frame(frame),
        Ok(None) => match parse(bytes) {
            Ok(value) => decode_value(value),
            Err(r) => Inbound::Invalid(r),
        },
        Err(r) => Inbound::Invalid(r),
    }
}

/// Checks `bytes` as one JSON value and splits it into its messages as text
/// (a batch into its elements, counted before any is read): `-32700` for
/// what is not JSON. `Ok(None)` for the rare frame that might hold an object
/// key reserved by the JSON parser (see [`parse`]): decode that one with
/// [`parse`] and [`decode_value`], which check for such keys.
pub fn split(bytes: &[u8]) -> Result<Option<Frame<'_>>, InvalidMessage> {
    if suspect(bytes) {
        return Ok(None);
    }
    envelope::split(bytes).map(Some).map_err(|e| {
        InvalidMessage::answer(None, ErrorObject::parse_error(format!("Parse error: {e}")))
    })
}

/// Decodes a frame [`split`] made: each message is read from its text, and
/// only its `params`, `result` or `error` become trees.
pub fn decode_frame(frame: Frame<'_>) -> Inbound {
    // A scan checks what reading the frame as a tree would: its depth (the
    // split does not count it). A batch's array is one level more.
    // Few texts have as many opening brackets as the limit: those are
    // counted (a loop the compiler vectorises), only the others walked.
    let fits = |t: &[u8], max: usize| {
        tessera_types::params::opening_brackets(t) <= max
            || tessera_types::params::nesting(t) <= max
    };
    let too_deep = match &frame {
        Frame::Single(bytes) => !fits(bytes, MAX_NESTING),
        Frame::Batch(items) => items
            .iter()
            .any(|r| !fits(r.get().as_bytes(), MAX_NESTING - 1)),
    };
    if too_deep {
        return Inbound::Invalid(InvalidMessage::answer(
            None,
            ErrorObject::parse_error(format!(
                "Parse error: nested deeper than {MAX_NESTING} levels (the parser's recursion limit)"
            )),
        ));
    }
    match frame {
        Frame::Batch(items) if items.is_empty() => Inbound::Invalid(InvalidMessage::answer(
            None,
            ErrorObject::invalid_request("Invalid Request: empty batch"),
        )),
        Frame::Batch(items) => Inbound::Batch(items.into_iter().map(decode_text).collect()),
        Frame::Single(bytes) => {
            let decoded = if envelope::first_byte(bytes) == Some(b'{') {
                // Checked as JSON and read in one pass.
                match envelope::members_of_bytes(bytes) {
                    Ok(m) => decode_members(m),
                    Err(e) => Err(InvalidMessage::answer(
                        None,
                        ErrorObject::parse_error(format!("Parse error: {e}")),
                    )),
                }
            } else {
                Err(invalid(None, "a message must be a JSON object"))
            };
            match decoded {
                Ok(m) => Inbound::Message(m),
                Err(r) => Inbound::Invalid(r),
            }
        }
    }
}

/// The start of the object keys serde_json keeps for itself: an object whose
/// first key starts with it is read as one of serde_json's private types (a
/// raw value), not as an object. Such a key cannot travel through a JSON tree
/// faithfully: objects are re-written with their keys sorted, so a key that
/// came second would come first on the next read and change the value.
const RESERVED_KEY: &str = "$serde_json::private::";

/// Parses one frame into a JSON tree: `-32700` for what is not JSON, and
/// `-32600` for an object key starting with `$serde_json::private::`, which
/// the tree cannot carry without changing it (written plainly or with `\u`
/// escapes; dropped silently when the frame is a response).
pub fn parse(bytes: &[u8]) -> Result<Value, InvalidMessage> {
    let value = serde_json::from_slice::<Value>(bytes).map_err(|e| {
        InvalidMessage::answer(None, ErrorObject::parse_error(format!("Parse error: {e}")))
    })?;
    if suspect(bytes) && has_reserved_key(&value) {
        let error = ErrorObject::invalid_request(format!(
            "Invalid Request: object keys starting with {RESERVED_KEY:?} are reserved by the \
             JSON parser and cannot be carried"
        ));
        // A response is dropped, never answered (see the module's table).
        let is_response = value.as_object().is_some_and(|o| {
            !o.contains_key("method") && (o.contains_key("result") || o.contains_key("error"))
        });
        return Err(if is_response {
            InvalidMessage::silent(error)
        } else {
            InvalidMessage::answer(None, error)
        });
    }
    Ok(value)
}

/// Whether `bytes` might hold an object key starting with [`RESERVED_KEY`]:
/// only a frame with the key's text (without the `$`, which an escape could
/// hide) or with a `\u` escape can. (A reserved first key is read as
/// serde_json's type, which replaces the object by a value that writes and
/// reads back the same: only later keys are at risk.)
fn suspect(bytes: &[u8]) -> bool {
    use memchr::memmem::Finder;
    use std::sync::LazyLock;
    // Without a `\` (no escape) and without a `$`, no key can start with
    // the reserved text: told by one pass the compiler vectorises, before
    // the searches.
    let maybe = bytes.chunks(255).any(|block| {
        block.iter().fold(0u8, |seen, &b| {
            seen | u8::from(b == b'\\') | u8::from(b == b'$')
        }) != 0
    });
    if !maybe {
        return false;
    }
    // Built once: making a searcher costs more than searching a message.
    static KEY: LazyLock<Finder<'static>> =
        LazyLock::new(|| Finder::new(&RESERVED_KEY.as_bytes()[1..]));
    static ESCAPE: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"\\u"));
    KEY.find(bytes).is_some() || ESCAPE.find(bytes).is_some()
}

/// Whether an object anywhere in `value` has a key starting with
/// [`RESERVED_KEY`].
fn has_reserved_key(value: &Value) -> bool {
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(map) => {
                for (k, v) in map {
                    if k.starts_with(RESERVED_KEY) {
                        return true;
                    }
                    stack.push(v);
                }
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    false
}

/// Decodes an already-parsed JSON value.
pub fn decode_value(value: Value) -> Inbound {
    match value {
        Value::Array(items) if items.is_empty() => Inbound::Invalid(InvalidMessage::answer(
            None,
            ErrorObject::invalid_request("Invalid Request: empty batch"),
        )),
        Value::Array(items) => Inbound::Batch(items.into_iter().map(decode_single).collect()),
        other => match decode_single(other) {
            Ok(m) => Inbound::Message(m),
            Err(r) => Inbound::Invalid(r),
        },
    }
}

/// The longest string id a message may carry, in bytes. An id is kept while
/// its request runs, stored with each event of its stream and echoed in its
/// answer: a request with a longer one is refused with `-32600` and id `null`
/// (the id is never quoted), and a response with one is dropped.
pub const MAX_ID_BYTES: usize = 1024;

/// Why an id could not be read.
#[derive(Debug, Clone, Copy)]
enum IdError {
    /// Not a string or an integer.
    Kind(&'static str),
    /// A string longer than [`MAX_ID_BYTES`]: its length in bytes when it
    /// was decoded, `None` when its text alone was too long to decode.
    TooLong(Option<usize>),
}

impl std::fmt::Display for IdError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IdError::Kind(why) => f.write_str(why),
            IdError::TooLong(Some(len)) => write!(
                f,
                "id is {len} bytes long; the limit is {MAX_ID_BYTES} bytes"
            ),
            IdError::TooLong(None) => {
                write!(f, "id is longer than the limit of {MAX_ID_BYTES} bytes")
            }
        }
    }
}

fn read_id(v: &Value) -> Result<RequestId, IdError> {
    match v {
        Value::String(s) if s.len() > MAX_ID_BYTES => Err(IdError::TooLong(Some(s.len()))),
        Value::String(s) => Ok(RequestId::String(s.clone())),
        Value::Number(n) => n.as_i64().map(RequestId::Number).ok_or(IdError::Kind(
            "id must be a string or an integer, not a fractional or out-of-range number",
        )),
        Value::Null => Err(IdError::Kind("id must not be null")),
        _ => Err(IdError::Kind("id must be a string or an integer")),
    }
}

fn invalid(id: Option<RequestId>, why: impl std::fmt::Display) -> InvalidMessage {
    InvalidMessage::answer(
        id,
        ErrorObject::invalid_request(format!("Invalid Request: {why}")),
    )
}

/// Decodes one element: an object that must be a request, notification or response.
pub fn decode_single(value: Value) -> Decoded {
    let Value::Object(mut obj) = value else {
        return Err(invalid(None, "a message must be a JSON object"));
    };
    let id_value = obj.remove("id");
    let id = id_value.as_ref().map(read_id);
    // The id to echo in an error: only a valid one.
    let echo_id = id.as_ref().and_then(|r| r.as_ref().ok().cloned());
    let is_response =
        !obj.contains_key("method") && (obj.contains_key("result") || obj.contains_key("error"));

    match obj.get("jsonrpc") {
        Some(Value::String(s)) if s == "2.0" => {}
        _ if is_response => {
            return Err(InvalidMessage::silent(ErrorObject::invalid_request(
                "response with a missing or wrong jsonrpc member",
            )));
        }
        Some(_) => return Err(invalid(echo_id, "jsonrpc must be \"2.0\"")),
        None => return Err(invalid(echo_id, "missing jsonrpc member")),
    }

    if let Some(method) = obj.remove("method") {
        let Value::String(method) = method else {
            return Err(invalid(echo_id, "method must be a string"));
        };
        let params = match obj.remove("params") {
            None => None,
            Some(Value::Object(p)) => Some(Params::from(p)),
            Some(_) => return Err(invalid(echo_id, "params must be an object")),
        };
        return match id {
            None => Ok(JsonRpcMessage::Notification(JsonRpcNotification {
                jsonrpc: JsonRpcVersion,
                method,
                params,
            })),
            Some(Ok(id)) => Ok(JsonRpcMessage::Request(JsonRpcRequest {
                jsonrpc: JsonRpcVersion,
                id,
                method,
                params,
            })),
            Some(Err(why)) => Err(invalid(None, why)),
        };
    }

    if let Some(result) = obj.remove("result") {
        let id = match id {
            Some(Ok(id)) => id,
            _ => {
                return Err(InvalidMessage::silent(ErrorObject::invalid_request(
                    "response without a valid id",
                )));
            }
        };
        let Value::Object(result) = result else {
            return Err(InvalidMessage::silent(ErrorObject::invalid_request(
                "result must be an object",
            )));
        };
        return Ok(JsonRpcMessage::Result(JsonRpcResultResponse {
            jsonrpc: JsonRpcVersion,
            id,
            result,
        }));
    }

    if let Some(error) = obj.remove("error") {
        let id = match (id_value.as_ref(), id) {
            (None, _) | (Some(Value::Null), _) => None,
            (_, Some(Ok(id))) => Some(id),
            _ => {
                return Err(InvalidMessage::silent(ErrorObject::invalid_request(
                    "error response with an invalid id",
                )));
            }
        };
        return match serde_json::from_value::<ErrorObject>(error) {
            Ok(error) => Ok(JsonRpcMessage::Error(JsonRpcErrorResponse {
                jsonrpc: JsonRpcVersion,
                id,
                error,
            })),
            Err(e) => Err(InvalidMessage::silent(ErrorObject::invalid_request(
                format!("malformed error object: {e}"),
            ))),
        };
    }

    Err(invalid(
        echo_id,
        "a message needs a method (request or notification) or a result or error (response)",
    ))
}

/// A parse error for a member too deeply nested to become a tree (the frame
/// scan does not count depth; building the tree does).
fn too_deep(e: serde_json::Error) -> InvalidMessage {
    InvalidMessage::answer(None, ErrorObject::parse_error(format!("Parse error: {e}")))
}

/// Reads an id from its text: only a string or an integer is valid.
fn read_raw_id(raw: &RawValue) -> Result<RequestId, IdError> {
    match kind(raw) {
        // Each decoded byte takes at most six bytes of text (`\uXXXX`): a
        // text longer than that is refused before it is decoded.
        Kind::String if raw.get().len() > 6 * MAX_ID_BYTES + 2 => Err(IdError::TooLong(None)),
        Kind::String => match envelope::string(raw) {
            Some(s) if s.len() > MAX_ID_BYTES => Err(IdError::TooLong(Some(s.len()))),
            Some(s) => Ok(RequestId::String(s.into_owned())),
            None => Err(IdError::Kind("id must be a string or an integer")),
        },
        Kind::Number => serde_json::from_str::<i64>(raw.get())
            .map(RequestId::Number)
            .map_err(|_| {
                IdError::Kind(
                    "id must be a string or an integer, not a fractional or out-of-range number",
                )
            }),
        Kind::Null => Err(IdError::Kind("id must not be null")),
        _ => Err(IdError::Kind("id must be a string or an integer")),
    }
}

/// Decodes one message from its text (what [`decode_single`] does for a
/// tree, with the same outcome for every input).
pub(crate) fn decode_text(raw: &RawValue) -> Decoded {
    if kind(raw) != Kind::Object {
        return Err(invalid(None, "a message must be a JSON object"));
    }
    match envelope::members(raw.get()) {
        Ok(m) => decode_members(m),
        // The text was checked as JSON: only depth can fail here.
        Err(e) => Err(too_deep(e)),
    }
}

/// Decodes one message from its envelope members.
fn decode_members(m: envelope::Members<'_>) -> Decoded {
    let id = m.id.map(read_raw_id);
    let echo_id = id.as_ref().and_then(|r| r.as_ref().ok().cloned());
    let is_response = m.method.is_none() && (m.result.is_some() || m.error.is_some());

    match m.jsonrpc.map(envelope::string) {
        Some(Some(s)) if s == "2.0" => {}
        _ if is_response => {
            return Err(InvalidMessage::silent(ErrorObject::invalid_request(
                "response with a missing or wrong jsonrpc member",
            )));
        }
        Some(_) => return Err(invalid(echo_id, "jsonrpc must be \"2.0\"")),
        None => return Err(invalid(echo_id, "missing jsonrpc member")),
    }

    if let Some(method) = m.method {
        let Some(method) = envelope::string(method) else {
            return Err(invalid(echo_id, "method must be a string"));
        };
        // Params stay text until something reads them (the frame's depth
        // was checked when it was split: a tree can be built from them).
        let params = match m.params {
            None => None,
            Some(ParamsText::Object(read)) => Some(Params::from_read(read)),
            Some(ParamsText::Raw(p)) => match Params::from_checked_raw(p.to_owned()) {
                Some(p) => Some(p),
                None => return Err(invalid(echo_id, "params must be an object")),
            },
            Some(ParamsText::NotObject) => {
                return Err(invalid(echo_id, "params must be an object"));
            }
        };
        let method = method.into_owned();
        return match id {
            None => Ok(JsonRpcMessage::Notification(JsonRpcNotification {
                jsonrpc: JsonRpcVersion,
                method,
                params,
            })),
            Some(Ok(id)) => Ok(JsonRpcMessage::Request(JsonRpcRequest {
                jsonrpc: JsonRpcVersion,
                id,
                method,
                params,
            })),
            Some(Err(why)) => Err(invalid(None, why)),
        };
    }

    if let Some(result) = m.result {
        let Some(Ok(id)) = id else {
            return Err(InvalidMessage::silent(ErrorObject::invalid_request(
                "response without a valid id",
            )));
        };
        if kind(result) != Kind::Object {
            return Err(InvalidMessage::silent(ErrorObject::invalid_request(
                "result must be an object",
            )));
        }
        let result = serde_json::from_str::<JsonObject>(result.get()).map_err(too_deep)?;
        return Ok(JsonRpcMessage::Result(JsonRpcResultResponse {
            jsonrpc: JsonRpcVersion,
            id,
            result,
        }));
    }

    if let Some(error) = m.error {
        let id = match (m.id.map(kind), id) {
            (None, _) | (Some(Kind::Null), _) => None,
            (_, Some(Ok(id))) => Some(id),
            _ => {
                return Err(InvalidMessage::silent(ErrorObject::invalid_request(
                    "error response with an invalid id",
                )));
            }
        };
        return match serde_json::from_str::<ErrorObject>(error.get()) {
            Ok(error) => Ok(JsonRpcMessage::Error(JsonRpcErrorResponse {
                jsonrpc: JsonRpcVersion,
                id,
                error,
            })),
            Err(e) => Err(InvalidMessage::silent(ErrorObject::invalid_request(
                format!("malformed error object: {e}"),
            ))),
        };
    }

    Err(invalid(
        echo_id,
        "a message needs a method (request or notification) or a result or error (response)",
    ))
}

/// `params._meta` when it is an object: read once from the params' text,
/// without reading their other members, kept as text, and kept with them.
pub fn params_meta(params: Option<&Params>) -> Option<ReceivedMeta> {
    params?.meta().cloned()
}

/// Reads `params._meta` as an object, if present.
pub fn meta(params: Option<&Map<String, Value>>) -> Option<&Map<String, Value>> {
    params?.get("_meta")?.as_object()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_types::ErrorCode;

    fn rejected(bytes: &str) -> InvalidMessage {
        match decode(bytes.as_bytes()) {
            Inbound::Invalid(r) => r,
            other => panic!("expected rejection for {bytes}, got {other:?}"),
        }
    }

    #[test]
    fn parse_errors() {
        for s in ["", "{", "nope", "{\"a\":}", "\u{0}"] {
            let r = rejected(s);
            assert_eq!(r.error.code, ErrorCode::PARSE_ERROR.0, "{s}");
            assert_eq!(r.id, None);
        }
        let deep = "[".repeat(10_000);
        assert_eq!(rejected(&deep).error.code, ErrorCode::PARSE_ERROR.0);
    }

    #[test]
    fn invalid_requests() {
        let cases = [
            ("1", None),
            ("\"x\"", None),
            ("[]", None),
            ("{\"jsonrpc\":\"2.0\",\"id\":1}", Some(RequestId::Number(1))),
            (
                "{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"x\"}",
                Some(RequestId::Number(1)),
            ),
            (
                "{\"id\":\"a\",\"method\":\"x\"}",
                Some(RequestId::from("a")),
            ),
            ("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"x\"}", None),
            ("{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"x\"}", None),
            ("{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"x\"}", None),
            ("{\"jsonrpc\":\"2.0\",\"id\":[1],\"method\":\"x\"}", None),
            ("{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"x\"}", None),
            (
                "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":7}",
                Some(RequestId::Number(2)),
            ),
            (
                "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"x\",\"params\":[1]}",
                Some(RequestId::Number(3)),
            ),
            (
                "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"x\",\"params\":\"s\"}",
                Some(RequestId::Number(3)),
            ),
        ];
        for (s, id) in cases {
            let r = rejected(s);
            assert_eq!(r.error.code, ErrorCode::INVALID_REQUEST.0, "{s}");
            assert_eq!(r.id, id, "{s}");
            assert!(!r.silent, "{s}");
        }
    }

    #[test]
    fn valid_messages() {
        let m = decode(br#"{"jsonrpc":"2.0","id":"x","method":"ping"}"#);
        assert!(matches!(m, Inbound::Message(JsonRpcMessage::Request(_))));
        let m = decode(br#"{"jsonrpc":"2.0","method":"n","params":{}}"#);
        assert!(matches!(
            m,
            Inbound::Message(JsonRpcMessage::Notification(_))
        ));
        let m = decode(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
        assert!(matches!(m, Inbound::Message(JsonRpcMessage::Result(_))));
        let m = decode(br#"{"jsonrpc":"2.0","id":null,"error":{"code":-1,"message":"m"}}"#);
        assert!(matches!(m, Inbound::Message(JsonRpcMessage::Error(_))));
        let m = decode(br#"[{"jsonrpc":"2.0","id":1,"method":"a"}, 5]"#);
        match m {
            Inbound::Batch(items) => {
                assert!(items[0].is_ok());
                assert!(items[1].is_err());
            }
            other => panic!("{other:?}"),
        }
    }

    /// The reading before the one pass: `params` kept as plain text, its
    /// members read later.
    fn decode_plain(bytes: &[u8]) -> Decoded {
        match serde_json::from_slice::<envelope::Members<'_>>(bytes) {
            Ok(m) => decode_members(m),
            Err(e) => Err(InvalidMessage::answer(
                None,
                ErrorObject::parse_error(format!("Parse error: {e}")),
            )),
        }
    }

    #[test]
    fn params_read_in_the_message_s_pass_decode_as_plain_text_does() {
        for params in [
            r#"{"name":"echo","arguments":{"text":"Hello"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#,
            r#"{"name":"a\"b","arguments":{"x":"}"},"uri":"u"}"#,
            r#"{"name":"n","name":"m","_meta":{"a":1},"_meta":null}"#,
            r#"{"name":"n","_meta":null}"#,
            r#"{"name":"n","_meta":{}}"#,
            r#"{"_meta":{"a\"b":1},"name":"n"}"#,
            "{ }",
            "{}",
            "[1]",
            "\"s\"",
            "null",
            r#"{"a":{"b":{"c":[{"d":[]}]}}}"#,
        ] {
            for frame in [
                format!(r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{params}}}"#),
                format!(r#"{{"params" : {params} , "method":"n","jsonrpc":"2.0"}}"#),
                format!(r#"{{"jsonrpc":"2.0","id":7,"result":{{}},"params":{params}}}"#),
            ] {
                let one = match decode(frame.as_bytes()) {
                    Inbound::Message(m) => Ok(m),
                    Inbound::Invalid(r) => Err(r),
                    Inbound::Batch(_) => panic!("{frame}"),
                };
                let plain = decode_plain(frame.as_bytes());
                assert_eq!(one, plain, "{frame}");
                let tree = match decode_value(parse(frame.as_bytes()).unwrap()) {
                    Inbound::Message(m) => Ok(m),
                    Inbound::Invalid(r) => Err(r),
                    Inbound::Batch(_) => panic!("{frame}"),
                };
                assert_eq!(one, tree, "{frame}");
                let params_of = |m: &Decoded| match m {
                    Ok(JsonRpcMessage::Request(r)) => r.params.clone(),
                    Ok(JsonRpcMessage::Notification(n)) => n.params.clone(),
                    _ => None,
                };
                if let (Some(a), Some(b)) = (params_of(&one), params_of(&tree)) {
                    assert_eq!(a.raw().map(RawValue::get), Some(params.trim()));
                    assert_eq!(
                        a.meta().map(ReceivedMeta::object),
                        b.meta().map(ReceivedMeta::object),
                        "{frame}"
                    );
                    assert_eq!(a.name(), b.name(), "{frame}");
                }
                // The same in a batch.
                let batch = format!("[{frame}]");
                match decode(batch.as_bytes()) {
                    Inbound::Batch(items) => assert_eq!(items, vec![one], "{batch}"),
                    other => panic!("{other:?}"),
                }
            }
        }
    }

    #[test]
    fn malformed_frames_get_the_plain_reading_s_answer() {
        let frames: [&[u8]; 6] = [
            br#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1,}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1}"#,
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"\xff\":1}}",
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"a\":\"\xff\"}}",
            br#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1}} x"#,
        ];
        for frame in frames {
            let one = match decode(frame) {
                Inbound::Invalid(r) => Err(r),
                Inbound::Message(m) => Ok(m),
                Inbound::Batch(_) => panic!("a batch"),
            };
            assert_eq!(
                one,
                decode_plain(frame),
                "{}",
                String::from_utf8_lossy(frame)
            );
            let r = one.expect_err("malformed");
            assert_eq!(r.error.code, ErrorCode::PARSE_ERROR.0);
        }
    }

    #[test]
    fn only_an_escape_or_a_dollar_makes_a_frame_suspect() {
        let long = "x".repeat(600);
        for (text, expected) in [
            (r#"{"a":"b"}"#.to_owned(), false),
            (
                format!(r#"{{"{long}":"serde_json::private::RawValue"}}"#),
                false,
            ),
            (format!(r#"{{"{long}":"\n"}}"#), false),
            (format!(r#"{{"{long}":"\u0041"}}"#), true),
            (
                format!(r#"{{"{long}":1,"$serde_json::private::Number":1}}"#),
                true,
            ),
        ] {
            assert_eq!(suspect(text.as_bytes()), expected, "{text}");
            // Either way, the frame reads the same.
            if let Ok(Some(frame)) = split(text.as_bytes()) {
                let tree = decode_value(parse(text.as_bytes()).unwrap());
                assert_eq!(decode_frame(frame), tree, "{text}");
            }
        }
    }

    #[test]
    fn bad_responses_are_silent() {
        for s in [
            r#"{"jsonrpc":"2.0","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":5}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":"x"}}"#,
            r#"{"jsonrpc":"1.0","id":1,"result":{}}"#,
            r#"{"id":1,"result":{}}"#,
            r#"{"jsonrpc":2,"id":1,"error":{"code":1,"message":"m"}}"#,
        ] {
            assert!(rejected(s).silent, "{s}");
        }
        // Not a response (no result or error): still answered, id echoed.
        let r = rejected(r#"{"jsonrpc":"1.0","id":1}"#);
        assert!(!r.silent);
        assert_eq!(r.id, Some(RequestId::Number(1)));
    }
}
