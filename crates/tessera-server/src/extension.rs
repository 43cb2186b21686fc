//! [`ServerExtension`]: a protocol extension served next to the core
//! features, without forking the server.
//!
//! An extension has an identifier and settings, which the server declares
//! under `capabilities.extensions` (in the `initialize` result for legacy
//! clients and in `server/discover` for 2026-07-28 ones). It may serve its
//! own request methods (`vendor/method`), take its own notifications,
//! contribute resources (a [`ResourceProvider`]), adjust the rest of the
//! capabilities (an extension that needs `resources` declares it), and add
//! fields to, or filter, the results of other methods. Register one with
//! [`ServerBuilder::extension`](crate::ServerBuilder::extension).
//!
//! What the client declared is read per request with
//! [`RequestContext::client_extension`]: from `initialize` in the legacy
//! era, from the request's own `_meta` capabilities in 2026-07-28.
//!
//! ```
//! use serde::{Deserialize, Serialize};
//! use serde_json::json;
//! use tessera_server::{ExtensionRequest, Server, ServerExtension};
//! use tessera_types::{ErrorObject, ExtensionSettings, JsonObject, settings_object};
//! use tessera_runtime::{BoxFuture, HandlerResult};
//!
//! /// `com.example/clock`: one method, `clock/now`, and a setting.
//! #[derive(Debug, Clone, Default, Serialize, Deserialize)]
//! #[serde(rename_all = "camelCase")]
//! struct ClockSettings {
//!     utc_only: bool,
//! }
//!
//! impl ExtensionSettings for ClockSettings {
//!     const ID: &'static str = "com.example/clock";
//! }
//!
//! struct Clock;
//!
//! impl ServerExtension for Clock {
//!     fn id(&self) -> &str {
//!         ClockSettings::ID
//!     }
//!     fn settings(&self) -> JsonObject {
//!         settings_object(&ClockSettings { utc_only: true })
//!     }
//!     fn methods(&self) -> Vec<String> {
//!         vec!["clock/now".into()]
//!     }
//!     fn handle_request(&self, request: ExtensionRequest) -> BoxFuture<'static, HandlerResult> {
//!         Box::pin(async move {
//!             let mut result = JsonObject::new();
//!             result.insert("now".into(), json!("2026-07-28T00:00:00Z"));
//!             // ttlMs and cacheScope for 2026-07-28 clients, nothing for older ones.
//!             request.cache_hints(&mut result);
//!             Ok(result)
//!         })
//!     }
//! }
//!
//! let server = Server::builder().extension(Clock).build().unwrap();
//! assert!(server.capabilities().has_extension("com.example/clock"));
//! ```

use std::sync::{Arc, Weak};

use serde_json::{Value, json};
use tessera_runtime::{BoxFuture, HandlerResult, Notification, Request};
use tessera_types::{
    Era, ErrorObject, ExtensionSettings, JsonObject, Params, ServerCapabilities, Tool,
};

use crate::context::RequestContext;
use crate::hub::ListKind;
use crate::pagination::Pager;
use crate::resource::ResourceProvider;
use crate::task::hub::TaskHub;

