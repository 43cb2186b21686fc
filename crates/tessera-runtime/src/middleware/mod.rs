//! MCP-level middleware: [tower] layers over the requests and notifications
//! a connection takes in.
//!
//! Every request and notification the peer sends reaches the application
//! through one tower service, [`McpService`]: a [`Message`] in — a
//! [`Request`] (method, params typed on demand with [`Request::params_as`],
//! era and version, and the request's [`Extensions`](crate::Extensions) with
//! the HTTP headers and the authenticated [`Principal`](crate::Principal))
//! or a [`Notification`] (method, params, the same extensions) — and a
//! [`Reply`] out. Layers see each request after the connection core checked
//! it (JSON-RPC envelope, era, version, capabilities) and before the handler
//! runs, and each notification in arrival order (the core acts on the
//! protocol's own, such as `notifications/cancelled`, before the stack sees
//! them). A notification is never answered: what the stack answers it with
//! is dropped, and a layer that refuses it drops it ([`notify`]). Any
//! `tower::Layer` whose service speaks `Message → Reply` stacks there, so
//! tower's own layers work as they are:
//!
//! - `tower::limit::ConcurrencyLimitLayer`: requests beyond the limit wait
//!   for a slot (the limit counts every request of the server or client the
//!   layer is on);
//! - `tower::load_shed::LoadShedLayer` in front of it: a request that finds
//!   no slot is refused at once, with `-32603` "Server busy" — over HTTP
//!   (before the response started) `429 Too Many Requests` and
//!   `Retry-After: 1`;
//! - `tower::timeout::TimeoutLayer`: a request not answered in time gets
//!   `-32603` "Request timed out", and its handler is dropped.
//!
//! Ready layers of this crate: [`TraceLayer`] (a tracing span per request
//! and per notification) and [`MetricsLayer`] (a hook called with each
//! request's and notification's [`RequestRecord`]). [`from_fn`] turns an
//! async function of the request and the rest of the stack ([`Next`]) into
//! a layer (notifications pass it untouched). Results stay as they
//! came ([`Reply::Raw`] JSON text passes through untouched) unless a layer
//! reads them ([`Reply::into_object`]).
//!
//! Layers are stacked in a [`MiddlewareStack`], outermost first; a service is
//! wrapped with [`Layered`] (a server or client builder's `layer` method does
//! this for you). The stack is built once, so a limit's slots are shared by
//! every request it sees. The same layers serve both roles: a server's
//! layers see `tools/call` and friends, a client's see
//! `sampling/createMessage`, `elicitation/create` and `roots/list`.
//!
//! A layer refuses a request by answering with a JSON-RPC error, or with a
//! [`Refusal`] that also says how an HTTP transport answers instead (`403`
//! and a `WWW-Authenticate` challenge, `429` and `Retry-After`): the HTTP
//! transport finds it in the request's [`MessageScope`] and answers the POST with
//! it, stdio sends the JSON-RPC error. A transport (or a tower layer in front
//! of one) attaches layers of its own to the requests it hands over with
//! [`RequestLayers`]; `tessera-auth` checks OAuth scopes this way.
//!
//! A layer made with [`from_fn`], and tower's limit, load shedding and
//! timeout:
//!
//! ```
//! use std::time::Duration;
//! use tessera_runtime::middleware::{MiddlewareStack, Next, from_fn};
//! use tessera_runtime::{Request, ReplyResult};
//! use tessera_types::ErrorObject;
//!
//! async fn no_deletes(request: Request, next: Next) -> ReplyResult {
//!     if request.target() == Some("delete") {
//!         return Err(ErrorObject::invalid_params("delete is not allowed here"));
//!     }
//!     next.run(request).await
//! }
//!
//! let stack = MiddlewareStack::new()
//!     .layer(from_fn(no_deletes))
//!     .layer(tower::timeout::TimeoutLayer::new(Duration::from_secs(30)))
//!     .layer(tower::load_shed::LoadShedLayer::new())
//!     .layer(tower::limit::ConcurrencyLimitLayer::new(64));
//! assert_eq!(stack.len(), 4);
//! ```

mod errors;
mod metrics;
mod refusal;
mod request;
mod trace;

use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::FutureExt;
use futures::TryFutureExt;
use futures::future::Either;
use tower::ServiceExt;
use tower::util::BoxCloneSyncService;

use crate::outgoing::OutgoingObserver;
use crate::peer::Peer;
use crate::service::{
    BoxFuture, HandlerResult, Message, Notification, ReplyResult, Request, Service,
};
use tessera_proto::Reply;
use tessera_types::{JsonObject, ProtocolVersion};

