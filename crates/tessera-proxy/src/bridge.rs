//! [`Proxy`]: one upstream server served again, over any transport and in
//! both eras.
//!
//! - 2026-07-28 requests share one upstream connection (re-opened when it
//!   dies), since they carry everything in `_meta`.
//! - When that connection speaks 2026-07-28 (and, by default, the upstream
//!   is a stdio process: [`UpstreamOptions::share_legacy_sessions`]),
//!   legacy downstream sessions (`initialize` conversations) are served
//!   over it too, as 2026-07-28
//!   requests carrying the session's capabilities and client info: the
//!   server's requests come back as input rounds the proxy runs with the
//!   client, and list changes reach the session from the proxy's own listen
//!   stream upstream ([`crate::fanout`]). A session moves to an upstream
//!   session of its own (below) for good once it needs state that only a
//!   session keeps: a log level, unless the server declares that its logs
//!   name the request they belong to (the tag [`crate::route`] describes,
//!   as Tessera servers do; other servers' logs on a shared stdio
//!   connection would be lost with several requests in flight), resource
//!   subscriptions, or tasks.
//! - Otherwise each legacy session gets its own upstream session, opened at
//!   its first request with the client's version and capabilities, and
//!   closed with it: session state (log level, resource subscriptions,
//!   roots, the server's requests to the client) stays one to one.
//!
//! When the upstream speaks only an older version, a 2026-07-28 client's
//! listen streams are served by the proxy from the upstream's change
//! notifications; when it speaks only 2026-07-28, a legacy client's
//! input rounds are turned into ordinary requests to that client.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use tessera_types::methods;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tessera_http::{ServiceFactory, ToolHeaders};
use tessera_proto::mirror::{self, ParamHeader};
use tessera_proto::{CallError, ConnectMode, EngineConfig, RequestOptions, ServerIdentity};
use tessera_runtime::middleware::MiddlewareStack;
use tessera_runtime::{
    ConnectionOptions, HandlerResult, Notification, PeerError, Reply, ReplyResult, Request, Service,
};
use tessera_types::{
    Era, ErrorObject, Implementation, JsonObject, PaginatedRequestParams, ServerCapabilities,
};

use crate::calls::Calls;
use crate::error::ProxyError;
use crate::fanout::{self, Fanout};
use crate::forward::{forward, forward_reply};
use crate::listen::{self, Listeners};
use crate::route::{SessionSink, SharedSink, Unsolicited};
use crate::shapes::{self, Loose};
use crate::upstream::{
    ProcessCap, Upstream, UpstreamOptions, UpstreamSpec, all_client_capabilities, proxy_identity,
};

/// The request methods a proxy passes on (the upstream answers `-32601` for
/// what it does not serve). `initialize`, `ping`, `server/discover` and
/// `logging/setLevel` are answered by the proxy's own engine.
pub(crate) const FORWARDED_METHODS: [&str; 15] = [
    methods::TOOLS_LIST,
    methods::TOOLS_CALL,
    methods::RESOURCES_LIST,
    methods::RESOURCES_READ,
    methods::RESOURCES_TEMPLATES_LIST,
    methods::RESOURCES_SUBSCRIBE,
    methods::RESOURCES_UNSUBSCRIBE,
    methods::PROMPTS_LIST,
    methods::PROMPTS_GET,
    methods::COMPLETION_COMPLETE,
    methods::SUBSCRIPTIONS_LISTEN,
    methods::TASKS_GET,
    methods::TASKS_RESULT,
    methods::TASKS_LIST,
    methods::TASKS_CANCEL,
];

/// The members of a `tools/list` page the proxy learns schemas from.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct ToolsPage {
    tools: Loose<Vec<Loose<ToolSchema>>>,
    next_cursor: Loose<String>,
}

/// A listed tool's name and input schema.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct ToolSchema {
    name: Loose<String>,
    input_schema: Loose<JsonObject>,
}

/// The params of `logging/setLevel` as the proxy passes the session's
/// level on (whatever the client set).
#[derive(Debug, Serialize)]
struct SetLevel {
    level: String,
}

