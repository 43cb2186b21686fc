//! One engine per POST: every 2026-07-28 request, and every request of a
//! stateless server. The engine lives as long as its request.
//!
//! The answer is JSON when the response is the first message the engine
//! produces, and an SSE stream (no event ids: these streams are not
//! resumable) as soon as a notification comes first. For 2026-07-28, closing
//! the stream is the cancellation signal: dropping the response body cancels
//! the handler.

use std::sync::Arc;
use tessera_types::methods;

use bytes::Bytes;
use http::{HeaderMap, StatusCode};
use serde_json::Value;
use tessera_proto::{EngineConfig, Outbound, Transmit};
use tessera_runtime::middleware::MessageScope;
use tessera_runtime::{Connection, Service};
use tessera_types::{
    ClientCapabilities, ErrorCode, ErrorObject, Implementation, JsonObject, JsonRpcMessage,
    JsonRpcRequest, ListToolsResult, PaginatedRequestParams, ProtocolVersion, RequestId,
};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::body::{McpBody, OnDrop};
use super::client_share::ClientShare;
use super::modern;
use super::reply::{self, HttpResponse};
use super::{ResponseMode, Shared, ToolHeaders};
use crate::sse::SseEvent;
use tessera_proto::mirror::{self, ParamHeader};

/// Which world the request belongs to (for the HTTP status of errors and
/// what a disconnect means).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flavor {
    /// 2026-07-28 (headers already checked, except `Mcp-Param-*`).
    Modern,
    /// A request of a stateless server, at this negotiated version.
    StatelessLegacy(ProtocolVersion),
}

/// One request to serve with its own engine.
pub(crate) struct Job {
    pub flavor: Flavor,
    /// What the handlers read: the carried values and the headers (an
    /// [`HeaderMap`] extension, also what the `Mcp-Param-*` check reads).
    pub extensions: tessera_runtime::Extensions,
    pub request: JsonRpcRequest,
    /// The request's unit of its client's share, held while its engine runs.
    pub share: ClientShare,
}

/// An engine serving one POST, run in the request's task.
struct PerRequest<S> {
    /// Boxed: the core is large, and moves from future to future.
    engine: Box<Connection<S>>,
    internal: u64,
}

impl<S: Service> PerRequest<S> {
    /// Sends an internal request and waits for its result, skipping anything else.
    async fn call(&mut self, method: &str, params: JsonObject) -> Option<JsonObject> {
        self.internal += 1;
        let id = RequestId::String(format!("tessera-http/internal-{}", self.internal));
        let m = JsonRpcMessage::request(id.clone(), method, Some(params));
        self.engine
            .handle_message(m, tessera_runtime::Extensions::new());
        while let Some(t) = self.engine.next().await {
            match t.message {
                Outbound::Single(JsonRpcMessage::Result(r)) if r.id == id => return Some(r.result),
                Outbound::Raw(r) if r.id == id => return r.result.to_object().ok(),
                Outbound::Single(JsonRpcMessage::Error(e)) if e.id.as_ref() == Some(&id) => {
                    return None;
                }
                _ => {}
            }
        }
        None
    }

    /// The `x-mcp-header` parameters of a tool, from an internal `tools/list`.
    async fn tool_param_headers(&mut self, r: &JsonRpcRequest, tool: &str) -> Vec<ParamHeader> {
        let mut cursor: Option<String> = None;
        for _ in 0..32 {
            let params = PaginatedRequestParams {
                cursor: cursor.clone(),
                meta: Some(modern::internal_meta(r)),
            };
            let Some(result) = self.call(methods::TOOLS_LIST, object_of(&params)).await else {
                return Vec::new();
            };
            let Ok(page) = serde_json::from_value::<ListToolsResult>(Value::Object(result)) else {
                return Vec::new();
            };
            if let Some(t) = page.tools.iter().find(|t| t.name == tool) {
                return mirror::param_headers(&t.input_schema);
            }
            match page.next_cursor {
                Some(c) if Some(&c) != cursor.as_ref() => cursor = Some(c),
                _ => break,
            }
        }
        Vec::new()
    }
}

/// A typed value as the JSON object it writes.
fn object_of<T: serde::Serialize>(v: &T) -> JsonObject {
    match serde_json::to_value(v) {
        Ok(Value::Object(o)) => o,
        _ => JsonObject::new(),
    }
}

/// The client of a stateless legacy request, as the skipped handshake would
/// have introduced it: the session every such request's engine starts
/// from, made once (each request copies it, at its own version).
pub(crate) struct StatelessClient {
    session: tessera_proto::SessionSnapshot,
}

impl StatelessClient {
    /// The session a stateless request at `version` carries on.
    fn session_at(&self, version: ProtocolVersion) -> tessera_proto::SessionSnapshot {
        let mut s = self.session.clone();
        s.version = version;
        s
    }
}

