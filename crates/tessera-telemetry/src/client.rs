//! The sending side: a `CLIENT` span and `mcp.client.operation.duration`
//! for every request this process sends (a client's calls, a proxy's
//! forwarded calls, a server's requests to its client), with the span's
//! context injected into `params._meta`.

use opentelemetry::trace::{SpanKind, Status, TraceContextExt, Tracer};
use opentelemetry::{Context, KeyValue};
use serde_json::Value;
use tessera_proto::{CallError, Connected, Reply};
use tessera_runtime::outgoing::{ConnectCall, OutgoingCall, OutgoingEnd, OutgoingObserver, Round};
use tessera_runtime::{Link, Peer, PeerError};
use tessera_types::{Era, JsonObject, RequestId};

use crate::Telemetry;
use crate::convention::{
    CANCELLED, CLOSED, ERROR_TYPE, JSONRPC_REQUEST_ID, MCP_METHOD_NAME, MCP_SESSION_ID,
    NETWORK_PROTOCOL_NAME, NETWORK_PROTOCOL_VERSION, NETWORK_TRANSPORT, OTHER,
    RPC_RESPONSE_STATUS_CODE, SERVER_ADDRESS, SERVER_PORT, Target, span_name,
};
use crate::era;
use crate::meta;
use crate::operation::{Attributes, Ending, Operation};

/// `error.type` of a request that got no answer within its deadline.
const TIMEOUT: &str = "timeout";

/// Records the requests the process sends (installed by
/// [`Telemetry::layer`]).
#[derive(Debug)]
pub(crate) struct Sender {
    pub(crate) telemetry: Telemetry,
}

impl OutgoingObserver for Sender {
    fn connecting(&self, _peer: &Peer) -> Option<Box<dyn ConnectCall>> {
        let t = &self.telemetry.inner;
        let parent = Context::current();
        // Named for what the connection turns out to be when it ends.
        let span = t
            .tracer
            .span_builder("initialize")
            .with_kind(SpanKind::Client)
            .start_with_context(&t.tracer, &parent);
        Some(Box::new(Connecting {
            telemetry: self.telemetry.clone(),
            cx: parent.with_span(span),
            started: std::time::Instant::now(),
        }))
    }

    fn start(
        &self,
        peer: &Peer,
        method: &str,
        params: &mut Option<JsonObject>,
    ) -> Option<Box<dyn OutgoingCall>> {
        let t = &self.telemetry.inner;
        let p = params.as_ref();
        let lookup = |k: &str| p.and_then(|p| p.get(k)).and_then(Value::as_str);
        let target = Target::of(method, lookup);
        let connected = peer.connected();
        // A client knows what it connected to; a server its session's version.
        let version = connected
            .as_ref()
            .map(|c| c.version)
            .or_else(|| peer.session_version());
        let mut attrs =
            Attributes::of_request(method, target.as_ref(), version.as_ref(), &t.options);
        if let Some(l) = peer.link() {
            link_attributes(l, &mut attrs.shared);
            if let Some(s) = l.state.session() {
                if connected.as_ref().is_some_and(|c| era::has_sessions(c.era)) {
                    attrs
                        .span_only
                        .push(KeyValue::new(MCP_SESSION_ID, crate::convention::short(&s)));
                }
            }
        }
        if let Some(c) = &connected {
            attrs
                .span_only
                .push(KeyValue::new(era::SERVER_NAME, c.server_info.name.clone()));
            attrs.span_only.push(KeyValue::new(
                era::SERVER_VERSION,
                c.server_info.version.clone(),
            ));
        }
        if let Some(p) = p {
            attrs
                .span_only
                .extend(era::request_attributes(|k| p.contains_key(k)));
            if method == "tools/call" && t.options.record_tool_payloads {
                let call: era::CallArguments =
                    tessera_types::decode_object_params(Some(p)).unwrap_or_default();
                attrs.tool_arguments(call.arguments.valid(), &t.options);
            }
        }
        if let Some(id) = era::task_id_param(method, lookup) {
            attrs
                .span_only
                .push(KeyValue::new(era::TASK_ID, crate::convention::short(id)));
        }
        if let Some(r) = Round::current() {
            attrs
                .span_only
                .push(KeyValue::new(era::MRTR_CALL, r.call.to_string()));
            attrs
                .span_only
                .push(KeyValue::new(era::MRTR_ROUND, i64::from(r.round)));
        }
        let name = span_name(method, target.as_ref(), t.options.uri_in_span_name);
        let parent = Context::current();
        let span = t
            .tracer
            .span_builder(name)
            .with_kind(SpanKind::Client)
            .with_attributes(attrs.shared.iter().cloned().chain(attrs.span_only))
            .start_with_context(&t.tracer, &parent);
        let cx = parent.with_span(span);
        meta::inject(t.propagator.as_ref(), &cx, params);
        Some(Box::new(Sent(Operation::new(
            cx,
            t.instruments.client_operation.clone(),
            attrs.shared,
            method,
            &t.options,
        ))))
    }
}

