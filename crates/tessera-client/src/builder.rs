//! [`ClientBuilder`]: who the client is, what it answers, how it connects.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tessera_proto::{ClientIdentity, ConnectMode, EngineConfig};
use tessera_runtime::middleware::{McpLayer, MiddlewareStack};
use tessera_runtime::{ChildCommand, ConnectionOptions, Transport};
use tessera_types::{
    ClientCapabilities, Era, ExtensionSettings, Implementation, LoggingLevel, ProtocolVersion, Root,
};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{broadcast, watch};

use crate::cache::ResponseCache;
use crate::client::{Client, ClientInner, Remembered, Settings};
use crate::connect::{
    ChildConnector, Connector, DynConnector, Launch, Started, TransportConnector, establish,
};
use crate::error::ClientError;
use crate::extension::ClientExtension;
use crate::handler::{FormHandler, SamplingHandler, UrlConsent};
use crate::input::{HandlerSet, Inputs};
use crate::listen::Subscriptions;
use crate::options::ReconnectPolicy;
use crate::service::Shared;

/// Builds a [`Client`]: who it is, what it supports, how it connects.
///
/// Capabilities are derived from the handlers: [`ClientBuilder::roots`]
/// declares `roots` (with `listChanged`), [`ClientBuilder::sampling`]
/// `sampling` (and `sampling.tools` with [`ClientBuilder::sampling_with_tools`]),
/// [`ClientBuilder::elicitation`] `elicitation.form` and
/// [`ClientBuilder::url_elicitation`] `elicitation.url`. The same handlers
/// answer legacy server requests and 2026-07-28 input requests.
#[derive(Debug, Clone)]
pub struct ClientBuilder {
    info: Implementation,
    capabilities: ClientCapabilities,
    mode: ConnectMode,
    versions: Vec<ProtocolVersion>,
    request_timeout: Option<Duration>,
    max_request_timeout: Option<Duration>,
    probe_timeout: Duration,
    connection: ConnectionOptions,
    handlers: HandlerSet,
    errors: Vec<String>,
    cache: bool,
    max_rounds: usize,
    max_pages: usize,
    retry_idempotent: bool,
    reconnect: ReconnectPolicy,
    resubscribe: bool,
    log_level: Option<LoggingLevel>,
    event_capacity: usize,
    middleware: MiddlewareStack,
}

