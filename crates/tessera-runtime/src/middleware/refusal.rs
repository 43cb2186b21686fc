//! [`Refusal`]: a layer's "no", with the JSON-RPC error every transport can
//! send and, optionally, the HTTP answer an HTTP transport gives instead;
//! [`MessageScope`]: what the requests of one transport message share (where a
//! refusal is recorded for the transport to read); [`RequestLayers`]: layers
//! a transport attaches to the requests it hands over.

use std::any::{Any, TypeId};
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use tessera_types::{ErrorObject, RequestId};

use super::MiddlewareStack;
use crate::service::Request;

/// How an HTTP transport answers a refused request: a status, headers, and
/// a body (when `None`, the JSON-RPC error response, as JSON).
#[derive(Debug, Clone)]
pub struct HttpRefusal {
    /// The status (`403`, `429`, …).
    pub status: StatusCode,
    /// Headers to send (`WWW-Authenticate`, `Retry-After`, …).
    pub headers: HeaderMap,
    /// The body; `None` sends the JSON-RPC error response.
    pub body: Option<Bytes>,
}

/// A layer's refusal of a request.
///
/// Every transport sends [`Refusal::error`] as the request's JSON-RPC error
/// (stdio, a stream already open). An HTTP transport that has not committed
/// its response yet answers the whole HTTP request with the
/// [`HttpRefusal`] instead, when there is one: `403` with a
/// `WWW-Authenticate` challenge for a missing OAuth scope, `429` with
/// `Retry-After` for a busy server. Build one with [`Refusal::new`] and the
/// `http_*` methods, and answer with [`Refusal::reject`]:
///
/// ```
/// use http::StatusCode;
/// use tessera_runtime::middleware::{Next, Refusal};
/// use tessera_runtime::{ReplyResult, Request};
/// use tessera_types::ErrorObject;
///
/// async fn closed(request: Request, _next: Next) -> ReplyResult {
///     Refusal::new(ErrorObject::internal("Closed for maintenance"))
///         .http_status(StatusCode::SERVICE_UNAVAILABLE)
///         .http_header(http::header::RETRY_AFTER, "60")
///         .reject(&request)
/// }
/// ```
#[derive(Clone)]
pub struct Refusal {
    error: ErrorObject,
    id: Option<RequestId>,
    http: Option<HttpRefusal>,
    detail: Option<Arc<dyn Any + Send + Sync>>,
}

impl std::fmt::Debug for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Refusal")
            .field("error", &self.error)
            .field("id", &self.id)
            .field("http", &self.http)
            .field("detail", &self.detail.is_some())
            .finish()
    }
}

impl Refusal {
    /// A refusal answered with `error` (and no HTTP mapping yet: over HTTP,
    /// the error rides in the usual response).
    pub fn new(error: ErrorObject) -> Self {
        Refusal {
            error,
            id: None,
            http: None,
            detail: None,
        }
    }

    /// Over HTTP, answer with `status` (the body is the JSON-RPC error
    /// unless [`Refusal::http_body`] sets one).
    pub fn http_status(mut self, status: StatusCode) -> Self {
        self.http_mut().status = status;
        self
    }

    /// Over HTTP, send this header too (an invalid value is left out).
    pub fn http_header(mut self, name: HeaderName, value: impl AsRef<str>) -> Self {
        if let Ok(v) = HeaderValue::from_str(value.as_ref()) {
            self.http_mut().headers.append(name, v);
        }
        self
    }

    /// Over HTTP, send `body` with this `Content-Type` instead of the
    /// JSON-RPC error.
    pub fn http_body(mut self, content_type: &'static str, body: impl Into<Bytes>) -> Self {
        let h = self.http_mut();
        h.headers.insert(
            http::header::CONTENT_TYPE,
            HeaderValue::from_static(content_type),
        );
        h.body = Some(body.into());
        self
    }

    /// Attaches a value a later layer can read back with
    /// [`Refusal::detail`] (to combine its refusal of another request of
    /// the same frame with this one).
    pub fn with_detail<T: Any + Send + Sync>(mut self, detail: T) -> Self {
        self.detail = Some(Arc::new(detail));
        self
    }

    fn http_mut(&mut self) -> &mut HttpRefusal {
        self.http.get_or_insert_with(|| HttpRefusal {
            status: StatusCode::BAD_REQUEST,
            headers: HeaderMap::new(),
            body: None,
        })
    }

