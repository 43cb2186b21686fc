//! 2026-07-28 (modern era) on the endpoint: era detection from the
//! `MCP-Protocol-Version` header and `_meta`, and the request metadata
//! header checks (`Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`) that fail with
//! `400` and `-32020` (HeaderMismatch).

// Handlers refuse with a ready HTTP response; it is large, but built once per refused request.
#![allow(clippy::result_large_err)]

use std::sync::Arc;

use http::{HeaderMap, StatusCode};
use serde_json::Value;
use tessera_proto::decode::Inbound;
use tessera_proto::meta_keys;
use tessera_proto::mirror::{self, ParamHeader};
use tessera_types::{
    ErrorCode, ErrorObject, JsonObject, JsonRpcMessage, JsonRpcRequest, Params, ProtocolVersion,
    RequestId,
};

use super::reply::{self, HttpResponse};
use super::streamable::single_header;
use super::{Shared, single};
use crate::headers::{MCP_PARAM_PREFIX, decode_header_value, names};

/// Which era serves a POST.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Era {
    /// The session world (2024-11-05 … 2025-11-25), with the version the
    /// `MCP-Protocol-Version` header names, if it is sent (a supported
    /// legacy version).
    Legacy(Option<ProtocolVersion>),
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
        Inbound::Message(JsonRpcMessage::Request(r)) => (Some(&r.id), r.params.as_ref()),
        Inbound::Message(JsonRpcMessage::Notification(n)) => (None, n.params.as_ref()),
        _ => (None, None),
    };
    let header = single_header(headers, &names::MCP_PROTOCOL_VERSION)
        .map_err(|e| header_mismatch(id.cloned(), e))?;
    let header_version = match header {
        None => None,
        Some(h) => match ProtocolVersion::parse(h).filter(|v| shared.supports(*v)) {
            Some(v) => Some(v),
            None => {
                return Err(reply::rpc_error(
                    StatusCode::BAD_REQUEST,
                    id.cloned(),
                    ErrorObject::unsupported_protocol_version(h, shared.version_strings()),
                ));
            }
        },
    };
    // `_meta` stays text: only its protocol version is read here.
    let meta_version = params
        .and_then(Params::meta)
        .and_then(|m| m.str_member(meta_keys::PROTOCOL_VERSION));
    let meta_version = match meta_version {
        None => None,
        Some(Ok(s)) => Some(s),
        Some(Err(other)) => {
            return Err(invalid_params(
                id.cloned(),
                format!(
                    "Invalid params: _meta {} must be a string, got {other}",
                    meta_keys::PROTOCOL_VERSION
                ),
            ));
        }
    };
    match (header_version, meta_version.as_deref()) {
        (Some(h), None) if h.era() == tessera_types::Era::Modern => {
            if matches!(inbound, Inbound::Batch(_)) {
                return Ok(Era::Modern(h));
            }
            Err(invalid_params(
                id.cloned(),
                format!(
                    "Invalid params: _meta {} is required on every {h} request (the MCP-Protocol-Version header says {h})",
                    meta_keys::PROTOCOL_VERSION
                ),
            ))
        }
        (Some(h), Some(m)) if m != h.as_str() => Err(header_mismatch(
            id.cloned(),
            format!(
                "MCP-Protocol-Version header value '{h}' does not match body _meta value '{m}'"
            ),
        )),
        (Some(h), Some(_)) if h.era() == tessera_types::Era::Modern => Ok(Era::Modern(h)),
        (None, Some(m))
            if ProtocolVersion::parse(m).is_none_or(|v| v.era() == tessera_types::Era::Modern) =>
        {
            Err(header_mismatch(
                id.cloned(),
                format!(
                    "the MCP-Protocol-Version header is required (the body's _meta says '{m}')"
                ),
            ))
        }
        _ => Ok(Era::Legacy(header_version)),
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
            if let Some(h) = single_header(&headers, &names::MCP_METHOD).ok().flatten() {
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
            let Some(share) = shared.client_shares.take(&caller.client, 1) else {
                return super::client_share::client_busy(shared, &caller.client);
            };
            shared
                .serve_single(single::Job {
                    flavor: single::Flavor::Modern,
                    extensions: caller.request_extensions(headers),
                    request: r,
                    share,
                })
                .await
        }
        JsonRpcMessage::Result(_) | JsonRpcMessage::Error(_) => reply::refuse(
            StatusCode::BAD_REQUEST,
            "Bad Request: a 2026-07-28 client sends no JSON-RPC responses (server requests travel in input-required results)",
        ),
    }
}

/// `Mcp-Method` must equal the method; `Mcp-Name` must equal `params.name`
/// or `params.uri` (after Base64 decoding).
pub(crate) fn check_standard_headers(
    headers: &HeaderMap,
    r: &JsonRpcRequest,
) -> Result<(), String> {
    match single_header(headers, &names::MCP_METHOD)? {
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
    if mirror::name_key(&r.method).is_some() {
        let header = match single_header(headers, &names::MCP_NAME)? {
            Some(h) => Some(decode_header_value(h).map_err(|e| format!("Mcp-Name: {e}"))?),
            None => None,
        };
        mirror::check_name(&r.method, r.params.as_ref(), header.as_deref())?;
    }
    Ok(())
}

/// Checks the `Mcp-Param-*` headers of a `tools/call` against its arguments
/// (the rules are [`mirror::check_params`]'s; this reads and decodes the
/// headers).
pub(crate) fn check_param_headers(
    headers: &HeaderMap,
    params: &[ParamHeader],
    arguments: Option<&JsonObject>,
) -> Result<(), String> {
    mirror::check_params(params, arguments, |name| {
        let header_name = format!("{MCP_PARAM_PREFIX}{}", name.to_ascii_lowercase());
        match single_header(headers, &header_name)? {
            None => Ok(None),
            Some(h) => decode_header_value(h)
                .map(Some)
                .map_err(|e| format!("Mcp-Param-{name}: {e}")),
        }
    })
}

/// `_meta` for an internal request on behalf of `r` (same version and capabilities).
pub(crate) fn internal_meta(r: &JsonRpcRequest) -> JsonObject {
    let mut meta = JsonObject::new();
    if let Some(m) = r.params.as_ref().and_then(Params::meta) {
        for key in [
            meta_keys::PROTOCOL_VERSION,
            meta_keys::CLIENT_CAPABILITIES,
            meta_keys::CLIENT_INFO,
        ] {
            if let Some(Ok(v)) = m.member::<Value>(key) {
                meta.insert(key.into(), v);
            }
        }
    }
    meta
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn param_headers_are_read_and_decoded() {
        let schema: JsonObject = serde_json::from_value(json!({
            "type": "object",
            "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}
        }))
        .unwrap();
        let ph = mirror::param_headers(&schema);
        let args: JsonObject = serde_json::from_value(json!({"region": "us-west1"})).unwrap();
        let mut h = HeaderMap::new();
        h.insert("mcp-param-region", "us-west1".parse().unwrap());
        assert!(check_param_headers(&h, &ph, Some(&args)).is_ok());
        h.insert(
            "mcp-param-region",
            "=?base64?dXMtd2VzdDE=?=".parse().unwrap(),
        );
        assert!(check_param_headers(&h, &ph, Some(&args)).is_ok());
        h.append("mcp-param-region", "us-west1".parse().unwrap());
        assert!(
            check_param_headers(&h, &ph, Some(&args)).is_err(),
            "repeated"
        );
        h.remove("mcp-param-region");
        assert!(check_param_headers(&h, &ph, Some(&args)).is_err());
    }
}