impl Default for StatelessClient {
    fn default() -> Self {
        let info = Implementation::new("stateless-http-client", "0");
        StatelessClient {
            session: tessera_proto::SessionSnapshot::new(ProtocolVersion::LATEST_LEGACY).with_peer(
                Arc::<ClientCapabilities>::default(),
                Some(Arc::new(object_of(&info))),
            ),
        }
    }
}

/// Serves one request with a fresh engine over the shared configuration and
/// service. A stateless legacy request starts from an assumed handshake at
/// its version, unless it is `initialize` itself.
pub(crate) async fn serve<S: Service>(
    shared: &Arc<Shared>,
    config: Arc<EngineConfig>,
    service: Arc<S>,
    job: Job,
) -> HttpResponse {
    let Job {
        flavor,
        extensions,
        request: r,
        share,
    } = job;
    let mut engine = PerRequest {
        engine: Box::new(Connection::new(config, service)),
        internal: 0,
    };
    match flavor {
        Flavor::Modern => {
            let none = HeaderMap::new();
            let headers = extensions.get::<HeaderMap>().unwrap_or(&none);
            if let Err(response) = check_param_headers(shared, &mut engine, headers, &r).await {
                return response;
            }
        }
        Flavor::StatelessLegacy(version) => {
            if r.method != methods::INITIALIZE {
                let session = shared.stateless_client.session_at(version);
                engine.engine.restore_session(session);
            }
        }
    }
    answer(shared, engine.engine, r, extensions, flavor, share).await
}

/// 2026-07-28 `tools/call`: the `Mcp-Param-*` headers must mirror the
/// arguments the tool marks with `x-mcp-header`.
async fn check_param_headers<S: Service>(
    shared: &Shared,
    engine: &mut PerRequest<S>,
    headers: &HeaderMap,
    r: &JsonRpcRequest,
) -> Result<(), HttpResponse> {
    if r.method != methods::TOOLS_CALL || !shared.config.validate_param_headers {
        return Ok(());
    }
    // Read member by member from the text: the params never become a tree here.
    let Some(params) = r.params.as_ref() else {
        return Ok(());
    };
    let Some(Value::String(tool)) = params.name() else {
        return Ok(());
    };
    let wanted: Arc<[ParamHeader]> = match shared.tool_param_headers(tool) {
        // Read from the server, as registered: no tools/list per call.
        ToolHeaders::Known(headers) => headers,
        ToolHeaders::NoSuchTool => return Ok(()),
        // Boxed: a rare path, kept out of the size of every request's future.
        ToolHeaders::Unknown => Box::pin(engine.tool_param_headers(r, tool)).await.into(),
    };
    if wanted.is_empty() {
        return Ok(());
    }
    let args = params.member("arguments");
    let args = args.as_ref().and_then(Value::as_object);
    modern::check_param_headers(headers, &wanted, args).map_err(|why| {
        reply::rpc_error(
            StatusCode::BAD_REQUEST,
            Some(r.id.clone()),
            ErrorObject::new(
                ErrorCode::HEADER_MISMATCH,
                format!("Header mismatch: {why}"),
            ),
        )
    })
}

fn final_for(t: &Transmit, id: &RequestId) -> bool {
    t.message.is_single_response() && t.message.response_id() == Some(id)
}

