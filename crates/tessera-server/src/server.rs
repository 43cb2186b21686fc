//! [`Server`] and [`ServerBuilder`]: the registry of what a server offers and
//! the dispatch of requests to it.

use std::sync::{Arc, OnceLock, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;
use tessera_types::methods;

use futures::FutureExt;
use futures::future::Either;
use serde_json::Value;
use tessera_proto::mirror::ParamHeader;
use tessera_proto::{EngineConfig, ServerIdentity};
use tessera_runtime::middleware::{BoxError, McpLayer, McpService, MiddlewareStack};
use tessera_runtime::{
    BoxFuture, ConnectionOptions, HandlerResult, Message, Notification, Peer, Request, Service,
};
use tessera_types::{
    Era, ErrorObject, Implementation, JsonObject, ProtocolVersion, ServerCapabilities,
};

use crate::completion::CompletionRegistry;
use crate::context::RequestContext;
use crate::error::BuildError;
use crate::extension::{
    ExtensionHost, ExtensionRequest, ExtensionRoutes, ExtensionSet, Notifier, RouteFn,
    ServerExtension,
};
use crate::hub::{Hub, ListKind};
use crate::mrtr::StateSealer;
use crate::pagination::Pager;
use crate::prompt::PromptRegistry;
pub(crate) use crate::reply::{done, shaped_reply, to_object, typed_reply};
use crate::resource::ResourceRegistry;
use crate::router::{MethodRouter, Target};
use crate::tool::{ToolRegistry, ToolRoute};
use tessera_runtime::ReplyResult;
use tessera_types::CacheScope;

/// Everything a server offers. Each feature keeps its own part.
pub(crate) struct Registry<S> {
    pub tools: ToolRegistry<S>,
    pub resources: ResourceRegistry<S>,
    pub prompts: PromptRegistry<S>,
    pub completions: CompletionRegistry<S>,
    /// The engine configuration derived from what is registered, built on
    /// first use and forgotten on every change (see [`Server::write`]).
    engine_config: OnceLock<Arc<EngineConfig>>,
}

impl<S> Default for Registry<S> {
    fn default() -> Self {
        Registry {
            tools: ToolRegistry::default(),
            resources: ResourceRegistry::default(),
            prompts: PromptRegistry::default(),
            completions: CompletionRegistry::default(),
            engine_config: OnceLock::new(),
        }
    }
}

/// Settings that shape answers rather than content.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub page_size: usize,
    pub cache_ttl: Duration,
    pub cache_scope: CacheScope,
    pub logging: bool,
    pub draft07_before: Option<ProtocolVersion>,
}

/// Builds a [`Server`].
pub struct ServerBuilder<S = ()> {
    pub(crate) info: Implementation,
    pub(crate) instructions: Option<String>,
    pub(crate) state: Arc<S>,
    pub(crate) registry: Registry<S>,
    pub(crate) errors: Vec<BuildError>,
    pub(crate) settings: Settings,
    pub(crate) sealer: Option<StateSealer>,
    pub(crate) extensions: ExtensionSet,
    /// The methods the application adds ([`ServerBuilder::routes`]).
    pub(crate) routes: ExtensionRoutes,
    pub(crate) tasks: crate::task::TaskSettings,
    pub(crate) middleware: MiddlewareStack,
}

impl<S> std::fmt::Debug for ServerBuilder<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerBuilder")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