/// The upstream's tool input schemas, for the `Mcp-Param-*` header checks
/// of 2026-07-28 `tools/call` requests (without it, each call costs an
/// internal `tools/list` upstream). Filled at start and by every
/// `tools/list` that passes through; emptied by `tools/list_changed`.
#[derive(Default)]
pub(crate) struct ToolSchemas {
    map: std::sync::RwLock<Option<HashMap<String, Arc<[ParamHeader]>>>>,
}

impl ToolSchemas {
    /// Records the tools of one `tools/list` page.
    pub(crate) fn learn(&self, result: &JsonObject) {
        let page: ToolsPage = shapes::read(result);
        let Loose::Valid(tools) = page.tools else {
            return;
        };
        let mut m = self.map.write().unwrap_or_else(|e| e.into_inner());
        let map = m.get_or_insert_with(HashMap::new);
        for t in tools.into_iter().filter_map(Loose::into_valid) {
            if let (Loose::Valid(n), Loose::Valid(s)) = (t.name, t.input_schema) {
                map.insert(n, mirror::param_headers(&s).into());
            }
        }
    }

    /// Forgets everything (the upstream's tools changed).
    pub(crate) fn forget(&self) {
        *self.map.write().unwrap_or_else(|e| e.into_inner()) = None;
    }

    fn get(&self, name: &str) -> Option<Arc<[ParamHeader]>> {
        self.map
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .and_then(|m| m.get(name).cloned())
    }
}

struct Inner {
    spec: UpstreamSpec,
    options: UpstreamOptions,
    config: Arc<EngineConfig>,
    shared: tokio::sync::Mutex<Option<Arc<Upstream>>>,
    calls: Arc<Calls>,
    listeners: Arc<Listeners>,
    schemas: Arc<ToolSchemas>,
    /// The legacy sessions served over the shared connection.
    fanout: Arc<Fanout>,
    /// Set by [`Proxy::close`]: the shared connection stays closed.
    closed: AtomicBool,
    /// Whether legacy sessions may be served over a 2026-07-28 shared
    /// connection ([`UpstreamOptions::share_legacy_sessions`]).
    share_legacy: bool,
    /// Whether the server logs without saying that its logs carry the
    /// request's tag: on a shared connection they would be lost with
    /// several requests in flight, so a session that sets a log level needs
    /// an upstream session of its own.
    untagged_logs: bool,
    /// The processes started for sessions of their own (stdio upstreams).
    processes: ProcessCap,
}

/// A proxy in front of one upstream server. It is a
/// [`tessera_http::ServiceFactory`]: give it to [`tessera_http::McpHttp`]
/// to serve it over Streamable HTTP (and the 2024-11-05 HTTP+SSE pair), or
/// call [`Proxy::serve_stdio`].
///
/// ```no_run
/// use tessera_proxy::{Proxy, UpstreamOptions, UpstreamSpec};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let upstream = UpstreamSpec::stdio("tessera", ["serve", "--stdio"]);
/// let proxy = Proxy::connect(upstream, UpstreamOptions::default()).await?;
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8002").await?;
/// let mcp = tessera_http::McpHttp::builder(proxy)
///     .bind_address(listener.local_addr()?)
///     .endpoint_path("/mcp")
///     .build();
/// tessera_http::serve(listener, mcp, async { let _ = tokio::signal::ctrl_c().await; }).await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Proxy {
    inner: Arc<Inner>,
    shared_service: Arc<ProxyService>,
}

impl std::fmt::Debug for Proxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Proxy")
            .field("upstream", &self.inner.spec)
            .finish_non_exhaustive()
    }
}