async fn answer<S: Service>(
    shared: &Arc<Shared>,
    mut engine: Box<Connection<S>>,
    r: JsonRpcRequest,
    extensions: tessera_runtime::Extensions,
    flavor: Flavor,
    share: ClientShare,
) -> HttpResponse {
    let id = r.id.clone();
    let long_lived = r.method == methods::SUBSCRIPTIONS_LISTEN;
    let token = (!long_lived).then(|| shared.inflight.token());
    let frame = MessageScope::new();
    let mut extensions = extensions;
    extensions.insert(frame.clone());
    engine.handle_message(JsonRpcMessage::Request(r), extensions);
    // The handler's layers ran as the request was handled: a refusal with an
    // HTTP answer is the answer (the engine, dropped, sends nothing more).
    if let Some(r) = reply::refused(Some(&frame)) {
        return r;
    }
    if !engine.is_in_progress(&id) {
        // The engine answered the request itself, before any handler (an
        // invalid `_meta`, an unknown method, `server/discover`): one JSON
        // answer, its status from the protocol's rules for such answers.
        while let Some(t) = engine.next().await {
            if final_for(&t, &id) {
                let status = match (&t.message, flavor) {
                    (Outbound::Single(m), Flavor::Modern) => {
                        reply::modern_status(m, reply::Stage::Engine)
                    }
                    _ => StatusCode::OK,
                };
                return reply::json(status, t.message.to_bytes());
            }
        }
        return reply::refuse(
            StatusCode::INTERNAL_SERVER_ERROR,
            "Internal Server Error: the engine stopped before answering",
        );
    }
    let mode = shared.config.response_mode;
    let mut pending: Option<Bytes> = None;
    if mode != ResponseMode::Sse {
        loop {
            let Some(t) = engine.next().await else {
                return reply::refuse(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "Internal Server Error: the engine stopped before answering",
                );
            };
            if final_for(&t, &id) {
                if let Some(r) = reply::refused(Some(&frame)) {
                    return r;
                }
                let status = match (&t.message, flavor) {
                    (Outbound::Single(m), Flavor::Modern) => {
                        reply::modern_status(m, reply::Stage::Handler)
                    }
                    _ => StatusCode::OK,
                };
                return reply::json(status, t.message.to_bytes());
            }
            if t.related.as_ref() != Some(&id) || mode == ResponseMode::Json {
                tracing::debug!("no stream to carry a message of a per-request engine: dropped");
                continue;
            }
            pending = Some(Bytes::from(t.message.to_bytes()));
            break;
        }
    }
    // A stream: the pump task carries the rest until the response.
    let (tx, rx) = mpsc::channel(shared.config.stream_buffer);
    if let Some(p) = pending {
        let _ = tx.try_send(SseEvent::data(&p).to_bytes());
    }
    let gone = CancellationToken::new();
    let g = gone.clone();
    let guards = (
        OnDrop::new(move || g.cancel()),
        token,
        shared.stats.stream(),
    );
    tokio::spawn(async move {
        // The client's share is given back when the engine stops.
        let _share = share;
        pump(engine, id, tx, gone, flavor).await;
    });
    let body = McpBody::sse(
        rx,
        shared.config.keep_alive,
        Some(shared.closing.clone()),
        Some(Box::new(guards)),
    );
    reply::sse(body)
}

/// Carries the engine's messages to the stream until the response; a closed
/// stream cancels a 2026-07-28 request.
async fn pump<S: Service>(
    mut engine: Box<Connection<S>>,
    id: RequestId,
    tx: mpsc::Sender<Bytes>,
    gone: CancellationToken,
    flavor: Flavor,
) {
    loop {
        tokio::select! {
            biased;
            _ = gone.cancelled() => {
                if flavor == Flavor::Modern {
                    engine.cancel(&id, "the client closed the response stream");
                }
                break;
            }
            t = engine.next() => {
                let Some(t) = t else { break };
                let last = final_for(&t, &id);
                if !last && t.related.as_ref() != Some(&id) {
                    continue;
                }
                let bytes = SseEvent::data(&t.message.to_bytes()).to_bytes();
                if tx.try_send(bytes).is_err() {
                    tracing::warn!(%id, "client too slow or gone: closing the response stream");
                    if flavor == Flavor::Modern {
                        gone.cancel();
                        continue;
                    }
                    break;
                }
                if last {
                    break;
                }
            }
        }
    }
    // Dropping the engine cancels whatever is still running.
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_types::JsonRpcMessage;

    #[test]
    fn a_stateless_session_is_copied_at_the_request_s_version() {
        let c = StatelessClient::default();
        let a = c.session_at(ProtocolVersion::V2025_03_26);
        let b = c.session_at(ProtocolVersion::LATEST_LEGACY);
        assert_eq!(a.version, ProtocolVersion::V2025_03_26);
        assert_eq!(b.version, ProtocolVersion::LATEST_LEGACY);
        assert!(a.initialized && b.initialized);
        assert!(a.log_level.is_none());
        // Shared, not made per request.
        assert!(Arc::ptr_eq(&a.peer_capabilities, &b.peer_capabilities));
        let info = a.peer_info.as_ref().expect("clientInfo");
        assert_eq!(
            info.get("name"),
            Some(&Value::from("stateless-http-client"))
        );
        assert!(Arc::ptr_eq(info, b.peer_info.as_ref().unwrap()));
    }

    #[test]
    fn finals() {
        let id = RequestId::Number(3);
        let t = Transmit {
            message: Outbound::Single(JsonRpcMessage::result(id.clone(), JsonObject::new())),
            related: Some(id.clone()),
            mirrored: None,
        };
        assert!(final_for(&t, &id));
        assert!(!final_for(&t, &RequestId::Number(4)));
        let raw = serde_json::value::RawValue::from_string("{}".into()).unwrap();
        let t = Transmit {
            message: Outbound::Raw(tessera_proto::RawResponse {
                id: id.clone(),
                result: tessera_proto::RawResult::new(raw).unwrap(),
            }),
            related: Some(id.clone()),
            mirrored: None,
        };
        assert!(final_for(&t, &id));
        assert!(!final_for(&t, &RequestId::Number(4)));
        let n = Transmit {
            message: Outbound::Single(JsonRpcMessage::notification("n", None)),
            related: Some(id.clone()),
            mirrored: None,
        };
        assert!(!final_for(&n, &id));
    }
}
