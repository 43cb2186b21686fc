//! Connecting over any transport, and reconnecting.
//!
//! A [`Connector`] opens a fresh transport each time it is asked and starts
//! the connection on it with [`Launch::run`]; the client then negotiates (era
//! probe, handshake). [`ChildConnector`] spawns a stdio server; other
//! transports (Streamable HTTP…) plug in by implementing [`Connector`].
//!
//! # What happens to requests when the connection is lost
//!
//! Requests in flight fail with a closed-connection error
//! ([`ClientError::is_closed`]); the client does not re-send them by itself,
//! because a re-sent `tools/call` could act twice. The exception is a
//! request the server refused because it forgot the session
//! ([`ClientError::is_session_lost`]: Streamable HTTP answers `404`): it was
//! not served, so a client with a [`Connector`] reconnects (a new session)
//! and sends it once more. Transports never set up sessions by themselves. [`Client::reconnect`]
//! starts a new connection (re-spawning the child) with exponential backoff
//! and negotiates again. With [`ClientBuilder::retry_idempotent`](crate::ClientBuilder::retry_idempotent),
//! requests that change nothing (lists, `resources/read`, `prompts/get`,
//! `completion/complete`, `ping`) reconnect and are re-issued once by
//! themselves. After reconnecting, a legacy session gets its log level and
//! resource subscriptions back, open [`ListenStream`](crate::ListenStream)s
//! re-send `subscriptions/listen`, and the response cache starts empty.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use tessera_types::methods;

use tessera_proto::RequestOptions;
use tessera_runtime::{
    BoxFuture, ChildCommand, ChildProcess, ConnectionOptions, Peer, PeerError, Transport,
};
use tessera_types::{Era, ResourceRequestParams, SetLevelRequestParams};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::client::{Client, Settings};
use crate::error::ClientError;
use crate::events::ClientEvent;
use crate::members::write;
use crate::service::{ClientService, Shared};

/// Everything needed to start one connection; hand it a transport with
/// [`Launch::run`].
#[derive(Debug)]
pub struct Launch {
    config: tessera_proto::EngineConfig,
    service: ClientService,
    options: ConnectionOptions,
}

impl Launch {
    pub(crate) fn new(shared: &Arc<Shared>, settings: &Settings, generation: u64) -> Self {
        Launch {
            config: settings.engine.clone(),
            service: ClientService::new(shared.clone(), generation),
            options: settings.connection.clone(),
        }
    }

    /// Starts the connection over `transport`.
    pub fn run<T: Transport>(self, transport: T) -> Started {
        let (peer, task) =
            tessera_runtime::spawn_transport(self.config, transport, self.service, self.options);
        Started {
            peer,
            task,
            child: None,
        }
    }

    /// Starts the connection over a reader/writer pair of newline-delimited JSON-RPC.
    pub fn run_io<R, W>(self, reader: R, writer: W) -> Started
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (peer, task) =
            tessera_runtime::spawn(self.config, reader, writer, self.service, self.options);
        Started {
            peer,
            task,
            child: None,
        }
    }
}

/// A started (not yet negotiated) connection.
#[derive(Debug)]
pub struct Started {
    peer: Peer,
    task: JoinHandle<std::io::Result<()>>,
    child: Option<ChildProcess>,
}

impl Started {
    /// Ties a child process to the connection: it is shut down with it.
    pub fn with_child(mut self, child: ChildProcess) -> Self {
        self.child = Some(child);
        self
    }
}

