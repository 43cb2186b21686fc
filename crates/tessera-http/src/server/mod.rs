//! The Streamable HTTP server: [`McpHttp`], a tower `Service` that serves MCP
//! on one endpoint (mount it at any path, in hyper or inside an axum app),
//! plus [`serve`] for a ready-made hyper server with graceful shutdown.
//!
//! One endpoint serves both eras at once:
//!
//! - **2025-03-26 … 2025-11-25** (legacy): `initialize` opens a session
//!   (`Mcp-Session-Id`), one engine per session; POST, GET (standalone SSE
//!   stream) and DELETE; SSE event ids and replay after `Last-Event-ID`.
//! - **2026-07-28** (modern): a POST whose `_meta` (and `MCP-Protocol-Version`
//!   header) name 2026-07-28 is served statelessly by a fresh engine, after the
//!   `Mcp-Method`/`Mcp-Name`/`Mcp-Param-*` header checks.
//! - **2024-11-05** (HTTP+SSE): `GET /sse` + `POST /message?sessionId=…`.
//!
//! Module map: `guard` (Host/Origin), `body` (response body, limited reads),
//! `reply` (response helpers), `event_store` (resumability), `session` (one
//! legacy session: its task driving the connection core and routing messages; its handle, its link to the
//! shared state, stream resumption), `cluster` (several instances serving one
//! endpoint: the session store, the bus, instance tags), `registry` (the live sessions,
//! their caps and eviction), `streamable` (the legacy-era endpoint), `modern`
//! (2026-07-28 checks), `single` (an engine per POST), `legacy_sse`
//! (2024-11-05), `serve` (hyper server), `connection` (per-connection
//! timeouts and the connection cap).
//!
//! Every limit has a safe default and a builder method; the guide's limits
//! chapter (`tessera::guide::limits`) lists them with their defaults, their
//! options and what a peer sees when it hits one.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use tessera_proto::EngineConfig;
use tessera_proto::mirror::ParamHeader;
use tessera_runtime::{
    BoxFuture, Bus, Connection, ConnectionOptions, DynBus, DynSessionStore, Service, SessionState,
    SessionStore, StoreError,
};
use tessera_types::ProtocolVersion;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

mod addr_slots;
mod batch_scan;
mod body;
mod carried;
mod client_share;
mod cluster;
mod connection;
mod dangerous;
mod event_store;
mod guard;
mod inbound;
mod layered;
mod legacy_sse;
mod modern;
mod registry;
mod reply;
mod serve;
mod session;
mod single;
mod slots;
mod stats;
mod streamable;

#[cfg(feature = "axum")]
mod axum_mount;

pub use body::McpBody;
pub use connection::RemoteAddr;
pub use dangerous::DangerousSettings;
pub use event_store::{
    BadEventId, DEFAULT_EVENT_BYTES_PER_SESSION, DEFAULT_EVENT_BYTES_TOTAL, EventId, EventStore,
    InMemoryEventStore, StoredEvent,
};
pub use guard::{HostGuard, HostGuardRefusal, HostPolicy, OriginPolicy};
pub use layered::LayeredFactory;
pub use serve::{serve, serve_with};
pub use stats::{HttpStats, limit};

