//! The MCP endpoint: method dispatch, the POST checks shared by both eras,
//! and the legacy (2025-03-26 … 2025-11-25) session handling.

// Handlers refuse with a ready HTTP response; it is large, but built once per refused request.
#![allow(clippy::result_large_err)]

use std::sync::Arc;
use tessera_types::methods;

use bytes::Bytes;
use http::request::Parts;
use http::{HeaderMap, Method, StatusCode};
use tessera_proto::decode::Inbound;
use tessera_runtime::Extensions;
use tessera_runtime::middleware::MessageScope;
use tessera_types::{ErrorObject, JsonRpcMessage, JsonRpcRequest, ProtocolVersion, RequestId};

use super::body::McpBody;
use super::carried::Caller;
use super::client_share::{InFlight, client_busy};
use super::cluster::{self, Note};
use super::event_store::EventId;
use super::inbound::{batch_too_large, read_message};
use super::modern::{self, Era};
use super::registry::Full;
use super::reply::{self, HttpResponse};
use super::session::{self, EndReason, FirstReply, RegisterError, SessionHandle, SessionKind};
use super::{ResponseMode, Shared, single};
use crate::headers::names;

/// Serves one request on the MCP endpoint.
pub(crate) async fn handle<B>(shared: &Arc<Shared>, req: http::Request<B>) -> HttpResponse
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let (parts, body) = req.into_parts();
    match parts.method {
        Method::POST => post(shared, parts, body).await,
        Method::GET => get(shared, &parts).await,
        Method::DELETE => delete(shared, &parts).await,
        _ => reply::method_not_allowed(
            "GET, POST, DELETE",
            "Method Not Allowed: the MCP endpoint takes POST (messages), GET (a stream) and DELETE (end a session)",
        ),
    }
}

/// Whether the `Accept` header admits `media` (`type/subtype`, lower case),
/// wildcards included. Allocation-free: it runs twice on every POST.
pub(crate) fn accepts(headers: &HeaderMap, media: &str) -> bool {
    let (ty, _) = media.split_once('/').unwrap_or((media, ""));
    headers
        .get_all(http::header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|range| {
            let mut parts = range.split(';');
            let m = parts.next().unwrap_or("").trim();
            let refused = parts.any(zero_quality);
            let wildcard_subtype = m.len() == ty.len() + 2
                && m.as_bytes()[..ty.len()].eq_ignore_ascii_case(ty.as_bytes())
                && m.ends_with("/*");
            !refused && (m.eq_ignore_ascii_case(media) || m == "*/*" || wildcard_subtype)
        })
}

/// Whether a POST's `Accept` allows both answers (JSON and an event
/// stream). The value clients send nearly always is recognised as it is,
/// before any parsing.
pub(crate) fn accepts_json_and_sse(headers: &HeaderMap) -> bool {
    let mut all = headers.get_all(http::header::ACCEPT).iter();
    if let (Some(only), None) = (all.next(), all.next()) {
        let v = only.as_bytes();
        if v == b"application/json, text/event-stream"
            || v == b"text/event-stream, application/json"
        {
            return true;
        }
    }
    accepts(headers, "application/json") && accepts(headers, "text/event-stream")
}

/// Whether a media-range parameter is `q=0` (spaces ignored, up to three decimals).
fn zero_quality(param: &str) -> bool {
    let mut compact = param.bytes().filter(|b| *b != b' ');
    if compact.next() != Some(b'q') || compact.next() != Some(b'=') || compact.next() != Some(b'0')
    {
        return false;
    }
    match compact.next() {
        None => true,
        Some(b'.') => {
            let mut n = 0;
            for b in compact {
                if b != b'0' || n == 3 {
                    return false;
                }
                n += 1;
            }
            n >= 1
        }
        Some(_) => false,
    }
}

/// Whether the `Content-Type` is JSON. The value clients send nearly
/// always is recognised as it is, before any parsing.
pub(crate) fn is_json(headers: &HeaderMap) -> bool {
    let value = headers.get(http::header::CONTENT_TYPE);
    if value.is_some_and(|v| v.as_bytes() == b"application/json") {
        return true;
    }
    value
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"))
}

