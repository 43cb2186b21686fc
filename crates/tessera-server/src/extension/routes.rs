//! [`ExtensionRoutes`]: the typed requests and notifications an extension
//! serves.
//!
//! A route decodes its params from the request's JSON text into the
//! handler's type (a mismatch is `-32602` naming the method, before the
//! handler runs) and writes the handler's result straight to JSON text: no
//! JSON tree is built on the way in or out.

use std::future::Future;
use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;
use tessera_proto::{RawResult, Reply, ResultShape};
use tessera_runtime::{BoxFuture, Notification, Peer, ReplyResult};
use tessera_types::{Era, ErrorObject, decode_object_params, decode_params};

use super::request::ExtensionRequest;

/// A request handler with its params decoded and its result written.
pub(crate) type RouteFn = dyn Fn(ExtensionRequest) -> BoxFuture<'static, ReplyResult> + Send + Sync;

/// A notification handler with its params decoded.
pub(crate) type NotifyFn = dyn Fn(Notification) -> BoxFuture<'static, ()> + Send + Sync;

/// One request route.
#[derive(Clone)]
pub(crate) struct Route {
    pub method: String,
    /// The era it serves (every era when `None`).
    pub era: Option<Era>,
    pub handler: Arc<RouteFn>,
}

/// One notification route.
#[derive(Clone)]
pub(crate) struct NotificationRoute {
    pub method: String,
    pub handler: Arc<NotifyFn>,
}

/// The requests and notifications an extension serves, filled in by
/// [`ServerExtension::routes`](super::ServerExtension::routes).
///
/// Requests are routed by a typed marker of `tessera_types` (its method,
/// params and result types: [`request`](ExtensionRoutes::request)) or by a
/// method name with the params and result types of the handler
/// ([`method`](ExtensionRoutes::method)). Params absent from a request
/// decode like `{}`, so a params type whose fields are all optional (or a
/// struct with none) accepts them.
#[derive(Default)]
pub struct ExtensionRoutes {
    pub(crate) requests: Vec<Route>,
    pub(crate) notifications: Vec<NotificationRoute>,
}

