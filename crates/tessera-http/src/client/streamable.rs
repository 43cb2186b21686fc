//! The Streamable HTTP exchanges: one POST per message (its answer a JSON
//! body or an SSE stream), the standalone GET stream of a session, resuming
//! a cut SSE stream, and a new session when the server forgot the old one.

use std::sync::Arc;
use std::time::Duration;
use tessera_types::methods;

use bytes::Bytes;
use http::{HeaderValue, Method, StatusCode};
use http_body_util::BodyExt;
use serde_json::Value;
use tessera_proto::RawResult;
use tessera_types::RequestId;

use super::envelope::{ErrorAnswer, Shape, shape_of};
use super::shared::{Outgoing, Shared};
use crate::headers::{LAST_EVENT_ID, MCP_PROTOCOL_VERSION, encode_header_value, names};
use crate::sse::SseDecoder;

/// The `Accept` header of every POST.
const ACCEPT_POST: &str = "application/json, text/event-stream";

/// POSTs `out` to the endpoint with the headers of its era, carrying
/// `session` as `Mcp-Session-Id`.
pub(crate) async fn send_post(
    shared: &Shared,
    out: &Outgoing,
    session: Option<&str>,
) -> Result<super::shared::Response, String> {
    let version = out.modern_version.clone().or_else(|| shared.version());
    let build = || {
        let mut req = shared.request_to(
            &shared.url,
            Method::POST,
            Some(out.body.clone()),
            ACCEPT_POST,
            session,
        );
        let h = req.headers_mut();
        if let Some(v) = version
            .as_deref()
            .and_then(|v| HeaderValue::from_str(v).ok())
        {
            h.insert(names::MCP_PROTOCOL_VERSION.clone(), v);
        }
        if out.modern_version.is_some() {
            if let Some(m) = out
                .method
                .as_deref()
                .and_then(|m| HeaderValue::from_str(m).ok())
            {
                h.insert(names::MCP_METHOD.clone(), m);
            }
            let named = out
                .method
                .as_deref()
                .and_then(tessera_proto::mirror::name_key)
                .is_some();
            if let (true, Some(n)) = (named, &out.name) {
                if let Ok(v) = HeaderValue::from_str(&encode_header_value(n)) {
                    h.insert(names::MCP_NAME.clone(), v);
                }
            }
            for (name, value) in &out.param_headers {
                h.insert(name.clone(), value.clone());
            }
        }
        req
    };
    shared.exchange(build).await
}

/// Sends one message and hands its answer to the engine. A `404` to a
/// message that carried a session means the server forgot the session: the
/// message was not served, and the connection ends as lost (see
/// [`Shared::lose_session`]); the client's reconnection sets up a new
/// session, never the transport.
pub(crate) async fn post(shared: Arc<Shared>, out: Outgoing) {
    let _in_flight = shared.post_started();
    // The session is read before the lost flag: `lose_session` sets the flag
    // first, so a session cleared by a loss is never sent as "no session".
    let session = shared.session();
    if shared.is_lost() {
        // Not sent: the session it belongs to is gone.
        if let Some(id) = &out.request_id {
            let why = "the server forgot the session; the request was not sent";
            shared.fail_lost(id, why.into()).await;
        }
        return;
    }
    let response = match send_post(&shared, &out, session.as_deref()).await {
        Ok(r) => r,
        Err(e) => return fail(&shared, &out, e).await,
    };
    let is_initialize = out.method.as_deref() == Some(methods::INITIALIZE);
    if let (StatusCode::NOT_FOUND, Some(stale), false) =
        (response.status(), &session, is_initialize)
    {
        if let Some(id) = &out.request_id {
            shared
                .fail_lost(
                    id,
                    format!(
                        "HTTP 404 Not Found: the server no longer knows session {stale}; the \
                         request was not served"
                    ),
                )
                .await;
        }
        shared.lose_session(stale);
        return;
    }
    handle_response(&shared, &out, response).await;
}