/// Makes the application side of a connection: one [`Service`] and its
/// [`EngineConfig`] for every legacy session and every stateless POST.
///
/// Implemented for closures `Fn() -> (EngineConfig, S)` and, with the
/// `tessera-server` feature, for [`tessera_server::Server`] (cloned).
/// Implement it for anything else; [`ServiceFactory::share_events`] is an
/// `async fn`. Here a factory that wraps another and says when it joins a bus:
///
/// ```
/// use std::sync::Arc;
/// use tessera_http::ServiceFactory;
/// use tessera_proto::EngineConfig;
/// use tessera_runtime::{DynBus, StoreError};
///
/// struct Announced<F>(F);
///
/// impl<F: ServiceFactory> ServiceFactory for Announced<F> {
///     type Service = F::Service;
///     fn make(&self) -> (EngineConfig, F::Service) {
///         self.0.make()
///     }
///     async fn share_events(&self, bus: Arc<dyn DynBus>) -> Result<(), StoreError> {
///         self.0.share_events(bus).await?;
///         eprintln!("sharing server-wide events");
///         Ok(())
///     }
/// }
/// ```
pub trait ServiceFactory: Send + Sync + 'static {
    /// The service type.
    type Service: Service;
    /// A fresh service and its engine configuration.
    fn make(&self) -> (EngineConfig, Self::Service);

    /// A service and its configuration for one request of a per-request
    /// engine (2026-07-28, stateless servers), with
    /// [`EngineConfig::methods`] filled in. Both may be shared between
    /// requests; the default makes fresh ones with [`ServiceFactory::make`].
    fn make_shared(&self) -> (Arc<EngineConfig>, Arc<Self::Service>) {
        let (mut config, service) = self.make();
        config.methods = service.methods();
        (Arc::new(config), Arc::new(service))
    }

    /// A service and its configuration for one legacy session (an
    /// `initialize` conversation over Streamable HTTP or the 2024-11-05
    /// HTTP+SSE pair). A factory whose service keeps per-session state (a
    /// proxy holding one upstream session per downstream session) makes a
    /// fresh one here; the default is [`ServiceFactory::make_shared`].
    fn make_session(&self) -> (Arc<EngineConfig>, Arc<Self::Service>) {
        self.make_shared()
    }

    /// The arguments tool `name` mirrors into `Mcp-Param-*` headers, when
    /// the factory can tell directly ([`ToolHeaders::Unknown`] when it
    /// cannot: the server then asks the service with an internal
    /// `tools/list`). Used to check the headers of 2026-07-28 `tools/call`
    /// requests without listing every tool, or walking its schema, per call.
    fn tool_param_headers(&self, name: &str) -> ToolHeaders {
        let _ = name;
        ToolHeaders::Unknown
    }

    /// Shares the service's server-wide events (a resource updated, a list
    /// changed) with the other instances on `bus`; resolves once this
    /// instance listens. Called once, when the endpoint is given a bus
    /// ([`McpHttpBuilder::bus`]); the default shares nothing.
    fn share_events(
        &self,
        bus: Arc<dyn DynBus>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send {
        let _ = bus;
        std::future::ready(Ok(()))
    }
}

impl<F, S> ServiceFactory for F
where
    F: Fn() -> (EngineConfig, S) + Send + Sync + 'static,
    S: Service,
{
    type Service = S;
    fn make(&self) -> (EngineConfig, S) {
        self()
    }
}

#[cfg(feature = "tessera-server")]
impl<St: Send + Sync + 'static> ServiceFactory for tessera_server::Server<St> {
    type Service = tessera_server::Server<St>;
    fn make(&self) -> (EngineConfig, Self::Service) {
        (self.engine_config(), self.clone())
    }

    fn make_shared(&self) -> (Arc<EngineConfig>, Arc<Self::Service>) {
        (self.shared_engine_config(), Arc::new(self.clone()))
    }

    fn tool_param_headers(&self, name: &str) -> ToolHeaders {
        match tessera_server::Server::tool_param_headers(self, name) {
            Some(headers) => ToolHeaders::Known(headers),
            None => ToolHeaders::NoSuchTool,
        }
    }

    fn share_events(
        &self,
        bus: Arc<dyn DynBus>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send {
        tessera_server::Server::share_events(self, bus)
    }
}

/// What a [`ServiceFactory`] knows of the arguments a tool mirrors into
/// `Mcp-Param-*` headers (its `inputSchema`'s `x-mcp-header` marks).
#[derive(Debug, Clone, PartialEq)]
pub enum ToolHeaders {
    /// The tool exists and mirrors these arguments (read from its schema
    /// once, when it was registered or listed).
    Known(Arc<[ParamHeader]>),
    /// There is no tool of that name.
    NoSuchTool,
    /// The factory cannot tell; the server asks the service instead.
    Unknown,
}

/// A factory with its service type erased: makes the connection core of a
/// session, or serves one request with a per-request core.
trait Spawner: Send + Sync {
    fn session_core(
        &self,
        options: &ConnectionOptions,
        restore: Option<&SessionState>,
    ) -> Box<dyn session::SessionCore>;
    fn serve_single<'a>(
        &'a self,
        shared: &'a Arc<Shared>,
        job: single::Job,
    ) -> BoxFuture<'a, reply::HttpResponse>;
    fn tool_param_headers(&self, name: &str) -> ToolHeaders;
    fn share_events(&self, bus: Arc<dyn DynBus>) -> BoxFuture<'_, Result<(), StoreError>>;
}

struct FactorySpawner<F>(F);

impl<F: ServiceFactory> Spawner for FactorySpawner<F> {
    fn session_core(
        &self,
        options: &ConnectionOptions,
        restore: Option<&SessionState>,
    ) -> Box<dyn session::SessionCore> {
        let (config, service) = self.0.make_session();
        let mut core = Connection::with_options(config, service, options);
        if let Some(state) = restore {
            core.restore_state(state);
        }
        Box::new(core)
    }