impl std::fmt::Debug for ExtensionRoutes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExtensionRoutes")
            .field(
                "requests",
                &self.requests.iter().map(|r| &r.method).collect::<Vec<_>>(),
            )
            .field(
                "notifications",
                &self
                    .notifications
                    .iter()
                    .map(|n| &n.method)
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl ExtensionRoutes {
    /// The request methods routed so far, each with the era it is limited
    /// to (`None`: every era).
    pub fn request_methods(&self) -> impl Iterator<Item = (&str, Option<Era>)> {
        self.requests.iter().map(|r| (r.method.as_str(), r.era))
    }

    /// The notification methods routed so far.
    pub fn notification_methods(&self) -> impl Iterator<Item = &str> {
        self.notifications.iter().map(|n| n.method.as_str())
    }

    /// Serves request `R` (a `tessera_types` marker) in every era.
    pub fn request<R, F, Fut>(&mut self, handler: F) -> &mut Self
    where
        R: tessera_types::RequestMethod,
        R::Params: Send + 'static,
        R::Result: Send + 'static,
        F: Fn(ExtensionRequest, R::Params) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R::Result, ErrorObject>> + Send + 'static,
    {
        self.add(R::METHOD.to_owned(), None, handler)
    }

    /// Serves request `R` to requests of `era` only; the other eras' requests
    /// of the same name go to the core (the 2026-07-28 tasks extension's
    /// `tasks/get` is also a 2025-11-25 core method).
    pub fn request_in<R, F, Fut>(&mut self, era: Era, handler: F) -> &mut Self
    where
        R: tessera_types::RequestMethod,
        R::Params: Send + 'static,
        R::Result: Send + 'static,
        F: Fn(ExtensionRequest, R::Params) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R::Result, ErrorObject>> + Send + 'static,
    {
        self.add(R::METHOD.to_owned(), Some(era), handler)
    }

    /// Serves `method` in every era, with params decoded into `P` and a
    /// result of type `T` (which must serialize to a JSON object).
    pub fn method<P, T, F, Fut>(&mut self, method: impl Into<String>, handler: F) -> &mut Self
    where
        P: DeserializeOwned + Send + 'static,
        T: Serialize + Send + 'static,
        F: Fn(ExtensionRequest, P) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<T, ErrorObject>> + Send + 'static,
    {
        self.add(method.into(), None, handler)
    }

    /// Serves `method` to requests of `era` only, like
    /// [`method`](ExtensionRoutes::method).
    pub fn method_in<P, T, F, Fut>(
        &mut self,
        era: Era,
        method: impl Into<String>,
        handler: F,
    ) -> &mut Self
    where
        P: DeserializeOwned + Send + 'static,
        T: Serialize + Send + 'static,
        F: Fn(ExtensionRequest, P) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<T, ErrorObject>> + Send + 'static,
    {
        self.add(method.into(), Some(era), handler)
    }

    /// Takes notification `N` (a `tessera_types` marker). Params that do
    /// not decode are logged and dropped: a notification has no answer.
    pub fn notification<N, F, Fut>(&mut self, handler: F) -> &mut Self
    where
        N: tessera_types::NotificationMethod,
        N::Params: Send + 'static,
        F: Fn(N::Params, Peer) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.notification_method(N::METHOD, handler)
    }

    /// Takes notification `method` with params decoded into `P`.
    pub fn notification_method<P, F, Fut>(
        &mut self,
        method: impl Into<String>,
        handler: F,
    ) -> &mut Self
    where
        P: DeserializeOwned + Send + 'static,
        F: Fn(P, Peer) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let handler = move |n: Notification| -> BoxFuture<'static, ()> {
            match decode_object_params::<P>(n.params.as_ref()) {
                Ok(p) => Box::pin(handler(p, n.peer)),
                Err(e) => {
                    tracing::debug!(method = %n.method, "notification dropped: bad params: {e}");
                    Box::pin(async {})
                }
            }
        };
        self.notifications.push(NotificationRoute {
            method: method.into(),
            handler: Arc::new(handler),
        });
        self
    }

    fn add<P, T, F, Fut>(&mut self, method: String, era: Option<Era>, handler: F) -> &mut Self
    where
        P: DeserializeOwned + Send + 'static,
        T: Serialize + Send + 'static,
        F: Fn(ExtensionRequest, P) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<T, ErrorObject>> + Send + 'static,
    {
        let handler = move |request: ExtensionRequest| -> BoxFuture<'static, ReplyResult> {
            match decode_params::<P>(request.request.params.as_ref()) {
                Ok(params) => {
                    let shape = request.request.context.result_shape.clone();
                    let answer = handler(request, params);
                    Box::pin(async move { write_result(&answer.await?, shape.as_ref()) })
                }
                Err(e) => {
                    let e = ErrorObject::invalid_params(format!(
                        "Invalid params for {}: {e}",
                        request.method()
                    ));
                    Box::pin(std::future::ready(Err(e)))
                }
            }
        };
        self.requests.push(Route {
            method,
            era,
            handler: Arc::new(handler),
        });
        self
    }
}

/// A route's result as JSON text; with the request's `shape` (2026-07-28,
/// not in a batch) written with what the engine adds in front of its
/// members (or as the tree the engine would read it into), as
/// [`crate::server::typed_reply`] does.
pub(crate) fn write_result<T: Serialize>(result: &T, shape: Option<&ResultShape>) -> ReplyResult {
    if let Some(reply) = shape.and_then(|shape| crate::server::shaped_reply(result, shape)) {
        return Ok(reply);
    }
    let text = serde_json::value::to_raw_value(result).map_err(|e| {
        ErrorObject::internal(format!(
            "Internal error: the result does not serialize: {e}"
        ))
    })?;
    RawResult::new(text)
        .map(Reply::Raw)
        .ok_or_else(|| ErrorObject::internal("Internal error: a result must be a JSON object"))
}