impl Proxy {
    /// Connects to the upstream once (to learn who it is and what it
    /// offers; the connection is kept for 2026-07-28 requests) and returns
    /// the proxy.
    pub async fn connect(
        spec: UpstreamSpec,
        options: UpstreamOptions,
    ) -> Result<Proxy, ProxyError> {
        let calls = Arc::new(Calls::default());
        let listeners = Arc::new(Listeners::default());
        let schemas = Arc::new(ToolSchemas::default());
        let first = open_shared(&spec, &options, &calls, &listeners, &schemas).await?;
        if first.connected.server_capabilities.tools.is_some() {
            learn_tools(&first, &schemas).await;
        }
        let c = &first.connected;
        let identity = ServerIdentity {
            info: c.server_info.clone(),
            capabilities: (*c.server_capabilities).clone(),
            instructions: c.instructions.clone(),
            ..ServerIdentity::default()
        };
        let config = Arc::new(
            EngineConfig::server(identity).with_methods(FORWARDED_METHODS.iter().copied()),
        );
        let share_legacy = options
            .share_legacy_sessions
            .unwrap_or(matches!(spec, UpstreamSpec::Stdio(_)));
        let caps = &config.server.capabilities;
        let untagged_logs = caps.logging.is_some()
            && !caps
                .experimental
                .as_ref()
                .is_some_and(|x| x.contains_key(tessera_proto::meta_keys::REQUEST_TAG));
        let processes = ProcessCap::new(options.max_processes);
        let inner = Arc::new(Inner {
            processes,
            share_legacy,
            untagged_logs,
            spec,
            options,
            config,
            shared: tokio::sync::Mutex::new(Some(Arc::new(first))),
            calls,
            listeners,
            schemas,
            fanout: Arc::new(Fanout::default()),
            closed: AtomicBool::new(false),
        });
        let shared_service = Arc::new(ProxyService {
            inner: inner.clone(),
            session: None,
        });
        Ok(Proxy {
            inner,
            shared_service,
        })
    }

    /// The upstream server's `serverInfo`.
    pub fn server_info(&self) -> &Implementation {
        &self.inner.config.server.info
    }

    /// The shared upstream connection's state, under the name
    /// `upstream`: `connected`, `connecting` (being opened now) or
    /// `reconnecting` (it ended; the next request opens it again, so the
    /// proxy stays ready), `closed` once [`Proxy::close`] ran.
    pub fn readiness(&self) -> crate::Readiness {
        let state = match self.inner.shared.try_lock() {
            _ if self.inner.closed.load(Ordering::Acquire) => "closed",
            Err(_) => "connecting",
            Ok(slot) if slot.as_ref().is_some_and(|u| u.is_open()) => "connected",
            Ok(_) => "reconnecting",
        };
        let mut upstreams = serde_json::Map::new();
        upstreams.insert("upstream".into(), Value::String(state.into()));
        crate::Readiness {
            ready: state != "closed",
            upstreams,
        }
    }

    /// The upstream server's capabilities (what the proxy declares).
    pub fn capabilities(&self) -> &ServerCapabilities {
        &self.inner.config.server.capabilities
    }

    /// The era of the shared upstream connection (modern when the upstream
    /// speaks 2026-07-28).
    pub async fn upstream_era(&self) -> Option<Era> {
        self.inner.shared.lock().await.as_ref().map(|u| u.era())
    }

    /// The engine configuration the proxy serves with.
    pub fn engine_config(&self) -> EngineConfig {
        (*self.inner.config).clone()
    }

    /// A service for one downstream connection (a legacy session gets its
    /// own upstream session).
    pub fn session_service(&self) -> ProxyService {
        ProxyService {
            inner: self.inner.clone(),
            session: Some(Arc::new(SessionLink::new(self.inner.fanout.clone()))),
        }
    }

    /// Serves the proxy on this process's stdin/stdout until the client
    /// closes it.
    pub async fn serve_stdio(&self) -> std::io::Result<()> {
        self.serve_stdio_with(MiddlewareStack::new()).await
    }

    /// [`Proxy::serve_stdio`], with `layers` over the requests the client
    /// sends (telemetry, limits).
    pub async fn serve_stdio_with(&self, layers: MiddlewareStack) -> std::io::Result<()> {
        let (_peer, task) = tessera_runtime::serve_stdio(
            self.engine_config(),
            tessera_runtime::middleware::Layered::new(self.session_service(), layers),
            ConnectionOptions::default(),
        );
        let out = task.await.unwrap_or_else(|e| Err(std::io::Error::other(e)));
        self.close().await;
        out
    }

