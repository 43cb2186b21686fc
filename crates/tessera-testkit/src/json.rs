//! Small helpers for JSON values and tool results in assertions.

use serde_json::Value;
use tessera_types::{CallToolResult, JsonObject};

/// The object inside a `json!({...})` value; panics on anything else.
pub fn obj(v: Value) -> JsonObject {
    match v {
        Value::Object(o) => o,
        other => panic!("not an object: {other}"),
    }
}

/// The text of a tool result's first block (empty when it has none or the
/// block is not text).
pub fn text(r: &CallToolResult) -> String {
    r.content
        .first()
        .and_then(|c| c.as_text())
        .unwrap_or_default()
        .to_owned()
}
