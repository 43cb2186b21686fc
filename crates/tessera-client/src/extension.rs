//! [`ClientExtension`]: a protocol extension on the client side.
//!
//! A client declares the extensions it supports in `capabilities.extensions`
//! (in `initialize` for legacy servers, in the capabilities sent with every
//! 2026-07-28 request). An extension may answer its own server-to-client
//! requests (legacy requests and 2026-07-28 input requests go to the same
//! handler) and take its own notifications. Register one with
//! [`ClientBuilder::extension`](crate::ClientBuilder::extension), or only
//! declare settings with
//! [`ClientBuilder::declare_extension`](crate::ClientBuilder::declare_extension).
//!
//! The server's declaration is read with [`Client::server_extension`];
//! extension requests are sent with [`Client::request`] or
//! [`Client::request_raw`].
//!
//! ```
//! use tessera_client::{Client, ClientExtension};
//! use tessera_runtime::BoxFuture;
//! use tessera_types::{ErrorObject, JsonObject};
//!
//! /// `com.example/ping-back`: the server may ask `pingback/echo`.
//! struct PingBack;
//!
//! impl ClientExtension for PingBack {
//!     fn id(&self) -> &str {
//!         "com.example/ping-back"
//!     }
//!     fn methods(&self) -> Vec<String> {
//!         vec!["pingback/echo".into()]
//!     }
//!     fn handle_request(
//!         &self,
//!         _method: &str,
//!         params: Option<JsonObject>,
//!     ) -> BoxFuture<'static, Result<JsonObject, ErrorObject>> {
//!         Box::pin(async move { Ok(params.unwrap_or_default()) })
//!     }
//! }
//!
//! let builder = Client::builder("demo", "1.0").extension(PingBack);
//! # let _ = builder;
//! ```

use std::sync::Arc;

use tessera_runtime::BoxFuture;
use tessera_types::{ErrorObject, ExtensionSettings, ExtensionSettingsError, JsonObject};

use crate::client::Client;

/// A protocol extension a [`Client`] supports. Every method but
/// [`id`](ClientExtension::id) has a default that does nothing.
pub trait ClientExtension: Send + Sync + 'static {
    /// The identifier declared under `capabilities.extensions`.
    fn id(&self) -> &str;

    /// The settings declared under the identifier (`{}` by default).
    fn settings(&self) -> JsonObject {
        JsonObject::new()
    }

    /// The server-to-client request methods the extension answers.
    fn methods(&self) -> Vec<String> {
        Vec::new()
    }

    /// Answers one of [`methods`](ClientExtension::methods).
    fn handle_request(
        &self,
        method: &str,
        params: Option<JsonObject>,
    ) -> BoxFuture<'static, Result<JsonObject, ErrorObject>> {
        let method = method.to_owned();
        let _ = params;
        Box::pin(async move { Err(ErrorObject::method_not_found(&method)) })
    }

    /// The notifications the extension takes (they still reach
    /// [`Client::events`] too).
    fn notifications(&self) -> Vec<String> {
        Vec::new()
    }

    /// Takes one of [`notifications`](ClientExtension::notifications).
    fn handle_notification(&self, method: &str, params: Option<&JsonObject>) {
        let _ = (method, params);
    }
}

/// The extensions of a client.
#[derive(Clone, Default)]
pub(crate) struct ClientExtensions {
    pub list: Vec<Arc<dyn ClientExtension>>,
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
        for m in ext.methods() {
            if let Some(other) = self.serving(&m) {
                return Err(format!(
                    "extensions {id} and {} both answer {m}",
                    other.id()
                ));
            }
        }
        self.list.push(ext);
        Ok(())
    }

    /// The extension that answers `method`.
    pub fn serving(&self, method: &str) -> Option<&Arc<dyn ClientExtension>> {
        self.list
            .iter()
            .find(|e| e.methods().iter().any(|m| m == method))
    }

    /// Every method the extensions answer.
    pub fn methods(&self) -> Vec<String> {
        self.list.iter().flat_map(|e| e.methods()).collect()
    }

    /// Hands a notification to the extensions that take it.
    pub fn notify(&self, method: &str, params: Option<&JsonObject>) {
        for e in &self.list {
            if e.notifications().iter().any(|m| m == method) {
                e.handle_notification(method, params);
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