/// A connection's handshake being recorded: one `CLIENT` span named
/// `initialize` (legacy) or `server/discover` (2026-07-28) covering the era
/// probe and the handshake, which the engine sends itself.
struct Connecting {
    telemetry: Telemetry,
    cx: Context,
    started: std::time::Instant,
}

impl ConnectCall for Connecting {
    fn finish(self: Box<Self>, peer: &Peer, outcome: Result<&Connected, &PeerError>) {
        let t = &self.telemetry.inner;
        let span = self.cx.span();
        let (shared, status) = match outcome {
            Ok(c) => {
                let method = match c.era {
                    Era::Legacy => "initialize",
                    Era::Modern => "server/discover",
                };
                span.update_name(method);
                span.set_attribute(KeyValue::new(era::SERVER_NAME, c.server_info.name.clone()));
                span.set_attribute(KeyValue::new(
                    era::SERVER_VERSION,
                    c.server_info.version.clone(),
                ));
                if era::has_sessions(c.era) {
                    let histogram = t.instruments.client_session.clone();
                    crate::session::watch(peer, c.version, histogram);
                }
                let mut attrs = Attributes::of_request(method, None, Some(&c.version), &t.options);
                if let Some(l) = peer.link() {
                    link_attributes(l, &mut attrs.shared);
                }
                (attrs.shared, Status::Unset)
            }
            Err(e) => {
                let mut shared = vec![KeyValue::new(MCP_METHOD_NAME, "initialize")];
                let status = match ending_of(OutgoingEnd::Failed(e)) {
                    Ending::Error { code, message } => {
                        shared.push(KeyValue::new(ERROR_TYPE, code.to_string()));
                        shared.push(KeyValue::new(RPC_RESPONSE_STATUS_CODE, code.to_string()));
                        Status::error(crate::convention::short(message))
                    }
                    Ending::Local { kind, message } => {
                        shared.push(KeyValue::new(ERROR_TYPE, kind));
                        Status::error(crate::convention::short(&message))
                    }
                    Ending::Object(_) | Ending::Raw(_) | Ending::Taken | Ending::Dropped { .. } => {
                        Status::Unset
                    }
                };
                (shared, status)
            }
        };
        t.instruments
            .client_operation
            .record(self.started.elapsed().as_secs_f64(), &shared);
        span.set_attributes(shared);
        span.set_status(status);
        span.end();
    }
}

/// One sent request being recorded.
struct Sent(Operation);

impl OutgoingCall for Sent {
    fn finish(self: Box<Self>, id: Option<&RequestId>, end: OutgoingEnd<'_>) {
        let extra = id
            .map(|id| vec![KeyValue::new(JSONRPC_REQUEST_ID, id.to_string())])
            .unwrap_or_default();
        self.0.finish(ending_of(end), extra);
    }
}

/// The convention's attributes of where a connection goes.
fn link_attributes(l: &Link, out: &mut Vec<KeyValue>) {
    out.push(KeyValue::new(NETWORK_TRANSPORT, l.transport));
    if let Some(p) = l.protocol {
        out.push(KeyValue::new(NETWORK_PROTOCOL_NAME, p));
        if let Some(v) = l.state.http_version() {
            out.push(KeyValue::new(NETWORK_PROTOCOL_VERSION, v));
        }
    }
    if let (Some(a), Some(p)) = (&l.address, l.port) {
        out.push(KeyValue::new(SERVER_ADDRESS, a.clone()));
        out.push(KeyValue::new(SERVER_PORT, i64::from(p)));
    }
}

/// How a sent request ended, in the terms of [`Ending`].
fn ending_of(end: OutgoingEnd<'_>) -> Ending<'_> {
    let local = |kind, message: String| Ending::Local { kind, message };
    match end {
        OutgoingEnd::Result(Reply::Object(o)) => Ending::Object(o),
        OutgoingEnd::Result(Reply::Raw(r)) => Ending::Raw(r.get()),
        OutgoingEnd::Failed(PeerError::Call(CallError::Remote(e))) => Ending::Error {
            code: e.code,
            message: &e.message,
        },
        OutgoingEnd::Failed(e @ PeerError::Call(CallError::Timeout(_))) => {
            local(TIMEOUT, e.to_string())
        }
        OutgoingEnd::Failed(e @ PeerError::Call(CallError::Cancelled)) => {
            local(CANCELLED, e.to_string())
        }
        OutgoingEnd::Failed(e @ (PeerError::Closed | PeerError::Call(CallError::Closed))) => {
            local(CLOSED, e.to_string())
        }
        OutgoingEnd::Failed(e) => local(OTHER, e.to_string()),
        OutgoingEnd::Abandoned => local(CANCELLED, "the caller gave up on the request".into()),
        OutgoingEnd::Sent => Ending::Taken,
    }
}
