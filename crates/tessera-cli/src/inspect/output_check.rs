//! Checks a tool result's `structuredContent` against the tool's
//! `outputSchema` (as last listed), for the page to show the verdict.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tessera::server::schema::Validator;
use tessera::types::{JsonObject, Tool};

/// The verdict: `{"verdict": "valid" | "invalid" | "missing" | "none" |
/// "bad-schema", "detail"?}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verdict {
    /// What the check found.
    pub verdict: &'static str,
    /// Why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl Verdict {
    fn new(verdict: &'static str, detail: Option<String>) -> Verdict {
        Verdict { verdict, detail }
    }
}

/// The members of a tool result the check reads, as sent (a present
/// `structuredContent` is checked even when `null`).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Checked {
    #[serde(default)]
    is_error: Option<Value>,
    #[serde(default, deserialize_with = "tessera::types::loose::present_value")]
    structured_content: Option<Value>,
}

/// The verdict on `result` (`none` means there is nothing to check: no
/// schema, or a tool error; `missing` that a schema is declared but the
/// result has no `structuredContent`, which servers MUST provide then).
pub fn check(tool: Option<&Tool>, result: &JsonObject) -> Verdict {
    let Some(schema) = tool.and_then(|t| t.output_schema.as_ref()) else {
        return Verdict::new("none", Some("the tool declares no outputSchema".into()));
    };
    let result: Checked = Checked::deserialize(result).unwrap_or_default();
    if result.is_error.as_ref().and_then(Value::as_bool) == Some(true) {
        return Verdict::new("none", Some("a tool error is not checked".into()));
    }
    let Some(structured) = result.structured_content else {
        return Verdict::new(
            "missing",
            Some(
                "the tool declares an outputSchema but the result has no structuredContent".into(),
            ),
        );
    };
    match Validator::new(schema) {
        Err(e) => Verdict::new("bad-schema", Some(e)),
        Ok(v) => match v.check(&structured) {
            Ok(()) => Verdict::new("valid", None),
            Err(e) => Verdict::new("invalid", Some(e)),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> JsonObject {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn verdicts() {
        let tool: Tool = serde_json::from_value(
            json!({"name": "t", "inputSchema": {"type": "object"}, "outputSchema": {
            "type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}),
        )
        .unwrap();
        let v = |r: Value| check(Some(&tool), &obj(r)).verdict;
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
        assert_eq!(check(None, &obj(json!({"content": []}))).verdict, "none");
        let detail = check(Some(&tool), &obj(json!({"structuredContent": {}}))).detail;
        assert!(detail.as_deref().unwrap().contains('n'), "{detail:?}");
        assert_eq!(
            serde_json::to_value(check(None, &JsonObject::new())).unwrap(),
            json!({"verdict": "none", "detail": "the tool declares no outputSchema"})
        );
        assert_eq!(
            serde_json::to_value(Verdict::new("valid", None)).unwrap(),
            json!({"verdict": "valid"})
        );
    }
}
