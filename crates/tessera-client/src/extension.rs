//! [`ClientExtension`]: a protocol extension on the client side.
//!
//! A client declares the extensions it supports in `capabilities.extensions`
//! (in `initialize` for legacy servers, in the capabilities sent with every
//! 2026-07-28 request). An extension routes its own server-to-client
//! requests (legacy requests and 2026-07-28 input requests go to the same
//! route) and notifications with typed params ([`ClientRoutes`]). Register
//! one with [`ClientBuilder::extension`](crate::ClientBuilder::extension), or
//! only declare settings with
//! [`ClientBuilder::declare_extension`](crate::ClientBuilder::declare_extension).
//!
//! The server's declaration is read with [`Client::server_extension`];
//! extension requests are sent with [`Client::request`] or
//! [`Client::request_raw`].
//!
//! ```
//! use serde::{Deserialize, Serialize};
//! use tessera_client::{Client, ClientExtension, ClientRoutes};
//!
//! /// `com.example/ping-back`: the server may ask `pingback/echo`.
//! struct PingBack;
//!
//! #[derive(Deserialize)]
//! struct Echo {
//!     text: String,
//! }
//!
//! #[derive(Serialize)]
//! struct Echoed {
//!     text: String,
//! }
//!
//! impl ClientExtension for PingBack {
//!     fn id(&self) -> &str {
//!         "com.example/ping-back"
//!     }
//!     fn routes(&self, routes: &mut ClientRoutes) {
//!         routes.method("pingback/echo", |p: Echo| async move { Ok(Echoed { text: p.text }) });
//!     }
//! }
//!
//! let builder = Client::builder("demo", "1.0").extension(PingBack);
//! # let _ = builder;
//! ```

use std::future::Future;
use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;
use tessera_runtime::BoxFuture;
use tessera_types::{
    DeclaredSettings, ErrorObject, ExtensionSettings, ExtensionSettingsError, JsonObject,
    decode_object_params, encode_params,
};

use crate::client::Client;

/// A protocol extension a [`Client`] supports. Every method but
/// [`id`](ClientExtension::id) has a default that does nothing.
pub trait ClientExtension: Send + Sync + 'static {
    /// The identifier declared under `capabilities.extensions`.
    fn id(&self) -> &str;

    /// The settings declared under the identifier (`{}` by default).
    fn settings(&self) -> DeclaredSettings {
        DeclaredSettings::default()
    }

    /// Adds the server-to-client requests and the notifications the
    /// extension takes (called once, when it is registered). Notifications
    /// still reach [`Client::events`] too.
    fn routes(&self, routes: &mut ClientRoutes) {
        let _ = routes;
    }
}

/// An answer to a server-to-client request.
type RequestFn =
    dyn Fn(Option<JsonObject>) -> BoxFuture<'static, Result<JsonObject, ErrorObject>> + Send + Sync;

/// A notification handler.
type NotifyFn = dyn Fn(Option<&JsonObject>) + Send + Sync;

/// The server-to-client requests and notifications a [`ClientExtension`]
/// takes, with typed params: a request's params that do not decode are
/// answered `-32602` naming the method before the handler runs; a
/// notification's are logged and dropped.
#[derive(Default)]
pub struct ClientRoutes {
    requests: Vec<(String, Arc<RequestFn>)>,
    notifications: Vec<(String, Arc<NotifyFn>)>,
}