pub use errors::{error_code, error_object};
pub use metrics::{MetricsLayer, MetricsService, Outcome, RequestRecord};
pub use refusal::{HttpRefusal, MessageScope, Refusal, RequestLayers};
pub use tower::BoxError;
pub use trace::{TraceLayer, TraceService};

/// The service every layer wraps: a [`Message`] in (a request or a
/// notification), a result out (as JSON text or a tree, see [`Reply`]); a
/// JSON-RPC error is an [`ErrorObject`](tessera_types::ErrorObject) inside
/// the [`BoxError`], and tower's own errors (a timeout, load shed) become
/// JSON-RPC errors at the bottom of the stack ([`error_object`]). A
/// notification's answer is dropped: the stack's endpoint answers it with an
/// empty result once the application took it, and a layer that fails it
/// (refuses it) drops it; nothing is ever written back for one.
pub type McpService = BoxCloneSyncService<Message, Reply, BoxError>;

/// A boxed layer: wraps the rest of the stack.
type Wrap = Arc<dyn McpLayer>;

/// A layer that fits a middleware stack: any `tower::Layer` over
/// [`McpService`] whose service answers a [`Message`] with a [`Reply`]
/// (its error turned into a [`BoxError`]), such as tower's limit, load
/// shedding and timeout layers, [`TraceLayer`], [`MetricsLayer`] and
/// [`from_fn`]'s layers. Implemented for every such layer; there is nothing
/// to implement by hand.
pub trait McpLayer: Send + Sync + 'static {
    /// The layer over `inner`, boxed.
    fn wrap(&self, inner: McpService) -> McpService;
}

impl<L> McpLayer for L
where
    L: tower::Layer<McpService> + Send + Sync + 'static,
    L::Service: tower::Service<Message, Response = Reply> + Clone + Send + Sync + 'static,
    <L::Service as tower::Service<Message>>::Error: Into<BoxError> + 'static,
    <L::Service as tower::Service<Message>>::Future: Send + 'static,
{
    fn wrap(&self, inner: McpService) -> McpService {
        BoxCloneSyncService::new(self.layer(inner).map_err(Into::into))
    }
}

/// Called when a legacy session's handshake completes (server role).
type SessionHook = Arc<dyn Fn(&Peer, ProtocolVersion) + Send + Sync>;

/// An ordered list of tower layers, outermost first, the observers of
/// legacy sessions, and the observer of the requests the connections it
/// serves send. Cheap to clone.
#[derive(Clone, Default)]
pub struct MiddlewareStack {
    layers: Arc<[Wrap]>,
    sessions: Arc<[SessionHook]>,
    outgoing: Option<Arc<dyn OutgoingObserver>>,
}

impl std::fmt::Debug for MiddlewareStack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MiddlewareStack")
            .field("layers", &self.layers.len())
            .field("session_observers", &self.sessions.len())
            .field("observes_outgoing", &self.outgoing.is_some())
            .finish()
    }
}

impl MiddlewareStack {
    /// An empty stack.
    pub fn new() -> Self {
        MiddlewareStack::default()
    }

    /// Adds `layer` inside the layers already added: the first layer added
    /// sees each request first and its result last. Any tower layer whose
    /// service answers a [`Message`] with a [`Reply`] fits ([`McpLayer`]).
    pub fn layer(self, layer: impl McpLayer) -> Self {
        let mut v: Vec<Wrap> = self.layers.iter().cloned().collect();
        v.push(Arc::new(layer));
        MiddlewareStack {
            layers: v.into(),
            ..self
        }
    }

    /// Calls `hook` with each legacy session's connection and version when
    /// its handshake completes (server role): how a layer that measures
    /// sessions learns of them.
    pub fn observe_sessions(
        self,
        hook: impl Fn(&Peer, ProtocolVersion) + Send + Sync + 'static,
    ) -> Self {
        let mut v: Vec<SessionHook> = self.sessions.iter().cloned().collect();
        v.push(Arc::new(hook));
        MiddlewareStack {
            sessions: v.into(),
            ..self
        }
    }

    /// Tells `observer` of every request sent on the connections this stack
    /// serves, in either role (a client's calls, a server's requests to its
    /// client), before the process-wide observer
    /// ([`observe_outgoing`](crate::outgoing::observe_outgoing)), which
    /// then sees only the connections whose stack has none. Replaces an
    /// observer set before.
    pub fn observe_outgoing(self, observer: Arc<dyn OutgoingObserver>) -> Self {
        MiddlewareStack {
            outgoing: Some(observer),
            ..self
        }
    }

