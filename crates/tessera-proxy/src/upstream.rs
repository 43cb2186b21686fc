//! One connection to an upstream server: a child process over stdio or a
//! Streamable HTTP endpoint, driven by a client-role engine whose incoming
//! traffic (the server's requests and notifications) goes to a [`Sink`].

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tessera_types::methods;

use tessera_http::{HttpClientError, HttpClientTransport};
use tessera_proto::{ClientIdentity, ConnectMode, Connected, EngineConfig};
use tessera_runtime::{
    BoxFuture, ChildCommand, ChildProcess, ConnectionOptions, HandlerResult, Notification, Peer,
    Request, Service,
};
use tessera_types::{
    ClientCapabilities, ElicitationCapability, Era, ErrorObject, Implementation, JsonObject,
    RootsCapability, SamplingCapability,
};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::acks::Acks;
use crate::error::ProxyError;

/// Builds a fresh HTTP client transport for an upstream (called for every
/// upstream session the proxy opens, so that each gets its own MCP session).
pub type TransportMaker =
    Arc<dyn Fn() -> Result<HttpClientTransport, HttpClientError> + Send + Sync>;

/// Where an upstream server is and how to reach it.
#[derive(Clone)]
pub enum UpstreamSpec {
    /// A server started as a child process, spoken to over its stdin/stdout.
    Stdio(ChildCommand),
    /// A Streamable HTTP endpoint.
    Http {
        /// The endpoint URL (for messages).
        url: String,
        /// Makes the client transport (headers, TLS roots, authorization).
        transport: TransportMaker,
    },
}

impl std::fmt::Debug for UpstreamSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UpstreamSpec::Stdio(c) => f.debug_tuple("Stdio").field(c).finish(),
            UpstreamSpec::Http { url, .. } => f.debug_struct("Http").field("url", url).finish(),
        }
    }
}

impl UpstreamSpec {
    /// A stdio server: `program` with `args`.
    pub fn stdio<I, A>(program: impl Into<std::ffi::OsString>, args: I) -> Self
    where
        I: IntoIterator<Item = A>,
        A: Into<std::ffi::OsString>,
    {
        UpstreamSpec::Stdio(ChildCommand::new(program, args))
    }

    /// A Streamable HTTP endpoint with extra headers on every request.
    pub fn http(url: impl Into<String>, headers: tessera_http::http::HeaderMap) -> Self {
        let url = url.into();
        let u = url.clone();
        UpstreamSpec::Http {
            url,
            transport: Arc::new(move || HttpClientTransport::with_headers(&u, headers.clone())),
        }
    }

    /// A Streamable HTTP endpoint whose transports `make` builds (to add
    /// authorization, TLS roots…).
    pub fn http_with(
        url: impl Into<String>,
        make: impl Fn() -> Result<HttpClientTransport, HttpClientError> + Send + Sync + 'static,
    ) -> Self {
        UpstreamSpec::Http {
            url: url.into(),
            transport: Arc::new(make),
        }
    }

    /// A short description for messages: the command line or the URL.
    pub fn describe(&self) -> String {
        match self {
            UpstreamSpec::Stdio(c) => {
                let mut s = c.program.to_string_lossy().into_owned();
                for a in &c.args {
                    s.push(' ');
                    s.push_str(&a.to_string_lossy());
                }
                s
            }
            UpstreamSpec::Http { url, .. } => url.clone(),
        }
    }
}

/// Where the upstream's own requests and notifications go.
pub(crate) trait Sink: Send + Sync + 'static {
    /// A request from the upstream server (sampling, elicitation, roots).
    fn request(
        &self,
        method: String,
        params: Option<JsonObject>,
    ) -> BoxFuture<'static, HandlerResult>;
    /// A notification from the upstream server.
    fn notification(&self, method: String, params: Option<JsonObject>);
}

/// The requests a server may send to its client.
const SERVER_TO_CLIENT: [&str; 3] = [
    methods::SAMPLING_CREATE_MESSAGE,
    methods::ELICITATION_CREATE,
    methods::ROOTS_LIST,
];

struct UpstreamService(Arc<dyn Sink>, Arc<Acks>);

impl Service for UpstreamService {
    fn methods(&self) -> Vec<String> {
        SERVER_TO_CLIENT.iter().map(|m| (*m).to_owned()).collect()
    }
    fn handle_request(
        self: Arc<Self>,
        request: Request,
    ) -> impl Future<Output = HandlerResult> + Send + 'static {
        self.0.request(
            request.method,
            request.params.map(tessera_types::Params::into_object),
        )
    }
    fn handle_notification(
        self: Arc<Self>,
        n: Notification,
    ) -> impl Future<Output = ()> + Send + 'static {
        if n.method == methods::NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED {
            if let Some(id) = crate::listen::subscription_of(n.params.as_ref()) {
                self.1.heard(id);
            }
        }
        self.0.notification(n.method, n.params);
        std::future::ready(())
    }
}