/// A protocol extension a [`Server`](crate::Server) serves. Every method but
/// [`id`](ServerExtension::id) has a default that does nothing.
pub trait ServerExtension: Send + Sync + 'static {
    /// The identifier declared under `capabilities.extensions`.
    fn id(&self) -> &str;

    /// The settings declared under the identifier (`{}` by default).
    fn settings(&self) -> JsonObject {
        JsonObject::new()
    }

    /// Changes the rest of the capabilities (after the core features and
    /// the extension's own entry are declared). An extension that removes
    /// its own entry here is not offered: its methods are not served either.
    fn declare(&self, capabilities: &mut ServerCapabilities) {
        let _ = capabilities;
    }

    /// The request methods the extension serves. Two extensions may not
    /// serve the same method; an extension method takes precedence over a
    /// core method of the same name.
    fn methods(&self) -> Vec<String> {
        Vec::new()
    }

    /// Whether the extension serves its [`methods`](ServerExtension::methods)
    /// to requests of `era` (every era by default). Requests of the other
    /// eras go to the core: for an extension whose method names the core
    /// uses in another protocol version (the 2026-07-28 tasks extension's
    /// `tasks/get` is also a 2025-11-25 core method).
    fn serves(&self, era: Era) -> bool {
        let _ = era;
        true
    }

    /// Serves one of [`methods`](ServerExtension::methods).
    fn handle_request(&self, request: ExtensionRequest) -> BoxFuture<'static, HandlerResult> {
        let method = request.request.method.clone();
        Box::pin(async move { Err(ErrorObject::method_not_found(&method)) })
    }

    /// The notifications the extension takes (others are not shown to it).
    fn notifications(&self) -> Vec<String> {
        Vec::new()
    }

    /// Takes one of [`notifications`](ServerExtension::notifications).
    fn handle_notification(&self, notification: Notification) -> BoxFuture<'static, ()> {
        let _ = notification;
        Box::pin(async {})
    }

    /// Resources the extension serves through the core `resources/*`
    /// methods (listed after the registered ones).
    fn resources(&self) -> Option<Arc<dyn ResourceProvider>> {
        None
    }

    /// The methods whose results [`on_result`](ServerExtension::on_result)
    /// sees (core or other extensions' methods).
    fn result_methods(&self) -> Vec<String> {
        Vec::new()
    }

    /// Adds fields to (or removes entries from) the result of one of
    /// [`result_methods`](ServerExtension::result_methods) before it is sent.
    fn on_result(&self, method: &str, context: &RequestContext, result: &mut JsonObject) {
        let _ = (method, context, result);
    }

    /// The methods (core or other extensions') whose requests
    /// [`check_request`](ServerExtension::check_request) sees first.
    fn guarded_methods(&self) -> Vec<String> {
        Vec::new()
    }

    /// Refuses a request to one of
    /// [`guarded_methods`](ServerExtension::guarded_methods) before any
    /// handler runs (the error is the answer). The params are as they came:
    /// [`Params::name`], [`Params::uri`] and [`Params::meta`] are read once
    /// for everyone; [`Params::decode`] reads a typed form from the text.
    fn check_request(
        &self,
        method: &str,
        context: &RequestContext,
        params: Option<&Params>,
    ) -> Result<(), ErrorObject> {
        let _ = (method, context, params);
        Ok(())
    }

    /// Called once when the server is built, with a handle to announce
    /// changes while serving.
    fn attach(&self, host: ExtensionHost) {
        let _ = host;
    }
}

/// What a server offers its extensions while serving: change
/// announcements to the connected clients.
#[derive(Clone)]
pub struct ExtensionHost {
    pub(crate) notifier: Weak<dyn Notifier>,
}

impl std::fmt::Debug for ExtensionHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExtensionHost")
            .field("serving", &(self.notifier.strong_count() > 0))
            .finish()
    }
}

/// The server's side of an [`ExtensionHost`].
pub(crate) trait Notifier: Send + Sync {
    fn list_changed(&self, kind: ListKind);
    fn resource_updated(&self, uri: &str);
    /// Runs `f` on tool `name`'s definition where it is kept (no copy).
    fn with_tool(&self, name: &str, f: &mut dyn FnMut(&Tool));
    fn task_hub(&self) -> Option<Arc<TaskHub>>;
}

impl ExtensionHost {
    /// A host that is attached to no server (announcements go nowhere);
    /// for tests of an extension on its own.
    pub fn detached() -> Self {
        let none: Weak<dyn Notifier> = Weak::<Detached>::new();
        ExtensionHost { notifier: none }
    }

    /// Tells every client that asked that a list changed (legacy sessions
    /// get `notifications/*/list_changed`; 2026-07-28 listeners get it on
    /// their `subscriptions/listen` stream).
    pub fn list_changed(&self, kind: ListKind) {
        if let Some(n) = self.notifier.upgrade() {
            n.list_changed(kind);
        }
    }

    /// The server's tasks (for the tasks extension), while it is serving.
    pub(crate) fn task_hub(&self) -> Option<Arc<TaskHub>> {
        self.notifier.upgrade()?.task_hub()
    }