    /// Closes the shared upstream connection.
    pub async fn close(&self) {
        self.inner.closed.store(true, Ordering::Release);
        if let Some(up) = self.inner.shared.lock().await.take() {
            up.close().await;
        }
    }
}

/// Reads every page of the upstream's tool list into `schemas`. Each page
/// waits at most the upstream connection's request timeout (`--timeout`),
/// so an upstream that never answers delays the start by that much. Without
/// the list the proxy still serves; it learns the schemas from the first
/// `tools/list` a client makes.
async fn learn_tools(up: &Upstream, schemas: &ToolSchemas) {
    let mut cursor: Option<String> = None;
    for _ in 0..100 {
        let params = cursor
            .take()
            .and_then(|c| shapes::write(&PaginatedRequestParams::after(c)).ok());
        match up
            .peer
            .request(methods::TOOLS_LIST, params, RequestOptions::default())
            .await
        {
            Ok(page) => {
                schemas.learn(&page);
                match shapes::read::<ToolsPage>(&page).next_cursor {
                    Loose::Valid(c) => cursor = Some(c),
                    _ => return,
                }
            }
            Err(e) => {
                tracing::warn!(%e, "the upstream's tools/list at start failed; serving without it");
                return;
            }
        }
    }
}

async fn open_shared(
    spec: &UpstreamSpec,
    options: &UpstreamOptions,
    calls: &Arc<Calls>,
    listeners: &Arc<Listeners>,
    schemas: &Arc<ToolSchemas>,
) -> Result<Upstream, ProxyError> {
    let sink = Arc::new(SharedSink {
        calls: calls.clone(),
        listeners: listeners.clone(),
        unsolicited: Some(forget_on_change(schemas)),
    });
    Upstream::connect(
        spec,
        ConnectMode::Auto,
        proxy_identity(all_client_capabilities()),
        sink,
        options,
        None,
    )
    .await
}

impl Inner {
    /// The shared connection, re-opened if it died.
    async fn shared(&self) -> Result<Arc<Upstream>, ErrorObject> {
        let mut slot = self.shared.lock().await;
        if let Some(up) = slot.as_ref() {
            if up.is_open() {
                return Ok(up.clone());
            }
        }
        if self.closed.load(Ordering::Acquire) {
            return Err(ErrorObject::internal("the proxy is closed"));
        }
        let up = open_shared(
            &self.spec,
            &self.options,
            &self.calls,
            &self.listeners,
            &self.schemas,
        )
        .await
        .map_err(|e| ErrorObject::internal(format!("upstream unavailable: {e}")))?;
        let up = Arc::new(up);
        *slot = Some(up.clone());
        Ok(up)
    }

    /// Opens the proxy's own listen stream on the shared 2026-07-28
    /// connection `up` unless it is open or `up` has nothing (more) to say.
    fn ensure_fanout(&self, up: &Arc<Upstream>) {
        if self.fanout.running() || self.fanout.refused(up) {
            return;
        }
        let Some(params) = fanout::listen_params(&up.connected.server_capabilities) else {
            // The server announces no list changes.
            self.fanout.refuse(Arc::downgrade(up));
            return;
        };
        if self.fanout.start() {
            tokio::spawn(run_fanout(
                up.peer.clone(),
                Arc::downgrade(up),
                params,
                self.listeners.clone(),
                self.fanout.clone(),
            ));
        }
    }
}