    /// The observer of the requests sent on this stack's connections, if
    /// one was set ([`MiddlewareStack::observe_outgoing`]).
    pub fn outgoing(&self) -> Option<&Arc<dyn OutgoingObserver>> {
        self.outgoing.as_ref()
    }

    /// The number of layers.
    pub fn len(&self) -> usize {
        self.layers.len()
    }

    /// Whether the stack has no layer.
    pub fn is_empty(&self) -> bool {
        self.layers.is_empty()
    }

    /// Tells the session observers that a legacy session started
    /// ([`MiddlewareStack::observe_sessions`]).
    pub fn session_started(&self, peer: &Peer, version: ProtocolVersion) {
        for hook in self.sessions.iter() {
            hook(peer, version);
        }
    }

    /// The stack over `endpoint`: one service, to clone for each request
    /// (clones share what the layers keep, such as a limit's slots).
    pub fn wrap(&self, endpoint: McpService) -> McpService {
        self.layers
            .iter()
            .rev()
            .fold(endpoint, |inner, layer| layer.wrap(inner))
    }
}

/// Runs `request` through `service` (a stack from
/// [`MiddlewareStack::wrap`]) and answers with its result, a tower error
/// turned into the JSON-RPC error it stands for ([`error_object`]).
///
/// When the stack is ready at once (it is, unless a limit is full) the
/// request is handed to it here, not on the answer's first poll: a layer
/// that refuses in `call` (the OAuth scope check) has recorded its
/// [`Refusal`] before the transport chooses how to answer.
pub fn serve(
    service: &McpService,
    request: Request,
) -> impl Future<Output = ReplyResult> + Send + use<> {
    /// How far the request got before the answer is first polled.
    enum Started<C> {
        /// Handed to the stack: its answer.
        Called(C),
        /// The stack failed to become ready.
        Failed(BoxError),
        /// The stack is not ready yet (a full limit): the request waits for
        /// it, boxed so that the answer of a request handed over at once,
        /// the usual case, stays small.
        Waiting(McpService, Box<Request>),
    }
    let frame = request.message_scope().cloned();
    let id = request.id.clone();
    let mut service = service.clone();
    let waker = futures::task::noop_waker();
    let ready = tower::Service::poll_ready(&mut service, &mut Context::from_waker(&waker));
    let started = match ready {
        Poll::Ready(Ok(())) => Started::Called(tower::Service::call(
            &mut service,
            Message::Request(request),
        )),
        Poll::Ready(Err(e)) => Started::Failed(e),
        Poll::Pending => Started::Waiting(service, Box::new(request)),
    };
    async move {
        let answered = match started {
            Started::Called(call) => call.await,
            Started::Failed(e) => Err(e),
            // Waits for readiness with the answer's own waker.
            Started::Waiting(service, request) => service.oneshot(Message::Request(*request)).await,
        };
        answered.map_err(|e| errors::answer(e, frame.as_ref(), id))
    }
}

/// Runs `notification` through `service` (a stack from
/// [`MiddlewareStack::wrap`]), waiting for the stack to be ready (a full
/// limit holds it back). Whatever the stack answers is dropped: a
/// notification that a layer refuses (an error, a shed load) is dropped, and
/// nothing is sent back for it, nor recorded as a refusal for the transport.
pub fn notify(
    service: &McpService,
    notification: Notification,
) -> impl Future<Output = ()> + Send + use<> {
    let method = notification.method.clone();
    let service = service.clone();
    async move {
        if let Err(e) = service.oneshot(Message::Notification(notification)).await {
            let error = error_object(e);
            tracing::debug!(%method, code = error.code, message = %error.message, "notification dropped by a layer");
        }
    }
}

/// The endpoint of a stack: `service`'s own way of answering a request
/// ([`Service::handle`]) and of taking a notification ([`Service::notify`]),
/// as an [`McpService`].
pub fn endpoint<S: Service>(service: Arc<S>) -> McpService {
    BoxCloneSyncService::new(tower::service_fn(move |message: Message| {
        let service = service.clone();
        let answer = match message {
            Message::Request(request) => Either::Left(service.handle(request)),
            // Boxed, so that a request's answer is not as large as a
            // notification's.
            Message::Notification(n) => {
                Either::Right(Box::pin(service.notify(n).map(|()| Ok(notified()))))
            }
        };
        answer.map_err(BoxError::from)
    }))
}

/// What the endpoint of a stack answers a notification with once the
/// application took it: an empty result, which is dropped.
pub fn notified() -> Reply {
    Reply::Object(JsonObject::new())
}

/// A layer made from an async function of the request and the rest of the
/// stack; see [`from_fn`].
#[derive(Clone)]
pub struct FromFnLayer<F>(F);