/// One header's value as text; `Err` when it is repeated or not visible ASCII.
pub(crate) fn single_header<K>(headers: &HeaderMap, name: K) -> Result<Option<&str>, String>
where
    K: http::header::AsHeaderName + Copy + std::fmt::Display,
{
    let mut values = headers.get_all(name).iter();
    let Some(first) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(format!("the {name} header appears more than once"));
    }
    first
        .to_str()
        .map(|s| Some(s.trim_matches([' ', '\t'])))
        .map_err(|_| format!("the {name} header contains characters that are not visible ASCII"))
}

fn protocol_version_header(headers: &HeaderMap) -> Option<ProtocolVersion> {
    single_header(headers, &names::MCP_PROTOCOL_VERSION)
        .ok()
        .flatten()
        .and_then(ProtocolVersion::parse)
}

async fn post<B>(shared: &Arc<Shared>, parts: Parts, body: B) -> HttpResponse
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let headers = parts.headers;
    if !accepts_json_and_sse(&headers) {
        return reply::refuse(
            StatusCode::NOT_ACCEPTABLE,
            "Not Acceptable: a POST to the MCP endpoint must accept both application/json \
             and text/event-stream (send Accept: application/json, text/event-stream)",
        );
    }
    if !is_json(&headers) {
        return reply::refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Unsupported Media Type: the body must be JSON (Content-Type: application/json)",
        );
    }
    let inbound = match read_message(shared, &headers, &parts.extensions, body).await {
        Ok(i) => i,
        Err(r) => return r,
    };
    let caller = Caller::of(&parts.extensions, parts.version);
    match modern::detect(shared, &headers, &inbound) {
        Err(r) => r,
        Ok(Era::Modern(version)) => match inbound {
            Inbound::Message(m) => modern::post(shared, headers, m, version, &caller).await,
            _ => reply::refuse(
                StatusCode::BAD_REQUEST,
                "Bad Request: protocol version 2026-07-28 has no JSON-RPC batches",
            ),
        },
        Ok(Era::Legacy(header)) if shared.config.stateless => {
            let version = header.unwrap_or(ProtocolVersion::V2025_03_26);
            legacy_stateless(shared, headers, inbound, version, &caller).await
        }
        Ok(Era::Legacy(_)) => session_post(shared, headers, inbound, &caller).await,
    }
}

/// How long a client refused by a session cap is asked to wait
/// (`Retry-After`): sessions go idle and are reclaimed within seconds.
pub(crate) const SESSIONS_FULL_RETRY_SECS: u64 = 5;

/// The refusal of a new session when a cap is reached and nothing is idle
/// (with `Retry-After`).
pub(crate) fn sessions_full(shared: &Shared, full: Full) -> HttpResponse {
    shared.stats.refuse(match full {
        Full::Global(_) => super::limit::MAX_SESSIONS,
        Full::Client(_) => super::limit::MAX_SESSIONS_PER_CLIENT,
    });
    let r = match full {
        Full::Global(n) => reply::refuse(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "Service Unavailable: {n} sessions are open, the limit, and all are busy; end unused \
                 ones with DELETE, or raise it (tessera serve --max-sessions, McpHttpBuilder::max_sessions)"
            ),
        ),
        Full::Client(n) => reply::refuse(
            StatusCode::TOO_MANY_REQUESTS,
            format!(
                "Too Many Requests: this client holds {n} sessions, the per-client limit, and all are \
                 busy; end unused ones with DELETE, or raise it (tessera serve \
                 --max-sessions-per-client, McpHttpBuilder::max_sessions_per_client)"
            ),
        ),
    };
    reply::retry_after(r, SESSIONS_FULL_RETRY_SECS)
}

/// The refusal of a request when its session has too many in progress.
pub(crate) fn session_busy(shared: &Shared, max: usize) -> HttpResponse {
    shared.stats.refuse(super::limit::MAX_REQUESTS_PER_SESSION);
    let r = reply::refuse(
        StatusCode::TOO_MANY_REQUESTS,
        format!(
            "Too Many Requests: the session has {max} requests in progress, the limit; retry when \
             some have finished, or raise it (tessera serve --max-requests-per-session, \
             McpHttpBuilder::max_requests_per_session)"
        ),
    );
    reply::retry_after(r, 1)
}

