//! 2026-07-28 (modern era) on the endpoint: era detection from the
//! `MCP-Protocol-Version` header and `_meta`, and the request metadata
//! header checks (`Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`) that fail with
//! `400` and `-32020` (HeaderMismatch).

// Handlers refuse with a ready HTTP response; it is large, but built once per refused request.
#![allow(clippy::result_large_err)]

use std::sync::Arc;
use tessera_types::methods;

use http::{HeaderMap, StatusCode};
use serde_json::{Value, json};
use tessera_proto::decode::Inbound;
use tessera_proto::meta_keys;
use tessera_types::{
    ErrorCode, ErrorObject, JsonObject, JsonRpcMessage, JsonRpcRequest, ProtocolVersion, RequestId,
};

use super::reply::{self, HttpResponse};
use super::streamable::single_header;
use super::{Shared, single};
use crate::headers::{
    MCP_METHOD, MCP_NAME, MCP_PARAM_PREFIX, MCP_PROTOCOL_VERSION, decode_header_value,
};

/// Which era serves a POST.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Era {
    /// The session world (2024-11-05 … 2025-11-25).
    Legacy,
    /// Stateless, at this version.
    Modern(ProtocolVersion),
}

fn header_mismatch(id: Option<RequestId>, why: impl std::fmt::Display) -> HttpResponse {
    reply::rpc_error(
        StatusCode::BAD_REQUEST,
        id,
        ErrorObject::new(
            ErrorCode::HEADER_MISMATCH,
            format!("Header mismatch: {why}"),
        ),
    )
}

fn invalid_params(id: Option<RequestId>, why: impl Into<String>) -> HttpResponse {
    reply::rpc_error(
        StatusCode::BAD_REQUEST,
        id,
        ErrorObject::invalid_params(why),
    )
}

/// Decides the era of a POST from the `MCP-Protocol-Version` header and the
/// body's `_meta` protocol version, refusing unsupported versions (`-32022`),
/// disagreements (`-32020`) and a modern header without `_meta` (`-32602`).
pub(crate) fn detect(
    shared: &Shared,
    headers: &HeaderMap,
    inbound: &Inbound,
) -> Result<Era, HttpResponse> {
    let (id, params) = match inbound {
        Inbound::Message(JsonRpcMessage::Request(r)) => (Some(r.id.clone()), r.params.as_ref()),
        Inbound::Message(JsonRpcMessage::Notification(n)) => (None, n.params.as_ref()),
        _ => (None, None),
    };
    let header =
        single_header(headers, MCP_PROTOCOL_VERSION).map_err(|e| header_mismatch(id.clone(), e))?;
    let header_version = match header {
        None => None,
        Some(h) => match ProtocolVersion::parse(h).filter(|v| shared.supports(*v)) {
            Some(v) => Some(v),
            None => {
                return Err(reply::rpc_error(
                    StatusCode::BAD_REQUEST,
                    id,
                    ErrorObject::unsupported_protocol_version(h, shared.version_strings()),
                ));
            }
        },
    };
    let meta_version =
        tessera_proto::decode::meta(params).and_then(|m| m.get(meta_keys::PROTOCOL_VERSION));
    let meta_version = match meta_version {
        None => None,
        Some(Value::String(s)) => Some(s.as_str()),
        Some(other) => {
            return Err(invalid_params(
                id,
                format!(
                    "Invalid params: _meta {} must be a string, got {other}",
                    meta_keys::PROTOCOL_VERSION
                ),
            ));
        }
    };
    match (header_version, meta_version) {
        (Some(h), None) if h.era() == tessera_types::Era::Modern => {
            if matches!(inbound, Inbound::Batch(_)) {
                return Ok(Era::Modern(h));
            }
            Err(invalid_params(
                id,
                format!(
                    "Invalid params: _meta {} is required on every {h} request (the MCP-Protocol-Version header says {h})",
                    meta_keys::PROTOCOL_VERSION
                ),
            ))
        }
        (Some(h), Some(m)) if m != h.as_str() => Err(header_mismatch(
            id,
            format!(
                "MCP-Protocol-Version header value '{h}' does not match body _meta value '{m}'"
            ),
        )),
        (Some(h), Some(_)) if h.era() == tessera_types::Era::Modern => Ok(Era::Modern(h)),
        (None, Some(m))
            if ProtocolVersion::parse(m).is_none_or(|v| v.era() == tessera_types::Era::Modern) =>
        {
            Err(header_mismatch(
                id,
                format!(
                    "the MCP-Protocol-Version header is required (the body's _meta says '{m}')"
                ),
            ))
        }
        _ => Ok(Era::Legacy),
    }
}

