//! [`TelemetryLayer`]: a `SERVER` span and `mcp.server.operation.duration`
//! for every request and notification a connection receives, in either role
//! (a server's `tools/call` and `notifications/initialized`, a client's
//! `sampling/createMessage` and `notifications/message`).

use opentelemetry::trace::{FutureExt, Link, SpanKind, TraceContextExt, Tracer};
use opentelemetry::{Context, KeyValue};
use std::borrow::Cow;
use std::task::{Context as TaskContext, Poll};

use tessera_runtime::middleware::BoxError;
use tessera_runtime::{
    BoxFuture, HttpVersion, Message, Notification, PeerAddr, Reply, Request, SessionId,
};
use tessera_types::ErrorObject;

use crate::Telemetry;
use crate::convention::{
    CLIENT_ADDRESS, CLIENT_PORT, JSONRPC_REQUEST_ID, MCP_SESSION_ID, NETWORK_PROTOCOL_NAME,
    NETWORK_PROTOCOL_VERSION, NETWORK_TRANSPORT, Target, short, span_name,
};
use crate::era;
use crate::meta;
use crate::operation::{Attributes, Ending, Operation};

/// The middleware layer that records the requests and notifications a
/// connection receives: add it with the server's (or client's) `layer`
/// method. Made by [`Telemetry::layer`], which also starts recording the
/// requests this process sends.
///
/// A notification is recorded as the conventions record one: a `SERVER`
/// span named for its method (`notifications/initialized`) with
/// `mcp.method.name`, `mcp.protocol.version` once the connection's version
/// is known and the transport's attributes, and a point of
/// `mcp.server.operation.duration` with the same attributes. It has no
/// `jsonrpc.request.id` and no response status; a notification a layer
/// below refused (dropped) carries `error.type`, the refusal's code.
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

    /// Records requests and notifications (see [`TelemetryLayer`]).
    fn call(&mut self, message: Message) -> Self::Future {
        if !self.telemetry.is_active() {
            return Box::pin(self.inner.call(message));
        }
        match message {
            Message::Request(request) => self.request(request),
            Message::Notification(n) => self.notification(n),
        }
    }
}

impl<S> TelemetryService<S>
where
    S: tower::Service<Message, Response = Reply, Error = BoxError>,
    S::Future: Send + 'static,
{
    /// A request: a `SERVER` span and a duration, ended with its answer.
    fn request(&mut self, request: Request) -> BoxFuture<'static, Result<Reply, BoxError>> {
        let t = &self.telemetry.inner;
        let parent = meta::extract(
            t.propagator.as_ref(),
            request
                .context
                .meta
                .as_ref()
                .map(tessera_types::ReceivedMeta::object),
            &Context::new(),
        );
        let target = request.target().map(|s| target_of(&request.method, s));
        let mut attrs = Attributes::of_request(
            &request.method,
            target.as_ref(),
            Some(&request.context.version),
            &t.options,
        );
        attrs
            .span_only
            .push(KeyValue::new(JSONRPC_REQUEST_ID, request.id.to_string()));
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
        let sessions = era::has_sessions(request.context.era);
        let message = Message::Request(request);
        let (cx, op) = self.start(&message, name, sessions, &parent, attrs);
        let answer = self.inner.call(message).with_context(cx);
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

    /// A notification: a `SERVER` span named for its method and a duration,
    /// from its arrival until the stack took it. It has no id and gets no
    /// response: it carries `error.type` (the refusal's code) only when a
    /// layer below dropped it.
    fn notification(&mut self, n: Notification) -> BoxFuture<'static, Result<Reply, BoxError>> {
        let t = &self.telemetry.inner;
        let meta = n
            .params
            .as_ref()
            .and_then(|p| p.get("_meta"))
            .and_then(serde_json::Value::as_object);
        let parent = meta::extract(t.propagator.as_ref(), meta, &Context::new());
        let attrs = Attributes::of_request(&n.method, None, n.version.as_ref(), &t.options);
        let name = span_name(&n.method, None, false);
        let sessions = n.version.is_some_and(|v| era::has_sessions(v.era()));
        let message = Message::Notification(n);
        let (cx, op) = self.start(&message, name, sessions, &parent, attrs);
        let taken = self.inner.call(message).with_context(cx);
        Box::pin(async move {
            let result = taken.await;
            match &result {
                Ok(_) => op.finish(Ending::Taken, Vec::new()),
                Err(e) => {
                    let e = error_object_ref(e);
                    op.finish(
                        Ending::Dropped {
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

    /// Adds what the transport tells about `message` to `attrs` (the
    /// session's id when `sessions`), starts its `SERVER` span named `name`
    /// under `parent` (linked to the ambient span), and starts measuring.
    fn start(
        &self,
        message: &Message,
        name: String,
        sessions: bool,
        parent: &Context,
        mut attrs: Attributes,
    ) -> (Context, Operation) {
        let t = &self.telemetry.inner;
        let over_http = message.headers().is_some();
        attrs.shared.push(KeyValue::new(
            NETWORK_TRANSPORT,
            if over_http { "tcp" } else { "pipe" },
        ));
        if over_http {
            attrs
                .shared
                .push(KeyValue::new(NETWORK_PROTOCOL_NAME, "http"));
            if let Some(HttpVersion(v)) = message.extension::<HttpVersion>() {
                attrs
                    .shared
                    .push(KeyValue::new(NETWORK_PROTOCOL_VERSION, *v));
            }
        }
        if sessions {
            if let Some(SessionId(id)) = message.extension::<SessionId>() {
                attrs
                    .span_only
                    .push(KeyValue::new(MCP_SESSION_ID, short(id)));
            }
        }
        if let Some(PeerAddr(addr)) = message.extension::<PeerAddr>() {
            attrs
                .span_only
                .push(KeyValue::new(CLIENT_ADDRESS, addr.ip().to_string()));
            attrs
                .span_only
                .push(KeyValue::new(CLIENT_PORT, i64::from(addr.port())));
        }
        let mut builder = t
            .tracer
            .span_builder(name)
            .with_kind(SpanKind::Server)
            .with_attributes(attrs.shared.iter().cloned().chain(attrs.span_only));
        let ambient = Context::current().span().span_context().clone();
        if ambient.is_valid() {
            builder = builder.with_links(vec![Link::with_context(ambient)]);
        }
        let span = builder.start_with_context(&t.tracer, parent);
        let cx = parent.with_span(span);
        let op = Operation::new(
            cx.clone(),
            t.instruments.server_operation.clone(),
            attrs.shared,
            message.method(),
            &t.options,
        );
        (cx, op)
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