impl<S: Send + Sync + 'static> ServerBuilder<S> {
    /// Sets the server's `Implementation` info (name, version, title, icons…).
    pub fn info(mut self, info: Implementation) -> Self {
        self.info = info;
        self
    }

    /// Sets the name and version.
    pub fn name_version(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.info.name = name.into();
        self.info.version = version.into();
        self
    }

    /// Instructions for the model on how to use this server.
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.instructions = Some(text.into());
        self
    }

    /// Compiles the JSON Schemas of the tools registered after this call (and
    /// of tools added while serving) when a call first needs them, not when
    /// they are registered: starting costs less (the first compilation builds
    /// JSON Schema's meta-schema validator, about 5 million instructions), and
    /// a schema that does not compile fails the calls of its tool with an
    /// internal error instead of failing [`ServerBuilder::build`]. For a
    /// server whose schemas are fixed and checked by its tests (a test can
    /// build it without this setting).
    ///
    /// The schemas derived from a handler's types (its `Args<T>`, its
    /// `Structured<T>` result) are also derived then: at the first
    /// `tools/list`, or the first call of the tool (or
    /// [`Server::tool_input_schema`] and the like), not while building. A
    /// derived `inputSchema` that is not an object schema, which
    /// [`ServerBuilder::build`] refuses without this setting, then fails
    /// `tools/list` and the tool's calls with an internal error saying so
    /// (the [`BuildError::InvalidSchema`] text), logged as an error once,
    /// and [`Server::tool_input_schema`] and the like answer `None` for the
    /// tool; the other tools are served as usual. A schema given
    /// with [`ToolBuilder::input_schema`](crate::ToolBuilder::input_schema)
    /// is still checked while building.
    pub fn compile_schemas_on_first_use(mut self) -> Self {
        self.registry.tools.compile_on_first_use = true;
        self
    }

    /// Registers a tool (see [`tool`](crate::tool())).
    pub fn tool(mut self, route: ToolRoute<S>) -> Self {
        if let Err(e) = self.registry.tools.add(route) {
            self.errors.push(e);
        }
        self
    }

    /// Registers a protocol extension (see [`ServerExtension`]): it is
    /// declared under `capabilities.extensions`, its methods are served, its
    /// resources are listed and read with the others. Two extensions with
    /// one identifier, or serving one method, fail the build.
    pub fn extension(self, extension: impl ServerExtension) -> Self {
        self.extension_arc(Arc::new(extension))
    }

    /// [`ServerBuilder::extension`] for an extension that is already shared
    /// (the application keeps a handle on it, for example to reload it).
    pub fn extension_arc(mut self, extension: Arc<dyn ServerExtension>) -> Self {
        let id = extension.id().to_owned();
        let provider = extension.resources();
        match self.extensions.add(extension) {
            Ok(()) => {
                if let Some(p) = provider {
                    self.registry.resources.add_provider(p);
                }
            }
            Err(problem) => self
                .errors
                .push(BuildError::InvalidExtension { id, problem }),
        }
        self
    }

    /// Items per page of every list method (default 100).
    pub fn page_size(mut self, n: usize) -> Self {
        self.settings.page_size = n.max(1);
        self
    }

    /// The `ttlMs` cache hint on cacheable 2026-07-28 results (default 60 s).
    pub fn cache_ttl(mut self, ttl: Duration) -> Self {
        self.settings.cache_ttl = ttl;
        self
    }

    /// Marks cacheable results `cacheScope: "private"` (for answers that depend
    /// on who asks); the default is `"public"`.
    pub fn private_cache(mut self) -> Self {
        self.settings.cache_scope = CacheScope::Private;
        self
    }

    /// Whether the server offers logging (`logging/setLevel` and
    /// `notifications/message`); on by default.
    pub fn logging(mut self, on: bool) -> Self {
        self.settings.logging = on;
        self
    }

    /// The keys that seal `requestState` (2026-07-28 multi round-trip
    /// requests) and how long a state stays valid. The first key seals, every
    /// key opens: add a new key in front to rotate. Instances behind one
    /// endpoint must share keys. By default a random key (valid for this
    /// process only) and 10 minutes.
    pub fn request_state_keys(mut self, keys: Vec<[u8; 32]>, ttl: Duration) -> Self {
        match StateSealer::with_keys(keys, ttl) {
            Some(s) => self.sealer = Some(s),
            None => self.errors.push(BuildError::NoStateKeys),
        }
        self
    }

    /// Reads the `requestState` key ring from `source` on every seal and
    /// open (a ring shared by every instance behind one endpoint and rotated
    /// there, such as `tessera-redis`'s), with states valid for `ttl`.
    pub fn request_state_key_source(
        mut self,
        source: Arc<dyn crate::mrtr::StateKeySource>,
        ttl: Duration,
    ) -> Self {
        self.sealer = Some(StateSealer::from_source(source, ttl));
        self
    }

    /// Sends tool schemas in their draft-07 form ([`to_draft07`](crate::schema::to_draft07))
    /// to clients that negotiated a protocol version older than `version`
    /// (for example `ProtocolVersion::V2025_11_25`, the first version that
    /// names 2020-12 as the default dialect). Off by default.
    pub fn draft07_schemas_before(mut self, version: ProtocolVersion) -> Self {
        self.settings.draft07_before = Some(version);
        self
    }

    /// Where tasks live ([`MemoryTaskStore`](crate::task::MemoryTaskStore) by
    /// default; [`SqliteTaskStore`](crate::task::SqliteTaskStore) keeps them
    /// across restarts).
    /// An `Arc` of a store is a store too, to share one.
    pub fn task_store(mut self, store: impl crate::task::TaskStore) -> Self {
        self.tasks.store = std::sync::Arc::new(store);
        self
    }

    /// The bus over which instances sharing one task store relay task
    /// input, cancellation and status changes (see
    /// [`TaskSettings::bus`](crate::task::TaskSettings::bus)).
    /// An `Arc` of a bus is a bus too, to share one.
    pub fn task_bus(mut self, bus: impl tessera_runtime::Bus) -> Self {
        self.tasks.bus = Some(std::sync::Arc::new(bus));
        self
    }

    /// All task settings: store, lifetimes, polling interval, sweeping.
    pub fn task_settings(mut self, settings: crate::task::TaskSettings) -> Self {
        self.tasks = settings;
        self
    }

    /// Adjusts the task settings in place (caps, lifetimes), keeping the
    /// store and bus set so far.
    pub fn configure_tasks(mut self, f: impl FnOnce(&mut crate::task::TaskSettings)) -> Self {
        f(&mut self.tasks);
        self
    }

    /// Adds methods of the application's own, with typed params and
    /// results, beside the core's and the extensions' (a vendor method, say):
    ///
    /// ```
    /// use serde::{Deserialize, Serialize};
    /// use tessera_server::Server;
    /// use tessera_types::ErrorObject;
    ///
    /// #[derive(Deserialize)]
    /// struct Params { n: u32 }
    /// #[derive(Serialize)]
    /// struct Doubled { n: u32 }
    ///
    /// let server = Server::builder()
    ///     .routes(|r| {
    ///         r.method("example.com/double", |_req, p: Params| async move {
    ///             Ok::<_, ErrorObject>(Doubled { n: p.n * 2 })
    ///         });
    ///     })
    ///     .build()
    ///     .unwrap();
    /// # let _ = server;
    /// ```
    ///
    /// A method the core or an extension serves, or one routed twice,
    /// fails the build ([`BuildError::InvalidRoute`]). The methods are not
    /// declared as a capability: clients that know them call them.
    pub fn routes(mut self, f: impl FnOnce(&mut ExtensionRoutes)) -> Self {
        f(&mut self.routes);
        self
    }

    /// Adds an MCP-level middleware layer (see
    /// [`tessera_runtime::middleware`]): it sees every request the server
    /// serves — method, params, era and version, HTTP headers and principal —
    /// after the connection core checked it and before the handler runs, and
    /// can observe, reject or rewrite the request and its result. The first
    /// layer added is the outermost.
    ///
    /// Layers are tower layers over the server's
    /// [`McpService`](tessera_runtime::middleware::McpService), so tower's
    /// own limit, load shedding and timeout work as they are:
    ///
    /// ```
    /// use std::time::Duration;
    /// use tessera_runtime::middleware::TraceLayer;
    /// use tessera_server::Server;
    ///
    /// let server = Server::builder()
    ///     .layer(TraceLayer::new())
    ///     .layer(tower::timeout::TimeoutLayer::new(Duration::from_secs(30)))
    ///     .layer(tower::load_shed::LoadShedLayer::new())
    ///     .layer(tower::limit::ConcurrencyLimitLayer::new(64))
    ///     .build()
    ///     .unwrap();
    /// # let _ = server;
    /// ```
    pub fn layer(mut self, layer: impl McpLayer) -> Self {
        self.middleware = self.middleware.layer(layer);
        self
    }

    /// Edits the middleware stack as a whole: for helpers that add
    /// several things at once, such as
    /// `.middleware(|s| telemetry.install(s))` (a layer and a session
    /// observer, or nothing when telemetry is off).
    pub fn middleware(mut self, f: impl FnOnce(MiddlewareStack) -> MiddlewareStack) -> Self {
        self.middleware = f(std::mem::take(&mut self.middleware));
        self
    }

    /// Calls `hook` with each legacy session's connection and version when
    /// its handshake completes: how a layer that measures sessions (the
    /// telemetry's session duration) learns of them.
    pub fn observe_sessions(
        mut self,
        hook: impl Fn(&Peer, ProtocolVersion) + Send + Sync + 'static,
    ) -> Self {
        self.middleware = self.middleware.observe_sessions(hook);
        self
    }

    /// Checks every definition and builds the server.
    pub fn build(mut self) -> Result<Server<S>, BuildError> {
        if let Some(e) = self.errors.into_iter().next() {
            return Err(e);
        }
        self.registry.resources.finish()?;
        self.registry.prompts.finish()?;
        self.registry
            .completions
            .finish(&self.registry.prompts, &self.registry.resources)?;
        // The 2026-07-28 tasks extension, unless the application registered it.
        let tasks_id = tessera_types::tasks::TASKS_EXTENSION;
        if !self.extensions.list.iter().any(|e| e.id() == tasks_id) {
            let tasks = Arc::new(crate::task::TasksExtension::default());
            if let Err(problem) = self.extensions.add(tasks) {
                return Err(BuildError::InvalidExtension {
                    id: tasks_id.to_owned(),
                    problem,
                });
            }
        }
        let app = std::mem::take(&mut self.routes);
        self.extensions
            .notifications
            .extend(app.notifications.into_iter().map(|n| (n.method, n.handler)));
        let app_methods: Vec<String> = app.requests.iter().map(|r| r.method.clone()).collect();
        let router =
            MethodRouter::new(&self.extensions, app.requests).map_err(|(method, problem)| {
                BuildError::InvalidRoute {
                    method,
                    problem: problem.into(),
                }
            })?;
        let server = Server {
            inner: Arc::new(Inner {
                info: self.info,
                instructions: self.instructions,
                state: self.state,
                pager: Pager::new(self.settings.page_size),
                settings: self.settings,
                registry: RwLock::new(self.registry),
                hub: Arc::new(Hub::default()),
                tasks: crate::task::hub::TaskHub::new(self.tasks),
                sealer: self
                    .sealer
                    .unwrap_or_else(|| StateSealer::random(Duration::from_secs(600))),
                extensions: self.extensions,
                router,
                app_methods,
                middleware: self.middleware,
                stacked: std::sync::OnceLock::new(),
            }),
        };
        let weak = Arc::downgrade(&server.inner);
        if !server.inner.middleware.is_empty() {
            let stacked = server.inner.middleware.wrap(below_middleware(weak.clone()));
            let _ = server.inner.stacked.set(stacked);
        }
        let notifier: std::sync::Weak<dyn Notifier> = weak;
        for e in &server.inner.extensions.list {
            e.attach(ExtensionHost {
                notifier: notifier.clone(),
            });
        }
        Ok(server)
    }
}