/// A request of a stateless server: its own engine, no session.
async fn legacy_stateless(
    shared: &Arc<Shared>,
    headers: HeaderMap,
    inbound: Inbound,
    version: ProtocolVersion,
    caller: &Caller,
) -> HttpResponse {
    match inbound {
        Inbound::Message(JsonRpcMessage::Request(r)) => {
            let Some(share) = shared.client_shares.take(&caller.client, 1) else {
                return client_busy(shared, &caller.client);
            };
            shared
                .serve_single(single::Job {
                    flavor: single::Flavor::StatelessLegacy(version),
                    extensions: caller.request_extensions(headers),
                    request: r,
                    share,
                })
                .await
        }
        Inbound::Message(_) => reply::accepted(),
        _ => reply::refuse(
            StatusCode::BAD_REQUEST,
            "Bad Request: a stateless server takes one message per POST, not a JSON-RPC batch",
        ),
    }
}

fn session_id(headers: &HeaderMap) -> Result<Option<&str>, HttpResponse> {
    single_header(headers, &names::MCP_SESSION_ID)
        .map_err(|e| reply::refuse(StatusCode::BAD_REQUEST, format!("Bad Request: {e}")))
}

fn missing_session() -> HttpResponse {
    reply::refuse(
        StatusCode::BAD_REQUEST,
        "Bad Request: the Mcp-Session-Id header is required; POST initialize (without it) to open a session",
    )
}

fn unknown_session(id: &str) -> HttpResponse {
    reply::refuse(
        StatusCode::NOT_FOUND,
        format!(
            "Not Found: session {id:?} does not exist or has ended; POST initialize to open a new one"
        ),
    )
}

/// The refusal of a request that needs the session store while it is down.
pub(crate) fn store_unavailable(e: &tessera_runtime::StoreError) -> HttpResponse {
    let r = reply::rpc_error(
        StatusCode::SERVICE_UNAVAILABLE,
        None,
        cluster::store_down(e),
    );
    reply::retry_after(r, 1)
}

/// The session a request names: the local copy, or one restored from the
/// session store (see [`super::cluster`]). A session opened by another
/// principal is answered exactly like one that does not exist (404): the
/// handler never runs and the caller learns nothing about it.
async fn lookup(
    shared: &Arc<Shared>,
    headers: &HeaderMap,
    caller: &Caller,
) -> Result<Arc<SessionHandle>, HttpResponse> {
    lookup_id(shared, session_id(headers)?, caller).await
}

/// [`lookup`] of the session id the request's headers gave (read once).
async fn lookup_id(
    shared: &Arc<Shared>,
    id: Option<&str>,
    caller: &Caller,
) -> Result<Arc<SessionHandle>, HttpResponse> {
    let Some(id) = id else {
        return Err(missing_session());
    };
    let s = match shared.sessions.get(id) {
        Some(s) if s.kind == SessionKind::Streamable && !s.ended.is_cancelled() => {
            still_stored(shared, &s).await?;
            s
        }
        Some(_) => return Err(unknown_session(id)),
        // Boxed: the rare path keeps its state off every request's future.
        None => Box::pin(restore(shared, id, caller)).await?,
    };
    if caller.made(s.owner.as_ref()) {
        s.refresh_stored(&shared.cluster);
        Ok(s)
    } else {
        tracing::warn!(session = %s.id, "request for a session opened by another principal: refused");
        Err(unknown_session(id))
    }
}

/// With instances sharing sessions, a local copy serves a request only while
/// the session is still stored: a DELETE on another instance removes it from
/// the store before it answers, and the note that tells this instance may
/// not have arrived yet. The check also refreshes the stored state's expiry.
/// A store that cannot answer does not end the session (it serves on).
async fn still_stored(shared: &Arc<Shared>, s: &Arc<SessionHandle>) -> Result<(), HttpResponse> {
    let cluster = &shared.cluster;
    if !cluster.stores || cluster.bus.is_none() {
        return Ok(());
    }
    match cluster.store.touch(&s.id, cluster.ttl).await {
        Ok(false) => {
            tracing::debug!(session = %s.id, "stored session state is gone: the session ended elsewhere");
            s.terminate_as(EndReason::Remote);
            Err(unknown_session(&s.id))
        }
        Ok(true) => Ok(()),
        Err(e) => {
            tracing::debug!(session = %s.id, %e, "could not check the stored session state");
            Ok(())
        }
    }
}