/// Keeps the proxy's own listen stream open on one shared 2026-07-28
/// connection (`peer`) until it ends; its change notifications go to the
/// legacy sessions served over that connection. Only the connection's
/// handle is held: the stream keeps neither the connection nor the proxy
/// alive. The next legacy request over the shared connection opens a new
/// stream once this one has ended.
async fn run_fanout(
    peer: tessera_runtime::Peer,
    conn: Weak<Upstream>,
    params: JsonObject,
    listeners: Arc<Listeners>,
    sessions: Arc<Fanout>,
) {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let options = RequestOptions {
        no_timeout: true,
        ..RequestOptions::default()
    };
    let call = peer.request_with_id(methods::SUBSCRIPTIONS_LISTEN, Some(params), options, tx);
    tokio::pin!(call);
    let mut assigned = Some(rx);
    let out = loop {
        tokio::select! {
            id = async { assigned.as_mut().expect("guarded by the branch condition").await }, if assigned.is_some() => {
                assigned = None;
                if let Ok(id) = id {
                    listeners.set_fanout(id, sessions.clone());
                }
            }
            out = &mut call => break out,
        }
    };
    listeners.clear_fanout();
    match out {
        // Refused: asking this connection again would not help.
        Err(PeerError::Call(CallError::Remote(e))) => {
            tracing::warn!(%e, "the upstream refused the proxy's listen stream; legacy sessions \
                served over the shared connection get no list changes from it");
            sessions.refuse(conn);
        }
        other => tracing::debug!(ended = ?other.err(), "the proxy's listen stream ended"),
    }
    sessions.stopped();
}

/// Whether a legacy request needs the session's own upstream session:
/// what it asks for, or what the session has set up, is state a shared
/// connection does not keep (or cannot route back to it).
fn needs_own_session(inner: &Inner, r: &Request) -> bool {
    let stateful = matches!(
        r.method.as_str(),
        methods::RESOURCES_SUBSCRIBE
            | methods::RESOURCES_UNSUBSCRIBE
            | methods::TASKS_GET
            | methods::TASKS_RESULT
            | methods::TASKS_LIST
            | methods::TASKS_CANCEL
    );
    let task = r
        .params
        .as_ref()
        .is_some_and(|p| p.may_have("task") && p.object().contains_key("task"));
    // A client of the tasks extension may get a task for any call. (The
    // 2025-11-25 `tasks` capability is about the client running the
    // server's requests as tasks: over the shared connection the proxy
    // sends those as ordinary requests, so it needs nothing upstream.)
    let tasks = r
        .context
        .peer_capabilities
        .has_extension(tessera_types::tasks::TASKS_EXTENSION);
    let logs = inner.untagged_logs && r.context.log_level.is_some();
    stateful || task || tasks || logs
}

/// One legacy session: served over the shared 2026-07-28 connection until
/// it needs an upstream session of its own.
struct SessionLink {
    conn: tokio::sync::OnceCell<Arc<Upstream>>,
    calls: Arc<Calls>,
    /// The log level last sent upstream.
    level: Mutex<Option<String>>,
    /// Set once the session uses its own upstream session (for good).
    pinned: AtomicBool,
    /// Its key among the sessions served over the shared connection.
    joined: Mutex<Option<u64>>,
    fanout: Arc<Fanout>,
}

impl Drop for SessionLink {
    fn drop(&mut self) {
        if let Some(key) = self.joined.get_mut().ok().and_then(|k| k.take()) {
            self.fanout.leave(key);
        }
    }
}

impl SessionLink {
    fn new(fanout: Arc<Fanout>) -> Self {
        SessionLink {
            conn: Default::default(),
            calls: Default::default(),
            level: Default::default(),
            pinned: AtomicBool::new(false),
            joined: Mutex::new(None),
            fanout,
        }
    }

    /// Registers the session for the list changes of the shared
    /// connection `up` (once; its first request waits, boundedly, while the
    /// proxy's listen stream is being opened), and makes sure that stream
    /// is open.
    async fn join(&self, inner: &Inner, up: &Arc<Upstream>, r: &Request) {
        let first = {
            let mut joined = self.joined.lock().unwrap_or_else(|e| e.into_inner());
            let first = joined.is_none();
            if first {
                *joined = Some(self.fanout.join(r.peer.clone()));
            }
            first
        };
        inner.ensure_fanout(up);
        if first {
            self.fanout.opened().await;
        }
    }

    /// Moves the session to its own upstream session for good.
    fn pin(&self) {
        self.pinned.store(true, Ordering::Release);
        if let Some(key) = self.joined.lock().unwrap_or_else(|e| e.into_inner()).take() {
            self.fanout.leave(key);
        }
    }