impl<S: Send + Sync + 'static> Notifier for Inner<S> {
    fn list_changed(&self, kind: ListKind) {
        self.hub.list_changed(kind);
    }
    fn resource_updated(&self, uri: &str) {
        self.hub.resource_updated(uri);
    }
    fn with_tool(&self, name: &str, f: &mut dyn FnMut(&tessera_types::Tool)) {
        let reg = self
            .registry
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(Ok(t)) = reg.tools.get(name) {
            f(&t.tool);
        }
    }
    fn task_hub(&self) -> Option<Arc<crate::task::hub::TaskHub>> {
        Some(self.tasks.clone())
    }
}

pub(crate) struct Inner<S> {
    info: Implementation,
    instructions: Option<String>,
    pub(crate) state: Arc<S>,
    pub(crate) registry: RwLock<Registry<S>>,
    pub(crate) pager: Pager,
    pub(crate) hub: Arc<Hub>,
    pub(crate) settings: Settings,
    pub(crate) sealer: StateSealer,
    pub(crate) extensions: ExtensionSet,
    /// Every request method's handler, core and extension alike.
    router: MethodRouter,
    /// The methods the application routes itself.
    app_methods: Vec<String>,
    pub(crate) tasks: Arc<crate::task::hub::TaskHub>,
    middleware: MiddlewareStack,
    /// The middleware over the server's own answering, when there is any;
    /// its endpoint holds the server weakly.
    stacked: std::sync::OnceLock<McpService>,
}