/// A local copy of a session this instance does not hold, from its stored
/// state (404 when there is none; 503 when the store is down).
async fn restore(
    shared: &Arc<Shared>,
    id: &str,
    caller: &Caller,
) -> Result<Arc<SessionHandle>, HttpResponse> {
    // Ids this server issues are 32 visible ASCII characters: anything much
    // longer is not worth a store round trip.
    if !shared.cluster.stores || id.is_empty() || id.len() > 128 {
        return Err(unknown_session(id));
    }
    let state = match shared.cluster.store.load(id).await {
        Ok(Some(state)) if state.id == id => state,
        Ok(_) => return Err(unknown_session(id)),
        Err(e) => {
            tracing::warn!(session = %id, %e, "session store unavailable");
            return Err(store_unavailable(&e));
        }
    };
    let owner = state.principal.clone().map(tessera_runtime::Principal);
    if !caller.made(owner.as_ref()) {
        tracing::warn!(session = %id, "request for a session opened by another principal: refused");
        return Err(unknown_session(id));
    }
    tracing::debug!(session = %id, "session restored from the session store");
    session::restore(shared, state, caller.client.clone()).map_err(|f| sessions_full(shared, f))
}

/// Whether a frame sent after `initialize` completes the handshake: anything
/// but a repeated `initialize` request does.
pub(crate) fn completes_handshake(inbound: &Inbound) -> bool {
    let not_initialize = |m: &JsonRpcMessage| !matches!(m, JsonRpcMessage::Request(r) if r.method == methods::INITIALIZE);
    match inbound {
        Inbound::Message(m) => not_initialize(m),
        Inbound::Batch(items) => items.iter().flatten().any(not_initialize),
        _ => false,
    }
}

async fn session_post(
    shared: &Arc<Shared>,
    headers: HeaderMap,
    inbound: Inbound,
    caller: &Caller,
) -> HttpResponse {
    let sid = match session_id(&headers) {
        Ok(s) => s,
        Err(r) => return r,
    };
    if let (None, Inbound::Message(JsonRpcMessage::Request(r))) = (sid, &inbound) {
        if r.method == methods::INITIALIZE {
            let r = r.clone();
            return initialize(shared, r, caller).await;
        }
    }
    if let Inbound::Batch(items) = &inbound {
        if let Some(r) = batch_too_large(shared, items.len()) {
            return r;
        }
    }
    let session = match lookup_id(shared, sid, caller).await {
        Ok(s) => s,
        Err(r) => return r,
    };
    if completes_handshake(&inbound) {
        session.mark_handshaken();
    }
    let mode = shared.config.response_mode;
    match &inbound {
        Inbound::Message(JsonRpcMessage::Request(r)) => {
            let ids = vec![r.id.clone()];
            request(
                shared,
                &session,
                ids,
                false,
                inbound,
                mode,
                session_extensions(&session, caller, headers),
            )
            .await
        }
        Inbound::Batch(items) => {
            let ids: Vec<RequestId> = items
                .iter()
                .filter_map(|i| match i {
                    Ok(JsonRpcMessage::Request(r)) => Some(r.id.clone()),
                    _ => None,
                })
                .collect();
            if ids.is_empty() {
                forward(&session, inbound).await
            } else {
                request(
                    shared,
                    &session,
                    ids,
                    true,
                    inbound,
                    mode,
                    session_extensions(&session, caller, headers),
                )
                .await
            }
        }
        Inbound::Message(JsonRpcMessage::Notification(n))
            if n.method == methods::NOTIFICATIONS_CANCELLED =>
        {
            let id = n
                .params
                .as_ref()
                .and_then(|p| p.get("requestId"))
                .and_then(|v| serde_json::from_value::<RequestId>(v.clone()).ok());
            let message = shared
                .cluster
                .bus
                .is_some()
                .then(|| serde_json::to_vec(&n).ok().and_then(|b| Note::raw(&b)))
                .flatten();
            let r = forward(&session, inbound).await;
            if let Some(id) = id {
                session.cancelled(id);
            }
            // The request may be running on another instance.
            if let Some(message) = message {
                if let Err(e) = shared
                    .cluster
                    .publish(&session.id, Note::Cancelled { message })
                    .await
                {
                    tracing::warn!(session = %session.id, %e, "a cancellation could not reach the other instances");
                }
            }
            r
        }
        Inbound::Message(m @ (JsonRpcMessage::Result(_) | JsonRpcMessage::Error(_)))
            if m.id().and_then(|id| shared.cluster.elsewhere(id)).is_some() =>
        {
            // The answer to a request another instance sent: it goes there.
            let to = m.id().and_then(|id| shared.cluster.elsewhere(id)).unwrap_or(0);
            let Some(message) = serde_json::to_vec(m).ok().and_then(|b| Note::raw(&b)) else {
                return reply::accepted();
            };
            match shared
                .cluster
                .publish(&session.id, Note::Response { to, message })
                .await
            {
                Ok(()) => reply::accepted(),
                Err(e) => store_unavailable(&e),
            }
        }
        Inbound::Message(JsonRpcMessage::Notification(n))
            if n.method == <tessera_types::InitializedNotification as tessera_types::NotificationMethod>::METHOD =>
        {
            // Stored before the 202: the next request may go to another instance.
            if session.forward_synced(inbound).await {
                reply::accepted()
            } else {
                unknown_session(&session.id)
            }
        }
        _ => forward(&session, inbound).await,
    }
}