impl std::fmt::Debug for ClientRoutes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientRoutes")
            .field(
                "requests",
                &self.requests.iter().map(|(m, _)| m).collect::<Vec<_>>(),
            )
            .field(
                "notifications",
                &self
                    .notifications
                    .iter()
                    .map(|(m, _)| m)
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl ClientRoutes {
    /// Answers request `R` (a `tessera_types` marker).
    pub fn request<R, F, Fut>(&mut self, handler: F) -> &mut Self
    where
        R: tessera_types::RequestMethod,
        R::Params: Send + 'static,
        R::Result: Send + 'static,
        F: Fn(R::Params) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R::Result, ErrorObject>> + Send + 'static,
    {
        self.method(R::METHOD, handler)
    }

    /// Answers `method` with params decoded into `P` and a result of type
    /// `T` (which must serialize to a JSON object).
    pub fn method<P, T, F, Fut>(&mut self, method: impl Into<String>, handler: F) -> &mut Self
    where
        P: DeserializeOwned + Send + 'static,
        T: Serialize + Send + 'static,
        F: Fn(P) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<T, ErrorObject>> + Send + 'static,
    {
        let method = method.into();
        let name = method.clone();
        let answer = move |params: Option<JsonObject>| -> BoxFuture<'static, Result<JsonObject, ErrorObject>> {
            match decode_object_params::<P>(params.as_ref()) {
                Ok(p) => {
                    let fut = handler(p);
                    Box::pin(async move {
                        let result = fut.await?;
                        encode_params(&result).map_err(|e| {
                            ErrorObject::internal(format!(
                                "Internal error: the result is not a JSON object: {e}"
                            ))
                        })
                    })
                }
                Err(e) => {
                    let e = ErrorObject::invalid_params(format!("Invalid params for {name}: {e}"));
                    Box::pin(std::future::ready(Err(e)))
                }
            }
        };
        self.requests.push((method, Arc::new(answer)));
        self
    }

    /// Takes notification `N` (a `tessera_types` marker).
    pub fn notification<N, F>(&mut self, handler: F) -> &mut Self
    where
        N: tessera_types::NotificationMethod,
        F: Fn(N::Params) + Send + Sync + 'static,
    {
        self.notification_method(N::METHOD, handler)
    }

    /// Takes notification `method` with params decoded into `P`.
    pub fn notification_method<P, F>(&mut self, method: impl Into<String>, handler: F) -> &mut Self
    where
        P: DeserializeOwned,
        F: Fn(P) + Send + Sync + 'static,
    {
        let method = method.into();
        let name = method.clone();
        let take = move |params: Option<&JsonObject>| match decode_object_params::<P>(params) {
            Ok(p) => handler(p),
            Err(e) => tracing::debug!(method = %name, "notification dropped: bad params: {e}"),
        };
        self.notifications.push((method, Arc::new(take)));
        self
    }

    /// The request methods routed so far.
    pub fn request_methods(&self) -> impl Iterator<Item = &str> {
        self.requests.iter().map(|(m, _)| m.as_str())
    }

    /// The notification methods routed so far.
    pub fn notification_methods(&self) -> impl Iterator<Item = &str> {
        self.notifications.iter().map(|(m, _)| m.as_str())
    }
}

/// One request route of a registered extension.
#[derive(Clone)]
struct Route {
    method: String,
    /// The extension's index in [`ClientExtensions::list`].
    ext: usize,
    handler: Arc<RequestFn>,
}

/// The extensions of a client, with their routes.
#[derive(Clone, Default)]
pub(crate) struct ClientExtensions {
    pub list: Vec<Arc<dyn ClientExtension>>,
    requests: Vec<Route>,
    notifications: Vec<(String, Arc<NotifyFn>)>,
}

impl std::fmt::Debug for ClientExtensions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.list.iter().map(|e| e.id().to_owned()))
            .finish()
    }
}

impl ClientExtensions {
    /// Adds one; an identifier or a method registered twice is refused.
    pub fn add(&mut self, ext: Arc<dyn ClientExtension>) -> Result<(), String> {
        let id = ext.id();
        if id.is_empty() {
            return Err("an extension identifier must not be empty".into());
        }
        if self.list.iter().any(|e| e.id() == id) {
            return Err(format!("extension {id} is registered twice"));
        }
        let mut routes = ClientRoutes::default();
        ext.routes(&mut routes);
        for (i, (m, _)) in routes.requests.iter().enumerate() {
            if let Some(other) = self.requests.iter().find(|r| &r.method == m) {
                return Err(format!(
                    "extensions {id} and {} both answer {m}",
                    self.list[other.ext].id()
                ));
            }
            if routes.requests[..i].iter().any(|(o, _)| o == m) {
                return Err(format!("extension {id} routes {m} twice"));
            }
        }
        let ext_index = self.list.len();
        self.requests
            .extend(routes.requests.into_iter().map(|(method, handler)| Route {
                method,
                ext: ext_index,
                handler,
            }));
        self.notifications.extend(routes.notifications);
        self.list.push(ext);
        Ok(())
    }

    /// The route answering `method`.
    pub fn serving(&self, method: &str) -> Option<Arc<RequestFn>> {
        self.requests
            .iter()
            .find(|r| r.method == method)
            .map(|r| r.handler.clone())
    }

    /// Every method the extensions answer.
    pub fn methods(&self) -> Vec<String> {
        self.requests.iter().map(|r| r.method.clone()).collect()
    }

    /// Hands a notification to the extensions that take it.
    pub fn notify(&self, method: &str, params: Option<&JsonObject>) {
        for (m, h) in &self.notifications {
            if m == method {
                h(params);
            }
        }
    }
}

impl Client {
    /// The settings of extension `E` as the server declared it: `None` when
    /// it did not, `Some(Err(_))` when its settings do not decode.
    pub fn server_extension<E: ExtensionSettings>(
        &self,
    ) -> Option<Result<E, ExtensionSettingsError>> {
        self.connected()
            .server_capabilities
            .extension_settings::<E>()
    }

    /// Whether the server declared extension `id`.
    pub fn server_declares_extension(&self, id: &str) -> bool {
        self.connected().server_capabilities.has_extension(id)
    }
}
