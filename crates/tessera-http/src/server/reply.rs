//! Building responses: JSON bodies, JSON-RPC errors, 202, SSE headers.

use bytes::Bytes;
use http::{HeaderName, HeaderValue, Response, StatusCode, header};
use tessera_types::{ErrorCode, ErrorObject, JsonRpcMessage, RequestId};

use tessera_runtime::middleware::{MessageScope, Refusal};

use super::body::McpBody;

/// Header names this module writes, built once (a `&str` name is copied into
/// a fresh allocation on every insert).
const X_ACCEL_BUFFERING: HeaderName = HeaderName::from_static("x-accel-buffering");
const MCP_SESSION_ID: HeaderName = HeaderName::from_static(crate::headers::MCP_SESSION_ID);

/// The response type of the service.
pub(crate) type HttpResponse = Response<McpBody>;

/// A response with a JSON body.
pub(crate) fn json(status: StatusCode, body: impl Into<Bytes>) -> HttpResponse {
    let mut r = Response::new(McpBody::full(body));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

/// A JSON-RPC error response carried with an HTTP error status.
pub(crate) fn rpc_error(
    status: StatusCode,
    id: Option<RequestId>,
    error: ErrorObject,
) -> HttpResponse {
    let msg = JsonRpcMessage::error(id, error);
    json(status, serde_json::to_vec(&msg).unwrap_or_default())
}

/// An HTTP error with a JSON-RPC error body (`-32600`, id null) whose message
/// says what is wrong and what to change.
pub(crate) fn refuse(status: StatusCode, message: impl Into<String>) -> HttpResponse {
    rpc_error(
        status,
        None,
        ErrorObject::new(ErrorCode::INVALID_REQUEST, message),
    )
}

/// `202 Accepted`, no body.
pub(crate) fn accepted() -> HttpResponse {
    let mut r = Response::new(McpBody::empty());
    *r.status_mut() = StatusCode::ACCEPTED;
    r
}

/// `405 Method Not Allowed` with an `Allow` header.
pub(crate) fn method_not_allowed(allow: &'static str, why: &str) -> HttpResponse {
    let mut r = refuse(StatusCode::METHOD_NOT_ALLOWED, why);
    r.headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static(allow));
    r
}

/// A `200` SSE response around `body`.
pub(crate) fn sse(body: McpBody) -> HttpResponse {
    let mut r = Response::new(body);
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert(X_ACCEL_BUFFERING, HeaderValue::from_static("no"));
    r
}

/// A `200` SSE response around `body` with `headers` (a session's
/// [`sse_headers`](super::session::SessionHandle::sse_headers): those of
/// [`sse`] and its `Mcp-Session-Id`, made once).
pub(crate) fn sse_with(body: McpBody, headers: &http::HeaderMap) -> HttpResponse {
    let mut r = Response::new(body);
    *r.headers_mut() = headers.clone();
    r
}

/// Adds `Mcp-Session-Id` (the session's id as a header value, made once
/// per session; `None` when the id cannot be one).
pub(crate) fn with_session(mut r: HttpResponse, session: Option<&HeaderValue>) -> HttpResponse {
    if let Some(v) = session {
        r.headers_mut().insert(MCP_SESSION_ID, v.clone());
    }
    r
}

/// Who answered a 2026-07-28 request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stage {
    /// The engine, before any handler ran: the request itself was refused.
    Engine,
    /// A handler (or a layer in front of it).
    Handler,
}

/// The HTTP status of a 2026-07-28 JSON-RPC error answer: `-32601` is 404;
/// the envelope and header errors are 400, and so are invalid params when
/// the engine refused the request itself (its `_meta`); errors of handlers
/// ride on 200.
pub(crate) fn modern_status(message: &JsonRpcMessage, stage: Stage) -> StatusCode {
    match message {
        JsonRpcMessage::Error(e) => match ErrorCode(e.error.code) {
            ErrorCode::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
            ErrorCode::PARSE_ERROR
            | ErrorCode::INVALID_REQUEST
            | ErrorCode::HEADER_MISMATCH
            | ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
            | ErrorCode::UNSUPPORTED_PROTOCOL_VERSION => StatusCode::BAD_REQUEST,
            ErrorCode::INVALID_PARAMS if stage == Stage::Engine => StatusCode::BAD_REQUEST,
            _ => StatusCode::OK,
        },
        _ => StatusCode::OK,
    }
}

/// The HTTP answer of a layer's [`Refusal`], when it has one: its status,
/// headers and body (the JSON-RPC error response when it gives none).
pub(crate) fn refusal(refusal: &Refusal) -> Option<HttpResponse> {
    let http = refusal.http()?;
    let mut r = match &http.body {
        Some(body) => {
            let mut r = Response::new(McpBody::full(body.clone()));
            *r.status_mut() = http.status;
            r
        }
        None => rpc_error(
            http.status,
            refusal.request_id().cloned(),
            refusal.error().clone(),
        ),
    };
    let h = r.headers_mut();
    for name in http.headers.keys() {
        h.remove(name);
    }
    for (name, value) in &http.headers {
        h.append(name, value.clone());
    }
    Some(r)
}

/// The HTTP answer of the refusal recorded in `frame`, if any.
pub(crate) fn refused(frame: Option<&MessageScope>) -> Option<HttpResponse> {
    refusal(&frame?.refusal()?)
}

/// `r` with `Retry-After: secs` (every 503 and 429 of the endpoint says when
/// to come back).
pub(crate) fn retry_after(mut r: HttpResponse, secs: u64) -> HttpResponse {
    r.headers_mut()
        .insert(http::header::RETRY_AFTER, http::HeaderValue::from(secs));
    r
}