/// A notification or response: handed to the engine, answered 202.
async fn forward(session: &SessionHandle, inbound: Inbound) -> HttpResponse {
    if session.forward(inbound).await {
        reply::accepted()
    } else {
        unknown_session(&session.id)
    }
}

/// How a registered request ended up being answered.
enum Answer {
    Json(Bytes),
    Sse(HttpResponse),
}

async fn request(
    shared: &Shared,
    session: &SessionHandle,
    ids: Vec<RequestId>,
    batch: bool,
    inbound: Inbound,
    mode: ResponseMode,
    extensions: Extensions,
) -> HttpResponse {
    match answer(shared, session, ids, batch, inbound, mode, extensions).await {
        Ok(Answer::Json(b)) => {
            reply::with_session(reply::json(StatusCode::OK, b), session.id_header.as_ref())
        }
        // The SSE answers of `answer` carry the session's id already.
        Ok(Answer::Sse(r)) => r,
        Err(r) => r,
    }
}

async fn answer(
    shared: &Shared,
    session: &SessionHandle,
    ids: Vec<RequestId>,
    batch: bool,
    inbound: Inbound,
    mode: ResponseMode,
    extensions: Extensions,
) -> Result<Answer, HttpResponse> {
    let frame = extensions.get::<MessageScope>().cloned();
    let token = shared.inflight.token();
    let n = ids.len();
    let Some(permit) = session
        .reserve(n, shared.config.session_queue_timeout)
        .await
    else {
        return Err(session_busy(shared, session.max_inflight()));
    };
    let Some(share) = shared.client_shares.take(&session.client, n) else {
        return Err(client_busy(shared, &session.client));
    };
    let permit = InFlight::new(permit, share);
    let Some(first) = session.submit(ids, batch, mode, inbound, extensions, permit) else {
        return Err(unknown_session(&session.id));
    };
    match first.await {
        Ok(FirstReply::Refused(RegisterError::Duplicate(id))) => Err(reply::rpc_error(
            StatusCode::BAD_REQUEST,
            Some(id.clone()),
            ErrorObject::invalid_request(format!(
                "Invalid Request: id {id} is already used by a request in progress in this session"
            )),
        )),
        Ok(FirstReply::Refused(RegisterError::BatchNotAllowed(v))) => Err(reply::refuse(
            StatusCode::BAD_REQUEST,
            match v {
                Some(v) => format!(
                    "Invalid Request: JSON-RPC batches are not allowed in protocol version {v}"
                ),
                None => "Invalid Request: JSON-RPC batches are only allowed after negotiating protocol version 2025-03-26".to_owned(),
            },
        )),
        Ok(FirstReply::Refused(RegisterError::Refused(refusal))) => {
            Err(reply::refusal(&refusal).unwrap_or_else(|| {
                reply::rpc_error(
                    StatusCode::OK,
                    refusal.request_id().cloned(),
                    refusal.error().clone(),
                )
            }))
        }
        Ok(FirstReply::Json(b)) => match reply::refused(frame.as_ref()) {
            // A layer refused (after the frame was handled) with an HTTP answer.
            Some(r) => Err(r),
            None => Ok(Answer::Json(b)),
        },
        Ok(FirstReply::Cancelled) => {
            // No response for a cancelled request: an empty stream that ends at once.
            let (_, rx) = tokio::sync::mpsc::channel(1);
            Ok(Answer::Sse(reply::sse_with(
                McpBody::sse(rx, None, None, None),
                &session.sse_headers,
            )))
        }
        // The stream was written whole (its request answered at once):
        // one body, like a JSON answer's.
        Ok(FirstReply::SseDone(b)) => Ok(Answer::Sse(reply::sse_with(
            McpBody::full(b),
            &session.sse_headers,
        ))),
        Ok(FirstReply::Sse(rx)) => {
            let c = &shared.config;
            let body = McpBody::sse(
                rx,
                c.keep_alive,
                Some(shared.closing.clone()),
                Some(Box::new((
                    token,
                    session.stream_opened(),
                    shared.stats.stream(),
                ))),
            );
            Ok(Answer::Sse(reply::sse_with(body, &session.sse_headers)))
        }
        Err(_) => Err(unknown_session(&session.id)),
    }
}

