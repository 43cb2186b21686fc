//! [`TelemetryLayer`]: a `SERVER` span and `mcp.server.operation.duration`
//! for every request a connection receives, in either role (a server's
//! `tools/call`, a client's `sampling/createMessage`).

use opentelemetry::trace::{FutureExt, Link, SpanKind, TraceContextExt, Tracer};
use opentelemetry::{Context, KeyValue};
use std::borrow::Cow;
use std::task::{Context as TaskContext, Poll};

use tessera_runtime::middleware::BoxError;
use tessera_runtime::{BoxFuture, HttpVersion, Message, PeerAddr, Reply, SessionId};
use tessera_types::ErrorObject;

use crate::Telemetry;
use crate::convention::{
    CLIENT_ADDRESS, CLIENT_PORT, JSONRPC_REQUEST_ID, MCP_SESSION_ID, NETWORK_PROTOCOL_NAME,
    NETWORK_PROTOCOL_VERSION, NETWORK_TRANSPORT, Target, short, span_name,
};
use crate::era;
use crate::meta;
use crate::operation::{Attributes, Ending, Operation};

/// The middleware layer that records the requests a connection receives:
/// add it with the server's (or client's) `layer` method. Made by
/// [`Telemetry::layer`], which also starts recording the requests this
/// process sends.
#[derive(Debug, Clone)]
pub struct TelemetryLayer {
    pub(crate) telemetry: Telemetry,
}

impl<S> tower::Layer<S> for TelemetryLayer {
    type Service = TelemetryService<S>;

    fn layer(&self, inner: S) -> TelemetryService<S> {
        TelemetryService {
            telemetry: self.telemetry.clone(),
            inner,
        }
    }
}

/// The service of a [`TelemetryLayer`].
#[derive(Debug, Clone)]
pub struct TelemetryService<S> {
    telemetry: Telemetry,
    inner: S,
}

impl<S> tower::Service<Message> for TelemetryService<S>
where
    S: tower::Service<Message, Response = Reply, Error = BoxError>,
    S::Future: Send + 'static,
{
    type Response = Reply;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<Reply, BoxError>>;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx)
    }

    /// Records requests; notifications pass unrecorded (the conventions
    /// measure operations, and a notification has no outcome to measure).
    fn call(&mut self, message: Message) -> Self::Future {
        let request = match message {
            Message::Request(request) if self.telemetry.is_active() => request,
            other => return Box::pin(self.inner.call(other)),
        };
        let t = &self.telemetry.inner;
        let ambient = Context::current();
        let parent = meta::extract(
            t.propagator.as_ref(),
            request.context.meta.as_deref(),
            &Context::new(),
        );
        let target = request.target().map(|s| target_of(&request.method, s));
        let mut attrs = Attributes::of_request(
            &request.method,
            target.as_ref(),
            Some(&request.context.version),
            &t.options,
        );
        let over_http = request.headers().is_some();
        attrs.shared.push(KeyValue::new(
            NETWORK_TRANSPORT,
            if over_http { "tcp" } else { "pipe" },
        ));
        if over_http {
            attrs
                .shared
                .push(KeyValue::new(NETWORK_PROTOCOL_NAME, "http"));
            if let Some(HttpVersion(v)) = request.extension::<HttpVersion>() {
                attrs
                    .shared
                    .push(KeyValue::new(NETWORK_PROTOCOL_VERSION, *v));
            }
        }
        attrs
            .span_only
            .push(KeyValue::new(JSONRPC_REQUEST_ID, request.id.to_string()));
        if era::has_sessions(request.context.era) {
            if let Some(SessionId(id)) = request.extension::<SessionId>() {
                attrs
                    .span_only
                    .push(KeyValue::new(MCP_SESSION_ID, short(id)));
            }
        }
        if let Some(PeerAddr(addr)) = request.extension::<PeerAddr>() {
            attrs
                .span_only
                .push(KeyValue::new(CLIENT_ADDRESS, addr.ip().to_string()));
            attrs
                .span_only
                .push(KeyValue::new(CLIENT_PORT, i64::from(addr.port())));
        }
        if let Some(p) = &request.params {
            let has = |k: &str| p.may_have(k) && p.get(k).is_some();
            attrs.span_only.extend(era::request_attributes(has));
            if let Some(id) = era::task_id_param(&request.method, |k| {
                p.get(k).and_then(serde_json::Value::as_str)
            }) {
                attrs.span_only.push(KeyValue::new(era::TASK_ID, short(id)));
            }
            if request.method == "tools/call" && t.options.record_tool_payloads {
                let call: era::CallArguments = p.decode().unwrap_or_default();
                attrs.tool_arguments(call.arguments.valid(), &t.options);
            }
        }
        let name = span_name(&request.method, target.as_ref(), t.options.uri_in_span_name);
        let mut builder = t
            .tracer
            .span_builder(name)
            .with_kind(SpanKind::Server)
            .with_attributes(attrs.shared.iter().cloned().chain(attrs.span_only));
        let ambient_span = ambient.span().span_context().clone();
        if ambient_span.is_valid() {
            builder = builder.with_links(vec![Link::with_context(ambient_span)]);
        }
        let span = builder.start_with_context(&t.tracer, &parent);
        let cx = parent.with_span(span);
        let op = Operation::new(
            cx.clone(),
            t.instruments.server_operation.clone(),
            attrs.shared,
            &request.method,
            &t.options,
        );
        let answer = self.inner.call(Message::Request(request)).with_context(cx);
        Box::pin(async move {
            let result = answer.await;
            match &result {
                Ok(Reply::Object(o)) => op.finish(Ending::Object(o), Vec::new()),
                Ok(Reply::Raw(r)) => op.finish(Ending::Raw(r.get()), Vec::new()),
                Err(e) => {
                    let e = error_object_ref(e);
                    op.finish(
                        Ending::Error {
                            code: e.code,
                            message: &e.message,
                        },
                        Vec::new(),
                    )
                }
            }
            result
        })
    }
}

/// The [`Target`] of a request whose target string is `s`.
pub(crate) fn target_of<'a>(method: &str, s: &'a str) -> Target<'a> {
    match method {
        "tools/call" => Target::Tool(s),
        "prompts/get" => Target::Prompt(s),
        _ => Target::Resource(s),
    }
}

/// The JSON-RPC error a stack's error stands for, borrowed when it is one.
fn error_object_ref(e: &BoxError) -> Cow<'_, ErrorObject> {
    match e.downcast_ref::<ErrorObject>() {
        Some(o) => Cow::Borrowed(o),
        None => Cow::Owned(ErrorObject::internal(e.to_string())),
    }
}
