//! `x-mcp-header` on the client side (2026-07-28): which tool parameters are
//! mirrored into `Mcp-Param-{Name}` headers, which tool definitions are
//! invalid (and so left out of `tools/list`), and the headers of a
//! `tools/call`.

use std::collections::{HashMap, HashSet};

use http::{HeaderName, HeaderValue};
use serde_json::{Map, Value};

use super::envelope::{ListedTool, SchemaType, ToolsAnswer, object_view};
use crate::headers::{MCP_PARAM_PREFIX, encode_header_value};

/// The annotation keyword.
const ANNOTATION: &str = "x-mcp-header";

/// Keywords whose values are data, not subschemas: an `x-mcp-header` key
/// inside them is not an annotation.
const DATA_KEYWORDS: [&str; 4] = ["const", "default", "enum", "examples"];

/// The largest integer JavaScript represents exactly (2^53 - 1).
const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// One tool parameter mirrored into a header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParamHeader {
    /// The `x-mcp-header` value (the `{Name}` of `Mcp-Param-{Name}`).
    pub name: String,
    /// The chain of `properties` keys that leads to the parameter.
    pub path: Vec<String>,
}

/// The mirrored parameters of a valid input schema, or why the tool
/// definition is invalid.
pub(crate) fn param_headers(schema: &Map<String, Value>) -> Result<Vec<ParamHeader>, String> {
    let mut found = Vec::new();
    scan_object(schema, Some(&mut Vec::new()), &mut found)?;
    let mut seen = HashSet::new();
    for p in &found {
        if !seen.insert(p.name.to_ascii_lowercase()) {
            return Err(format!(
                "{ANNOTATION} {:?} is used more than once (names are case-insensitive)",
                p.name
            ));
        }
    }
    Ok(found)
}

/// Walks a schema object. `path` is `Some` while the object is reachable from
/// the root through `properties` keys alone.
fn scan_object(
    obj: &Map<String, Value>,
    mut path: Option<&mut Vec<String>>,
    found: &mut Vec<ParamHeader>,
) -> Result<(), String> {
    if let Some(annotation) = obj.get(ANNOTATION) {
        let at = match path.as_deref() {
            Some(p) if !p.is_empty() => p.clone(),
            Some(_) => return Err(format!("{ANNOTATION} on the schema root")),
            None => {
                return Err(format!(
                    "{ANNOTATION} on a property that is not reachable through `properties` alone"
                ));
            }
        };
        let Value::String(name) = annotation else {
            return Err(format!("{ANNOTATION} of {} is not a string", at.join(".")));
        };
        check_name(name).map_err(|why| format!("{ANNOTATION} {name:?}: {why}"))?;
        let typed: SchemaType = tessera_types::decode_object_params(Some(obj)).unwrap_or_default();
        match typed.kind.valid().map(String::as_str) {
            Some("string" | "integer" | "boolean") => {}
            other => {
                return Err(format!(
                    "{ANNOTATION} {name:?} is on a parameter of type {}; only string, integer and boolean may be mirrored",
                    other.map_or_else(|| "(none)".to_owned(), |t| format!("{t:?}"))
                ));
            }
        }
        found.push(ParamHeader {
            name: name.clone(),
            path: at,
        });
    }
    for (key, child) in obj {
        if key == ANNOTATION || DATA_KEYWORDS.contains(&key.as_str()) {
            continue;
        }
        match (key.as_str(), child, path.as_deref_mut()) {
            ("properties", Value::Object(props), Some(p)) => {
                for (name, sub) in props {
                    p.push(name.clone());
                    let r = match sub {
                        Value::Object(sub) => scan_object(sub, Some(p), found),
                        other => scan_value(other, found),
                    };
                    p.pop();
                    r?;
                }
            }
            _ => scan_value(child, found)?,
        }
    }
    Ok(())
}

/// Walks any value that is not statically reachable.
fn scan_value(v: &Value, found: &mut Vec<ParamHeader>) -> Result<(), String> {
    match v {
        Value::Object(o) => scan_object(o, None, found),
        Value::Array(items) => items.iter().try_for_each(|i| scan_value(i, found)),
        _ => Ok(()),
    }
}

/// An `x-mcp-header` value must be a non-empty HTTP token (RFC 9110 `tchar`s).
fn check_name(name: &str) -> Result<(), &'static str> {
    if name.is_empty() {
        return Err("is empty");
    }
    let tchar = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
    if !name.bytes().all(tchar) {
        return Err("is not an HTTP header token (letters, digits and !#$%&'*+-.^_`|~ only)");
    }
    Ok(())
}

/// The `Mcp-Param-*` headers of a call with `arguments`; parameters with no
/// value (absent or `null`) are left out.
pub(crate) fn headers_for(
    params: &[ParamHeader],
    arguments: Option<&Value>,
) -> Vec<(HeaderName, HeaderValue)> {
    let mut out = Vec::new();
    for p in params {
        let mut value = arguments;
        for key in &p.path {
            value = value.and_then(|v| v.get(key));
        }
        let text = match value {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Bool(b)) => b.to_string(),
            Some(Value::Number(n)) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
                (Some(i), _, _) => i.to_string(),
                (None, Some(u), _) => u.to_string(),
                (_, _, Some(f)) if f.fract() == 0.0 && f.abs() <= MAX_SAFE_INTEGER as f64 => {
                    format!("{f:.0}")
                }
                _ => continue,
            },
            _ => continue,
        };
        let name = format!("{MCP_PARAM_PREFIX}{}", p.name);
        if let (Ok(n), Ok(v)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(&encode_header_value(&text)),
        ) {
            out.push((n, v));
        }
    }
    out
}

