//! The HTTP+SSE transport of protocol version 2024-11-05: `GET /sse` opens a
//! session whose one SSE stream starts with an `endpoint` event naming the
//! URL to POST messages to (`/message?sessionId=…`); every answer travels on
//! the stream as an `event: message`. The session ends with the stream.

use std::sync::Arc;
use tessera_types::methods;

use bytes::Bytes;
use http::{Method, StatusCode};
use tessera_proto::decode::Inbound;
use tessera_runtime::middleware::MessageScope;
use tessera_types::{JsonRpcMessage, RequestId};
use tokio::sync::mpsc;

use super::Shared;
use super::body::McpBody;
use super::carried::Caller;
use super::client_share::{InFlight, client_busy};
use super::inbound::{batch_too_large, read_message};
use super::reply::{self, HttpResponse};
use super::session::{self, SessionKind};
use super::streamable::{accepts, completes_handshake, is_json, session_busy, sessions_full};

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
    let caller = Caller::of(req.extensions(), req.version());
    let (client, owner) = (caller.client.clone(), caller.principal());
    match session::spawn(shared, SessionKind::Sse, Some(tx), client, owner) {
        Ok(s) => {
            let body = McpBody::sse(
                rx,
                shared.config.keep_alive,
                Some(shared.closing.clone()),
                Some(Box::new((s.stream_opened(), shared.stats.stream()))),
            );
            reply::sse(body)
        }
        Err(full) => sessions_full(shared, full),
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
    let caller = Caller::of(req.extensions(), req.version());
    let session = match shared.sessions.get(&id) {
        Some(s)
            if s.kind == SessionKind::Sse
                && !s.ended.is_cancelled()
                && caller.made(s.owner.as_ref()) =>
        {
            s
        }
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
    let inbound = match read_message(shared, &parts.headers, &parts.extensions, body).await {
        Ok(i) => i,
        Err(r) => return r,
    };
    if let Inbound::Batch(items) = &inbound {
        if let Some(r) = batch_too_large(shared, items.len()) {
            return r;
        }
    }
    if completes_handshake(&inbound) {
        session.mark_handshaken();
    }
    // Each request takes one of the session's in-flight permits until its
    // answer goes out on the stream; at the limit the POST gets 429 at once.
    let mut held = Vec::new();
    for id in request_ids(&inbound) {
        let Some(p) = session.try_reserve_one() else {
            return session_busy(shared, session.max_inflight());
        };
        let Some(share) = shared.client_shares.take(&session.client, 1) else {
            return client_busy(shared, &session.client);
        };
        held.push((id, InFlight::new(p, share)));
    }
    let cancelled = cancelled_id(&inbound);
    let mut extensions = caller.request_extensions(parts.headers);
    let forwarded = if held.is_empty() {
        session.forward_held(inbound, extensions, held)
    } else {
        // Requests: wait until their layers ran, so that a refusal with an
        // HTTP answer (403 for a missing scope) answers this POST.
        let frame = MessageScope::new();
        extensions.insert(frame.clone());
        let forwarded = session
            .forward_held_handled(inbound, extensions, held)
            .await;
        if let Some(r) = reply::refused(Some(&frame)) {
            return r;
        }
        forwarded
    };
    if forwarded {
        if let Some(id) = cancelled {
            session.cancelled(id);
        }
        reply::accepted()
    } else {
        reply::refuse(StatusCode::NOT_FOUND, "Not Found: the session has ended")
    }
}

/// The ids of the requests in a frame.
fn request_ids(inbound: &Inbound) -> Vec<RequestId> {
    let id = |m: &JsonRpcMessage| match m {
        JsonRpcMessage::Request(r) => Some(r.id.clone()),
        _ => None,
    };
    match inbound {
        Inbound::Message(m) => id(m).into_iter().collect(),
        Inbound::Batch(items) => items.iter().flatten().filter_map(id).collect(),
        _ => Vec::new(),
    }
}

/// The request a `notifications/cancelled` names.
fn cancelled_id(inbound: &Inbound) -> Option<RequestId> {
    match inbound {
        Inbound::Message(JsonRpcMessage::Notification(n))
            if n.method == methods::NOTIFICATIONS_CANCELLED =>
        {
            n.params
                .as_ref()
                .and_then(|p| p.get("requestId"))
                .and_then(|v| serde_json::from_value(v.clone()).ok())
        }
        _ => None,
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
