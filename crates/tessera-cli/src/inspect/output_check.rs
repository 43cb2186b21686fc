//! Checks a tool result's `structuredContent` against the tool's
//! `outputSchema` (as last listed), for the page to show the verdict.

use serde_json::{Value, json};
use tessera::server::schema::Validator;
use tessera::types::JsonObject;

/// The verdict: `{"verdict": "valid" | "invalid" | "missing" | "none" |
/// "bad-schema", "detail"?}`. `none` means there is nothing to check (no
/// schema, or a tool error); `missing` that a schema is declared but the
/// result has no `structuredContent` (servers MUST provide it then).
pub fn check(tool: Option<&Value>, result: &JsonObject) -> Value {
    let schema = tool
        .and_then(|t| t.get("outputSchema"))
        .and_then(Value::as_object);
    let Some(schema) = schema else {
        return json!({"verdict": "none", "detail": "the tool declares no outputSchema"});
    };
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        return json!({"verdict": "none", "detail": "a tool error is not checked"});
    }
    let Some(structured) = result.get("structuredContent") else {
        return json!({
            "verdict": "missing",
            "detail": "the tool declares an outputSchema but the result has no structuredContent"
        });
    };
    match Validator::new(schema) {
        Err(e) => json!({"verdict": "bad-schema", "detail": e}),
        Ok(v) => match v.check(structured) {
            Ok(()) => json!({"verdict": "valid"}),
            Err(e) => json!({"verdict": "invalid", "detail": e}),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(v: Value) -> JsonObject {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn verdicts() {
        let tool = json!({"name": "t", "outputSchema": {
            "type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}});
        let v = |r: Value| check(Some(&tool), &obj(r))["verdict"].clone();
        assert_eq!(
            v(json!({"content": [], "structuredContent": {"n": 1}})),
            "valid"
        );
        assert_eq!(
            v(json!({"content": [], "structuredContent": {"n": "x"}})),
            "invalid"
        );
        assert_eq!(v(json!({"content": []})), "missing");
        assert_eq!(v(json!({"content": [], "isError": true})), "none");
        assert_eq!(check(None, &obj(json!({"content": []})))["verdict"], "none");
        let detail = check(Some(&tool), &obj(json!({"structuredContent": {}})))["detail"].clone();
        assert!(detail.as_str().unwrap().contains('n'), "{detail}");
    }
}
