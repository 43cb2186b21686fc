//! One engine per POST: every 2026-07-28 request, and every request of a
//! stateless server. The engine lives as long as its request.
//!
//! The answer is JSON when the response is the first message the engine
//! produces, and an SSE stream (no event ids: these streams are not
//! resumable) as soon as a notification comes first. For 2026-07-28, closing
//! the stream is the cancellation signal: dropping the response body cancels
//! the handler.

use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderMap, StatusCode};
use serde_json::json;
use tessera_proto::decode::Inbound;
use tessera_proto::{Outbound, Transmit};
use tessera_runtime::Extensions;
use tessera_runtime::{ChannelTransport, Incoming, Peer};
use tessera_types::{
    ErrorCode, ErrorObject, JsonObject, JsonRpcMessage, JsonRpcRequest, ProtocolVersion, RequestId,
};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::body::{McpBody, OnDrop};
use super::modern::{self, ParamHeader};
use super::reply::{self, HttpResponse};
use super::{ResponseMode, Shared};
use crate::sse::SseEvent;

/// The id of the synthetic `initialize` of a stateless legacy request.
const STATELESS_INIT_ID: &str = "tessera-http/stateless-initialize";

/// An engine serving one POST.
struct OneShot {
    extensions: Extensions,
    inbound: mpsc::Sender<Incoming>,
    out: mpsc::UnboundedReceiver<Transmit>,
    peer: Peer,
    internal: u64,
}

impl OneShot {
    fn spawn(shared: &Shared) -> Self {
        let (transport, inbound, out) = ChannelTransport::new(8);
        let peer = shared.spawn_engine(transport);
        OneShot {
            extensions: Extensions::new(),
            inbound,
            out,
            peer,
            internal: 0,
        }
    }

    async fn send(&self, m: JsonRpcMessage) -> bool {
        self.inbound
            .send(Incoming::Decoded(Inbound::Message(m)))
            .await
            .is_ok()
    }

    /// Sends the client's request, with the extensions of its HTTP request.
    async fn send_user(&self, m: JsonRpcMessage) -> bool {
        let frame = Incoming::WithExtensions {
            frame: Box::new(Incoming::Decoded(Inbound::Message(m))),
            extensions: self.extensions.clone(),
        };
        self.inbound.send(frame).await.is_ok()
    }

    /// Sends an internal request and waits for its result, skipping anything else.
    async fn call(&mut self, method: &str, params: JsonObject) -> Option<JsonObject> {
        self.internal += 1;
        let id = RequestId::String(format!("tessera-http/internal-{}", self.internal));
        if !self
            .send(JsonRpcMessage::request(id.clone(), method, Some(params)))
            .await
        {
            return None;
        }
        while let Some(t) = self.out.recv().await {
            match t.message {
                Outbound::Single(JsonRpcMessage::Result(r)) if r.id == id => return Some(r.result),
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
            let mut params = modern::internal_meta(r);
            if let Some(c) = &cursor {
                params.insert("cursor".into(), json!(c));
            }
            let Some(result) = self.call("tools/list", params).await else {
                return Vec::new();
            };
            let tools = result.get("tools").and_then(|t| t.as_array());
            for t in tools.into_iter().flatten() {
                if t.get("name").and_then(|n| n.as_str()) == Some(tool) {
                    return t
                        .get("inputSchema")
                        .and_then(|s| s.as_object())
                        .map(modern::param_headers)
                        .unwrap_or_default();
                }
            }
            match result.get("nextCursor").and_then(|c| c.as_str()) {
                Some(c) if Some(c) != cursor.as_deref() => cursor = Some(c.to_owned()),
                _ => break,
            }
        }
        Vec::new()
    }
}

/// Which world the request belongs to (for the HTTP status of errors and
/// what a disconnect means).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flavor {
    Modern,
    StatelessLegacy,
}

/// Serves a 2026-07-28 request (headers already checked, except `Mcp-Param-*`).
pub(crate) async fn modern(
    shared: &Arc<Shared>,
    headers: HeaderMap,
    r: JsonRpcRequest,
    _version: ProtocolVersion,
) -> HttpResponse {
    let mut engine = OneShot::spawn(shared);
    engine.extensions = super::streamable::request_extensions(&headers);
    if r.method == "tools/call" && shared.config.validate_param_headers {
        let params = r.params.as_ref();
        if let Some(tool) = params.and_then(|p| p.get("name")).and_then(|n| n.as_str()) {
            let wanted = match shared.tool_input_schema(tool) {
                // Read directly from the server: no tools/list per call.
                Some(schema) => schema
                    .as_ref()
                    .map(modern::param_headers)
                    .unwrap_or_default(),
                None => engine.tool_param_headers(&r, tool).await,
            };
            let args = params
                .and_then(|p| p.get("arguments"))
                .and_then(|a| a.as_object());
            if let Err(why) = modern::check_param_headers(&headers, &wanted, args) {
                engine.peer.close();
                return reply::rpc_error(
                    StatusCode::BAD_REQUEST,
                    Some(r.id.clone()),
                    ErrorObject::new(
                        ErrorCode::HEADER_MISMATCH,
                        format!("Header mismatch: {why}"),
                    ),
                );
            }
        }
    }
    serve(shared, engine, r, Flavor::Modern).await
}

