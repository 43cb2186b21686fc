//! [`ServerExtension`]: a protocol extension served next to the core
//! features, without forking the server.
//!
//! An extension has an identifier and settings, which the server declares
//! under `capabilities.extensions` (in the `initialize` result for legacy
//! clients and in `server/discover` for 2026-07-28 ones). It serves its own
//! requests and notifications as typed routes ([`ExtensionRoutes`]: params
//! decoded from the request's JSON text, results written straight to JSON
//! text), may contribute resources (a [`ResourceProvider`]), adjust the rest
//! of the capabilities (an extension that needs `resources` declares it),
//! refuse requests to other methods before they run
//! ([`check_request`](ServerExtension::check_request)) and edit the
//! `tools/list` result ([`on_tools_list`](ServerExtension::on_tools_list)).
//! No JSON tree appears in the trait. Register one with
//! [`ServerBuilder::extension`](crate::ServerBuilder::extension).
//!
//! What the client declared is read per request with
//! [`RequestContext::client_extension`]: from `initialize` in the legacy
//! era, from the request's own `_meta` capabilities in 2026-07-28.
//!
//! ```
//! use serde::{Deserialize, Serialize};
//! use tessera_server::{DeclaredSettings, ExtensionRoutes, Server, ServerExtension};
//! use tessera_types::{ExtensionSettings, ErrorObject};
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
//! /// The params and result of `clock/now`.
//! #[derive(Deserialize)]
//! struct NowParams {
//!     #[serde(default)]
//!     zone: Option<String>,
//! }
//! #[derive(Serialize)]
//! struct Now {
//!     now: String,
//! }
//!
//! struct Clock;
//!
//! impl ServerExtension for Clock {
//!     fn id(&self) -> &str {
//!         ClockSettings::ID
//!     }
//!     fn settings(&self) -> DeclaredSettings {
//!         DeclaredSettings::of(&ClockSettings { utc_only: true })
//!     }
//!     fn routes(&self, routes: &mut ExtensionRoutes) {
//!         routes.method("clock/now", |_request, params: NowParams| async move {
//!             if params.zone.is_some_and(|z| z != "UTC") {
//!                 return Err(ErrorObject::invalid_params("only UTC is served"));
//!             }
//!             Ok(Now { now: "2026-07-28T00:00:00Z".into() })
//!         });
//!     }
//! }
//!
//! let server = Server::builder().extension(Clock).build().unwrap();
//! assert!(server.capabilities().has_extension("com.example/clock"));
//! ```

mod host;
mod request;
pub(crate) mod routes;
mod set;

use tessera_types::{
    DeclaredSettings, ErrorObject, ExtensionSettings, ListToolsResult, Params, ServerCapabilities,
    Tool,
};

use crate::context::RequestContext;
use crate::resource::SharedProvider;

pub use host::ExtensionHost;
pub(crate) use host::Notifier;
pub use request::ExtensionRequest;
pub use routes::ExtensionRoutes;
pub(crate) use routes::RouteFn;
pub(crate) use set::ExtensionSet;

/// A protocol extension a [`Server`](crate::Server) serves. Every method but
/// [`id`](ServerExtension::id) has a default that does nothing.
pub trait ServerExtension: Send + Sync + 'static {
    /// The identifier declared under `capabilities.extensions`.
    fn id(&self) -> &str;

    /// The settings declared under the identifier (`{}` by default).
    fn settings(&self) -> DeclaredSettings {
        DeclaredSettings::default()
    }

    /// Changes the rest of the capabilities (after the core features and
    /// the extension's own entry are declared). An extension that removes
    /// its own entry here is not offered: its methods are not served either.
    fn declare(&self, capabilities: &mut ServerCapabilities) {
        let _ = capabilities;
    }

    /// Adds the requests and notifications the extension serves (called
    /// once, when the server is built). Two extensions may not serve the
    /// same method; an extension method takes precedence over a core
    /// method of the same name for the eras it is routed in.
    fn routes(&self, routes: &mut ExtensionRoutes) {
        let _ = routes;
    }

    /// Resources the extension serves through the core `resources/*`
    /// methods (listed after the registered ones).
    fn resources(&self) -> Option<SharedProvider> {
        None
    }

    /// Edits a `tools/list` answer before it is cut into pages: drops tools
    /// this client must not see, or adds `_meta` entries under the
    /// extension's identifier. Runs for every `tools/list` request.
    fn on_tools_list(&self, context: &RequestContext, result: &mut ListToolsResult) {
        let _ = (context, result);
    }

    /// Refuses a `tools/call` of `tool` (the registered tool the call
    /// names, found by the core) before its arguments are checked and its
    /// handler runs; the error is the answer. Runs for every call of every
    /// tool, after the core found the tool: a call of an unknown tool or
    /// with malformed params never gets here (the core answers it).
    fn check_tool_call(&self, context: &RequestContext, tool: &Tool) -> Result<(), ErrorObject> {
        let _ = (context, tool);
        Ok(())
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