    fn serve_single<'a>(
        &'a self,
        shared: &'a Arc<Shared>,
        job: single::Job,
    ) -> BoxFuture<'a, reply::HttpResponse> {
        let (config, service) = self.0.make_shared();
        Box::pin(single::serve(shared, config, service, job))
    }

    fn tool_param_headers(&self, name: &str) -> ToolHeaders {
        self.0.tool_param_headers(name)
    }

    fn share_events(&self, bus: Arc<dyn DynBus>) -> BoxFuture<'_, Result<(), StoreError>> {
        Box::pin(self.0.share_events(bus))
    }
}

/// How a request that gets a response is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ResponseMode {
    /// `application/json` when the response is the first message the handler
    /// produces; an SSE stream as soon as it sends a notification or request
    /// first (progress, logs, sampling…).
    #[default]
    Auto,
    /// Always an SSE stream (with a priming event).
    Sse,
    /// Always `application/json`; notifications and requests issued while
    /// handling a legacy request go to the session's standalone GET stream.
    Json,
}

/// The paths of the 2024-11-05 HTTP+SSE transport.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LegacySsePaths {
    /// The path of the SSE stream (`GET`), e.g. `/sse`.
    pub sse: String,
    /// The path messages are POSTed to, e.g. `/message`.
    pub message: String,
}

/// Settings of an [`McpHttp`] (see the builder methods for their meaning).
#[derive(Clone)]
pub(crate) struct Config {
    pub endpoint_path: Option<String>,
    pub legacy_sse: Option<LegacySsePaths>,
    pub stateless: bool,
    pub response_mode: ResponseMode,
    pub guard: HostGuard,
    pub max_body: usize,
    pub idle_timeout: Option<Duration>,
    pub max_sessions: usize,
    pub max_sessions_per_client: usize,
    pub handshake_timeout: Option<Duration>,
    pub max_requests_per_session: usize,
    pub max_requests_per_client: usize,
    pub session_queue_timeout: Duration,
    pub max_batch: usize,
    pub header_read_timeout: Option<Duration>,
    pub body_read_timeout: Option<Duration>,
    pub body_total_timeout: Option<Duration>,
    pub body_min_rate: Option<u64>,
    pub connection_idle_timeout: Option<Duration>,
    pub write_timeout: Option<Duration>,
    pub max_connections: Option<usize>,
    pub max_connections_per_client: Option<usize>,
    pub max_streams_per_connection: u32,
    pub stream_buffer: usize,
    pub standalone_backlog: usize,
    pub standalone_backlog_bytes: usize,
    pub standalone_backlog_total_bytes: usize,
    pub keep_alive: Option<Duration>,
    pub retry: Option<Duration>,
    pub event_store: Option<Arc<dyn event_store::DynEventStore>>,
    pub drain_timeout: Duration,
    pub validate_param_headers: bool,
    pub session_store: Option<Arc<dyn DynSessionStore>>,
    pub bus: Option<Arc<dyn DynBus>>,
    /// The versions the engine speaks (from the factory's configuration).
    pub versions: Vec<ProtocolVersion>,
}

/// Shared by every clone of one [`McpHttp`].
pub(crate) struct Shared {
    pub config: Config,
    spawner: Box<dyn Spawner>,
    pub sessions: registry::Registry,
    /// The requests in progress of each client.
    pub client_shares: client_share::ClientShares,
    /// Requests in progress (for graceful shutdown).
    pub inflight: TaskTracker,
    /// Fires to end every open stream (shutdown).
    pub closing: CancellationToken,
    shutting_down: AtomicBool,
    /// Who a stateless legacy request's engine assumes it talks to.
    pub stateless_client: single::StatelessClient,
    /// This instance among those serving the endpoint (the session store and bus).
    pub cluster: Arc<cluster::Cluster>,
    /// Set once the service's events are shared over the bus.
    linked: tokio::sync::OnceCell<()>,
    /// The bytes every session's standalone backlog holds, against one cap.
    pub backlog_budget: Arc<session::BacklogBudget>,
    /// Connections and streams open, refusals by limit.
    pub stats: Arc<HttpStats>,
}

impl Shared {
    /// Serves one request with its own engine (see [`single`]).
    pub(crate) async fn serve_single(self: &Arc<Self>, job: single::Job) -> reply::HttpResponse {
        self.spawner.serve_single(self, job).await
    }