/// Timeouts and identity of the connections a proxy opens upstream.
#[derive(Debug, Clone)]
pub struct UpstreamOptions {
    /// How long a forwarded request may wait for its answer (restarted by
    /// each progress notification); `None` waits as long as the client does.
    pub request_timeout: Option<Duration>,
    /// The hard limit of a forwarded request, whatever progress arrives.
    pub max_request_timeout: Option<Duration>,
    /// How long the `server/discover` probe waits before assuming a legacy
    /// server.
    pub probe_timeout: Duration,
    /// Whether a [`Proxy`](crate::Proxy) serves legacy client sessions over
    /// its shared connection when the upstream speaks 2026-07-28, rather
    /// than opening an upstream session for each. `None` (the default)
    /// decides by transport: shared in front of a stdio upstream, where an
    /// upstream session is a process of its own; one each in front of an
    /// HTTP upstream, where a session costs the server little and a legacy
    /// call through it costs the proxy less than a 2026-07-28 one.
    pub share_legacy_sessions: Option<bool>,
    /// The most upstream processes a [`Proxy`](crate::Proxy) in front of a
    /// stdio server runs at once for legacy sessions of their own (beside
    /// its one shared process): a session that needs one beyond it is
    /// refused with an error naming the limit, and a process is stopped
    /// when its session ends (closed, idled out or evicted). `None`: no
    /// limit.
    pub max_processes: Option<usize>,
}

/// The default of [`UpstreamOptions::max_processes`].
pub const DEFAULT_MAX_PROCESSES: usize = 16;

impl Default for UpstreamOptions {
    fn default() -> Self {
        UpstreamOptions {
            request_timeout: Some(Duration::from_secs(60)),
            max_request_timeout: Some(Duration::from_secs(600)),
            probe_timeout: Duration::from_secs(5),
            share_legacy_sessions: None,
            max_processes: Some(DEFAULT_MAX_PROCESSES),
        }
    }
}

/// An open connection to an upstream server.
pub(crate) struct Upstream {
    pub peer: Peer,
    pub connected: Connected,
    /// The acknowledgements of the listen streams opened on it.
    pub acks: Arc<Acks>,
    child: Mutex<Option<ChildProcess>>,
    /// The process's place under [`UpstreamOptions::max_processes`], given
    /// back once the process has exited.
    permit: Mutex<Option<ProcessPermit>>,
    /// Fires when the connection's driver ends (the upstream went away).
    closed: CancellationToken,
}

impl std::fmt::Debug for Upstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upstream")
            .field("version", &self.connected.version)
            .finish_non_exhaustive()
    }
}

/// What the proxy says about itself to upstream servers.
pub(crate) fn proxy_identity(capabilities: ClientCapabilities) -> ClientIdentity {
    ClientIdentity {
        info: Implementation::new("tessera-proxy", env!("CARGO_PKG_VERSION")),
        capabilities,
    }
}

/// Every client capability a proxy can pass on (what the downstream client
/// really supports is checked when a request arrives).
pub(crate) fn all_client_capabilities() -> ClientCapabilities {
    ClientCapabilities {
        roots: Some(RootsCapability {
            list_changed: Some(true),
            ..Default::default()
        }),
        sampling: Some(SamplingCapability::default()),
        elicitation: Some(ElicitationCapability {
            form: Some(JsonObject::new()),
            url: Some(JsonObject::new()),
            ..Default::default()
        }),
        ..Default::default()
    }
}

