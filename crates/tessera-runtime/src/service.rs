//! The application side of a connection: what handles the peer's requests
//! and notifications.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use tessera_proto::{IncomingRequest, Reply, RequestInfo};
use tessera_types::{ErrorObject, JsonObject, Params, ProtocolVersion, RequestId};
use tokio_util::sync::CancellationToken;

use crate::peer::Peer;

/// A boxed, sendable future.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a request handler returns: a result object or a JSON-RPC error.
pub type HandlerResult = Result<JsonObject, ErrorObject>;

/// What a handler that may pass a result on as JSON text returns (see
/// [`Service::handle`]).
pub type ReplyResult = Result<Reply, ErrorObject>;

/// Handles what the peer sends. Requests run concurrently, each in its own
/// handler; notifications are handed over one at a time, in arrival order.
///
/// The handling methods take the service by `Arc` (the connection holds it
/// so) and return a future that borrows nothing, so they can be written as
/// `async fn`:
///
/// ```
/// use std::sync::Arc;
/// use tessera_runtime::{HandlerResult, Request, Service};
/// use tessera_types::{ErrorObject, JsonObject};
///
/// struct Echo;
///
/// impl Service for Echo {
///     fn methods(&self) -> Vec<String> {
///         vec!["echo".into()]
///     }
///     async fn handle_request(self: Arc<Self>, request: Request) -> HandlerResult {
///         match request.method.as_str() {
///             "echo" => Ok(JsonObject::new()),
///             other => Err(ErrorObject::method_not_found(other)),
///         }
///     }
/// }
/// ```
///
/// The connection keeps each request's future in one allocation of its own
/// (none more when the future is a [`BoxFuture`] already); a service boxes
/// nothing itself.
pub trait Service: Send + Sync + 'static {
    /// The request methods this service handles (beyond the lifecycle methods
    /// the engine answers itself). Anything else gets `-32601`.
    fn methods(&self) -> Vec<String>;

    /// Handles one request. `request.cancellation()` fires when the peer
    /// cancels it; the answer to a cancelled request is never sent.
    fn handle_request(
        self: Arc<Self>,
        request: Request,
    ) -> impl Future<Output = HandlerResult> + Send + 'static;

    /// Handles one request, answering with a [`Reply`]; this is what a
    /// connection calls. The default runs [`Service::handle_request`] and
    /// answers with its object. A service that passes on results it does
    /// not read (a proxy) answers some requests with a [`Reply::Raw`] result
    /// instead, which is written without being parsed and serialised again.
    /// Requests that go through middleware the transport attached
    /// ([`RequestLayers`](crate::middleware::RequestLayers)) reach this
    /// method through the layers, which may read and rewrite results.
    ///
    /// What this method does before its future is first polled runs when
    /// the request is taken in (a layer's refusal is recorded then, for
    /// example); an `async fn` does everything on the first poll.
    fn handle(
        self: Arc<Self>,
        request: Request,
    ) -> impl Future<Output = ReplyResult> + Send + 'static {
        let answer = self.handle_request(request);
        async move { answer.await.map(Reply::Object) }
    }

    /// Handles one notification meant for the application (never one the
    /// connection core already acted on: see
    /// [`Notification::handled_by_core`]). The default ignores it.
    fn handle_notification(
        self: Arc<Self>,
        notification: Notification,
    ) -> impl Future<Output = ()> + Send + 'static {
        let _ = notification;
        std::future::ready(())
    }

    /// Takes in one notification; this is what a connection calls, for
    /// every notification the peer sends. The default hands those meant for
    /// the application to [`Service::handle_notification`]. A service with
    /// middleware runs the notification through it first
    /// ([`middleware::notify`](crate::middleware::notify)).
    fn notify(
        self: Arc<Self>,
        notification: Notification,
    ) -> impl Future<Output = ()> + Send + 'static {
        let taken = (!notification.handled_by_core).then(|| self.handle_notification(notification));
        async move {
            if let Some(taken) = taken {
                taken.await;
            }
        }
    }

    /// Called when a legacy client completes the handshake (server role).
    fn on_initialized(&self, peer: Peer, version: ProtocolVersion) {
        let _ = (peer, version);
    }

    /// Who is told of the requests sent on this service's connections
    /// ([`crate::outgoing`]): asked once per connection, when it is made.
    /// `None` (the default) leaves them to the process-wide observer.
    fn outgoing_observer(&self) -> Option<Arc<dyn crate::outgoing::OutgoingObserver>> {
        None
    }

    /// What this service keeps about the legacy session of `peer` that must
    /// be stored with it (the `data` of a [`SessionState`](crate::SessionState):
    /// resource subscriptions, for example), by key. Called when the
    /// session's state is exported; after changing such data, a handler calls
    /// [`Peer::session_changed`].
    fn session_data(&self, peer: &Peer) -> JsonObject {
        let _ = peer;
        JsonObject::new()
    }

    /// A legacy session is carried on by this connection from stored state
    /// (it began in another process, or in an engine since dropped), or its
    /// stored state changed elsewhere: `data` is what
    /// [`Service::session_data`] gave, `initialized` whether the client has
    /// sent `notifications/initialized`. Replaces what the service keeps
    /// about the session (it may be called more than once per connection).
    fn on_restored(
        &self,
        peer: Peer,
        version: ProtocolVersion,
        initialized: bool,
        data: &JsonObject,
    ) {
        let _ = (peer, version, initialized, data);
    }
}