    /// The connection core of a new session (driven by the session's task).
    pub(crate) fn session_core(
        &self,
        kind: session::SessionKind,
        restore: Option<&SessionState>,
    ) -> Box<dyn session::SessionCore> {
        self.spawner.session_core(
            &ConnectionOptions {
                max_message_size: self.config.max_body,
                drain_timeout: self.config.drain_timeout,
                export_session: kind == session::SessionKind::Streamable && self.cluster.stores,
                request_id_base: self.cluster.request_id_base(),
                link: None,
            },
            restore,
        )
    }

    /// Shares the service's events over the bus (once; at once without one).
    pub(crate) async fn link(&self) {
        let Some(bus) = &self.cluster.bus else {
            return;
        };
        self.linked
            .get_or_init(|| async {
                if let Err(e) = self.spawner.share_events(bus.clone()).await {
                    tracing::warn!(%e, "server-wide events are not shared with the other instances");
                }
            })
            .await;
    }

    /// The mirrored arguments of a tool, when the factory can tell directly.
    pub(crate) fn tool_param_headers(&self, name: &str) -> ToolHeaders {
        self.spawner.tool_param_headers(name)
    }

    /// The supported versions as wire strings, newest first.
    pub(crate) fn version_strings(&self) -> Vec<String> {
        let mut v = self.config.versions.clone();
        v.sort();
        v.dedup();
        v.into_iter().rev().map(|v| v.as_str().to_owned()).collect()
    }

    pub(crate) fn supports(&self, v: ProtocolVersion) -> bool {
        self.config.versions.contains(&v)
    }
}

/// The MCP Streamable HTTP endpoint as a tower `Service`.
///
/// Cheap to clone; every clone serves the same sessions. Build it with
/// [`McpHttp::builder`]:
///
/// ```no_run
/// use tessera_http::McpHttp;
/// use tessera_server::{Server, tool};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let server = Server::builder()
///     .tool(tool("hello").handler(|| async { "hi" }))
///     .build()?;
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8001").await?;
/// let mcp = McpHttp::builder(server)
///     .bind_address(listener.local_addr()?)
///     .endpoint_path("/mcp")
///     .build();
/// tessera_http::serve(listener, mcp, async { let _ = tokio::signal::ctrl_c().await; }).await?;
/// # Ok(()) }
/// ```
///
/// Inside axum, mount it like any service:
/// `axum::Router::new().route_service("/mcp", mcp.clone())`.
#[derive(Clone)]
pub struct McpHttp {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for McpHttp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpHttp")
            .field("sessions", &self.session_count())
            .finish_non_exhaustive()
    }
}

impl McpHttp {
    /// Starts building an endpoint whose sessions and requests are served by
    /// what `factory` makes.
    pub fn builder<F: ServiceFactory>(factory: F) -> McpHttpBuilder {
        let versions = factory.make().0.versions;
        McpHttpBuilder {
            config: Config {
                endpoint_path: None,
                legacy_sse: Some(LegacySsePaths {
                    sse: "/sse".into(),
                    message: "/message".into(),
                }),
                stateless: false,
                response_mode: ResponseMode::Auto,
                guard: HostGuard::default(),
                max_body: 4 * 1024 * 1024,
                idle_timeout: Some(Duration::from_secs(30 * 60)),
                max_sessions: 1024,
                max_sessions_per_client: 256,
                handshake_timeout: Some(Duration::from_secs(10)),
                max_requests_per_session: 256,
                max_requests_per_client: client_share::DEFAULT_MAX_REQUESTS_PER_CLIENT,
                session_queue_timeout: Duration::from_secs(30),
                max_batch: 100,
                header_read_timeout: Some(Duration::from_secs(10)),
                body_read_timeout: Some(Duration::from_secs(30)),
                body_total_timeout: Some(Duration::from_secs(60)),
                body_min_rate: Some(1024),
                connection_idle_timeout: Some(Duration::from_secs(60)),
                write_timeout: Some(Duration::from_secs(30)),
                max_connections: None,
                max_connections_per_client: None,
                max_streams_per_connection: 100,
                stream_buffer: 256,
                standalone_backlog: 64,
                standalone_backlog_bytes: session::DEFAULT_BACKLOG_BYTES,
                standalone_backlog_total_bytes: session::DEFAULT_BACKLOG_TOTAL_BYTES,
                keep_alive: Some(Duration::from_secs(15)),
                retry: Some(Duration::from_secs(1)),
                event_store: Some(Arc::new(InMemoryEventStore::default())),
                drain_timeout: Duration::from_secs(10),
                validate_param_headers: true,
                session_store: None,
                bus: None,
                versions,
            },
            spawner: Box::new(FactorySpawner(factory)),
        }
    }

