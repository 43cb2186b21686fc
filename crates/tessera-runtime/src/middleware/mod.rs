//! MCP-level middleware: layers over the requests a connection serves.
//!
//! A [`Middleware`] sees each request the peer sends after the connection
//! core has checked it (JSON-RPC envelope, era, version, capabilities) and
//! before the handler runs: the method, the params (typed on demand with
//! [`Request::params_as`]), the era and version, and the request's
//! [`Extensions`](crate::Extensions), which carry the HTTP headers and the
//! authenticated [`Principal`](crate::Principal) when the request came over
//! HTTP. It can observe the request and its result, reject it with a
//! JSON-RPC error, or rewrite either, and hands the request on with
//! [`Next::run`]. The same layers serve both roles: a server's layers see
//! `tools/call` and friends, a client's see `sampling/createMessage`,
//! `elicitation/create` and `roots/list`.
//!
//! Layers are stacked in a [`MiddlewareStack`], outermost first; a service is
//! wrapped with [`Layered`] (a server or client builder's `layer` method does
//! this for you). Ready layers: [`TraceLayer`] (a tracing span per request),
//! [`MetricsLayer`] (a hook called with each request's [`RequestRecord`]),
//! [`ConcurrencyLimitLayer`] (per session or per principal) and
//! [`TimeoutLayer`]. [`from_fn`] turns an async function into a layer.
//!
//! A layer refuses a request by returning a JSON-RPC error, or with a
//! [`Refusal`] that also says how an HTTP transport answers instead (`403`
//! and a `WWW-Authenticate` challenge, `429` and `Retry-After`): the HTTP
//! transport finds it in the request's [`MessageScope`] and answers the POST with
//! it, stdio sends the JSON-RPC error. A transport (or a tower layer in front
//! of one) attaches layers of its own to the requests it hands over with
//! [`RequestLayers`]; `tessera-auth` checks OAuth scopes this way.
//!
//! A layer made with [`from_fn`]:
//!
//! ```
//! use tessera_runtime::middleware::{MiddlewareStack, Next, from_fn};
//! use tessera_runtime::{Request, HandlerResult};
//! use tessera_types::ErrorObject;
//!
//! async fn no_deletes(request: Request, next: Next) -> HandlerResult {
//!     if request.target() == Some("delete") {
//!         return Err(ErrorObject::invalid_params("delete is not allowed here"));
//!     }
//!     next.run(request).await
//! }
//!
//! let stack = MiddlewareStack::new().layer(from_fn(no_deletes));
//! assert_eq!(stack.len(), 1);
//! ```

mod limit;
mod metrics;
mod refusal;
mod request;
mod timeout;
mod trace;

use std::future::Future;
use std::sync::Arc;

use crate::peer::Peer;
use crate::service::{BoxFuture, HandlerResult, Handling, Notification, Request, Service};
use tessera_types::{JsonObject, ProtocolVersion};

pub use limit::{ConcurrencyLimitLayer, LimitKey};
pub use metrics::{MetricsLayer, Outcome, RequestRecord};
pub use refusal::{HttpRefusal, MessageScope, Refusal, RequestLayers};
pub use timeout::TimeoutLayer;
pub use trace::TraceLayer;

/// One layer of MCP-level middleware.
///
/// `call` gets the request and the rest of the stack; it answers by calling
/// [`Next::run`] (possibly with a rewritten request, possibly rewriting the
/// result) or by returning its own result without calling it (a rejection).
pub trait Middleware: Send + Sync + 'static {
    /// Handles one request.
    fn call(&self, request: Request, next: Next) -> BoxFuture<'static, HandlerResult>;

    /// Told when a legacy session's handshake completes on a connection
    /// served through this layer (server role); `peer` is the session's
    /// connection. The default does nothing.
    fn on_session(&self, peer: &Peer, version: ProtocolVersion) {
        let _ = (peer, version);
    }

    /// Whether the layer does anything. A layer that knows when it is made
    /// that it never will (telemetry with nothing to record into) returns
    /// `false`, and [`MiddlewareStack::layer`] leaves it out: the stack,
    /// and what a server does when it has no middleware (answering a
    /// `tools/call` with its result written straight to text), stay as
    /// they were. The default is `true`.
    fn is_active(&self) -> bool {
        true
    }
}

/// The handler at the bottom of a stack.
type Endpoint = Arc<dyn Fn(Request) -> BoxFuture<'static, HandlerResult> + Send + Sync>;

/// The rest of a middleware stack, down to the handler.
pub struct Next {
    layers: Arc<[Arc<dyn Middleware>]>,
    index: usize,
    endpoint: Endpoint,
}

impl std::fmt::Debug for Next {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Next")
            .field("layers_left", &(self.layers.len() - self.index))
            .finish()
    }
}

impl Next {
    /// Runs the next layer, or the handler when no layer is left.
    pub fn run(mut self, request: Request) -> BoxFuture<'static, HandlerResult> {
        match self.layers.get(self.index).cloned() {
            Some(layer) => {
                self.index += 1;
                layer.call(request, self)
            }
            None => (self.endpoint)(request),
        }
    }
}

