//! The HTTP+SSE transport of protocol version 2024-11-05: `GET /sse` opens a
//! session whose one SSE stream starts with an `endpoint` event naming the
//! URL to POST messages to (`/message?sessionId=…`); every answer travels on
//! the stream as an `event: message`. The session ends with the stream.

use std::sync::Arc;

use bytes::Bytes;
use http::{Method, StatusCode};
use tokio::sync::mpsc;

use super::Shared;
use super::body::McpBody;
use super::reply::{self, HttpResponse};
use super::session::{self, SessionKind};
use super::streamable::{accepts, is_json, read_message};

/// `GET /sse`: opens a session and its stream.
pub(crate) async fn open<B>(shared: &Arc<Shared>, req: http::Request<B>) -> HttpResponse {
    if req.method() != Method::GET {
        return reply::method_not_allowed(
            "GET",
            "Method Not Allowed: GET this path to open an HTTP+SSE stream",
        );
    }
    if !accepts(req.headers(), "text/event-stream") {
        return reply::refuse(
            StatusCode::NOT_ACCEPTABLE,
            "Not Acceptable: this path opens an SSE stream (send Accept: text/event-stream)",
        );
    }
    let (tx, rx) = mpsc::channel(shared.config.stream_buffer);
    match session::spawn(shared, SessionKind::Sse, Some(tx)) {
        Ok(_) => {
            let body = McpBody::sse(
                rx,
                shared.config.keep_alive,
                Some(shared.closing.clone()),
                Vec::new(),
            );
            reply::sse(body)
        }
        Err(session::Full(n)) => reply::refuse(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "Service Unavailable: {n} sessions are open, the limit; raise it with \
                 tessera serve --max-sessions (McpHttpBuilder::max_sessions)"
            ),
        ),
    }
}

fn session_param(query: Option<&str>) -> Option<&str> {
    query?
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == "sessionId")
        .map(|(_, v)| v)
}

/// `POST /message?sessionId=…`: one message for the session; answered 202.
pub(crate) async fn message<B>(shared: &Arc<Shared>, req: http::Request<B>) -> HttpResponse
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    if req.method() != Method::POST {
        return reply::method_not_allowed("POST", "Method Not Allowed: POST messages to this path");
    }
    let Some(id) = session_param(req.uri().query()).map(str::to_owned) else {
        return reply::refuse(
            StatusCode::BAD_REQUEST,
            "Bad Request: the sessionId query parameter is required (it comes in the stream's endpoint event)",
        );
    };
    let session = match shared.sessions.get(&id) {
        Some(s) if s.kind == SessionKind::Sse && !s.ended.is_cancelled() => s,
        _ => {
            return reply::refuse(
                StatusCode::NOT_FOUND,
                format!(
                    "Not Found: session {id:?} does not exist or its stream has closed; GET the SSE path again"
                ),
            );
        }
    };
    if !is_json(req.headers()) {
        return reply::refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Unsupported Media Type: the body must be JSON (Content-Type: application/json)",
        );
    }
    let (parts, body) = req.into_parts();
    let inbound = match read_message(shared, &parts.headers, body).await {
        Ok(i) => i,
        Err(r) => return r,
    };
    if session
        .forward_with(
            inbound,
            super::streamable::request_extensions(parts.headers),
        )
        .await
    {
        reply::accepted()
    } else {
        reply::refuse(StatusCode::NOT_FOUND, "Not Found: the session has ended")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query() {
        assert_eq!(session_param(Some("a=1&sessionId=xyz")), Some("xyz"));
        assert_eq!(session_param(Some("sessionid=xyz")), None);
        assert_eq!(session_param(None), None);
    }
}