    /// How many sessions (Streamable HTTP and HTTP+SSE) are live.
    pub fn session_count(&self) -> usize {
        self.shared.sessions.len()
    }

    /// The endpoint's operational counts: connections and SSE streams open
    /// now, requests refused by each limit. `tessera-telemetry` exports
    /// them as `tessera.connections.open`, `tessera.streams.open` and
    /// `tessera.requests.refused`.
    pub fn stats(&self) -> Arc<HttpStats> {
        self.shared.stats.clone()
    }

    /// With a bus ([`McpHttpBuilder::bus`]): waits until this instance hears
    /// the server-wide events of the others (it happens by itself on the
    /// first request; call it to be sure before serving).
    pub async fn ready(&self) {
        self.shared.link().await;
    }

    /// Whether [`McpHttp::shutdown`] has started.
    pub fn is_shutting_down(&self) -> bool {
        self.shared.shutting_down.load(Ordering::Acquire)
    }

    /// Graceful shutdown: new requests get `503`; requests in progress may
    /// finish (up to the drain timeout); then every stream and session is
    /// closed.
    pub async fn shutdown(&self) {
        self.shared.shutting_down.store(true, Ordering::Release);
        self.shared.inflight.close();
        let drain = self.shared.config.drain_timeout;
        if tokio::time::timeout(drain, self.shared.inflight.wait())
            .await
            .is_err()
        {
            tracing::warn!(
                ?drain,
                "requests still running at the end of the drain timeout"
            );
        }
        self.shared.closing.cancel();
        for s in self.shared.sessions.all() {
            s.terminate_as(session::EndReason::Shutdown);
        }
    }

    async fn handle<B>(self, req: http::Request<B>) -> reply::HttpResponse
    where
        B: http_body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let shared = &self.shared;
        let checked = {
            let host = req
                .headers()
                .get(http::header::HOST)
                .and_then(|h| h.to_str().ok())
                .or_else(|| req.uri().authority().map(|a| a.as_str()));
            let origin = req
                .headers()
                .get(http::header::ORIGIN)
                .map(|o| o.to_str().unwrap_or("(not visible ASCII)"));
            shared.config.guard.check(host, origin)
        };
        if let Err(r) = checked {
            tracing::debug!(header = r.header, value = %r.value, "refused by the Host/Origin check");
            return reply::refuse(
                http::StatusCode::FORBIDDEN,
                format!(
                    "Forbidden: {} {:?} is not allowed (DNS-rebinding protection); allowed: {}. \
                     To accept it, list it in the allowed {}s (tessera serve --allow-{} VALUE, \
                     or McpHttpBuilder::allowed_{}s)",
                    r.header,
                    r.value,
                    r.allowed,
                    r.header.to_ascii_lowercase(),
                    r.header.to_ascii_lowercase(),
                    r.header.to_ascii_lowercase(),
                ),
            );
        }
        if self.is_shutting_down() {
            // Another instance, or this one restarted, can serve the retry.
            return reply::retry_after(
                reply::refuse(
                    http::StatusCode::SERVICE_UNAVAILABLE,
                    "Service Unavailable: the server is shutting down",
                ),
                1,
            );
        }
        if shared.cluster.bus.is_some() && !shared.linked.initialized() {
            shared.link().await;
        }
        let path = req.uri().path();
        if let Some(paths) = &shared.config.legacy_sse {
            if path == paths.sse {
                return legacy_sse::open(shared, req).await;
            }
            if path == paths.message {
                return legacy_sse::message(shared, req).await;
            }
        }
        if let Some(p) = &shared.config.endpoint_path {
            if path != p {
                return reply::refuse(
                    http::StatusCode::NOT_FOUND,
                    format!("Not Found: the MCP endpoint is {p}"),
                );
            }
        }
        streamable::handle(shared, req).await
    }
}

impl<B> tower::Service<http::Request<B>> for McpHttp
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Response = http::Response<McpBody>;
    type Error = std::convert::Infallible;
    type Future = BoxFuture<'static, Result<Self::Response, Self::Error>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        let this = self.clone();
        Box::pin(async move { Ok(this.handle(req).await) })
    }
}

/// Builds an [`McpHttp`]. Every setting has a safe default.
pub struct McpHttpBuilder {
    config: Config,
    spawner: Box<dyn Spawner>,
}