impl Upstream {
    /// Opens a connection and completes the handshake.
    pub async fn connect(
        spec: &UpstreamSpec,
        mode: ConnectMode,
        identity: ClientIdentity,
        sink: Arc<dyn Sink>,
        options: &UpstreamOptions,
        permit: Option<ProcessPermit>,
    ) -> Result<Upstream, ProxyError> {
        let mut config = EngineConfig::client(identity);
        config.timeouts.request = options.request_timeout;
        config.timeouts.maximum = options.max_request_timeout;
        config.probe_timeout = options.probe_timeout;
        let acks = Arc::new(Acks::default());
        let service = UpstreamService(sink, acks.clone());
        let name = spec.describe();
        let (peer, task, child) = match spec {
            UpstreamSpec::Stdio(cmd) => {
                let (child, pipes) =
                    ChildProcess::spawn(cmd).map_err(|source| ProxyError::Spawn {
                        upstream: name.clone(),
                        source,
                    })?;
                let options = ConnectionOptions {
                    link: Some(Arc::new(tessera_runtime::Link::pipe())),
                    ..ConnectionOptions::default()
                };
                let (peer, task) =
                    tessera_runtime::spawn(config, pipes.stdout, pipes.stdin, service, options);
                (peer, task, Some(child))
            }
            UpstreamSpec::Http { transport, .. } => {
                let t = transport().map_err(|source| ProxyError::Http {
                    upstream: name.clone(),
                    source,
                })?;
                let options = ConnectionOptions {
                    link: t.link().map(Arc::new),
                    ..ConnectionOptions::default()
                };
                let (peer, task) = tessera_runtime::spawn_transport(config, t, service, options);
                (peer, task, None)
            }
        };
        let connected = match peer.connect(mode).await {
            Ok(c) => c,
            Err(e) => {
                peer.close();
                if let Some(c) = child {
                    let _ = c.shutdown().await;
                }
                let refused = e.remote().is_some_and(|o| !crate::forward::unreachable(o));
                return Err(ProxyError::Connect {
                    upstream: name,
                    reason: e.to_string(),
                    refused,
                });
            }
        };
        Ok(Upstream {
            peer,
            connected,
            acks,
            child: Mutex::new(child),
            permit: Mutex::new(permit),
            closed: watch_end(task),
        })
    }

    /// The era of this connection.
    pub fn era(&self) -> Era {
        self.connected.era
    }

    /// Whether the connection still runs.
    pub fn is_open(&self) -> bool {
        self.peer.is_open() && !self.closed.is_cancelled()
    }

    /// A token cancelled when the connection has ended (holding it does
    /// not keep the connection).
    pub fn closed_token(&self) -> CancellationToken {
        self.closed.clone()
    }

    /// Completes when the connection has ended.
    pub async fn peer_closed(&self) {
        self.closed.cancelled().await
    }

    /// Closes the connection and shuts a child process down.
    pub async fn close(&self) {
        self.peer.close();
        let child = self.child.lock().map(|mut c| c.take()).unwrap_or(None);
        if let Some(c) = child {
            let _ = c.shutdown().await;
        }
        // The process has exited: its place is free.
        self.permit.lock().map(|mut p| p.take()).unwrap_or(None);
    }
}

impl Drop for Upstream {
    fn drop(&mut self) {
        self.peer.close();
        let child = self.child.get_mut().map(Option::take).unwrap_or(None);
        let permit = self.permit.get_mut().map(Option::take).unwrap_or(None);
        match (child, tokio::runtime::Handle::try_current()) {
            // Shut down in the background; the place is given back once the
            // process has exited.
            (Some(c), Ok(h)) => {
                h.spawn(async move {
                    let _ = c.shutdown().await;
                    drop(permit);
                });
            }
            // No runtime: the child is killed as it drops.
            (child, _) => drop((child, permit)),
        }
    }
}

/// Counts the upstream processes a proxy runs for sessions of their own
/// ([`UpstreamOptions::max_processes`]).
#[derive(Debug, Clone)]
pub(crate) struct ProcessCap {
    limit: Option<usize>,
    places: Arc<tokio::sync::Semaphore>,
}

/// One process's place under a [`ProcessCap`].
pub(crate) type ProcessPermit = tokio::sync::OwnedSemaphorePermit;

impl ProcessCap {
    /// A cap of `limit` processes (`None`: unlimited).
    pub fn new(limit: Option<usize>) -> Self {
        ProcessCap {
            limit,
            places: Arc::new(tokio::sync::Semaphore::new(
                limit.unwrap_or(tokio::sync::Semaphore::MAX_PERMITS),
            )),
        }
    }

    /// A place for one more process, or the error the client gets when
    /// every place is taken.
    pub fn take(&self) -> Result<ProcessPermit, ErrorObject> {
        self.places.clone().try_acquire_owned().map_err(|_| {
            let n = self.limit.unwrap_or(0);
            let mut e = ErrorObject::internal(format!(
                "this session needs an upstream process of its own, and the proxy already runs \
                 its limit of {n} such processes (--max-upstream-processes, \
                 UpstreamOptions::max_processes); end an idle session or try again later"
            ));
            e.data = Some(
                crate::refusal::RefusalData::default()
                    .limit("max-upstream-processes")
                    .max(n)
                    .to_value(),
            );
            e
        })
    }
}

/// A token that fires when the driver task ends.
fn watch_end(task: JoinHandle<std::io::Result<()>>) -> CancellationToken {
    let token = CancellationToken::new();
    let t = token.clone();
    tokio::spawn(async move {
        let _ = task.await;
        t.cancel();
    });
    token
}
