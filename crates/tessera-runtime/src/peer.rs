//! [`Peer`]: a cloneable handle to a running connection.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use serde_json::Value;
use tessera_proto::{CallError, ConnectMode, Connected, RawResult, Reply, RequestOptions};
use tessera_types::{ErrorObject, JsonObject, Params, ProtocolVersion, RequestId};
use tokio::sync::{mpsc, oneshot, watch};

/// Why a call through a [`Peer`] failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PeerError {
    /// The request reached the peer and failed (error response, timeout…).
    #[error(transparent)]
    Call(#[from] CallError),
    /// The engine refused to send it.
    #[error("cannot send: {0}")]
    Send(String),
    /// The connection is gone.
    #[error("connection closed")]
    Closed,
}

impl PeerError {
    /// The peer's JSON-RPC error, if that is what this is.
    pub fn remote(&self) -> Option<&ErrorObject> {
        match self {
            PeerError::Call(CallError::Remote(e)) => Some(e),
            _ => None,
        }
    }
}

/// What a connection has in progress, as its driver last published it (see
/// [`Peer::outstanding`]). Tests read it to check that nothing leaks: after
/// every call has returned, all three are zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Outstanding {
    /// Requests sent to the peer and not answered yet (the engine's count).
    pub sent: usize,
    /// Callers waiting for the answer to a request they sent.
    pub waiting: usize,
    /// Requests from the peer being handled here, not answered yet.
    pub handling: usize,
}

/// The cells a driver publishes [`Outstanding`] into.
#[derive(Debug, Default)]
pub(crate) struct OutstandingCells {
    sent: AtomicUsize,
    waiting: AtomicUsize,
    handling: AtomicUsize,
}

impl OutstandingCells {
    pub(crate) fn publish(&self, o: Outstanding) {
        self.sent.store(o.sent, Ordering::Relaxed);
        self.waiting.store(o.waiting, Ordering::Relaxed);
        self.handling.store(o.handling, Ordering::Relaxed);
    }

    fn read(&self) -> Outstanding {
        Outstanding {
            sent: self.sent.load(Ordering::Relaxed),
            waiting: self.waiting.load(Ordering::Relaxed),
            handling: self.handling.load(Ordering::Relaxed),
        }
    }
}

/// Connection state as seen from outside the driver.
#[derive(Debug, Clone, Default)]
pub struct PeerInfo {
    /// Client role: what the connection turned out to be, once connected.
    pub connected: Option<Connected>,
    /// Server role, when the connection was started with
    /// [`ConnectionOptions::export_session`](crate::ConnectionOptions::export_session):
    /// the legacy session's state after its latest change.
    pub session: Option<Arc<crate::SessionExport>>,
}

pub(crate) type ProgressSink = mpsc::UnboundedSender<JsonObject>;

/// A request a handler (or a client) sends to the peer.
pub(crate) struct OutgoingRequest {
    pub ticket: u64,
    pub method: String,
    /// Tree or text (a proxy's forwarded params stay text).
    pub params: Option<Params>,
    pub options: RequestOptions,
    pub reply: oneshot::Sender<Result<Reply, PeerError>>,
    pub progress: Option<ProgressSink>,
    pub assigned: Option<oneshot::Sender<RequestId>>,
    /// Told the id too, for an [`OutgoingObserver`](crate::outgoing::OutgoingObserver).
    pub observed: Option<oneshot::Sender<RequestId>>,
    /// The result is wanted as JSON text.
    pub raw: bool,
}

/// What a [`Peer`] asks of its connection. Kept small (the large request
/// variant is boxed): a connection's queue holds a buffer of these.
pub(crate) enum Command {
    Request(Box<OutgoingRequest>),
    CancelRequest {
        ticket: u64,
        reason: Option<String>,
    },
    Notify {
        method: String,
        params: Option<JsonObject>,
        related: Option<RequestId>,
    },
    Progress {
        id: RequestId,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    },
    Log {
        level: String,
        logger: Option<String>,
        data: Value,
        related: Option<RequestId>,
    },
    Connect {
        mode: ConnectMode,
        reply: oneshot::Sender<Result<Connected, PeerError>>,
    },
    /// The service's per-session data changed ([`Peer::session_changed`]).
    SessionChanged,
    /// Take this stored state as the session's (it changed elsewhere).
    ApplySession(Box<crate::SessionState>),
    Close,
}