impl std::fmt::Debug for McpHttpBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpHttpBuilder")
            .field("endpoint_path", &self.config.endpoint_path)
            .field("stateless", &self.config.stateless)
            .field("response_mode", &self.config.response_mode)
            .finish_non_exhaustive()
    }
}

impl McpHttpBuilder {
    /// Serves the MCP endpoint only at `path` (other paths get 404). By
    /// default the endpoint answers on any path, so it can be mounted anywhere.
    pub fn endpoint_path(mut self, path: impl Into<String>) -> Self {
        self.config.endpoint_path = Some(path.into());
        self
    }

    /// The paths of the 2024-11-05 HTTP+SSE transport (default `/sse` and
    /// `/message`); `None` turns it off.
    pub fn legacy_sse(mut self, paths: Option<LegacySsePaths>) -> Self {
        self.config.legacy_sse = paths;
        self
    }

    /// Stateless mode: no sessions; every POST gets a fresh engine (legacy
    /// requests need no `initialize`), GET and DELETE get 405.
    pub fn stateless(mut self, on: bool) -> Self {
        self.config.stateless = on;
        self
    }

    /// JSON, SSE or automatic responses (default [`ResponseMode::Auto`]).
    pub fn response_mode(mut self, mode: ResponseMode) -> Self {
        self.config.response_mode = mode;
        self
    }

    /// Derives the Host/Origin allow-lists from the address the server is
    /// bound to (see [`HostGuard::for_bind`]). Without it: loopback names only.
    pub fn bind_address(mut self, addr: SocketAddr) -> Self {
        self.config.guard = HostGuard::for_bind(addr);
        self
    }

    /// Accepts exactly these `Host` values (`name` or `name:port`).
    pub fn allowed_hosts<I, S>(mut self, hosts: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.config.guard.hosts = HostPolicy::List(hosts.into_iter().map(Into::into).collect());
        self
    }

    /// The settings that switch off a protection (any Host, any Origin),
    /// kept apart so that a call site says so:
    /// `builder.dangerous().allow_any_host()`.
    pub fn dangerous(self) -> DangerousSettings {
        DangerousSettings::new(self)
    }

    /// Accepts exactly these `Origin` values (`scheme://host[:port]`).
    pub fn allowed_origins<I, S>(mut self, origins: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.config.guard.origins =
            OriginPolicy::List(origins.into_iter().map(Into::into).collect());
        self
    }

    /// Replaces the whole Host/Origin guard.
    pub fn host_guard(mut self, guard: HostGuard) -> Self {
        self.config.guard = guard;
        self
    }