/// What the client learnt from `tools/list`: each valid tool's mirrored
/// parameters.
#[derive(Debug, Default)]
pub(crate) struct ToolHeaders {
    tools: HashMap<String, Vec<ParamHeader>>,
}

impl ToolHeaders {
    /// The mirrored parameters of `tool`, if it was listed.
    pub(crate) fn get(&self, tool: &str) -> Option<&[ParamHeader]> {
        self.tools.get(tool).map(Vec::as_slice)
    }

    /// Reads a `tools/list` response: records every valid tool and drops the
    /// invalid ones from it. Returns whether the response changed.
    pub(crate) fn absorb_list(&mut self, response: &mut ToolsAnswer) -> bool {
        let Some(tools) = response
            .result
            .valid_mut()
            .and_then(|r| r.tools.valid_mut())
        else {
            return false;
        };
        let before = tools.len();
        tools.retain(|tool| {
            let listed: ListedTool = object_view(tool);
            let name = listed.name.valid().map_or("", String::as_str);
            let verdict = listed
                .input_schema
                .valid()
                .map_or(Ok(Vec::new()), param_headers);
            match verdict {
                Ok(params) => {
                    self.tools.insert(name.to_owned(), params);
                    true
                }
                Err(why) => {
                    tracing::warn!(tool = name, "left out an invalid tool definition: {why}");
                    self.tools.remove(name);
                    false
                }
            }
        });
        tools.len() != before
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn valid_annotations_are_found_with_their_paths() {
        let s = schema(json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "deep": {"type": "object", "properties": {"n": {"type": "integer", "x-mcp-header": "N"}}},
            "query": {"type": "string", "default": {"x-mcp-header": "NotAnAnnotation"}}
        }}));
        let mut p = param_headers(&s).unwrap();
        p.sort_by(|a, b| a.name.cmp(&b.name));
        assert_eq!(
            p,
            vec![
                ParamHeader {
                    name: "N".into(),
                    path: vec!["deep".into(), "n".into()]
                },
                ParamHeader {
                    name: "Region".into(),
                    path: vec!["region".into()]
                },
            ]
        );
    }

    #[test]
    fn invalid_annotations_are_rejected() {
        let cases = [
            json!({"properties": {"v": {"type": "string", "x-mcp-header": ""}}}),
            json!({"properties": {"v": {"type": "object", "x-mcp-header": "V"}}}),
            json!({"properties": {"v": {"type": "number", "x-mcp-header": "V"}}}),
            json!({"properties": {"v": {"type": "null", "x-mcp-header": "V"}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": "My"},
                                  "b": {"type": "string", "x-mcp-header": "my"}}}),
            json!({"properties": {"v": {"type": "string", "x-mcp-header": "My Region"}}}),
            json!({"properties": {"v": {"type": "string", "x-mcp-header": "A:B"}}}),
            json!({"properties": {"v": {"type": "string", "x-mcp-header": "Région"}}}),
            json!({"properties": {"v": {"type": "string", "x-mcp-header": "A\tB"}}}),
            json!({"properties": {"v": {"type": "string", "x-mcp-header": 7}}}),
            json!({"properties": {"v": {"type": "array", "items": {"type": "string", "x-mcp-header": "I"}}}}),
            json!({"anyOf": [{"properties": {"v": {"type": "string", "x-mcp-header": "V"}}}]}),
            json!({"type": "string", "x-mcp-header": "Root"}),
        ];
        for c in cases {
            assert!(param_headers(&schema(c.clone())).is_err(), "{c}");
        }
    }

    #[test]
    fn headers_mirror_values_and_omit_nulls() {
        let params = param_headers(&schema(json!({"properties": {
            "r": {"type": "string", "x-mcp-header": "Region"},
            "p": {"type": "integer", "x-mcp-header": "Priority"},
            "b": {"type": "boolean", "x-mcp-header": "Verbose"},
            "u": {"type": "string", "x-mcp-header": "Unicode"},
            "missing": {"type": "string", "x-mcp-header": "Missing"}
        }})))
        .unwrap();
        let args = json!({"r": "us-west1", "p": 42, "b": null, "u": "Hello, 世界"});
        let mut got: Vec<(String, String)> = headers_for(&params, Some(&args))
            .into_iter()
            .map(|(n, v)| (n.to_string(), v.to_str().unwrap().to_owned()))
            .collect();
        got.sort();
        assert_eq!(
            got,
            vec![
                ("mcp-param-priority".into(), "42".into()),
                ("mcp-param-region".into(), "us-west1".into()),
                (
                    "mcp-param-unicode".into(),
                    "=?base64?SGVsbG8sIOS4lueVjA==?=".into()
                ),
            ]
        );
    }

    #[test]
    fn invalid_tools_are_dropped_from_the_list() {
        let mut h = ToolHeaders::default();
        let sent = json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [
            {"name": "ok", "inputSchema": {"properties": {"r": {"type": "string", "x-mcp-header": "R"}}}},
            {"name": "bad", "inputSchema": {"properties": {"r": {"type": "number", "x-mcp-header": "R"}}}}
        ], "nextCursor": "c"}});
        let mut r: ToolsAnswer = object_view(&sent);
        assert!(h.absorb_list(&mut r));
        let r = serde_json::to_value(&r).unwrap();
        assert_eq!(
            r,
            json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [
                {"name": "ok", "inputSchema": {"properties": {"r": {"type": "string", "x-mcp-header": "R"}}}}
            ], "nextCursor": "c"}})
        );
        assert_eq!(h.get("ok").unwrap().len(), 1);
        assert!(h.get("bad").is_none());
    }
}