/// Opens connections, for the first connection and every reconnection.
///
/// Implement it with an `async fn`: open a transport, then hand it to
/// [`Launch::run`] (any [`Transport`]) or [`Launch::run_io`] (a
/// reader/writer pair). Here a connector that counts its connections and
/// serves each from an in-process server over a fresh in-memory pipe:
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use tessera_client::{Client, Connector, Launch, Started};
///
/// struct InMemory {
///     opened: AtomicUsize,
/// }
///
/// impl Connector for InMemory {
///     async fn start(&self, launch: Launch) -> std::io::Result<Started> {
///         self.opened.fetch_add(1, Ordering::Relaxed);
///         let (ours, theirs) = tokio::io::duplex(64 * 1024);
///         let (server_read, server_write) = tokio::io::split(theirs);
///         let server = tessera_server::Server::builder()
///             .name_version("in-memory", "1.0.0")
///             .build()
///             .map_err(std::io::Error::other)?;
///         let _ = server.serve_io(server_read, server_write);
///         let (read, write) = tokio::io::split(ours);
///         Ok(launch.run_io(read, write))
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let client = Client::builder("example", "1.0.0")
///     .connect_with(InMemory { opened: AtomicUsize::new(0) })
///     .await
///     .unwrap();
/// client.reconnect().await.unwrap();
/// # }
/// ```
///
/// The future may borrow `self`: the client keeps the connector for as long
/// as it can reconnect.
pub trait Connector: Send + Sync + 'static {
    /// Opens a new transport and starts `launch` on it.
    fn start(&self, launch: Launch) -> impl Future<Output = std::io::Result<Started>> + Send;
}

/// The object-safe form of [`Connector`] that the client holds
/// (`Arc<dyn DynConnector>`); every `Connector` is one.
pub(crate) trait DynConnector: Send + Sync + 'static {
    /// [`Connector::start`], boxed.
    fn start_boxed(&self, launch: Launch) -> BoxFuture<'_, std::io::Result<Started>>;
}

impl<C: Connector> DynConnector for C {
    fn start_boxed(&self, launch: Launch) -> BoxFuture<'_, std::io::Result<Started>> {
        Box::pin(self.start(launch))
    }
}

/// Starts a server as a child process and speaks to it over its stdio.
#[derive(Debug, Clone)]
pub struct ChildConnector {
    command: ChildCommand,
}

impl ChildConnector {
    /// A connector spawning `command`.
    pub fn new(command: ChildCommand) -> Self {
        ChildConnector { command }
    }
}

impl Connector for ChildConnector {
    async fn start(&self, launch: Launch) -> std::io::Result<Started> {
        let (child, pipes) = ChildProcess::spawn(&self.command)?;
        Ok(launch.run_io(pipes.stdout, pipes.stdin).with_child(child))
    }
}

/// Opens a new transport from a factory for every connection: how a client
/// over Streamable HTTP reconnects, and sets up a new session when the
/// server forgot its own ([`ClientBuilder::connect_transports`](crate::ClientBuilder::connect_transports)).
pub struct TransportConnector<F> {
    make: F,
}

impl<F> std::fmt::Debug for TransportConnector<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TransportConnector").finish_non_exhaustive()
    }
}

impl<F, T> TransportConnector<F>
where
    F: Fn() -> std::io::Result<T> + Send + Sync + 'static,
    T: Transport,
{
    /// A connector that calls `make` for each new transport.
    pub fn new(make: F) -> Self {
        TransportConnector { make }
    }
}

impl<F, T> Connector for TransportConnector<F>
where
    F: Fn() -> std::io::Result<T> + Send + Sync + 'static,
    T: Transport,
{
    async fn start(&self, launch: Launch) -> std::io::Result<Started> {
        (self.make)().map(|t| launch.run(t))
    }
}

/// One negotiated connection.
#[derive(Debug)]
pub(crate) struct Conn {
    pub peer: Peer,
    pub connected: Arc<tessera_proto::Connected>,
    pub generation: u64,
    pub done: watch::Receiver<bool>,
    /// Set when the connection ended because the server forgot the session.
    pub lost: Arc<std::sync::atomic::AtomicBool>,
    pub child: Option<ChildProcess>,
}

/// Negotiates on a started connection and watches for its end.
pub(crate) async fn establish(
    shared: &Arc<Shared>,
    settings: &Settings,
    generation: u64,
    started: Started,
) -> Result<Conn, ClientError> {
    let Started { peer, task, child } = started;
    let connected = match peer.connect(settings.mode).await {
        Ok(c) => c,
        Err(e) => {
            peer.close();
            if let Some(c) = child {
                let _ = c.shutdown().await;
            }
            return Err(ClientError::Connect(e));
        }
    };
    let (done_tx, done_rx) = watch::channel(false);
    let events = shared.events.clone();
    let lost = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let lost_flag = lost.clone();
    tokio::spawn(async move {
        if let Ok(Err(e)) = task.await {
            if tessera_runtime::SessionLost::is(&e) {
                lost_flag.store(true, Ordering::SeqCst);
            }
        }
        done_tx.send_replace(true);
        let _ = events.send(ClientEvent::Disconnected);
    });
    Ok(Conn {
        peer,
        connected: Arc::new(connected),
        generation,
        done: done_rx,
        lost,
        child,
    })
}