/// The endpoint of a server's middleware: the server's answering below it,
/// and its taking of notifications.
fn below_middleware<S: Send + Sync + 'static>(server: std::sync::Weak<Inner<S>>) -> McpService {
    McpService::new(tower::service_fn(move |message: Message| {
        let answer = server.upgrade().map(|inner| -> BoxFuture<'static, _> {
            let server = Server { inner };
            match message {
                Message::Request(request) => server.handle_below(request),
                // Boxed, so that a request's answer is not as large as a
                // notification's.
                Message::Notification(n) => Box::pin(
                    server
                        .take_notification(n)
                        .map(|()| Ok(tessera_runtime::middleware::notified())),
                ),
            }
        });
        async move {
            match answer {
                Some(answer) => answer.await,
                None => Err(ErrorObject::internal(
                    "Internal error: the server was dropped",
                )),
            }
            .map_err(BoxError::from)
        }
    }))
}

/// An MCP server: what it offers and how it answers, for both eras. Cheap to
/// clone; serve it on stdio with [`Server::serve_stdio`] or on any transport
/// through [`tessera_runtime::spawn`].
pub struct Server<S = ()> {
    pub(crate) inner: Arc<Inner<S>>,
}

impl<S> Clone for Server<S> {
    fn clone(&self) -> Self {
        Server {
            inner: self.inner.clone(),
        }
    }
}