impl Command {
    /// Hands a notice (a notification, progress or a log message) to `engine`
    /// and returns `None`; gives any other command back for the caller's own
    /// handling. Every connection flavour sends notices the same way.
    pub(crate) fn send_notice(self, engine: &mut tessera_proto::Engine) -> Option<Command> {
        match self {
            Command::Notify {
                method,
                params,
                related,
            } => {
                if let Err(e) = engine.notify(&method, params, related) {
                    tracing::debug!(%method, %e, "notification not sent");
                }
            }
            Command::Progress {
                id,
                progress,
                total,
                message,
            } => {
                engine.notify_progress(&id, progress, total, message.as_deref());
            }
            Command::Log {
                level,
                logger,
                data,
                related,
            } => {
                engine.notify_log(&level, logger.as_deref(), data, related.as_ref());
            }
            other => return Some(other),
        }
        None
    }
}

/// A cloneable handle to a running connection: send requests and
/// notifications, report progress, log, close.
#[derive(Clone)]
pub struct Peer {
    /// The command queue, tickets, outstanding counts and the [`PeerInfo`]
    /// channel.
    pub(crate) shared: Arc<crate::peer_shared::PeerShared>,
    connection: u64,
    link: Option<Arc<crate::Link>>,
    /// The connection's own observer of what it sends, before the process's.
    observer: Option<Arc<dyn crate::outgoing::OutgoingObserver>>,
}

/// The source of [`Peer::connection_id`].
static NEXT_CONNECTION: AtomicU64 = AtomicU64::new(1);

impl std::fmt::Debug for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Peer").finish_non_exhaustive()
    }
}

impl Peer {
    pub(crate) fn new(
        link: Option<Arc<crate::Link>>,
        observer: Option<Arc<dyn crate::outgoing::OutgoingObserver>>,
    ) -> Self {
        Peer {
            shared: Arc::default(),
            connection: NEXT_CONNECTION.fetch_add(1, Ordering::Relaxed),
            link,
            observer,
        }
    }

    /// Who is told of the requests this connection sends: its service's
    /// observer ([`Service::outgoing_observer`](crate::Service::outgoing_observer)),
    /// else the process's ([`crate::outgoing::observe_outgoing`]).
    fn observer(&self) -> Option<&Arc<dyn crate::outgoing::OutgoingObserver>> {
        match &self.observer {
            Some(o) => Some(o),
            None => crate::outgoing::observer(),
        }
    }

    /// What the connection has in progress: requests sent and not answered,
    /// callers waiting, requests from the peer being handled. Published by
    /// the driver each time it waits for something to happen, and zeroed
    /// when it stops.
    pub fn outstanding(&self) -> Outstanding {
        self.shared.outstanding.read()
    }

    /// A number that identifies the connection within this process (every
    /// handle of one connection has the same; no two connections share one).
    /// Servers use it to scope state to a session when there is no
    /// authenticated principal.
    pub fn connection_id(&self) -> u64 {
        self.connection
    }

    /// Where the connection goes, when whoever opened it said
    /// ([`ConnectionOptions::link`](crate::ConnectionOptions::link)).
    pub fn link(&self) -> Option<&crate::Link> {
        self.link.as_deref()
    }