impl Client {
    /// Drops the current connection and connects again (re-spawning a child
    /// server), retrying with the builder's
    /// [`ReconnectPolicy`](crate::ReconnectPolicy). See the
    /// [module documentation](crate::connect) for what happens to requests
    /// in flight and to session state.
    pub async fn reconnect(&self) -> Result<(), ClientError> {
        let seen = self.generation();
        self.reconnect_from(seen).await
    }

    /// Reconnects unless someone already replaced connection `seen`.
    pub(crate) async fn reconnect_from(&self, seen: u64) -> Result<(), ClientError> {
        let inner = &self.inner;
        let connector = inner
            .connector
            .clone()
            .ok_or(ClientError::NotReconnectable)?;
        let _guard = inner.reconnecting.lock().await;
        if inner.shared.closed.load(Ordering::SeqCst) {
            return Err(ClientError::Request(PeerError::Closed));
        }
        if self.generation() != seen {
            return Ok(());
        }
        let (old_peer, old_child) = {
            let mut c = inner.conn();
            (c.peer.clone(), c.child.take())
        };
        old_peer.close();
        if let Some(child) = old_child {
            tokio::spawn(async move {
                let _ = child.shutdown().await;
            });
        }
        let next = seen + 1;
        let policy = &inner.settings.reconnect;
        let attempts = policy.max_attempts.max(1);
        let mut last = ClientError::NotReconnectable;
        for attempt in 1..=attempts {
            let launch = Launch::new(&inner.shared, &inner.settings, next);
            let result = match connector.start_boxed(launch).await {
                Ok(started) => establish(&inner.shared, &inner.settings, next, started).await,
                Err(e) => Err(ClientError::Io(e)),
            };
            match result {
                Ok(conn) => {
                    let (era, version) = (conn.connected.era, conn.connected.version);
                    let peer = conn.peer.clone();
                    *inner.conn() = conn;
                    inner.shared.subscriptions.forget_before(next);
                    if let Some(c) = &inner.shared.cache {
                        c.clear();
                    }
                    inner.shared.generation.send_replace(next);
                    if era == Era::Legacy {
                        self.restore_session(&peer).await;
                    }
                    let _ = inner
                        .shared
                        .events
                        .send(ClientEvent::Reconnected { era, version });
                    return Ok(());
                }
                Err(e) => {
                    tracing::debug!(attempt, error = %e, "reconnection attempt failed");
                    last = e;
                    if attempt < attempts {
                        tokio::time::sleep(policy.delay_after(attempt)).await;
                    }
                }
            }
        }
        Err(ClientError::ReconnectFailed {
            attempts,
            last: Box::new(last),
        })
    }

    /// Gives a new legacy session the log level and resource subscriptions
    /// the old one had. Failures are logged, not fatal.
    async fn restore_session(&self, peer: &Peer) {
        let (level, uris) = {
            let r = self.inner.remembered();
            (r.log_level, r.subscriptions.clone())
        };
        if let Some(l) = level {
            let p = write(&SetLevelRequestParams {
                meta: None,
                level: l,
            });
            if let Err(e) = peer
                .request(
                    methods::LOGGING_SET_LEVEL,
                    Some(p),
                    RequestOptions::default(),
                )
                .await
            {
                tracing::debug!(error = %e, "could not restore the log level");
            }
        }
        for uri in uris {
            let p = write(&ResourceRequestParams::new(uri.as_str()));
            if let Err(e) = peer
                .request(
                    methods::RESOURCES_SUBSCRIBE,
                    Some(p),
                    RequestOptions::default(),
                )
                .await
            {
                tracing::debug!(%uri, error = %e, "could not restore a resource subscription");
            }
        }
    }
}