    async fn upstream(&self, inner: &Inner, r: &Request) -> Result<Arc<Upstream>, ErrorObject> {
        let up = self
            .conn
            .get_or_try_init(|| async {
                let sink = || {
                    Arc::new(SessionSink {
                        calls: self.calls.clone(),
                        session: r.peer.clone(),
                        on_change: Some(forget_on_change(&inner.schemas)),
                    })
                };
                let mut caps = r.context.peer_capabilities.client_or_none().clone();
                if r.extensions
                    .get::<tessera_http::http::HeaderMap>()
                    .is_some()
                {
                    // This client is on HTTP: the upstream may ask to close
                    // its request's SSE stream (SEP-1699 polling).
                    caps.experimental
                        .get_or_insert_with(Default::default)
                        .insert(
                            tessera_runtime::CLOSE_SSE_STREAM_CAPABILITY.into(),
                            JsonObject::new(),
                        );
                }
                // A stdio upstream session is a process: it takes a place
                // under the cap (given back when the process has exited).
                let place = || match inner.spec {
                    UpstreamSpec::Stdio(_) => inner.processes.take().map(Some),
                    UpstreamSpec::Http { .. } => Ok(None),
                };
                let legacy = Upstream::connect(
                    &inner.spec,
                    ConnectMode::Legacy(r.context.version),
                    proxy_identity(caps.clone()),
                    sink(),
                    &inner.options,
                    place().map_err(Refusal::Cap)?,
                )
                .await;
                let up = match legacy {
                    Ok(up) => up,
                    // A server that speaks only 2026-07-28: input rounds are
                    // translated for this client.
                    Err(first) => Upstream::connect(
                        &inner.spec,
                        ConnectMode::Auto,
                        proxy_identity(caps),
                        sink(),
                        &inner.options,
                        place().map_err(Refusal::Cap)?,
                    )
                    .await
                    .map_err(|_| Refusal::Connect(first))?,
                };
                Ok::<_, Refusal>(Arc::new(up))
            })
            .await
            .map_err(|e| match e {
                Refusal::Cap(e) => e,
                Refusal::Connect(e) => ErrorObject::internal(format!("upstream unavailable: {e}")),
            })?
            .clone();
        if !up.is_open() {
            return Err(ErrorObject::internal(
                "the upstream server of this session has gone away; start a new session",
            ));
        }
        self.sync_level(&up, r).await;
        Ok(up)
    }

    /// Passes the session's `logging/setLevel` on to a legacy upstream.
    async fn sync_level(&self, up: &Upstream, r: &Request) {
        let Some(level) = r.context.log_level.clone() else {
            return;
        };
        if up.era() != Era::Legacy || up.connected.server_capabilities.logging.is_none() {
            return;
        }
        {
            let mut sent = self.level.lock().unwrap_or_else(|e| e.into_inner());
            if sent.as_deref() == Some(level.as_str()) {
                return;
            }
            *sent = Some(level.clone());
        }
        let Ok(p) = shapes::write(&SetLevel { level }) else {
            return;
        };
        if let Err(e) = up
            .peer
            .request(
                methods::LOGGING_SET_LEVEL,
                Some(p),
                RequestOptions::default(),
            )
            .await
        {
            tracing::debug!(%e, "upstream refused logging/setLevel");
        }
    }
}

/// Why a session's own upstream session could not be opened.
enum Refusal {
    /// Every place under `--max-upstream-processes` is taken.
    Cap(ErrorObject),
    /// The upstream did not start or connect.
    Connect(ProxyError),
}

/// The downstream side of a [`Proxy`]: a [`tessera_runtime::Service`] that
/// forwards every request upstream.
#[derive(Clone)]
pub struct ProxyService {
    inner: Arc<Inner>,
    session: Option<Arc<SessionLink>>,
}

impl std::fmt::Debug for ProxyService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProxyService")
            .field("session", &self.session.is_some())
            .finish_non_exhaustive()
    }
}