/// Counts a new session against the caps kept in the shared session store
/// (every instance's sessions: `SessionStore::admit`), and ends the sessions
/// it forgot to make room: the local copies here, the others through the bus.
async fn admit_shared(
    shared: &Arc<Shared>,
    session: &SessionHandle,
) -> Result<(), tessera_runtime::StoreError> {
    let c = &shared.config;
    let caps = tessera_runtime::SessionCaps {
        max: c.max_sessions,
        per_client: c.max_sessions_per_client,
    };
    let client = session.client.store_key();
    let forgotten = shared
        .cluster
        .store
        .admit(&session.id, &client, caps, shared.cluster.ttl)
        .await?;
    for id in forgotten {
        tracing::info!(session = %id, "session ended to make room for a new one (a cap counted across instances; least recently used)");
        if let Some(h) = shared.sessions.get(&id) {
            h.terminate_as(EndReason::Remote);
        }
        if let Err(e) = shared.cluster.publish(&id, Note::Ended).await {
            tracing::warn!(session = %id, %e, "other instances were not told the session ended");
        }
    }
    Ok(())
}

async fn initialize(shared: &Arc<Shared>, r: JsonRpcRequest, caller: &Caller) -> HttpResponse {
    let owner = caller.principal();
    let request_id = r.id.clone();
    let client = caller.client.clone();
    let session = match session::spawn(shared, SessionKind::Streamable, None, client, owner) {
        Ok(s) => s,
        Err(full) => return sessions_full(shared, full),
    };
    if shared.cluster.stores {
        if let Err(e) = admit_shared(shared, &session).await {
            session.terminate();
            return store_unavailable(&e);
        }
    }
    let ids = vec![r.id.clone()];
    let inbound = Inbound::Message(JsonRpcMessage::Request(r));
    // The handshake is always answered as JSON (it has nothing to stream).
    match answer(
        shared,
        &session,
        ids,
        false,
        inbound,
        ResponseMode::Auto,
        Extensions::new(),
    )
    .await
    {
        Ok(Answer::Json(b)) => {
            let ok = matches!(
                serde_json::from_slice::<JsonRpcMessage>(&b),
                Ok(JsonRpcMessage::Result(_))
            );
            if let (true, Some(e)) = (ok, session.store_error()) {
                // Nobody else could serve the session: there is none.
                session.terminate();
                let r = reply::rpc_error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    Some(request_id),
                    cluster::store_down(&e),
                );
                reply::retry_after(r, 1)
            } else if ok {
                reply::with_session(reply::json(StatusCode::OK, b), session.id_header.as_ref())
            } else {
                session.terminate();
                reply::json(StatusCode::OK, b)
            }
        }
        Ok(Answer::Sse(r)) => r,
        Err(r) => {
            session.terminate();
            r
        }
    }
}

fn modern_header(headers: &HeaderMap) -> bool {
    protocol_version_header(headers).is_some_and(|v| v.era() == tessera_types::Era::Modern)
}

async fn get(shared: &Arc<Shared>, parts: &Parts) -> HttpResponse {
    let headers = &parts.headers;
    if modern_header(headers) {
        return reply::method_not_allowed(
            "POST",
            "Method Not Allowed: protocol version 2026-07-28 has no GET stream; use subscriptions/listen",
        );
    }
    if shared.config.stateless {
        return reply::method_not_allowed(
            "POST",
            "Method Not Allowed: this server is stateless and offers no standalone stream",
        );
    }
    if !accepts(headers, "text/event-stream") {
        return reply::refuse(
            StatusCode::NOT_ACCEPTABLE,
            "Not Acceptable: a GET to the MCP endpoint opens an SSE stream (send Accept: text/event-stream)",
        );
    }
    let session = match lookup(
        shared,
        headers,
        &Caller::of(&parts.extensions, parts.version),
    )
    .await
    {
        Ok(s) => s,
        Err(r) => return r,
    };
    let last = single_header(headers, &names::LAST_EVENT_ID)
        .ok()
        .flatten()
        .and_then(|v| v.parse::<EventId>().ok());
    let Some(rx) = session.open_get(last).await else {
        return unknown_session(&session.id);
    };
    let c = &shared.config;
    let body = McpBody::sse(
        rx,
        c.keep_alive,
        Some(shared.closing.clone()),
        Some(Box::new((session.stream_opened(), shared.stats.stream()))),
    );
    reply::sse_with(body, &session.sse_headers)
}