/// Serves a request of a stateless server: a fresh engine, with a synthetic
/// handshake at `version` unless the request is `initialize` itself.
pub(crate) async fn legacy_stateless(
    shared: &Arc<Shared>,
    headers: &HeaderMap,
    inbound: Inbound,
    version: ProtocolVersion,
) -> HttpResponse {
    let r = match inbound {
        Inbound::Message(JsonRpcMessage::Request(r)) => r,
        Inbound::Message(_) => return reply::accepted(),
        _ => {
            return reply::refuse(
                StatusCode::BAD_REQUEST,
                "Bad Request: a stateless server takes one message per POST, not a JSON-RPC batch",
            );
        }
    };
    let mut engine = OneShot::spawn(shared);
    engine.extensions = super::streamable::request_extensions(headers);
    if r.method != "initialize" {
        let mut p = JsonObject::new();
        p.insert("protocolVersion".into(), json!(version.as_str()));
        p.insert("capabilities".into(), json!({}));
        p.insert(
            "clientInfo".into(),
            json!({"name": "stateless-http-client", "version": "0"}),
        );
        let init =
            JsonRpcMessage::request(RequestId::from(STATELESS_INIT_ID), "initialize", Some(p));
        let ok = engine.send(init).await
            && engine
                .send(JsonRpcMessage::notification(
                    "notifications/initialized",
                    None,
                ))
                .await;
        if !ok {
            return reply::refuse(
                StatusCode::INTERNAL_SERVER_ERROR,
                "Internal Server Error: the engine stopped",
            );
        }
    }
    serve(shared, engine, r, Flavor::StatelessLegacy).await
}

fn skip(t: &Transmit) -> bool {
    let init = RequestId::from(STATELESS_INIT_ID);
    t.related.as_ref() == Some(&init)
        || matches!(&t.message, Outbound::Single(m) if m.id() == Some(&init))
}

fn final_for(t: &Transmit, id: &RequestId) -> bool {
    matches!(&t.message,
        Outbound::Single(m @ (JsonRpcMessage::Result(_) | JsonRpcMessage::Error(_))) if m.id() == Some(id))
}

async fn serve(
    shared: &Arc<Shared>,
    mut engine: OneShot,
    r: JsonRpcRequest,
    flavor: Flavor,
) -> HttpResponse {
    let id = r.id.clone();
    let long_lived = r.method == "subscriptions/listen";
    let token = (!long_lived).then(|| shared.inflight.token());
    if !engine.send_user(JsonRpcMessage::Request(r)).await {
        return reply::refuse(
            StatusCode::INTERNAL_SERVER_ERROR,
            "Internal Server Error: the engine stopped",
        );
    }
    let mode = shared.config.response_mode;
    let mut pending: Vec<Bytes> = Vec::new();
    if mode != ResponseMode::Sse {
        loop {
            let Some(t) = engine.out.recv().await else {
                return reply::refuse(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "Internal Server Error: the engine stopped before answering",
                );
            };
            if skip(&t) {
                continue;
            }
            if final_for(&t, &id) {
                engine.peer.close();
                let status = match (&t.message, flavor) {
                    (Outbound::Single(m), Flavor::Modern) => reply::modern_status(m),
                    _ => StatusCode::OK,
                };
                return reply::json(status, t.message.to_bytes());
            }
            if t.related.as_ref() != Some(&id) || mode == ResponseMode::Json {
                tracing::debug!("no stream to carry a message of a per-request engine: dropped");
                continue;
            }
            pending.push(Bytes::from(t.message.to_bytes()));
            break;
        }
    }
    // A stream: the pump task carries the rest until the response.
    let (tx, rx) = mpsc::channel(shared.config.stream_buffer);
    for p in pending {
        let _ = tx.try_send(SseEvent::data(&p).to_bytes());
    }
    let gone = CancellationToken::new();
    let mut guards: Vec<Box<dyn Send + Sync>> = Vec::new();
    let g = gone.clone();
    guards.push(Box::new(OnDrop::new(move || g.cancel())));
    if let Some(t) = token {
        guards.push(Box::new(t));
    }
    tokio::spawn(pump(engine, id, tx, gone, flavor));
    let body = McpBody::sse(
        rx,
        shared.config.keep_alive,
        Some(shared.closing.clone()),
        guards,
    );
    reply::sse(body)
}

/// Carries the engine's messages to the stream until the response; a closed
/// stream cancels a 2026-07-28 request.
async fn pump(
    mut engine: OneShot,
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
                    let mut p = JsonObject::new();
                    p.insert("requestId".into(), serde_json::to_value(&id).unwrap_or_default());
                    p.insert("reason".into(), json!("the client closed the response stream"));
                    let _ = engine
                        .send(JsonRpcMessage::notification("notifications/cancelled", Some(p)))
                        .await;
                }
                break;
            }
            t = engine.out.recv() => {
                let Some(t) = t else { break };
                if skip(&t) {
                    continue;
                }
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
    // Closing the inbound side lets the driver finish; closing the peer stops it now.
    drop(engine.inbound);
    engine.peer.close();
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_types::JsonRpcMessage;

    #[test]
    fn finals() {
        let id = RequestId::Number(3);
        let t = Transmit {
            message: Outbound::Single(JsonRpcMessage::result(id.clone(), JsonObject::new())),
            related: Some(id.clone()),
        };
        assert!(final_for(&t, &id));
        assert!(!final_for(&t, &RequestId::Number(4)));
        let e = ErrorObject::internal("x");
        let t = Transmit {
            message: Outbound::Single(JsonRpcMessage::error(
                Some(RequestId::from(STATELESS_INIT_ID)),
                e,
            )),
            related: None,
        };
        assert!(skip(&t));
    }
}