async fn fail(shared: &Shared, out: &Outgoing, message: String) {
    if let Some(id) = &out.request_id {
        shared.fail(id, message).await;
    }
}

/// Reads the server's answer to `out`: notes the session, feeds a JSON-RPC
/// body or an SSE stream to the engine, and turns anything else into an
/// error answer.
pub(crate) async fn handle_response(
    shared: &Arc<Shared>,
    out: &Outgoing,
    response: super::shared::Response,
) {
    let status = response.status();
    if let Some(s) = response
        .headers()
        .get(crate::headers::MCP_SESSION_ID)
        .and_then(|v| v.to_str().ok())
    {
        shared.note_session(s);
    }
    let is_sse = response
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    let is_initialize = out.method.as_deref() == Some(methods::INITIALIZE);
    if status == StatusCode::ACCEPTED {
        return;
    }
    if is_sse && status.is_success() {
        read_sse(
            shared,
            response.into_body(),
            out.request_id.as_ref(),
            is_initialize,
        )
        .await;
        return;
    }
    match response.into_body().read_whole(shared.max_message).await {
        Ok(b) => handle_body(shared, out, status, &b).await,
        Err(e) => {
            fail(
                shared,
                out,
                format!("reading the HTTP response failed: {e}"),
            )
            .await
        }
    }
}

/// Hands a whole (non-SSE) response body to the engine when it is JSON-RPC
/// (a result, or an error with a 4xx status), and answers the request with
/// an error otherwise.
pub(crate) async fn handle_body(
    shared: &Arc<Shared>,
    out: &Outgoing,
    status: StatusCode,
    body: &Bytes,
) {
    if out.method.as_deref() != Some(methods::INITIALIZE) {
        // A result (the common answer): read once, here, for the engine too.
        if let Some((id, result)) = RawResult::read_response(body) {
            shared.deliver_result(body.clone(), id, result).await;
            return;
        }
    }
    let (is_rpc, unattributed) = match shape_of(body) {
        Some(Shape::Batch) => (true, false),
        Some(Shape::Object(e)) => (e.is_response(), e.is_unattributed_error()),
        Some(Shape::Other) | None => (false, false),
    };
    if let (true, Some(id)) = (unattributed, &out.request_id) {
        // The answer to the POST that carried `id` refuses it without
        // naming it: `id` fails now rather than at its timeout.
        shared
            .fail(id, unattributed_refusal(Some(status), body))
            .await;
        return;
    }
    if is_rpc {
        if out.method.as_deref() == Some(methods::INITIALIZE) {
            if let Ok(v) = serde_json::from_slice::<Value>(body) {
                shared.note_version(&v);
            }
        }
        shared.deliver(body).await;
        return;
    }
    if status.is_success() && body.is_empty() {
        return;
    }
    let text = String::from_utf8_lossy(body);
    fail(
        shared,
        out,
        format!(
            "HTTP {status} from the server: {}",
            text.chars().take(300).collect::<String>()
        ),
    )
    .await;
}

/// Why a request failed when the server answered the POST that carried it
/// with an error naming no request (a null or absent `id`, as for a
/// request it could not read, or one refused for a missing header): the
/// HTTP status, when the answer was not an event stream (which makes it a
/// transport error with that status: see [`TransportFailure`]), and the
/// server's code and message.
///
/// [`TransportFailure`]: super::failure::TransportFailure
pub(crate) fn unattributed_refusal(status: Option<StatusCode>, body: &[u8]) -> String {
    let answer: ErrorAnswer = serde_json::from_slice(body).unwrap_or_default();
    let error = answer.error.into_valid().unwrap_or_default();
    let code = error
        .code
        .into_valid()
        .map_or_else(|| "no code".to_owned(), |c| c.to_string());
    let message = error.message.into_valid().unwrap_or_default();
    let message: String = message.chars().take(300).collect();
    let from = match status {
        Some(status) => format!("HTTP {status} from the server"),
        None => "the server's event stream".to_owned(),
    };
    format!(
        "{from}: an error for no request id (code {code}: {message:?}) answered the request; \
         the server refused it"
    )
}