    /// The current definition of tool `name`, if the server has it.
    pub fn tool(&self, name: &str) -> Option<Tool> {
        self.inspect_tool(name, Tool::clone)
    }

    /// What `f` reads from tool `name`'s definition, without copying the
    /// definition (for checks that run on every call).
    pub(crate) fn inspect_tool<R>(&self, name: &str, f: impl FnOnce(&Tool) -> R) -> Option<R> {
        let (mut f, mut out) = (Some(f), None);
        self.notifier
            .upgrade()?
            .with_tool(name, &mut |t| out = f.take().map(|f| f(t)));
        out
    }

    /// Tells every client that subscribed to `uri` that it changed.
    pub fn resource_updated(&self, uri: &str) {
        if let Some(n) = self.notifier.upgrade() {
            n.resource_updated(uri);
        }
    }
}

struct Detached;

impl Notifier for Detached {
    fn list_changed(&self, _: ListKind) {}
    fn resource_updated(&self, _: &str) {}
    fn with_tool(&self, _: &str, _: &mut dyn FnMut(&Tool)) {}
    fn task_hub(&self) -> Option<Arc<TaskHub>> {
        None
    }
}

/// A request for one of an extension's methods, with what the server
/// knows about it.
#[derive(Debug)]
pub struct ExtensionRequest {
    /// The request as the connection delivered it.
    pub request: Request,
    pub(crate) context: RequestContext,
    pub(crate) pager: Pager,
    pub(crate) cache_ttl_ms: u64,
    pub(crate) cache_scope: &'static str,
}

impl ExtensionRequest {
    /// The method.
    pub fn method(&self) -> &str {
        &self.request.method
    }

    /// The params, without `_meta` (read it with
    /// [`RequestContext::meta`]) and without the 2026-07-28 round fields
    /// `inputResponses` and `requestState`.
    pub fn params(&self) -> JsonObject {
        let mut p = crate::mrtr::without_round_fields(self.request.params.as_ref())
            .map(tessera_types::Params::into_object)
            .unwrap_or_default();
        p.remove("_meta");
        p
    }

    /// Decodes the params; a mismatch is `-32602` naming the method.
    pub fn decode_params<T: serde::de::DeserializeOwned>(&self) -> Result<T, ErrorObject> {
        serde_json::from_value(Value::Object(self.params())).map_err(|e| {
            ErrorObject::invalid_params(format!("Invalid params for {}: {e}", self.method()))
        })
    }

    /// The optional `cursor` param of a paginated request.
    pub fn cursor(&self) -> Result<Option<String>, ErrorObject> {
        match self.request.params.as_ref().and_then(|p| p.get("cursor")) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(c)) => Ok(Some(c.clone())),
            Some(_) => Err(ErrorObject::invalid_params(
                "Invalid params: cursor must be a string",
            )),
        }
    }

    /// One page of `items` (the server's page size, sealed cursors that
    /// name `list`), and the next cursor.
    pub fn page<T: Clone>(
        &self,
        list: &str,
        items: &[T],
    ) -> Result<(Vec<T>, Option<String>), ErrorObject> {
        let cursor = self.cursor()?;
        self.pager.page(list, items, cursor.as_deref())
    }

    /// What a handler knows about the request: era, version, client
    /// capabilities, progress, logs, cancellation.
    pub fn context(&self) -> &RequestContext {
        &self.context
    }

    /// Sets `ttlMs` and `cacheScope` (the server's settings) on a cacheable
    /// 2026-07-28 result, unless already set; earlier versions get nothing.
    pub fn cache_hints(&self, result: &mut JsonObject) {
        if self.context.era() == Era::Modern {
            result
                .entry("ttlMs")
                .or_insert_with(|| json!(self.cache_ttl_ms));
            result
                .entry("cacheScope")
                .or_insert_with(|| json!(self.cache_scope));
        }
    }
}