/// A request from the peer, with what a handler needs to act on it.
#[derive(Debug, Clone)]
pub struct Request {
    /// The request id.
    pub id: RequestId,
    /// The method.
    pub method: String,
    /// The params, as they came (text until read; see [`Params`]).
    pub params: Option<Params>,
    /// Era, version, peer capabilities, `_meta`.
    pub context: RequestInfo,
    /// The connection, for progress, logs and requests back to the peer.
    pub peer: Peer,
    /// Fires when the peer cancels this request or the connection closes.
    pub cancel: CancellationToken,
    /// What the transport attached to this request (HTTP headers, claims…).
    pub extensions: crate::Extensions,
}

impl Request {
    pub(crate) fn new(
        r: IncomingRequest,
        peer: Peer,
        cancel: CancellationToken,
        extensions: crate::Extensions,
    ) -> Self {
        Request {
            id: r.id,
            method: r.method,
            params: r.params,
            context: r.context,
            peer,
            cancel,
            extensions,
        }
    }

    /// The cancellation token of this request.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }

    /// Reports progress (sent only if the caller gave a progress token, and only
    /// while the request is in progress; values must increase).
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        self.peer
            .progress(self.id.clone(), progress, total, message);
    }
}

/// A notification from the peer.
#[derive(Debug, Clone)]
pub struct Notification {
    /// The method.
    pub method: String,
    /// The params.
    pub params: Option<JsonObject>,
    /// The protocol version the connection speaks, once known: the version
    /// a legacy handshake settled on, or (client role) the version the
    /// connection turned out to speak. `None` before the handshake and for
    /// a 2026-07-28 server, where the version belongs to each request.
    pub version: Option<ProtocolVersion>,
    /// The connection.
    pub peer: Peer,
    /// What the transport attached to the message that carried this
    /// notification (HTTP headers, claims…).
    pub extensions: crate::Extensions,
    /// Whether the connection core already acted on this notification
    /// itself (`notifications/cancelled`, the server's
    /// `notifications/initialized`, the `notifications/progress` of a request
    /// in flight). Such a notification goes through the middleware, so
    /// layers see every notification, but no application handler gets it.
    pub handled_by_core: bool,
}

/// What the peer sends that the middleware sees: a request (answered) or a
/// notification (never answered).
#[derive(Debug, Clone)]
// Requests are the hot path: boxing one would cost an allocation per call,
// for a value moved a few times down the stack.
#[allow(clippy::large_enum_variant)]
pub enum Message {
    /// A request: its answer is written back to the peer.
    Request(Request),
    /// A notification: it gets no answer; whatever the middleware answers
    /// it with (a result or an error) is dropped.
    Notification(Notification),
}

impl From<Request> for Message {
    fn from(r: Request) -> Self {
        Message::Request(r)
    }
}

impl From<Notification> for Message {
    fn from(n: Notification) -> Self {
        Message::Notification(n)
    }
}

/// A service that serves nothing (every request gets `-32601`).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoService;

impl Service for NoService {
    fn methods(&self) -> Vec<String> {
        Vec::new()
    }
    async fn handle_request(self: Arc<Self>, request: Request) -> HandlerResult {
        Err(ErrorObject::method_not_found(&request.method))
    }
}

impl<S: Service> Service for Arc<S> {
    fn methods(&self) -> Vec<String> {
        (**self).methods()
    }
    fn handle_request(
        self: Arc<Self>,
        request: Request,
    ) -> impl Future<Output = HandlerResult> + Send + 'static {
        S::handle_request(Arc::clone(&*self), request)
    }
    fn handle(
        self: Arc<Self>,
        request: Request,
    ) -> impl Future<Output = ReplyResult> + Send + 'static {
        S::handle(Arc::clone(&*self), request)
    }
    fn handle_notification(
        self: Arc<Self>,
        notification: Notification,
    ) -> impl Future<Output = ()> + Send + 'static {
        S::handle_notification(Arc::clone(&*self), notification)
    }
    fn notify(
        self: Arc<Self>,
        notification: Notification,
    ) -> impl Future<Output = ()> + Send + 'static {
        S::notify(Arc::clone(&*self), notification)
    }
    fn on_initialized(&self, peer: Peer, version: ProtocolVersion) {
        (**self).on_initialized(peer, version)
    }
    fn outgoing_observer(&self) -> Option<Arc<dyn crate::outgoing::OutgoingObserver>> {
        (**self).outgoing_observer()
    }
    fn session_data(&self, peer: &Peer) -> JsonObject {
        (**self).session_data(peer)
    }
    fn on_restored(
        &self,
        peer: Peer,
        version: ProtocolVersion,
        initialized: bool,
        data: &JsonObject,
    ) {
        (**self).on_restored(peer, version, initialized, data)
    }
}

/// `future` as a [`BoxFuture`], for a connection to keep beside others of
/// other types: boxed once, or taken as it is when it is a [`BoxFuture`]
/// already (a service whose handlers are type-erased returns one), so no
/// request costs two allocations here.
pub(crate) fn boxed<T: 'static>(
    future: impl Future<Output = T> + Send + 'static,
) -> BoxFuture<'static, T> {
    let mut slot = Some(future);
    let any: &mut dyn std::any::Any = &mut slot;
    if let Some(boxed) = any
        .downcast_mut::<Option<BoxFuture<'static, T>>>()
        .and_then(Option::take)
    {
        return boxed;
    }
    // Not taken above: `slot` still holds the future.
    Box::pin(slot.expect("the future is still in its slot"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_boxed_future_is_kept_in_its_own_box() {
        let answer: BoxFuture<'static, u8> = Box::pin(async { 1 });
        let at = std::ptr::from_ref(&*answer).cast::<()>();
        let kept = boxed(answer);
        assert_eq!(std::ptr::from_ref(&*kept).cast::<()>(), at);
    }

    #[tokio::test]
    async fn any_other_future_is_boxed_and_runs() {
        assert_eq!(boxed(async { 2 }).await, 2);
        assert_eq!(boxed(std::future::ready(3)).await, 3);
    }
}