impl ProxyService {
    /// The upstream connection that serves `r`, and its calls in progress.
    async fn upstream_for(&self, r: &Request) -> Result<(Arc<Upstream>, Arc<Calls>), ErrorObject> {
        Ok(match (&self.session, r.context.era) {
            (Some(s), Era::Legacy) => {
                if self.inner.share_legacy
                    && !s.pinned.load(Ordering::Acquire)
                    && !needs_own_session(&self.inner, r)
                {
                    let up = self.inner.shared().await?;
                    if up.era() == Era::Modern {
                        s.join(&self.inner, &up, r).await;
                        return Ok((up, self.inner.calls.clone()));
                    }
                }
                // Pinned only once its own session is open: a session
                // refused one (the process cap) goes on over the shared
                // connection for what that can serve.
                let up = s.upstream(&self.inner, r).await?;
                s.pin();
                (up, s.calls.clone())
            }
            _ => (self.inner.shared().await?, self.inner.calls.clone()),
        })
    }
}

impl Service for ProxyService {
    fn methods(&self) -> Vec<String> {
        FORWARDED_METHODS.iter().map(|m| (*m).to_owned()).collect()
    }

    /// Results the proxy does not read (it learns tool schemas from
    /// `tools/list`, and serves listen streams itself) are passed on as the
    /// JSON text the upstream wrote, where nothing needs changing in them.
    async fn handle(self: Arc<Self>, mut r: Request) -> ReplyResult {
        if r.method == methods::TOOLS_LIST || r.method == methods::SUBSCRIPTIONS_LISTEN {
            return self.handle_request(r).await.map(Reply::Object);
        }
        let (up, calls) = self.upstream_for(&r).await?;
        // The params go on as the text the client sent, `_meta` edited.
        let params = r.params.take();
        Ok(forward_reply(&up, &calls, &r, &r.method, params).await?)
    }

    async fn handle_request(self: Arc<Self>, mut r: Request) -> HandlerResult {
        let (up, calls) = self.upstream_for(&r).await?;
        if r.method == methods::SUBSCRIPTIONS_LISTEN {
            let _guard = calls.enter(&r);
            return match up.era() {
                Era::Modern => listen::forward(&up, &self.inner.listeners, &r).await,
                Era::Legacy => listen::translate(&up, &self.inner.listeners, &r).await,
            };
        }
        // The params move on upstream (rewritten in place, never copied).
        let params = r.params.take().map(tessera_types::Params::into_object);
        let out = forward(&up, &calls, &r, &r.method, params)
            .await
            .map_err(ErrorObject::from);
        if let (Ok(result), methods::TOOLS_LIST) = (&out, r.method.as_str()) {
            self.inner.schemas.learn(result);
        }
        out
    }

    async fn handle_notification(self: Arc<Self>, n: Notification) {
        let Some(s) = &self.session else {
            return;
        };
        if n.method == methods::NOTIFICATIONS_ROOTS_LIST_CHANGED {
            if let Some(up) = s.conn.get() {
                if let Err(e) = up.peer.notify(n.method.clone(), n.params, None) {
                    tracing::debug!(%e, "roots/list_changed not passed upstream");
                }
            }
        }
    }
}

impl ServiceFactory for Proxy {
    type Service = ProxyService;

    fn make(&self) -> (EngineConfig, ProxyService) {
        (self.engine_config(), self.session_service())
    }

    fn make_shared(&self) -> (Arc<EngineConfig>, Arc<ProxyService>) {
        (self.inner.config.clone(), self.shared_service.clone())
    }

    fn make_session(&self) -> (Arc<EngineConfig>, Arc<ProxyService>) {
        (self.inner.config.clone(), Arc::new(self.session_service()))
    }

    fn tool_param_headers(&self, name: &str) -> ToolHeaders {
        // Unknown here: let the HTTP layer ask (the list may be newer than
        // what the proxy has seen).
        match self.inner.schemas.get(name) {
            Some(headers) => ToolHeaders::Known(headers),
            None => ToolHeaders::Unknown,
        }
    }
}

/// Forgets the tool schemas when the upstream says its tools changed.
fn forget_on_change(schemas: &Arc<ToolSchemas>) -> Unsolicited {
    let schemas = schemas.clone();
    Arc::new(move |method: &str, _params: Option<&JsonObject>| {
        if method == methods::NOTIFICATIONS_TOOLS_LIST_CHANGED {
            schemas.forget();
        }
    })
}