impl<S> std::fmt::Debug for Server<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("info", &self.inner.info)
            .finish_non_exhaustive()
    }
}

impl Server<()> {
    /// Starts building a server without shared state.
    pub fn builder() -> ServerBuilder<()> {
        Server::with_state(())
    }
}

impl<S: Send + Sync + 'static> Server<S> {
    /// Starts building a server whose handlers can extract
    /// [`State<S>`](crate::State).
    pub fn with_state(state: S) -> ServerBuilder<S> {
        ServerBuilder {
            info: Implementation::new("tessera-server", env!("CARGO_PKG_VERSION")),
            instructions: None,
            state: Arc::new(state),
            registry: Registry::default(),
            errors: Vec::new(),
            sealer: None,
            extensions: ExtensionSet::default(),
            routes: ExtensionRoutes::default(),
            tasks: crate::task::TaskSettings::default(),
            middleware: MiddlewareStack::new(),
            settings: Settings {
                page_size: 100,
                cache_ttl: Duration::from_secs(60),
                cache_scope: CacheScope::Public,
                logging: true,
                draft07_before: None,
            },
        }
    }

    /// The server's `Implementation` info.
    pub fn info(&self) -> &Implementation {
        &self.inner.info
    }

    /// The shared state.
    pub fn state(&self) -> &Arc<S> {
        &self.inner.state
    }

    pub(crate) fn read(&self) -> RwLockReadGuard<'_, Registry<S>> {
        // A poisoned lock only means a panic elsewhere mid-update; the data is still usable.
        self.inner
            .registry
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The registry for a change: the cached engine configuration is
    /// dropped under the same lock, so no reader can keep a stale one.
    pub(crate) fn write(&self) -> RwLockWriteGuard<'_, Registry<S>> {
        let mut reg = self
            .inner
            .registry
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        reg.engine_config = OnceLock::new();
        reg
    }

    pub(crate) fn hub(&self) -> &Hub {
        &self.inner.hub
    }

    /// Shares server-wide events — a resource updated, a list changed — with
    /// the other instances serving the same endpoint over `bus` (topic
    /// [`EVENTS_TOPIC`](crate::hub::EVENTS_TOPIC)): each instance tells its
    /// own legacy sessions and `subscriptions/listen` streams of the changes
    /// announced on any of them. The returned future resolves once this
    /// instance listens (it spawns two tasks; call it inside a tokio
    /// runtime); calling it again does nothing. `tessera-http` calls it when
    /// its builder is given a bus.
    pub fn share_events(
        &self,
        bus: Arc<dyn tessera_runtime::DynBus>,
    ) -> impl std::future::Future<Output = Result<(), tessera_runtime::StoreError>> + Send + 'static
    {
        let hub = self.inner.hub.clone();
        async move { hub.link(bus).await }
    }

    pub(crate) fn pager(&self) -> &Pager {
        &self.inner.pager
    }

    pub(crate) fn tasks(&self) -> &Arc<crate::task::hub::TaskHub> {
        &self.inner.tasks
    }

    /// The task counts now: running here, statuses entered, caps hit
    /// ([`TaskStats`](crate::task::TaskStats)).
    pub fn task_stats(&self) -> crate::task::TaskStats {
        self.tasks().stats()
    }

    /// Whether some tool can run as a task (then the server declares tasks:
    /// `capabilities.tasks` for 2025-11-25, the `io.modelcontextprotocol/tasks`
    /// extension for 2026-07-28).
    pub fn offers_tasks(&self) -> bool {
        self.read().tools.offers_tasks()
    }

    /// Fails the tasks a previous process left running (they are reported
    /// `failed`, with [`RESTART_MESSAGE`](crate::task::RESTART_MESSAGE)) and
    /// starts the sweeper of expired tasks. Done on first use anyway; call it
    /// at startup so a restarted server reports them at once.
    pub async fn recover_tasks(&self) -> Result<(), ErrorObject> {
        self.tasks().ready().await
    }

    /// Checks the task store now ([`TaskStore::check`](crate::task::TaskStore::check)):
    /// `Err` says what is wrong (a deleted or corrupted SQLite file, say).
    /// The server also checks it at every sweep and logs a failure.
    pub async fn check_task_store(&self) -> Result<(), String> {
        self.tasks().check_store().await
    }

    /// The capabilities, derived from what is registered.
    pub fn capabilities(&self) -> ServerCapabilities {
        self.capabilities_of(&self.read())
    }

    fn capabilities_of(&self, reg: &Registry<S>) -> ServerCapabilities {
        let mut caps = ServerCapabilities::default();
        reg.tools.declare(&mut caps);
        reg.resources.declare(&mut caps);
        reg.prompts.declare(&mut caps);
        reg.completions
            .declare(&mut caps, &reg.prompts, &reg.resources);
        if self.inner.settings.logging {
            caps.logging = Some(JsonObject::new());
            // Its logs carry back the tag of the request they belong to
            // (`tessera_proto::meta_keys::REQUEST_TAG`): said, so that a
            // proxy can route them on a connection many clients share.
            caps.experimental
                .get_or_insert_with(Default::default)
                .insert(
                    tessera_proto::meta_keys::REQUEST_TAG.into(),
                    JsonObject::new(),
                );
        }
        if reg.tools.offers_tasks() {
            caps.tasks = Some(tessera_types::ServerTasksCapability {
                list: Some(JsonObject::new()),
                cancel: Some(JsonObject::new()),
                requests: Some(tessera_types::ServerTaskRequests {
                    tools: Some(tessera_types::ToolsTaskRequests {
                        call: Some(JsonObject::new()),
                        ..Default::default()
                    }),
                    ..Default::default()
                }),
                ..Default::default()
            });
        }
        // Extensions last (the tasks extension reads `tasks` above).
        self.inner.extensions.declare(&mut caps);
        caps
    }

    /// The engine configuration that serves this server (identity and capabilities).
    pub fn engine_config(&self) -> EngineConfig {
        EngineConfig::server(ServerIdentity {
            info: self.inner.info.clone(),
            capabilities: self.capabilities(),
            instructions: self.inner.instructions.clone(),
            discover_ttl: self.inner.settings.cache_ttl,
        })
    }

    /// The engine configuration with the served methods filled in, shared:
    /// built once and kept until a tool, resource or prompt is added or
    /// removed. Transports that start an engine per request use it instead of
    /// [`Server::engine_config`].
    pub fn shared_engine_config(&self) -> Arc<EngineConfig> {
        let reg = self.read();
        reg.engine_config
            .get_or_init(|| {
                let mut config = EngineConfig::server(ServerIdentity {
                    info: self.inner.info.clone(),
                    capabilities: self.capabilities_of(&reg),
                    instructions: self.inner.instructions.clone(),
                    discover_ttl: self.inner.settings.cache_ttl,
                });
                config.methods = self.served_methods_of(&reg);
                Arc::new(config)
            })
            .clone()
    }

    /// Serves on stdin/stdout until stdin closes.
    pub async fn serve_stdio(self) -> std::io::Result<()> {
        let config = self.engine_config();
        let (_peer, task) =
            tessera_runtime::serve_stdio(config, self, ConnectionOptions::default());
        task.await.map_err(std::io::Error::other)?
    }

    /// Serves over any reader/writer pair of newline-delimited JSON-RPC.
    pub fn serve_io<R, W>(
        self,
        reader: R,
        writer: W,
    ) -> (Peer, tokio::task::JoinHandle<std::io::Result<()>>)
    where
        R: tokio::io::AsyncRead + Unpin + Send + 'static,
        W: tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let config = self.engine_config();
        tessera_runtime::spawn(config, reader, writer, self, ConnectionOptions::default())
    }

    /// Adds a tool while serving; clients that asked are told the list changed.
    pub fn add_tool(&self, route: ToolRoute<S>) -> Result<(), BuildError> {
        self.write().tools.add(route)?;
        self.hub().list_changed(ListKind::Tools);
        Ok(())
    }

    /// The current `inputSchema` of tool `name`, if it is registered (read
    /// without a `tools/list` round trip; transports use it to check
    /// `x-mcp-header` parameters). `None` also for a tool whose schemas were
    /// refused when first needed
    /// ([`ServerBuilder::compile_schemas_on_first_use`](crate::ServerBuilder::compile_schemas_on_first_use)).
    pub fn tool_input_schema(&self, name: &str) -> Option<JsonObject> {
        let tool = self.read().tools.get(name)?.ok()?;
        Some(tool.tool.input_schema.clone())
    }

    /// The arguments tool `name` mirrors into `Mcp-Param-*` headers (its
    /// input schema's `x-mcp-header` marks, read once when it was added or
    /// its schemas first needed); `None` if there is no such tool, or its
    /// schemas were refused.
    pub fn tool_param_headers(&self, name: &str) -> Option<Arc<[ParamHeader]>> {
        let tool = self.read().tools.get(name)?.ok()?;
        Some(tool.param_headers.clone())
    }

    /// The OAuth scopes tool `name` was declared to need
    /// ([`ToolBuilder::scopes`](crate::ToolBuilder::scopes)); `None` if there
    /// is no such tool, or its schemas were refused. An authorization layer
    /// uses it to refuse a call whose token lacks them.
    pub fn tool_scopes(&self, name: &str) -> Option<Vec<String>> {
        let tool = self.read().tools.get(name)?.ok()?;
        Some(tool.scopes.clone())
    }

    /// Removes a tool while serving; returns whether it existed.
    pub fn remove_tool(&self, name: &str) -> bool {
        let removed = self.write().tools.remove(name);
        if removed {
            self.hub().list_changed(ListKind::Tools);
        }
        removed
    }

    /// Tells every client that asked that a resource changed
    /// (`notifications/resources/updated`).
    pub fn notify_resource_updated(&self, uri: &str) {
        self.hub().resource_updated(uri);
    }

    /// Tells every client that asked that a list changed.
    pub fn notify_list_changed(&self, kind: ListKind) {
        self.hub().list_changed(kind);
    }

    /// The cache hints (`ttlMs`, `cacheScope`) of this server's cacheable
    /// answers: this server's settings, in 2026-07-28 only (earlier versions
    /// have no such fields).
    pub(crate) fn cache_hint(&self, ctx: &RequestContext) -> Option<(u64, CacheScope)> {
        (ctx.era() == Era::Modern).then(|| (self.cache_ttl_ms(), self.inner.settings.cache_scope))
    }

    /// The `ttlMs` of this server's cache hints.
    fn cache_ttl_ms(&self) -> u64 {
        u64::try_from(self.inner.settings.cache_ttl.as_millis()).unwrap_or(u64::MAX)
    }

    /// Sets the cache hints on a typed cacheable result.
    pub(crate) fn hint<T: tessera_types::Cacheable>(&self, ctx: &RequestContext, result: &mut T) {
        if let Some((ms, scope)) = self.cache_hint(ctx) {
            result.set_cache_hint(ms, scope);
        }
    }

    /// The methods served, derived from what is registered.
    fn served_methods(&self) -> Vec<String> {
        self.served_methods_of(&self.read())
    }

    fn served_methods_of(&self, reg: &Registry<S>) -> Vec<String> {
        let mut m: Vec<&str> = Vec::new();
        m.extend(reg.tools.methods());
        m.extend(reg.resources.methods());
        m.extend(reg.prompts.methods());
        m.extend(reg.completions.methods(&reg.prompts, &reg.resources));
        m.push(methods::SUBSCRIPTIONS_LISTEN);
        if reg.tools.offers_tasks() {
            m.extend([
                methods::TASKS_GET,
                methods::TASKS_UPDATE,
                methods::TASKS_CANCEL,
                methods::TASKS_RESULT,
                methods::TASKS_LIST,
            ]);
        }
        let mut out: Vec<String> = m.into_iter().map(str::to_owned).collect();
        out.extend(self.inner.app_methods.iter().cloned());
        // An extension that withdrew its declaration (the tasks extension
        // when no tool can run as a task) is not offered: its methods are not
        // served.
        let exts = &self.inner.extensions;
        let caps = self.capabilities_of(reg);
        for (route, i) in &exts.routes {
            if caps.has_extension(exts.list[*i].id()) && !out.contains(&route.method) {
                out.push(route.method.clone());
            }
        }
        out
    }
}