    /// The JSON-RPC error.
    pub fn error(&self) -> &ErrorObject {
        &self.error
    }

    /// The id of the request refused (set by [`Refusal::reject`]).
    pub fn request_id(&self) -> Option<&RequestId> {
        self.id.as_ref()
    }

    /// The HTTP answer, if the refusal has one.
    pub fn http(&self) -> Option<&HttpRefusal> {
        self.http.as_ref()
    }

    /// The value attached with [`Refusal::with_detail`], if it is a `T`.
    pub fn detail<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.detail.as_ref()?.downcast_ref::<T>()
    }

    /// Refuses `request`: records the refusal in the request's [`MessageScope`]
    /// (where an HTTP transport finds it) and returns the JSON-RPC error
    /// for the layer to answer with.
    pub fn reject<T>(mut self, request: &Request) -> Result<T, ErrorObject> {
        let error = self.error.clone();
        self.id = Some(request.id.clone());
        if let Some(frame) = request.message_scope() {
            frame.refuse(self);
        }
        Err(error)
    }

    /// The refusal of the request with this id.
    pub(super) fn for_request(mut self, id: RequestId) -> Self {
        self.id = Some(id);
        self
    }
}

/// Made for every message: small, and nothing allocated until a layer
/// refuses or leaves a note (a message has few notes: a list, no hashing).
#[derive(Default)]
struct MessageScopeState {
    refusal: Option<Box<Refusal>>,
    notes: Vec<(TypeId, Box<dyn Any + Send>)>,
}

/// What the requests of one transport message (an HTTP POST: one request or
/// a JSON-RPC batch) share: the refusal a layer recorded for the transport,
/// and notes layers leave for the other requests of the message. A transport
/// that can answer a refusal itself puts a fresh one into each message's
/// [`Extensions`](crate::Extensions); the layers of a batch's requests run
/// in message order.
#[derive(Clone, Default)]
pub struct MessageScope(Arc<Mutex<MessageScopeState>>);

impl std::fmt::Debug for MessageScope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MessageScope")
            .field("refused", &self.refused())
            .finish()
    }
}

impl MessageScope {
    /// A frame with nothing recorded.
    pub fn new() -> Self {
        MessageScope::default()
    }

    fn state(&self) -> std::sync::MutexGuard<'_, MessageScopeState> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records a refusal; it replaces an earlier one of the same frame (a
    /// layer that refuses several requests of a batch combines them itself,
    /// reading the earlier one with [`MessageScope::refusal`]).
    pub fn refuse(&self, refusal: Refusal) {
        self.state().refusal = Some(Box::new(refusal));
    }

    /// The refusal recorded, if any.
    pub fn refusal(&self) -> Option<Refusal> {
        self.state().refusal.as_deref().cloned()
    }

    /// Whether a request of this frame was refused.
    pub fn refused(&self) -> bool {
        self.state().refusal.is_some()
    }

    /// Runs `f` on this frame's note of type `T` (created with `T::default()`
    /// on first use).
    pub fn note<T: Any + Send + Default, R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        let mut state = self.state();
        let key = TypeId::of::<T>();
        let at = match state.notes.iter().position(|(k, _)| *k == key) {
            Some(at) => at,
            None => {
                state.notes.push((key, Box::new(T::default())));
                state.notes.len() - 1
            }
        };
        match state.notes[at].1.downcast_mut::<T>() {
            Some(t) => f(t),
            // The list is keyed by the type: unreachable, but harmless.
            None => f(&mut T::default()),
        }
    }
}

/// Layers a transport (or an outer tower layer such as `tessera-auth`'s
/// bearer layer) attaches to the requests it hands over, in their
/// [`Extensions`](crate::Extensions): the connection core runs them around
/// the service (and its own layers) for those requests only. This is how a
/// rule that belongs to the transport's configuration (the OAuth scopes of
/// a protected endpoint) is checked at the MCP level, on the request the
/// core already decoded.
#[derive(Debug, Clone, Default)]
pub struct RequestLayers(pub MiddlewareStack);

impl Request {
    /// The [`MessageScope`] the transport attached to this request's message, if any.
    pub fn message_scope(&self) -> Option<&MessageScope> {
        self.extensions.get::<MessageScope>()
    }
}