async fn delete(shared: &Arc<Shared>, parts: &Parts) -> HttpResponse {
    let headers = &parts.headers;
    if modern_header(headers) {
        return reply::method_not_allowed(
            "POST",
            "Method Not Allowed: protocol version 2026-07-28 has no sessions to delete",
        );
    }
    if shared.config.stateless {
        return reply::method_not_allowed(
            "POST",
            "Method Not Allowed: this server is stateless and has no sessions",
        );
    }
    match lookup(
        shared,
        headers,
        &Caller::of(&parts.extensions, parts.version),
    )
    .await
    {
        Ok(s) => {
            // Gone from the store first: no instance restores it after this.
            if shared.cluster.stores {
                if let Err(e) = shared.cluster.store.remove(&s.id).await {
                    return store_unavailable(&e);
                }
            }
            if let Err(e) = shared.cluster.publish(&s.id, Note::Ended).await {
                tracing::warn!(session = %s.id, %e, "other instances were not told the session ended");
            }
            s.terminate_as(EndReason::Deleted);
            let mut r = http::Response::new(McpBody::empty());
            *r.status_mut() = StatusCode::OK;
            r
        }
        Err(r) => r,
    }
}

/// [`Caller::request_extensions`] of a request in a session, with the
/// session's id (the same on every instance).
/// The session's entries are made once, in [`SessionHandle::request_base`].
fn session_extensions(session: &SessionHandle, caller: &Caller, headers: HeaderMap) -> Extensions {
    let mut e = caller.request_extensions_on(&session.request_base, headers);
    e.insert(MessageScope::new());
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(accept: &str) -> HeaderMap {
        let mut m = HeaderMap::new();
        m.insert(http::header::ACCEPT, accept.parse().unwrap());
        m
    }

    #[test]
    fn accept_rules() {
        assert!(accepts(
            &h("application/json, text/event-stream"),
            "text/event-stream"
        ));
        assert!(accepts(&h("text/event-stream;q=0.9"), "text/event-stream"));
        assert!(accepts(&h("*/*"), "application/json"));
        assert!(accepts(&h("application/*"), "application/json"));
        assert!(!accepts(&h("application/json"), "text/event-stream"));
        assert!(!accepts(&h("text/event-stream; q=0"), "text/event-stream"));
        assert!(!accepts(&HeaderMap::new(), "application/json"));
        assert!(accepts_json_and_sse(&h(
            "application/json, text/event-stream"
        )));
        assert!(accepts_json_and_sse(&h(
            "text/event-stream, application/json"
        )));
        assert!(accepts_json_and_sse(&h("*/*")));
        assert!(!accepts_json_and_sse(&h("application/json")));
        assert!(!accepts_json_and_sse(&h(
            "application/json, text/event-stream;q=0"
        )));
        assert!(accepts(&h("Application/JSON"), "application/json"));
        assert!(!accepts(
            &h("text/event-stream;q = 0.00"),
            "text/event-stream"
        ));
        assert!(accepts(&h("text/event-stream;q=0.5"), "text/event-stream"));
        assert!(accepts(&h("text/event-stream;q=0."), "text/event-stream"));
        assert!(!accepts(&h("textx/*"), "text/event-stream"));
    }

    #[test]
    fn json_content_types() {
        let ct = |v: &str| {
            let mut m = HeaderMap::new();
            m.insert(http::header::CONTENT_TYPE, v.parse().unwrap());
            is_json(&m)
        };
        assert!(ct("application/json"));
        assert!(ct("Application/JSON; charset=utf-8"));
        assert!(ct(" application/json "));
        assert!(!ct("application/json-seq"));
        assert!(!ct("text/plain"));
        assert!(!is_json(&HeaderMap::new()));
    }
}