/// Serves a 2026-07-28 POST.
pub(crate) async fn post(
    shared: &Arc<Shared>,
    headers: HeaderMap,
    message: JsonRpcMessage,
    version: ProtocolVersion,
    caller: &super::carried::Caller,
) -> HttpResponse {
    match message {
        JsonRpcMessage::Notification(n) => {
            if let Some(h) = single_header(&headers, MCP_METHOD).ok().flatten() {
                if h != n.method {
                    return header_mismatch(
                        None,
                        format!(
                            "Mcp-Method header value '{h}' does not match body value '{}'",
                            n.method
                        ),
                    );
                }
            }
            // This revision defines no client notifications over HTTP: accepted, nothing to do.
            reply::accepted()
        }
        JsonRpcMessage::Request(r) => {
            if let Err(why) = check_standard_headers(&headers, &r) {
                return header_mismatch(Some(r.id.clone()), why);
            }
            let _ = version;
            shared
                .serve_single(single::Job {
                    flavor: single::Flavor::Modern,
                    extensions: caller.request_extensions(headers.clone()),
                    headers,
                    request: r,
                })
                .await
        }
        JsonRpcMessage::Result(_) | JsonRpcMessage::Error(_) => reply::refuse(
            StatusCode::BAD_REQUEST,
            "Bad Request: a 2026-07-28 client sends no JSON-RPC responses (server requests travel in input-required results)",
        ),
    }
}

/// The body value `Mcp-Name` mirrors, for the methods that have one.
fn name_source(r: &JsonRpcRequest) -> Option<(&'static str, Option<&Value>)> {
    let key = match r.method.as_str() {
        methods::TOOLS_CALL | methods::PROMPTS_GET => "name",
        methods::RESOURCES_READ => "uri",
        // Tasks extension: routed by the task id.
        methods::TASKS_GET | methods::TASKS_UPDATE | methods::TASKS_CANCEL => "taskId",
        _ => return None,
    };
    Some((key, r.params.as_ref().and_then(|p| p.get(key))))
}

/// `Mcp-Method` must equal the method; `Mcp-Name` must equal `params.name`
/// or `params.uri` (after Base64 decoding).
pub(crate) fn check_standard_headers(
    headers: &HeaderMap,
    r: &JsonRpcRequest,
) -> Result<(), String> {
    match single_header(headers, MCP_METHOD)? {
        None => {
            return Err(format!(
                "the Mcp-Method header is required (the body's method is '{}')",
                r.method
            ));
        }
        Some(h) if h != r.method => {
            return Err(format!(
                "Mcp-Method header value '{h}' does not match body value '{}'",
                r.method
            ));
        }
        Some(_) => {}
    }
    if let Some((key, body)) = name_source(r) {
        let header = single_header(headers, MCP_NAME)?;
        match (header, body) {
            (None, Some(Value::String(b))) => {
                return Err(format!(
                    "the Mcp-Name header is required for {} (the body's params.{key} is '{b}')",
                    r.method
                ));
            }
            (Some(h), body) => {
                let decoded = decode_header_value(h).map_err(|e| format!("Mcp-Name: {e}"))?;
                match body {
                    Some(Value::String(b)) if *b == decoded => {}
                    Some(Value::String(b)) => {
                        return Err(format!(
                            "Mcp-Name header value '{decoded}' does not match body value '{b}'"
                        ));
                    }
                    _ => {
                        return Err(format!(
                            "Mcp-Name header value '{decoded}' has no params.{key} to match in the body"
                        ));
                    }
                }
            }
            (None, _) => {}
        }
    }
    Ok(())
}