impl ClientBuilder {
    /// A client that calls itself `name` `version`.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        ClientBuilder {
            info: Implementation::new(name, version),
            capabilities: ClientCapabilities::default(),
            mode: ConnectMode::Auto,
            versions: ProtocolVersion::ALL.to_vec(),
            request_timeout: Some(Duration::from_secs(60)),
            max_request_timeout: Some(Duration::from_secs(600)),
            probe_timeout: Duration::from_secs(5),
            connection: ConnectionOptions::default(),
            handlers: HandlerSet::default(),
            errors: Vec::new(),
            cache: false,
            max_rounds: 10,
            max_pages: 1000,
            retry_idempotent: false,
            reconnect: ReconnectPolicy::default(),
            resubscribe: true,
            log_level: None,
            event_capacity: 1024,
            middleware: MiddlewareStack::new(),
        }
    }

    /// Sets the whole `Implementation` info (title, icons, website…).
    pub fn info(mut self, info: Implementation) -> Self {
        self.info = info;
        self
    }

    /// How to pick the era and version: [`ConnectMode::Auto`] (the default)
    /// probes with `server/discover` and falls back to `initialize`.
    pub fn mode(mut self, mode: ConnectMode) -> Self {
        self.mode = mode;
        self
    }

    /// Pins one protocol version (and its era).
    pub fn protocol_version(mut self, v: ProtocolVersion) -> Self {
        self.mode = match v.era() {
            Era::Legacy => ConnectMode::Legacy(v),
            Era::Modern => ConnectMode::Modern(v),
        };
        self
    }

    /// The protocol versions the client accepts (all known ones by default).
    pub fn versions(mut self, versions: impl IntoIterator<Item = ProtocolVersion>) -> Self {
        self.versions = versions.into_iter().collect();
        self
    }

    /// Capabilities to declare besides those the handlers imply (experimental
    /// ones, extensions). A capability declared here without a handler is
    /// refused when used, except `roots`, answered with an empty list.
    pub fn capabilities(mut self, caps: ClientCapabilities) -> Self {
        self.capabilities = caps;
        self
    }

    /// Supports a protocol extension (see [`ClientExtension`]): it is
    /// declared under `capabilities.extensions` and answers its own server
    /// requests and notifications. An identifier or a method registered
    /// twice fails [`connect`](ClientBuilder::connect_transport).
    pub fn extension(mut self, extension: impl ClientExtension) -> Self {
        if let Err(e) = self.handlers.extensions.add(Arc::new(extension)) {
            self.errors.push(e);
        }
        self
    }

    /// Declares the Tasks extension (`io.modelcontextprotocol/tasks`), so a
    /// 2026-07-28 server may answer a call with a task (see
    /// [`Client::call_tool_as_task`](crate::Client::call_tool_as_task)).
    pub fn tasks(mut self) -> Self {
        self.capabilities
            .declare_extension(&tessera_types::tasks::TasksExtensionCapability {});
        self
    }

    /// Lets the server send `sampling/createMessage` and `elicitation/create`
    /// as tasks (2025-11-25): declares `tasks.requests.sampling.createMessage`
    /// (with a sampling handler) and `tasks.requests.elicitation.create`
    /// (with an elicitation handler), plus `tasks.list` and `tasks.cancel`.
    /// Such a request is answered at once with a task while the handler runs;
    /// the server follows it with `tasks/get`, `tasks/result`, `tasks/list`
    /// and `tasks/cancel` (which stops the handler). Tasks are kept until
    /// their `ttl` (at most an hour), at most [`MAX_RECEIVED_TASKS`](crate::MAX_RECEIVED_TASKS)
    /// at once. Without a sampling or elicitation handler nothing is declared.
    pub fn receive_tasks(mut self) -> Self {
        self.handlers.task_receiver = true;
        self
    }

    /// Declares extension `E` with `settings`, for extensions that add no
    /// server-to-client methods (the client only calls the server's).
    pub fn declare_extension<E: ExtensionSettings>(mut self, settings: &E) -> Self {
        self.capabilities.declare_extension(settings);
        self
    }

    /// The default timeout of each request (`None`: wait forever); restarted
    /// by progress on requests that ask for it.
    pub fn request_timeout(mut self, t: Option<Duration>) -> Self {
        self.request_timeout = t;
        self
    }

    /// The default hard limit of each request, whatever progress arrives
    /// (`None`: none; 10 minutes by default).
    pub fn max_request_timeout(mut self, t: Option<Duration>) -> Self {
        self.max_request_timeout = t;
        self
    }

    /// How long to wait for an answer to the `server/discover` probe before
    /// assuming a legacy server.
    pub fn probe_timeout(mut self, t: Duration) -> Self {
        self.probe_timeout = t;
        self
    }

    /// Says where the connection goes (recorded by telemetry as
    /// `network.transport`, `server.address` and `server.port`);
    /// [`ClientBuilder::connect_child`] says a pipe by itself.
    pub fn link(mut self, link: tessera_runtime::Link) -> Self {
        self.connection.link = Some(Arc::new(link));
        self
    }

    /// Limits and timing of the connection (message size, drain time).
    pub fn connection_options(mut self, options: ConnectionOptions) -> Self {
        self.connection = options;
        self
    }

    /// Exposes `roots` (`file://` URIs) and declares the `roots` capability.
    /// Change them later with [`Client::set_roots`].
    pub fn roots(mut self, roots: Vec<Root>) -> Self {
        if let Err(e) = crate::roots::check_roots(&roots) {
            self.errors.push(e);
        }
        self.handlers.roots = Some(roots);
        self
    }

    /// Answers sampling requests with `handler` and declares `sampling`
    /// (without tools: tool-enabled requests are refused).
    pub fn sampling(mut self, handler: impl SamplingHandler) -> Self {
        self.handlers.sampling = Some(Arc::new(handler));
        self.handlers.sampling_tools = false;
        self
    }

    /// Like [`ClientBuilder::sampling`], declaring `sampling.tools` as well:
    /// requests may offer tools and carry tool use and tool result content
    /// (checked against the pairing rules).
    pub fn sampling_with_tools(mut self, handler: impl SamplingHandler) -> Self {
        self.handlers.sampling = Some(Arc::new(handler));
        self.handlers.sampling_tools = true;
        self
    }

    /// Answers form-mode elicitations with `handler` and declares
    /// `elicitation.form`. Accepted answers get the schema's defaults for
    /// omitted fields (SEP-1034) and are validated against the requested
    /// schema before they are sent.
    pub fn elicitation(mut self, handler: impl FormHandler) -> Self {
        self.handlers.form = Some(Arc::new(handler));
        self
    }

    /// Asks the user's consent for URL-mode elicitations with `consent` and
    /// declares `elicitation.url`. The library never opens a URL itself.
    pub fn url_elicitation(mut self, consent: impl UrlConsent) -> Self {
        self.handlers.url = Some(Arc::new(consent));
        self
    }

    /// Turns on the response cache (off by default); see [`crate::cache`].
    pub fn cache(mut self, on: bool) -> Self {
        self.cache = on;
        self
    }

    /// How many times a multi round-trip request is retried with input
    /// before giving up with [`ClientError::TooManyRounds`] (default 10).
    pub fn max_input_rounds(mut self, n: usize) -> Self {
        self.max_rounds = n;
        self
    }

    /// The most pages a list method follows (default 1000).
    pub fn max_pages(mut self, n: usize) -> Self {
        self.max_pages = n.max(1);
        self
    }

    /// Re-issues idempotent requests (lists, reads, `prompts/get`,
    /// completion, ping) once after reconnecting when the connection was lost
    /// under them (off by default; needs a reconnectable connection).
    pub fn retry_idempotent(mut self, on: bool) -> Self {
        self.retry_idempotent = on;
        self
    }

    /// How [`Client::reconnect`] retries.
    pub fn reconnect_policy(mut self, policy: ReconnectPolicy) -> Self {
        self.reconnect = policy;
        self
    }

    /// Whether open [`ListenStream`](crate::ListenStream)s re-send
    /// `subscriptions/listen` after a reconnection (on by default).
    pub fn resubscribe_on_reconnect(mut self, on: bool) -> Self {
        self.resubscribe = on;
        self
    }

    /// The lowest log level asked of the server: `logging/setLevel` right
    /// after connecting (legacy), the `_meta` log level of every request
    /// (2026-07-28).
    pub fn log_level(mut self, level: LoggingLevel) -> Self {
        self.log_level = Some(level);
        self
    }

    /// Adds an MCP-level middleware layer (see
    /// [`tessera_runtime::middleware`]) over the requests the server sends
    /// this client in the legacy era (`roots/list`, `sampling/createMessage`,
    /// `elicitation/create`, task methods): it can observe, reject or
    /// rewrite them and their answers. The first layer added is the
    /// outermost.
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

    /// How many events a slow [`EventStream`](crate::EventStream) may fall
    /// behind before it skips the oldest (default 1024).
    pub fn event_capacity(mut self, n: usize) -> Self {
        self.event_capacity = n.max(1);
        self
    }

    fn settings(&self, caps: &ClientCapabilities) -> Settings {
        let mut engine = EngineConfig::client(ClientIdentity {
            info: self.info.clone(),
            capabilities: caps.clone(),
        })
        .with_versions(self.versions.iter().copied());
        engine.timeouts.request = self.request_timeout;
        engine.timeouts.maximum = self.max_request_timeout;
        engine.probe_timeout = self.probe_timeout;
        Settings {
            max_rounds: self.max_rounds,
            max_pages: self.max_pages,
            retry_idempotent: self.retry_idempotent,
            reconnect: self.reconnect.clone(),
            resubscribe: self.resubscribe,
            mode: self.mode,
            engine,
            connection: self.connection.clone(),
        }
    }

    /// Starts a server as a child process and connects to it over its stdio.
    /// The client can [`reconnect`](Client::reconnect), re-spawning it.
    pub async fn connect_child(mut self, cmd: &ChildCommand) -> Result<Client, ClientError> {
        if self.connection.link.is_none() {
            self.connection.link = Some(Arc::new(tessera_runtime::Link::pipe()));
        }
        self.connect_with(ChildConnector::new(cmd.clone())).await
    }

    /// Connects with a [`Connector`], which also serves reconnections.
    pub async fn connect_with(self, connector: impl Connector) -> Result<Client, ClientError> {
        let connector: Arc<dyn DynConnector> = Arc::new(connector);
        let first = connector.clone();
        self.open(Some(connector), move |launch| async move {
            first.start_boxed(launch).await
        })
        .await
    }

    /// Connects over transports made by `make`, one per connection: the
    /// client reconnects through it ([`Client::reconnect`](crate::Client::reconnect),
    /// [`retry_idempotent`](ClientBuilder::retry_idempotent)), and when the
    /// server forgets the session (Streamable HTTP `404`) it sets up a new
    /// one, restores the log level and resource subscriptions, and sends the
    /// refused request again.
    pub async fn connect_transports<F, T>(self, make: F) -> Result<Client, ClientError>
    where
        F: Fn() -> std::io::Result<T> + Send + Sync + 'static,
        T: Transport,
    {
        self.connect_with(TransportConnector::new(make)).await
    }

    /// Connects over a reader/writer pair carrying newline-delimited JSON-RPC
    /// (no reconnection).
    pub async fn connect_io<R, W>(self, reader: R, writer: W) -> Result<Client, ClientError>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        self.open(None, move |launch| {
            std::future::ready(Ok(launch.run_io(reader, writer)))
        })
        .await
    }

    /// Connects over any [`Transport`] (no reconnection; implement
    /// [`Connector`] for a transport that can be opened again).
    pub async fn connect_transport<T: Transport>(
        self,
        transport: T,
    ) -> Result<Client, ClientError> {
        self.open(None, move |launch| {
            std::future::ready(Ok(launch.run(transport)))
        })
        .await
    }

    async fn open<F, Fut>(
        self,
        connector: Option<Arc<dyn DynConnector>>,
        first: F,
    ) -> Result<Client, ClientError>
    where
        F: FnOnce(Launch) -> Fut,
        Fut: Future<Output = std::io::Result<Started>>,
    {
        if let Some(e) = self.errors.first() {
            return Err(ClientError::Config(e.clone()));
        }
        let caps = self.handlers.capabilities(&self.capabilities);
        let mut settings = self.settings(&caps);
        let (events, _) = broadcast::channel(self.event_capacity);
        let (generation, _) = watch::channel(1);
        let inputs = Arc::new(Inputs::new(self.handlers.clone(), caps));
        let shared = Arc::new_cyclic(|weak| Shared {
            stacks: crate::service::Stacks::new(&self.middleware, &inputs, weak),
            middleware: self.middleware.clone(),
            inputs,
            events,
            cache: self.cache.then(ResponseCache::default),
            subscriptions: Arc::new(Subscriptions::default()),
            generation,
            closed: AtomicBool::new(false),
        });
        let started = first(Launch::new(&shared, &settings, 1)).await?;
        let conn = match establish(&shared, &settings, 1, started).await {
            Ok(c) => c,
            Err(e) => {
                let legacy = settings.engine.latest(Era::Legacy);
                match (&connector, legacy) {
                    // Some legacy servers (rmcp up to 1.7) exit when they get
                    // `server/discover`: start the server again and speak the
                    // legacy handshake to it, and keep that verdict for this
                    // client's reconnections.
                    (Some(connector), Some(v))
                        if settings.mode == ConnectMode::Auto && e.is_closed() =>
                    {
                        tracing::info!(
                            "the server closed the connection on the server/discover probe; \
                             starting it again with the initialize handshake ({v})"
                        );
                        settings.mode = ConnectMode::Legacy(v);
                        let started = connector
                            .start_boxed(Launch::new(&shared, &settings, 1))
                            .await?;
                        establish(&shared, &settings, 1, started).await?
                    }
                    _ => return Err(e),
                }
            }
        };
        let client = Client {
            inner: Arc::new(ClientInner {
                shared,
                conn: Mutex::new(conn),
                reconnecting: tokio::sync::Mutex::new(()),
                connector,
                settings,
                remembered: Mutex::new(Remembered::default()),
            }),
        };
        if let Some(level) = self.log_level {
            match client.set_log_level(level).await {
                // A server without logging: the level is still sent with
                // modern requests and restored after reconnecting.
                Ok(()) | Err(ClientError::Unsupported(_)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(client)
    }
}