impl<F> std::fmt::Debug for FromFnLayer<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FromFnLayer")
    }
}

/// Turns `f(request, next)` into a layer: `f` answers by awaiting
/// [`Next::run`] (possibly with a rewritten request, possibly rewriting the
/// result) or with its own result without calling it (a refusal). The layer
/// sees requests only: notifications pass it untouched, on to the rest of
/// the stack (write a `tower::Layer` over [`Message`] to see both).
pub fn from_fn<F, Fut>(f: F) -> FromFnLayer<F>
where
    F: Fn(Request, Next) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = ReplyResult> + Send + 'static,
{
    FromFnLayer(f)
}

impl<F: Clone> tower::Layer<McpService> for FromFnLayer<F> {
    type Service = FromFn<F>;

    fn layer(&self, inner: McpService) -> FromFn<F> {
        FromFn {
            f: self.0.clone(),
            inner,
        }
    }
}

/// The service of a [`FromFnLayer`].
#[derive(Clone)]
pub struct FromFn<F> {
    f: F,
    inner: McpService,
}

impl<F> std::fmt::Debug for FromFn<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FromFn")
    }
}

impl<F, Fut> tower::Service<Message> for FromFn<F>
where
    F: Fn(Request, Next) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = ReplyResult> + Send + 'static,
{
    type Response = Reply;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<Reply, BoxError>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        // The rest of the stack is made ready when `Next::run` calls it.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, message: Message) -> Self::Future {
        let inner = self.inner.clone();
        match message {
            Message::Request(request) => {
                let answer = (self.f)(request, Next { inner });
                Box::pin(async move { answer.await.map_err(BoxError::from) })
            }
            Message::Notification(n) => Box::pin(inner.oneshot(Message::Notification(n))),
        }
    }
}

/// The rest of a middleware stack, down to the handler.
pub struct Next {
    inner: McpService,
}

impl std::fmt::Debug for Next {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Next")
    }
}

impl Next {
    /// Runs the rest of the stack on `request`; a tower error from below
    /// (a timeout, a shed request) comes back as its JSON-RPC error.
    pub fn run(self, request: Request) -> impl Future<Output = ReplyResult> + Send + 'static {
        serve(&self.inner, request)
    }
}

/// A [`Service`] whose requests and notifications go through a
/// [`MiddlewareStack`] first; everything else (methods, session hooks) is the
/// inner service's.
pub struct Layered<S> {
    inner: Arc<S>,
    stack: MiddlewareStack,
    /// The stack over the inner service; `None` without layers.
    service: Option<McpService>,
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
        Layered::from_arc(Arc::new(inner), stack)
    }

    /// Wraps a shared `inner` with `stack`.
    pub fn from_arc(inner: Arc<S>, stack: MiddlewareStack) -> Self {
        let service = (!stack.is_empty()).then(|| stack.wrap(endpoint(inner.clone())));
        Layered {
            inner,
            stack,
            service,
        }
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

    fn handle_request(
        self: Arc<Self>,
        request: Request,
    ) -> impl Future<Output = HandlerResult> + Send + 'static {
        self.handle(request).map(reply_object)
    }

    fn handle(
        self: Arc<Self>,
        request: Request,
    ) -> impl Future<Output = ReplyResult> + Send + 'static {
        match &self.service {
            Some(service) => Either::Left(serve(service, request)),
            // No layer: the inner service's own way.
            None => Either::Right(self.inner.clone().handle(request)),
        }
    }

    fn handle_notification(
        self: Arc<Self>,
        notification: Notification,
    ) -> impl Future<Output = ()> + Send + 'static {
        self.inner.clone().handle_notification(notification)
    }

    fn notify(
        self: Arc<Self>,
        notification: Notification,
    ) -> impl Future<Output = ()> + Send + 'static {
        match &self.service {
            Some(service) => Either::Left(notify(service, notification)),
            None => Either::Right(self.inner.clone().notify(notification)),
        }
    }

    fn on_initialized(&self, peer: Peer, version: ProtocolVersion) {
        self.stack.session_started(&peer, version);
        self.inner.on_initialized(peer, version)
    }

    fn outgoing_observer(&self) -> Option<Arc<dyn OutgoingObserver>> {
        self.stack
            .outgoing()
            .cloned()
            .or_else(|| self.inner.outgoing_observer())
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

/// A reply read as an object (the ordinary handlers' answer).
pub fn reply_object(reply: ReplyResult) -> HandlerResult {
    reply?.into_object().map_err(|e| {
        tessera_types::ErrorObject::internal(format!("Internal error: a result does not read: {e}"))
    })
}