/// Reads an SSE response, feeding every message to the engine; resumes with
/// GET + Last-Event-ID when the stream ends before `awaited`'s answer.
pub(crate) async fn read_sse(
    shared: &Arc<Shared>,
    body: super::body::AnswerBody,
    awaited: Option<&RequestId>,
    initialize: bool,
) {
    let mut body = body;
    let mut attempts = 0;
    loop {
        let mut decoder = SseDecoder::with_limit(shared.max_message);
        let mut last_id: Option<String> = None;
        let mut retry = Duration::from_secs(1);
        let mut answered = awaited.is_none();
        while let Some(frame) = body.frame().await {
            let Ok(frame) = frame else { break };
            let Ok(data) = frame.into_data() else {
                continue;
            };
            let events = match decoder.feed(&data) {
                Ok(events) => events,
                Err(e) => {
                    // Not resumed: the server would send the same event.
                    tracing::warn!("{e}: the answer stream is given up");
                    if let (Some(id), false) = (awaited, answered) {
                        let why = format!(
                            "the server's answer stream: {e} (the client's limit: \
                             HttpClientBuilder::max_message_bytes)"
                        );
                        shared.fail(id, why).await;
                    }
                    return;
                }
            };
            for ev in events {
                if let Some(id) = ev.id {
                    last_id = Some(id);
                }
                if let Some(r) = ev.retry {
                    retry = Duration::from_millis(r);
                }
                if ev.data.is_empty() {
                    continue;
                }
                if let (Some(want), false) = (awaited, initialize) {
                    // A result: read once, here, for the engine too.
                    if let Some((id, result)) = RawResult::read_response(ev.data.as_bytes()) {
                        answered |= id == *want;
                        shared
                            .deliver_result(Bytes::from(ev.data), id, result)
                            .await;
                        continue;
                    }
                }
                if let (Some(want), Some(Shape::Object(e))) =
                    (awaited, shape_of(ev.data.as_bytes()))
                {
                    if !answered && e.is_unattributed_error() {
                        // The stream of the POST that carried `want`
                        // refuses it without naming it (see `handle_body`).
                        answered = true;
                        let why = unattributed_refusal(None, ev.data.as_bytes());
                        shared.fail(want, why).await;
                        continue;
                    }
                    if e.answers().as_ref() == Some(want) {
                        answered = true;
                        if initialize {
                            if let Ok(v) = serde_json::from_str::<Value>(&ev.data) {
                                shared.note_version(&v);
                            }
                        }
                    }
                }
                shared.deliver(ev.data.as_bytes()).await;
            }
        }
        if answered {
            return;
        }
        let unanswered = "the server's event stream ended without an answer";
        let (Some(last), true) = (last_id, attempts < 5) else {
            if let Some(id) = awaited {
                shared.fail(id, unanswered.into()).await;
            }
            return;
        };
        attempts += 1;
        tokio::time::sleep(retry).await;
        let build = || {
            let mut req = shared.request(Method::GET, None, "text/event-stream");
            if let Ok(v) = HeaderValue::from_str(&last) {
                req.headers_mut().insert(LAST_EVENT_ID, v);
            }
            if let Some(v) = shared
                .version()
                .and_then(|v| HeaderValue::from_str(&v).ok())
            {
                req.headers_mut().insert(MCP_PROTOCOL_VERSION, v);
            }
            req
        };
        match shared.exchange(build).await {
            Ok(r) if r.status().is_success() => body = r.into_body(),
            _ => {
                if let Some(id) = awaited {
                    shared
                        .fail(id, "could not resume the server's event stream".into())
                        .await;
                }
                return;
            }
        }
    }
}
