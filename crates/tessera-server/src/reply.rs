//! Typed results turned into the answer the engine sends: written straight
//! to JSON text where it can be, shaped for 2026-07-28 so that the engine
//! does not read them again.

use serde::Serialize;
use serde_json::Value;
use tessera_runtime::BoxFuture;
use tessera_types::JsonObject;

/// `v` as a JSON object (empty when it does not serialize to one).
pub(crate) fn to_object<T: Serialize>(v: &T) -> JsonObject {
    match serde_json::to_value(v) {
        Ok(Value::Object(o)) => o,
        _ => JsonObject::new(),
    }
}

/// A typed result as the answer: written straight to JSON text; a value
/// that does not write as an object (never, for the result types) goes the
/// tree way. With the request's `shape` (2026-07-28, not in a batch:
/// [`tessera_proto::RequestInfo::result_shape`]) it is written with what
/// the engine adds, so that the engine does not read it again
/// ([`shaped_reply`]).
pub(crate) fn typed_reply<T: Serialize>(
    result: &T,
    shape: Option<&tessera_proto::ResultShape>,
) -> tessera_proto::Reply {
    if let Some(reply) = shape.and_then(|shape| shaped_reply(result, shape)) {
        return reply;
    }
    match serde_json::value::to_raw_value(result)
        .ok()
        .and_then(tessera_proto::RawResult::new)
    {
        Some(text) => tessera_proto::Reply::Raw(text),
        None => tessera_proto::Reply::Object(to_object(result)),
    }
}

/// A 2026-07-28 typed result as the engine writes it, without being read
/// again: as text with `resultType` and the server's `_meta` in front of
/// its members ([`tessera_proto::RawResult::shaped`]); or, when it has a
/// `_meta` of its own without the server's identity (which the engine
/// merges into a tree), as that tree at once rather than as a text the
/// engine reads into it (same bytes). `None`: the text path (a `_meta`
/// that already names the server, a value that is not an object).
pub(crate) fn shaped_reply<T: Serialize>(
    result: &T,
    shape: &tessera_proto::ResultShape,
) -> Option<tessera_proto::Reply> {
    if let Some(text) = tessera_proto::RawResult::shaped(result, shape) {
        return Some(tessera_proto::Reply::Raw(text));
    }
    if !shape.adds_server_info() {
        return None;
    }
    let Ok(Value::Object(tree)) = serde_json::to_value(result) else {
        return None;
    };
    let names_server = match tree.get("_meta") {
        None => return None,
        Some(Value::Object(meta)) => meta.contains_key(tessera_proto::meta_keys::SERVER_INFO),
        Some(_) => false,
    };
    (!names_server).then_some(tessera_proto::Reply::Object(tree))
}

/// A finished future for an answer written at once.
pub(crate) fn done(
    r: tessera_runtime::ReplyResult,
) -> BoxFuture<'static, tessera_runtime::ReplyResult> {
    Box::pin(std::future::ready(r))
}