/// The extensions of a server, with the method index.
#[derive(Clone, Default)]
pub(crate) struct ExtensionSet {
    pub list: Vec<Arc<dyn ServerExtension>>,
    /// Request method → index in `list`.
    pub methods: Vec<(String, usize)>,
    /// Notification method → indexes in `list`.
    pub notifications: Vec<(String, usize)>,
    /// Result method → indexes in `list`.
    pub results: Vec<(String, usize)>,
    /// Guarded method → indexes in `list`.
    pub guards: Vec<(String, usize)>,
}

impl ExtensionSet {
    /// Adds an extension; a second extension with the same identifier or a
    /// method another extension serves is refused.
    pub fn add(&mut self, ext: Arc<dyn ServerExtension>) -> Result<(), String> {
        let id = ext.id().to_owned();
        if id.is_empty() {
            return Err("an extension identifier must not be empty".into());
        }
        if self.list.iter().any(|e| e.id() == id) {
            return Err(format!("extension {id} is registered twice"));
        }
        let index = self.list.len();
        let methods = ext.methods();
        for m in &methods {
            if let Some((_, other)) = self.methods.iter().find(|(n, _)| n == m) {
                return Err(format!(
                    "extensions {id} and {} both serve {m}",
                    self.list[*other].id()
                ));
            }
        }
        self.methods.extend(methods.into_iter().map(|m| (m, index)));
        self.notifications
            .extend(ext.notifications().into_iter().map(|m| (m, index)));
        self.results
            .extend(ext.result_methods().into_iter().map(|m| (m, index)));
        self.guards
            .extend(ext.guarded_methods().into_iter().map(|m| (m, index)));
        self.list.push(ext);
        Ok(())
    }

    pub fn declare(&self, caps: &mut ServerCapabilities) {
        for e in &self.list {
            caps.extensions
                .get_or_insert_with(Default::default)
                .insert(e.id().to_owned(), e.settings());
        }
        for e in &self.list {
            e.declare(caps);
        }
    }

    /// Whether any extension serves, guards or edits the results of `method`:
    /// when none does, a request goes straight to the core.
    pub fn touches(&self, method: &str) -> bool {
        [&self.methods, &self.guards, &self.results]
            .into_iter()
            .any(|table| table.iter().any(|(m, _)| m == method))
    }

    /// Whether an extension serves `method` or sees its results (guards
    /// only read the request).
    pub fn shapes(&self, method: &str) -> bool {
        [&self.methods, &self.results]
            .into_iter()
            .any(|table| table.iter().any(|(m, _)| m == method))
    }

    /// The extension that serves `method` to a request of `era`, if any.
    pub fn serving(&self, method: &str, era: Era) -> Option<&Arc<dyn ServerExtension>> {
        self.methods
            .iter()
            .find(|(m, _)| m == method)
            .map(|(_, i)| &self.list[*i])
            .filter(|e| e.serves(era))
    }

    pub fn result_hooks(&self, method: &str) -> Vec<Arc<dyn ServerExtension>> {
        self.results
            .iter()
            .filter(|(m, _)| m == method)
            .map(|(_, i)| self.list[*i].clone())
            .collect()
    }

    pub fn guards(&self, method: &str) -> impl Iterator<Item = &Arc<dyn ServerExtension>> {
        self.guards
            .iter()
            .filter(move |(m, _)| m == method)
            .map(|(_, i)| &self.list[*i])
    }

    pub fn notification_takers(&self, method: &str) -> Vec<Arc<dyn ServerExtension>> {
        self.notifications
            .iter()
            .filter(|(m, _)| m == method)
            .map(|(_, i)| self.list[*i].clone())
            .collect()
    }
}

impl RequestContext {
    /// The settings of extension `E` as the client declared it: `None` when
    /// the client did not declare it, `Some(Err(_))` when its settings do
    /// not decode.
    pub fn client_extension<E: ExtensionSettings>(
        &self,
    ) -> Option<Result<E, tessera_types::ExtensionSettingsError>> {
        self.client_capabilities().extension_settings::<E>()
    }

    /// Whether the client declared extension `id`.
    pub fn client_declares_extension(&self, id: &str) -> bool {
        self.client_capabilities().has_extension(id)
    }
}