    /// Whether two handles lead to the same connection.
    pub fn same_connection(&self, other: &Peer) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }

    /// Whether the connection is still running.
    pub fn is_open(&self) -> bool {
        !self.shared.commands.is_closed()
    }

    /// Server role: the protocol version of the connection's legacy session,
    /// once its handshake completed (or it was restored from a store).
    pub fn session_version(&self) -> Option<ProtocolVersion> {
        self.shared.session_version.get().copied()
    }

    /// Client role: what the connection turned out to be, once connected.
    pub fn connected(&self) -> Option<Connected> {
        self.shared.read(|i| i.connected.clone())
    }

    /// Sends a request and waits for its result. Dropping the returned future
    /// before it completes cancels the request (the peer is told).
    pub async fn request(
        &self,
        method: impl Into<String>,
        params: Option<JsonObject>,
        options: RequestOptions,
    ) -> Result<JsonObject, PeerError> {
        object(
            self.request_inner(
                method.into(),
                params.map(Params::from),
                options,
                None,
                None,
                false,
            )
            .await,
        )
    }

    /// Like [`Peer::request`], for a result to pass on without reading it:
    /// the answer's result comes back as the JSON text the peer sent
    /// (checked, not parsed into a tree; see
    /// [`Engine::send_request_raw`](tessera_proto::Engine::send_request_raw)).
    /// A proxy forwards it with [`Reply::Raw`].
    pub async fn request_raw(
        &self,
        method: impl Into<String>,
        params: Option<JsonObject>,
        options: RequestOptions,
    ) -> Result<RawResult, PeerError> {
        raw(self
            .request_inner(
                method.into(),
                params.map(Params::from),
                options,
                None,
                None,
                true,
            )
            .await)
    }

    /// [`Peer::request_raw`] asking for progress, as
    /// [`Peer::request_with_progress`] does.
    pub async fn request_raw_with_progress(
        &self,
        method: impl Into<String>,
        params: Option<JsonObject>,
        mut options: RequestOptions,
        progress: mpsc::UnboundedSender<JsonObject>,
    ) -> Result<RawResult, PeerError> {
        options.progress = true;
        raw(self
            .request_inner(
                method.into(),
                params.map(Params::from),
                options,
                Some(progress),
                None,
                true,
            )
            .await)
    }

    /// Like [`Peer::request`], also telling `assigned` the JSON-RPC id the
    /// request is sent with, as soon as it is assigned (before any answer or
    /// related notification can arrive). Used to correlate notifications that
    /// name their request, such as `subscriptions/listen` streams.
    pub async fn request_with_id(
        &self,
        method: impl Into<String>,
        params: Option<JsonObject>,
        options: RequestOptions,
        assigned: oneshot::Sender<RequestId>,
    ) -> Result<JsonObject, PeerError> {
        object(
            self.request_inner(
                method.into(),
                params.map(Params::from),
                options,
                None,
                Some(assigned),
                false,
            )
            .await,
        )
    }

    /// Sends a request as [`Peer::request`] or, with `raw`, as
    /// [`Peer::request_raw`] (asking for progress when `progress` is given),
    /// telling `assigned` the JSON-RPC id as soon as the engine takes the
    /// request. When the call fails and `assigned` was never told, the
    /// request never reached the engine, so nothing of it was written: a
    /// proxy may send it again on another connection without running it
    /// twice. The params may be JSON text (a request's params passed on as
    /// they arrived): the engine stamps its `_meta` members on the text.
    pub async fn request_tracked(
        &self,
        method: impl Into<String>,
        params: Option<Params>,
        mut options: RequestOptions,
        progress: Option<mpsc::UnboundedSender<JsonObject>>,
        assigned: oneshot::Sender<RequestId>,
        raw: bool,
    ) -> Result<Reply, PeerError> {
        options.progress |= progress.is_some();
        self.request_inner(
            method.into(),
            params,
            options,
            progress,
            Some(assigned),
            raw,
        )
        .await
    }

    /// Like [`Peer::request`], asking for progress: each `notifications/progress`
    /// params object is sent to `progress`.
    pub async fn request_with_progress(
        &self,
        method: impl Into<String>,
        params: Option<JsonObject>,
        mut options: RequestOptions,
        progress: mpsc::UnboundedSender<JsonObject>,
    ) -> Result<JsonObject, PeerError> {
        options.progress = true;
        object(
            self.request_inner(
                method.into(),
                params.map(Params::from),
                options,
                Some(progress),
                None,
                false,
            )
            .await,
        )
    }

    async fn request_inner(
        &self,
        method: String,
        params: Option<Params>,
        options: RequestOptions,
        progress: Option<ProgressSink>,
        assigned: Option<oneshot::Sender<RequestId>>,
        raw: bool,
    ) -> Result<Reply, PeerError> {
        let mut params = params;
        let mut watched = None;
        let mut observed = None;
        if let Some(o) = self.observer() {
            // An observer changes params as a tree.
            let mut tree = params.map(Params::into_object);
            let started = o.start(self, &method, &mut tree);
            params = tree.map(Params::from);
            if let Some(call) = started {
                let (tx, rx) = oneshot::channel();
                observed = Some(tx);
                watched = Some(crate::outgoing::Watched {
                    call: Some(call),
                    id: Some(rx),
                });
            }
        }
        let ticket = self.shared.tickets.fetch_add(1, Ordering::Relaxed);
        let (reply, rx) = oneshot::channel();
        let sent = self.send(Command::Request(Box::new(OutgoingRequest {
            ticket,
            method,
            params,
            options,
            reply,
            progress,
            assigned,
            observed,
            raw,
        })));
        if let Err(e) = sent {
            if let Some(w) = watched {
                w.finish(&Err(e.clone()));
            }
            return Err(e);
        }
        let mut guard = CancelOnDrop {
            peer: self,
            ticket,
            armed: true,
        };
        let out = rx.await.unwrap_or(Err(PeerError::Closed));
        guard.armed = false;
        if let Some(w) = watched {
            w.finish(&out);
        }
        out
    }

    /// Sends a notification. `related` ties it to an incoming request.
    pub fn notify(
        &self,
        method: impl Into<String>,
        params: Option<JsonObject>,
        related: Option<RequestId>,
    ) -> Result<(), PeerError> {
        let method = method.into();
        let mut params = params;
        let observed = self
            .observer()
            .and_then(|o| o.start(self, &method, &mut params));
        let sent = self.send(Command::Notify {
            method,
            params,
            related,
        });
        if let Some(call) = observed {
            match &sent {
                Ok(()) => call.finish(None, crate::outgoing::OutgoingEnd::Sent),
                Err(e) => call.finish(None, crate::outgoing::OutgoingEnd::Failed(e)),
            }
        }
        sent
    }

    /// Reports progress on an incoming request.
    pub fn progress(
        &self,
        id: RequestId,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) {
        let _ = self.send(Command::Progress {
            id,
            progress,
            total,
            message,
        });
    }

    /// Sends a log message (filtered by the level the client asked for).
    pub fn log(
        &self,
        level: impl Into<String>,
        logger: Option<String>,
        data: Value,
        related: Option<RequestId>,
    ) {
        let _ = self.send(Command::Log {
            level: level.into(),
            logger,
            data,
            related,
        });
    }

    /// Client role: connects (era probe, handshake) and waits for the outcome.
    pub async fn connect(&self, mode: ConnectMode) -> Result<Connected, PeerError> {
        let watched = self.observer().and_then(|o| o.connecting(self));
        let (reply, rx) = oneshot::channel();
        let out = match self.send(Command::Connect { mode, reply }) {
            Ok(()) => rx.await.unwrap_or(Err(PeerError::Closed)),
            Err(_) => Err(PeerError::Closed),
        };
        if let Some(w) = watched {
            w.finish(self, out.as_ref());
        }
        out
    }

    /// Completes when the connection has stopped (its core was dropped).
    pub async fn closed(&self) {
        self.shared.commands.closed().await
    }

    /// Queues `c` for the connection; `Err` once it stopped.
    fn send(&self, c: Command) -> Result<(), PeerError> {
        self.shared.commands.send(c).map_err(|_| PeerError::Closed)
    }

    /// Server role: tells the connection that what the service keeps about
    /// this legacy session (see [`Service::session_data`](crate::Service::session_data))
    /// changed, so that the session's stored state is brought up to date
    /// before the answer of the request being handled is sent.
    pub fn session_changed(&self) {
        let _ = self.send(Command::SessionChanged);
    }

    /// Server role: takes `state` as the legacy session's state (it changed
    /// in another process): the engine's part (log level, handshake) and the
    /// service's part ([`Service::on_restored`](crate::Service::on_restored)).
    /// Requests in progress are kept.
    pub fn apply_session_state(&self, state: crate::SessionState) {
        let _ = self.send(Command::ApplySession(Box::new(state)));
    }

    /// Server role: a receiver of [`PeerInfo`] changes (the session state
    /// exported after each change; see [`PeerInfo::session`]).
    pub fn info(&self) -> watch::Receiver<PeerInfo> {
        self.shared.receiver()
    }

    /// Closes the connection.
    pub fn close(&self) {
        let _ = self.send(Command::Close);
    }
}

/// A reply as an object: a JSON text (which only a raw request gets) is read.
fn object(reply: Result<Reply, PeerError>) -> Result<JsonObject, PeerError> {
    reply?.into_object().map_err(unreadable)
}

/// A reply as JSON text: an object (an answer the transport handed over
/// already decoded) is written.
fn raw(reply: Result<Reply, PeerError>) -> Result<RawResult, PeerError> {
    reply?.into_raw().map_err(unreadable)
}

fn unreadable(e: serde_json::Error) -> PeerError {
    PeerError::Call(CallError::Remote(ErrorObject::internal(format!(
        "the peer's result cannot be read: {e}"
    ))))
}

struct CancelOnDrop<'a> {
    peer: &'a Peer,
    ticket: u64,
    armed: bool,
}

impl Drop for CancelOnDrop<'_> {
    fn drop(&mut self) {
        if self.armed {
            let _ = self.peer.send(Command::CancelRequest {
                ticket: self.ticket,
                reason: Some("the caller stopped waiting".into()),
            });
        }
    }
}
