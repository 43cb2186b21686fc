//! What a 2026-07-28 request mirrors outside its body: the `Mcp-Name` value
//! of the methods that have one, and the tool arguments a tool marks with
//! `x-mcp-header` (`Mcp-Param-{Name}`), with the rules for comparing a
//! mirrored value with the body's. Transport-neutral: an HTTP transport
//! reads (and decodes) the header values and maps a mismatch to its status;
//! the rules live here.

use serde_json::Value;
use tessera_types::{JsonObject, methods};

/// The `params` member `Mcp-Name` mirrors for `method`: `name` for
/// `tools/call` and `prompts/get`, `uri` for `resources/read`, `taskId`
/// for the Tasks extension's `tasks/get`, `tasks/update` and `tasks/cancel`;
/// `None` for methods without one.
pub fn name_key(method: &str) -> Option<&'static str> {
    match method {
        methods::TOOLS_CALL | methods::PROMPTS_GET => Some("name"),
        methods::RESOURCES_READ => Some("uri"),
        methods::TASKS_GET | methods::TASKS_UPDATE | methods::TASKS_CANCEL => Some("taskId"),
        _ => None,
    }
}

/// Checks a request's mirrored name: `header` is the `Mcp-Name` value,
/// already decoded, if one was sent. `Err` says what is wrong.
pub fn check_name(
    method: &str,
    params: Option<&tessera_types::Params>,
    header: Option<&str>,
) -> Result<(), String> {
    let Some(key) = name_key(method) else {
        return Ok(());
    };
    // `name` and `uri` are read once with `_meta`; others on their own.
    let body = params.and_then(|p| match key {
        "name" => p.name().map(std::borrow::Cow::Borrowed),
        "uri" => p.uri().map(std::borrow::Cow::Borrowed),
        other => p.member(other).map(std::borrow::Cow::Owned),
    });
    match (header, body.as_deref()) {
        (None, Some(Value::String(b))) => Err(format!(
            "the Mcp-Name header is required for {method} (the body's params.{key} is '{b}')"
        )),
        (None, _) => Ok(()),
        (Some(h), Some(Value::String(b))) if h == b => Ok(()),
        (Some(h), Some(Value::String(b))) => Err(format!(
            "Mcp-Name header value '{h}' does not match body value '{b}'"
        )),
        (Some(h), _) => Err(format!(
            "Mcp-Name header value '{h}' has no params.{key} to match in the body"
        )),
    }
}

/// A tool argument mirrored into an `Mcp-Param-{name}` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamHeader {
    /// The `x-mcp-header` value (the `{name}` of the header).
    pub name: String,
    /// The chain of `properties` keys leading to the argument.
    pub path: Vec<String>,
}

/// The arguments an input schema marks with `x-mcp-header`, reachable from
/// the root through `properties` only.
pub fn param_headers(schema: &JsonObject) -> Vec<ParamHeader> {
    fn walk(schema: &JsonObject, path: &mut Vec<String>, out: &mut Vec<ParamHeader>) {
        let Some(Value::Object(props)) = schema.get("properties") else {
            return;
        };
        for (key, prop) in props {
            let Value::Object(prop) = prop else { continue };
            path.push(key.clone());
            if let Some(Value::String(name)) = prop.get("x-mcp-header") {
                out.push(ParamHeader {
                    name: name.clone(),
                    path: path.clone(),
                });
            }
            walk(prop, path, out);
            path.pop();
        }
    }
    let mut out = Vec::new();
    walk(schema, &mut Vec::new(), &mut out);
    out
}

/// Checks the mirrored arguments of a `tools/call`: `header(name)` gives the
/// decoded value of `Mcp-Param-{name}` if one was sent (or why it cannot be
/// read). An argument that is absent or null needs no header.
pub fn check_params<F>(
    params: &[ParamHeader],
    arguments: Option<&JsonObject>,
    mut header: F,
) -> Result<(), String>
where
    F: FnMut(&str) -> Result<Option<String>, String>,
{
    for p in params {
        let mut value = arguments.and_then(|a| a.get(p.path.first()?));
        for key in p.path.iter().skip(1) {
            value = value.and_then(|v| v.get(key));
        }
        let display = format!("Mcp-Param-{}", p.name);
        match (value, header(&p.name)?) {
            (None | Some(Value::Null), _) => {}
            (Some(v), None) => {
                return Err(format!(
                    "the {display} header is required (the body's argument {} is {v})",
                    p.path.join(".")
                ));
            }
            (Some(v), Some(h)) => {
                if !mirrors(v, &h) {
                    return Err(format!(
                        "{display} header value '{h}' does not match body value {v}"
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Whether a header value mirrors a body value: the same string, `true` or
/// `false` for a boolean, the same number.
pub fn mirrors(body: &Value, header: &str) -> bool {
    match body {
        Value::String(s) => s == header,
        Value::Bool(b) => header == if *b { "true" } else { "false" },
        Value::Number(n) => match (n.as_f64(), header.parse::<f64>()) {
            (Some(a), Ok(b)) => a == b,
            _ => false,
        },
        _ => false,
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
    fn names() {
        let p = tessera_types::Params::from(obj(json!({"name": "echo"})));
        assert!(check_name(methods::TOOLS_CALL, Some(&p), Some("echo")).is_ok());
        assert!(check_name(methods::TOOLS_CALL, Some(&p), Some("other")).is_err());
        assert!(check_name(methods::TOOLS_CALL, Some(&p), None).is_err());
        assert!(check_name(methods::TOOLS_LIST, None, None).is_ok());
        assert!(check_name(methods::RESOURCES_READ, None, Some("x")).is_err());
        assert_eq!(name_key(methods::TASKS_GET), Some("taskId"));
    }

    #[test]
    fn params() {
        let schema = obj(json!({
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "n": {"type": "integer", "x-mcp-header": "N"},
                "deep": {"type": "object", "properties": {"flag": {"type": "boolean", "x-mcp-header": "Flag"}}}
            }
        }));
        let ph = param_headers(&schema);
        assert_eq!(ph.len(), 3);
        let args = obj(json!({"region": "us-west1", "n": 42, "deep": {"flag": true}}));
        fn sent(
            region: Option<&'static str>,
        ) -> impl FnMut(&str) -> Result<Option<String>, String> {
            move |name: &str| {
                Ok(match name {
                    "Region" => region.map(str::to_owned),
                    "N" => Some("42.0".to_owned()),
                    "Flag" => Some("true".to_owned()),
                    _ => None,
                })
            }
        }
        assert!(check_params(&ph, Some(&args), sent(Some("us-west1"))).is_ok());
        assert!(check_params(&ph, Some(&args), sent(Some("eu"))).is_err());
        assert!(check_params(&ph, Some(&args), sent(None)).is_err());
        let sparse = obj(json!({"n": 42, "deep": {}}));
        assert!(check_params(&ph, Some(&sparse), sent(None)).is_ok());
        assert!(!mirrors(&json!({"a": 1}), "x"));
    }
}