    /// The largest request body accepted (default 4 MiB); larger gets 413.
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.config.max_body = bytes.max(1);
        self
    }

    /// How long a session may stay idle (no request, no open stream) before
    /// it is closed (default 30 minutes; `None` = never).
    pub fn session_idle_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.config.idle_timeout = timeout;
        self
    }

    /// The most sessions alive at once (default 1024). At the cap the least
    /// recently used idle session is ended to make room; when every session
    /// is busy a new one gets 503.
    pub fn max_sessions(mut self, n: usize) -> Self {
        self.config.max_sessions = n;
        self
    }

    /// The most sessions one client may hold (default 256), checked before
    /// [`max_sessions`](Self::max_sessions). A client is the authenticated
    /// principal, else the peer's IP address ([`RemoteAddr`]). At the cap the
    /// client's own least recently used idle session is ended; when all of
    /// them are busy a new one gets 429.
    pub fn max_sessions_per_client(mut self, n: usize) -> Self {
        self.config.max_sessions_per_client = n.max(1);
        self
    }

    /// How long a new session may wait for the client's first message after
    /// `initialize` (`notifications/initialized`) before it is ended
    /// (default 10 s; `None` = only the idle timeout applies).
    pub fn handshake_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.config.handshake_timeout = timeout;
        self
    }

    /// The most requests one session may have in progress (default 256; a
    /// batch counts each request). Further requests wait up to
    /// [`session_queue_timeout`](Self::session_queue_timeout) for room, then
    /// get 429. On an HTTP+SSE session they get 429 at once.
    pub fn max_requests_per_session(mut self, n: usize) -> Self {
        self.config.max_requests_per_session = n.max(1);
        self
    }

    /// The most requests one client may have in progress at once, over all
    /// its sessions, connections and HTTP/2 streams (default 256; a batch
    /// counts each request). A client is counted as for
    /// [`max_sessions_per_client`](Self::max_sessions_per_client): the
    /// authenticated principal, else the peer's IP address. A request beyond
    /// it gets `429` with `Retry-After` at once, so one client flooding the
    /// server with slow calls cannot starve the others. Behind a reverse
    /// proxy every client has the proxy's address: raise it there.
    pub fn max_requests_per_client(mut self, n: usize) -> Self {
        self.config.max_requests_per_client = n.max(1);
        self
    }

    /// How long a request may wait for room under
    /// [`max_requests_per_session`](Self::max_requests_per_session) (default 30 s).
    pub fn session_queue_timeout(mut self, wait: Duration) -> Self {
        self.config.session_queue_timeout = wait;
        self
    }

    /// The most messages in one JSON-RPC batch (default 100); a larger batch
    /// gets 400 with `-32600` and none of it runs. The elements are counted
    /// as the body arrives: the answer goes out as soon as the one past the
    /// limit is in, and the rest of the body is read and dropped (within
    /// [`max_body_bytes`](Self::max_body_bytes) and the body timeouts, past
    /// which the connection is closed), never kept.
    pub fn max_batch(mut self, messages: usize) -> Self {
        self.config.max_batch = messages.max(1);
        self
    }

    /// With [`serve`]: a connection that has not sent a complete request
    /// head within this time is closed (default 10 s; HTTP/1).
    pub fn header_read_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.config.header_read_timeout = timeout;
        self
    }

    /// A request body that stops arriving for this long (between two reads)
    /// gets 408 and its connection is closed (default 30 s; `None` = wait).
    pub fn body_read_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.config.body_read_timeout = timeout;
        self
    }

    /// A request body that has not fully arrived this long after it
    /// started gets 408 and its connection is closed, however steadily it
    /// trickles in (default 60 s; `None` = no bound).
    pub fn body_total_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.config.body_total_timeout = timeout;
        self
    }

    /// The slowest a request body may arrive, in bytes per second on
    /// average, once it has had 10 s: a body may take 10 s plus one second
    /// per `rate` bytes received, else it gets 408 and its connection is
    /// closed (default 1,024 bytes/s; `None` or `0` = no minimum).
    pub fn body_min_rate(mut self, rate: Option<u64>) -> Self {
        self.config.body_min_rate = rate.filter(|r| *r > 0);
        self
    }

    /// With [`serve`]: a connection with no request in progress and no open
    /// stream for this long is closed (default 60 s; `None` = never).
    pub fn connection_idle_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.config.connection_idle_timeout = timeout;
        self
    }

    /// With [`serve`]: a response or stream the peer does not read for this
    /// long (a write that cannot make progress) is dropped and its connection
    /// closed (default 30 s; `None` = wait).
    pub fn write_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.config.write_timeout = timeout;
        self
    }

    /// With [`serve`]: the most connections open at once. Beyond it a new
    /// connection gets an immediate `503` and is closed; open ones keep
    /// working. Default: the process's file-descriptor limit less a headroom
    /// of a tenth (at least 64) for everything else the process opens.
    pub fn max_connections(mut self, n: usize) -> Self {
        self.config.max_connections = Some(n.max(1));
        self
    }

    /// With [`serve`]: the most connections one peer address holds open at
    /// once. Beyond it a new connection from that address gets an immediate
    /// `429` with `Retry-After` and is closed; other addresses are not
    /// affected. Default: three quarters of
    /// [`max_connections`](Self::max_connections), so a quarter is always
    /// left to others. Behind a reverse proxy every client has the proxy's
    /// address: raise it to the connection cap there.
    pub fn max_connections_per_client(mut self, n: usize) -> Self {
        self.config.max_connections_per_client = Some(n.max(1));
        self
    }

    /// With [`serve`]: the most concurrent requests (HTTP/2 streams) on one
    /// connection (default 100; HTTP/1 serves one at a time anyway).
    pub fn max_streams_per_connection(mut self, n: u32) -> Self {
        self.config.max_streams_per_connection = n.max(1);
        self
    }

    /// How many events may wait for a slow client on one stream (default
    /// 256); when full, the stream is closed (the client can resume it).
    pub fn stream_buffer(mut self, events: usize) -> Self {
        self.config.stream_buffer = events.max(1);
        self
    }

    /// How many unrelated messages are kept for a session without an open GET
    /// stream (default 64; the oldest are dropped).
    pub fn standalone_backlog(mut self, messages: usize) -> Self {
        self.config.standalone_backlog = messages;
        self
    }

    /// How many bytes of unrelated messages are kept for a session without
    /// an open GET stream (default 1 MiB; the oldest are dropped, and a
    /// message bigger than this alone is not kept).
    pub fn standalone_backlog_bytes(mut self, bytes: usize) -> Self {
        self.config.standalone_backlog_bytes = bytes;
        self
    }

    /// How many bytes the standalone backlogs of every session hold
    /// together (default 64 MiB): at the cap, a session makes room from its
    /// own oldest messages, and a message that still does not fit is dropped.
    pub fn standalone_backlog_total_bytes(mut self, bytes: usize) -> Self {
        self.config.standalone_backlog_total_bytes = bytes;
        self
    }

    /// The SSE keep-alive comment interval (default 15 s; `None` = off).
    pub fn keep_alive(mut self, every: Option<Duration>) -> Self {
        self.config.keep_alive = every;
        self
    }

    /// The `retry:` value sent on resumable SSE streams (default 1 s).
    pub fn retry_interval(mut self, retry: Option<Duration>) -> Self {
        self.config.retry = retry;
        self
    }

    /// Where sent events are kept for replay (default: a bounded
    /// [`InMemoryEventStore`]). An `Arc` of a store is a store too, to share
    /// one.
    pub fn event_store(mut self, store: impl EventStore) -> Self {
        self.config.event_store = Some(Arc::new(store));
        self
    }

    /// Turns resumability off: no event is kept, SSE events get no ids.
    pub fn no_event_store(mut self) -> Self {
        self.config.event_store = None;
        self
    }

    /// Where the state of legacy (Streamable HTTP) sessions is kept (default:
    /// a bounded [`tessera_runtime::MemorySessionStore`], which a lone
    /// instance without a [`bus`](Self::bus) leaves empty: nothing could read
    /// it back). Instances that serve one endpoint share one store (and a
    /// bus) so that any of them serves any session; with a persistent store,
    /// sessions outlive a restart.
    /// When the store is down, requests that need it get `503` with a
    /// JSON-RPC error, and 2026-07-28 requests (which need none) go on.
    /// An `Arc` of a store is a store too, to share one.
    pub fn session_store(mut self, store: impl SessionStore) -> Self {
        self.config.session_store = Some(Arc::new(store));
        self
    }

    /// The bus between the instances serving one endpoint (default: none,
    /// a lone instance). With it, an instance serves the sessions begun on
    /// the others: answers to server-to-client requests, cancellations,
    /// messages for a standalone stream held elsewhere, session deletion and
    /// server-wide events travel over it. Use the same
    /// [`session_store`](Self::session_store) and
    /// [`event_store`](Self::event_store) on every instance. An `Arc` of
    /// a bus is a bus too, to share one (with the tasks of a server, say).
    pub fn bus(mut self, bus: impl Bus) -> Self {
        self.config.bus = Some(Arc::new(bus));
        self
    }

    /// How long requests in progress may run on after shutdown or a closed
    /// connection (default 10 s).
    pub fn drain_timeout(mut self, timeout: Duration) -> Self {
        self.config.drain_timeout = timeout;
        self
    }

    /// Whether 2026-07-28 `tools/call` requests get their `Mcp-Param-*`
    /// headers checked against the tool's `x-mcp-header` parameters (default
    /// on; it costs one in-process `tools/list` per call).
    pub fn validate_param_headers(mut self, on: bool) -> Self {
        self.config.validate_param_headers = on;
        self
    }

    /// Builds the service.
    pub fn build(self) -> McpHttp {
        let max = self.config.max_sessions;
        let per_client = self.config.max_sessions_per_client;
        let requests_per_client = self.config.max_requests_per_client;
        let ttl = self
            .config
            .idle_timeout
            .unwrap_or(Duration::from_secs(24 * 60 * 60));
        let cluster = Arc::new(cluster::Cluster::new(
            self.config.session_store.clone(),
            self.config.bus.clone(),
            ttl,
        ));
        McpHttp {
            shared: Arc::new(Shared {
                cluster,
                linked: tokio::sync::OnceCell::new(),
                backlog_budget: session::BacklogBudget::new(
                    self.config.standalone_backlog_total_bytes,
                ),
                config: self.config,
                spawner: self.spawner,
                sessions: registry::Registry::new(max, per_client),
                client_shares: client_share::ClientShares::new(requests_per_client),
                inflight: TaskTracker::new(),
                closing: CancellationToken::new(),
                shutting_down: AtomicBool::new(false),
                stateless_client: single::StatelessClient::default(),
                stats: Arc::default(),
            }),
        }
    }
}