impl<S: Send + Sync + 'static> Server<S> {
    /// Serves one request below the middleware: one lookup in the method
    /// router, the guarding extensions' checks, then the handler. A
    /// `tools/call` or a typed route is answered with its result written
    /// straight to JSON text; the other core methods as a tree.
    fn handle_below(&self, request: Request) -> BoxFuture<'static, ReplyResult> {
        let found = self.inner.router.find(&request.method, request.context.era);
        if !found.guards.is_empty() {
            let context = RequestContext::from_request(&request);
            for &i in found.guards {
                let guard = &self.inner.extensions.list[i];
                if let Err(e) =
                    guard.check_request(&request.method, &context, request.params.as_ref())
                {
                    return done(Err(e));
                }
            }
        }
        match found.target {
            Some(Target::Core(core)) => self.serve_core(core, request),
            Some(Target::Route(handler)) => self.route(handler.as_ref(), request),
            None => done(Err(ErrorObject::method_not_found(&request.method))),
        }
    }

    /// Takes a notification below the middleware: the extensions that take
    /// its method get it, unless the connection core already acted on it.
    fn take_notification(&self, n: Notification) -> impl Future<Output = ()> + Send + use<S> {
        let takers = if n.handled_by_core {
            Vec::new()
        } else {
            tracing::debug!(method = %n.method, "notification from the client");
            self.inner.extensions.notification_takers(&n.method)
        };
        async move {
            for t in takers {
                t(n.clone()).await;
            }
        }
    }

    /// Calls an extension route.
    fn route(&self, handler: &RouteFn, request: Request) -> BoxFuture<'static, ReplyResult> {
        let settings = &self.inner.settings;
        handler(ExtensionRequest {
            context: RequestContext::from_request(&request),
            pager: self.inner.pager.clone(),
            cache_ttl_ms: self.cache_ttl_ms(),
            cache_scope: settings.cache_scope,
            request,
        })
    }
}