/// A tool parameter mirrored into an `Mcp-Param-{name}` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParamHeader {
    /// The `x-mcp-header` value.
    pub name: String,
    /// The chain of `properties` keys leading to the parameter.
    pub path: Vec<String>,
}

/// The `x-mcp-header` parameters of an input schema (statically reachable
/// through `properties` only).
pub(crate) fn param_headers(schema: &JsonObject) -> Vec<ParamHeader> {
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

/// Checks the `Mcp-Param-*` headers of a `tools/call` against its arguments.
pub(crate) fn check_param_headers(
    headers: &HeaderMap,
    params: &[ParamHeader],
    arguments: Option<&JsonObject>,
) -> Result<(), String> {
    for p in params {
        let mut value = arguments.map(|a| Value::Object(a.clone()));
        for key in &p.path {
            value = value.and_then(|v| v.get(key).cloned());
        }
        let header_name = format!("{MCP_PARAM_PREFIX}{}", p.name.to_ascii_lowercase());
        let header = single_header(headers, &header_name)?;
        let display = format!("Mcp-Param-{}", p.name);
        match (value, header) {
            (None | Some(Value::Null), _) => {}
            (Some(v), None) => {
                return Err(format!(
                    "the {display} header is required (the body's argument {} is {v})",
                    p.path.join(".")
                ));
            }
            (Some(v), Some(h)) => {
                let decoded = decode_header_value(h).map_err(|e| format!("{display}: {e}"))?;
                if !same_value(&v, &decoded) {
                    return Err(format!(
                        "{display} header value '{decoded}' does not match body value {v}"
                    ));
                }
            }
        }
    }
    Ok(())
}

fn same_value(body: &Value, header: &str) -> bool {
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

/// `_meta` for an internal request on behalf of `r` (same version and capabilities).
pub(crate) fn internal_meta(r: &JsonRpcRequest) -> JsonObject {
    let mut meta = JsonObject::new();
    if let Some(m) = tessera_proto::decode::meta(r.params.as_ref()) {
        for key in [
            meta_keys::PROTOCOL_VERSION,
            meta_keys::CLIENT_CAPABILITIES,
            meta_keys::CLIENT_INFO,
        ] {
            if let Some(v) = m.get(key) {
                meta.insert(key.into(), v.clone());
            }
        }
    }
    let mut params = JsonObject::new();
    params.insert("_meta".into(), json!(meta));
    params
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn param_header_rules() {
        let schema: JsonObject = serde_json::from_value(json!({
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "n": {"type": "integer", "x-mcp-header": "N"},
                "deep": {"type": "object", "properties": {"flag": {"type": "boolean", "x-mcp-header": "Flag"}}}
            }
        }))
        .unwrap();
        let ph = param_headers(&schema);
        assert_eq!(ph.len(), 3);
        let args: JsonObject =
            serde_json::from_value(json!({"region": "us-west1", "n": 42, "deep": {"flag": true}}))
                .unwrap();
        let mut h = HeaderMap::new();
        h.insert("mcp-param-region", "us-west1".parse().unwrap());
        h.insert("mcp-param-n", "42.0".parse().unwrap());
        h.insert("mcp-param-flag", "true".parse().unwrap());
        assert!(check_param_headers(&h, &ph, Some(&args)).is_ok());
        h.insert(
            "mcp-param-region",
            "=?base64?dXMtd2VzdDE=?=".parse().unwrap(),
        );
        assert!(check_param_headers(&h, &ph, Some(&args)).is_ok());
        h.insert("mcp-param-region", "eu".parse().unwrap());
        assert!(check_param_headers(&h, &ph, Some(&args)).is_err());
        h.remove("mcp-param-region");
        assert!(check_param_headers(&h, &ph, Some(&args)).is_err());
        let args: JsonObject = serde_json::from_value(json!({"n": 1, "deep": {}})).unwrap();
        h.insert("mcp-param-n", "1".parse().unwrap());
        assert!(check_param_headers(&h, &ph, Some(&args)).is_ok());
    }
}