/// An ordered list of middleware, outermost first. Cheap to clone.
#[derive(Clone, Default)]
pub struct MiddlewareStack {
    layers: Arc<[Arc<dyn Middleware>]>,
}

impl std::fmt::Debug for MiddlewareStack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MiddlewareStack")
            .field("layers", &self.layers.len())
            .finish()
    }
}

impl MiddlewareStack {
    /// An empty stack.
    pub fn new() -> Self {
        MiddlewareStack::default()
    }

    /// Adds `layer` inside the layers already added: the first layer added
    /// sees each request first and its result last. A layer that is not
    /// active ([`Middleware::is_active`]) is left out.
    pub fn layer(self, layer: impl Middleware) -> Self {
        self.layer_arc(Arc::new(layer))
    }

    /// Like [`MiddlewareStack::layer`], for a shared layer.
    pub fn layer_arc(self, layer: Arc<dyn Middleware>) -> Self {
        if !layer.is_active() {
            return self;
        }
        let mut v: Vec<Arc<dyn Middleware>> = self.layers.iter().cloned().collect();
        v.push(layer);
        MiddlewareStack { layers: v.into() }
    }

    /// The number of layers.
    pub fn len(&self) -> usize {
        self.layers.len()
    }

    /// Whether the stack has no layer.
    pub fn is_empty(&self) -> bool {
        self.layers.is_empty()
    }

    /// Tells every layer that a legacy session started
    /// ([`Middleware::on_session`]).
    pub fn on_session(&self, peer: &Peer, version: ProtocolVersion) {
        for l in self.layers.iter() {
            l.on_session(peer, version);
        }
    }

    /// Runs `request` through the stack down to `handler`.
    pub fn run<F>(&self, request: Request, handler: F) -> BoxFuture<'static, HandlerResult>
    where
        F: Fn(Request) -> BoxFuture<'static, HandlerResult> + Send + Sync + 'static,
    {
        if self.layers.is_empty() {
            return handler(request);
        }
        Next {
            layers: self.layers.clone(),
            index: 0,
            endpoint: Arc::new(handler),
        }
        .run(request)
    }
}

/// A layer made from an async function of the request and the rest of the
/// stack; see [`from_fn`].
pub struct FromFn<F>(F);

impl<F> std::fmt::Debug for FromFn<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FromFn")
    }
}

/// Turns `f(request, next)` into a [`Middleware`].
pub fn from_fn<F, Fut>(f: F) -> FromFn<F>
where
    F: Fn(Request, Next) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = HandlerResult> + Send + 'static,
{
    FromFn(f)
}

impl<F, Fut> Middleware for FromFn<F>
where
    F: Fn(Request, Next) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = HandlerResult> + Send + 'static,
{
    fn call(&self, request: Request, next: Next) -> BoxFuture<'static, HandlerResult> {
        Box::pin((self.0)(request, next))
    }
}

/// A [`Service`] whose requests go through a [`MiddlewareStack`] first;
/// everything else (methods, notifications, session hooks) is the inner
/// service's.
pub struct Layered<S> {
    inner: Arc<S>,
    stack: MiddlewareStack,
}

impl<S> std::fmt::Debug for Layered<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Layered")
            .field("stack", &self.stack)
            .finish_non_exhaustive()
    }
}

impl<S: Service> Layered<S> {
    /// Wraps `inner` with `stack`.
    pub fn new(inner: S, stack: MiddlewareStack) -> Self {
        Layered {
            inner: Arc::new(inner),
            stack,
        }
    }

    /// Wraps a shared `inner` with `stack`.
    pub fn from_arc(inner: Arc<S>, stack: MiddlewareStack) -> Self {
        Layered { inner, stack }
    }

    /// The wrapped service.
    pub fn inner(&self) -> &S {
        &self.inner
    }
}

impl<S: Service> Service for Layered<S> {
    fn methods(&self) -> Vec<String> {
        self.inner.methods()
    }

    fn handle_request(&self, request: Request) -> BoxFuture<'static, HandlerResult> {
        let inner = self.inner.clone();
        self.stack.run(request, move |r| inner.handle_request(r))
    }

    fn handle(&self, request: Request) -> Handling {
        if self.stack.is_empty() {
            // No layer to read the result: the inner service's own way.
            return self.inner.handle(request);
        }
        Handling::Object(self.handle_request(request))
    }

    fn handle_notification(&self, notification: Notification) -> BoxFuture<'static, ()> {
        self.inner.handle_notification(notification)
    }

    fn on_initialized(&self, peer: Peer, version: ProtocolVersion) {
        self.stack.on_session(&peer, version);
        self.inner.on_initialized(peer, version)
    }

    fn session_data(&self, peer: &Peer) -> JsonObject {
        self.inner.session_data(peer)
    }

    fn on_restored(
        &self,
        peer: Peer,
        version: ProtocolVersion,
        initialized: bool,
        data: &JsonObject,
    ) {
        self.inner.on_restored(peer, version, initialized, data)
    }
}