impl<S: Send + Sync + 'static> Service for Server<S> {
    fn methods(&self) -> Vec<String> {
        self.served_methods()
    }

    /// A `tools/call` or an extension route that nothing reads on its way
    /// out (no middleware; guards only read the request) is answered with
    /// its result written straight to JSON text; everything else as a tree.
    /// The answer is the handler's own boxed future (type-erased handlers
    /// box theirs), which the connection keeps as it is.
    fn handle(
        self: Arc<Self>,
        request: Request,
    ) -> impl Future<Output = ReplyResult> + Send + 'static {
        let answer: BoxFuture<'static, ReplyResult> = match self.inner.stacked.get() {
            Some(stack) => Box::pin(tessera_runtime::middleware::serve(stack, request)),
            None => self.handle_below(request),
        };
        answer
    }

    fn handle_request(
        self: Arc<Self>,
        request: Request,
    ) -> impl Future<Output = HandlerResult> + Send + 'static {
        self.handle(request)
            .map(tessera_runtime::middleware::reply_object)
    }

    fn notify(self: Arc<Self>, n: Notification) -> impl Future<Output = ()> + Send + 'static {
        match self.inner.stacked.get() {
            Some(stack) => Either::Left(tessera_runtime::middleware::notify(stack, n)),
            None => Either::Right(self.take_notification(n)),
        }
    }

    fn handle_notification(
        self: Arc<Self>,
        n: Notification,
    ) -> impl Future<Output = ()> + Send + 'static {
        self.take_notification(n)
    }

    fn outgoing_observer(&self) -> Option<Arc<dyn tessera_runtime::outgoing::OutgoingObserver>> {
        self.inner.middleware.outgoing().cloned()
    }

    fn on_initialized(&self, peer: Peer, version: ProtocolVersion) {
        tracing::debug!(%version, "legacy session initialized");
        self.inner.middleware.session_started(&peer, version);
        self.hub().add_session(peer);
    }

    fn session_data(&self, peer: &Peer) -> JsonObject {
        let uris: Vec<Value> = self
            .hub()
            .subscriptions_of(peer)
            .into_iter()
            .map(Value::String)
            .collect();
        let mut data = JsonObject::new();
        if !uris.is_empty() {
            data.insert(SUBSCRIPTIONS_KEY.into(), Value::Array(uris));
        }
        data
    }

    fn on_restored(
        &self,
        peer: Peer,
        version: ProtocolVersion,
        initialized: bool,
        data: &JsonObject,
    ) {
        let uris: std::collections::BTreeSet<String> = data
            .get(SUBSCRIPTIONS_KEY)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|u| u.as_str().map(str::to_owned))
            .collect();
        if initialized || !uris.is_empty() {
            tracing::debug!(%version, subscriptions = uris.len(), "legacy session restored");
            self.hub().restore_session(&peer, uris);
        }
    }
}

/// The key of a legacy session's resource subscriptions in its stored data
/// ([`tessera_runtime::SessionState::data`]): an array of URIs.
pub const SUBSCRIPTIONS_KEY: &str = "tessera-server/subscriptions";
