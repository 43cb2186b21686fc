//! The driver: runs an [`Engine`] over a line transport on tokio.

use std::collections::VecDeque;
use tessera_types::methods;

use foldhash::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use futures::stream::{FuturesUnordered, StreamExt};
use tessera_proto::{Engine, EngineConfig, Event};
use tessera_types::{ErrorObject, RequestId};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::peer::{Command, OutgoingRequest, Peer, PeerError, PeerInfo, ProgressSink};
use crate::service::{BoxFuture, HandlerResult, Notification, Request, Service};
use crate::transport::{Incoming, LineTransport, Transport};

/// Limits and timing of a connection.
#[derive(Debug, Clone)]
pub struct ConnectionOptions {
    /// The largest message accepted, in bytes; a longer line is refused with a
    /// `-32600` error and skipped.
    pub max_message_size: usize,
    /// After the peer closes its side, how long requests still being handled
    /// may take to finish before they are cancelled.
    pub drain_timeout: Duration,
    /// Server role: export the legacy session's state after every change
    /// (the handshake, `logging/setLevel`, [`Peer::session_changed`]) to
    /// [`PeerInfo::session`](crate::PeerInfo::session), before the message
    /// that follows the change is written. For transports that store
    /// sessions (HTTP); off by default.
    pub export_session: bool,
    /// The requests this side sends are numbered from `request_id_base + 1`
    /// (see [`Engine::set_request_id_base`]); 0 by default.
    pub request_id_base: i64,
}

impl Default for ConnectionOptions {
    fn default() -> Self {
        ConnectionOptions {
            max_message_size: 16 * 1024 * 1024,
            drain_timeout: Duration::from_secs(10),
            export_session: false,
            request_id_base: 0,
        }
    }
}

struct Outgoing {
    ticket: u64,
    reply: oneshot::Sender<Result<tessera_types::JsonObject, PeerError>>,
    progress: Option<ProgressSink>,
}

fn now() -> std::time::Instant {
    tokio::time::Instant::now().into_std()
}

/// Starts a connection over a reader and a writer of newline-delimited JSON-RPC
/// (stdio, a child process, a socket). Returns the [`Peer`] handle and the task
/// that runs it; the task ends when either side closes.
pub fn spawn<R, W, S>(
    config: EngineConfig,
    reader: R,
    writer: W,
    service: S,
    options: ConnectionOptions,
) -> (Peer, JoinHandle<std::io::Result<()>>)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
    S: Service,
{
    let transport = LineTransport::new(reader, writer, options.max_message_size);
    spawn_transport(config, transport, service, options)
}

/// Starts a connection over any [`Transport`].
pub fn spawn_transport<T, S>(
    config: EngineConfig,
    transport: T,
    service: S,
    options: ConnectionOptions,
) -> (Peer, JoinHandle<std::io::Result<()>>)
where
    T: Transport,
    S: Service,
{
    let mut config = config;
    config.methods = service.methods();
    spawn_shared(Arc::new(config), transport, Arc::new(service), options)
}

/// Starts a connection over any [`Transport`] with a configuration and a
/// service shared between connections (nothing is rebuilt per connection).
/// `config.methods` must already list the methods the service serves.
pub fn spawn_shared<T, S>(
    config: Arc<EngineConfig>,
    transport: T,
    service: Arc<S>,
    options: ConnectionOptions,
) -> (Peer, JoinHandle<std::io::Result<()>>)
where
    T: Transport,
    S: Service,
{
    spawn_inner(config, transport, service, options, None)
}

/// Like [`spawn_shared`], for a server connection that carries on a legacy
/// session from its stored `state` (begun in another process, or in a
/// connection since closed): the engine starts as the handshake left it
/// ([`Engine::restore_session`]) and the service takes its data back
/// ([`Service::on_restored`]). The client notices nothing.
pub fn spawn_restored<T, S>(
    config: Arc<EngineConfig>,
    transport: T,
    service: Arc<S>,
    options: ConnectionOptions,
    state: &crate::SessionState,
) -> (Peer, JoinHandle<std::io::Result<()>>)
where
    T: Transport,
    S: Service,
{
    spawn_inner(config, transport, service, options, Some(state))
}

fn spawn_inner<T, S>(
    config: Arc<EngineConfig>,
    transport: T,
    service: Arc<S>,
    options: ConnectionOptions,
    restore: Option<&crate::SessionState>,
) -> (Peer, JoinHandle<std::io::Result<()>>)
where
    T: Transport,
    S: Service,
{
    let (tx, rx) = mpsc::unbounded_channel();
    let (info_tx, info_rx) = watch::channel(PeerInfo::default());
    let peer = Peer::new(tx, info_rx);
    let mut engine = Engine::new(config);
    engine.set_request_id_base(options.request_id_base);
    if let Some(state) = restore {
        engine.restore_session(state.snapshot());
        service.on_restored(
            peer.clone(),
            state.protocol_version,
            state.initialized,
            &state.data,
        );
    }
    let exported = engine.session_revision();
    let driver = Driver {
        engine,
        exported,
        data_revision: 0,
        synced: Vec::new(),
        service,
        peer: peer.clone(),
        commands: rx,
        info: info_tx,
        outgoing: HashMap::default(),
        tickets: HashMap::default(),
        handlers: HashMap::default(),
        connect_reply: None,
        notifications: VecDeque::new(),
        notifying: None,
        options,
        frame_extensions: crate::Extensions::default(),
        running: FuturesUnordered::new(),
    };
    let handle = tokio::spawn(driver.run(transport));
    (peer, handle)
}

struct Driver<S> {
    engine: Engine,
    /// The session revision (engine's plus `data_revision`) last exported.
    exported: u64,
    /// Counts [`Peer::session_changed`] calls.
    data_revision: u64,
    /// Senders of [`Incoming::Synced`] frames handled in this turn.
    synced: Vec<oneshot::Sender<()>>,
    service: Arc<S>,
    peer: Peer,
    commands: mpsc::UnboundedReceiver<Command>,
    info: watch::Sender<PeerInfo>,
    outgoing: HashMap<RequestId, Outgoing>,
    tickets: HashMap<u64, RequestId>,
    handlers: HashMap<RequestId, (CancellationToken, bool)>,
    connect_reply: Option<oneshot::Sender<Result<tessera_proto::Connected, PeerError>>>,
    /// Notifications waiting for the one being handled (one at a time, in
    /// arrival order, as a future of this task).
    notifications: VecDeque<Notification>,
    notifying: Option<BoxFuture<'static, ()>>,
    options: ConnectionOptions,
    frame_extensions: crate::Extensions,
    /// The request handlers in progress. They run concurrently as futures of
    /// this task (no task per request, no channel back for the answer).
    running: FuturesUnordered<BoxFuture<'static, (RequestId, HandlerResult)>>,
}

impl<S: Service> Driver<S> {
    async fn run<T: Transport>(mut self, mut transport: T) -> std::io::Result<()> {
        let mut out = Vec::new();
        let mut eof_at: Option<tokio::time::Instant> = None;
        let mut result = Ok(());
        loop {
            self.process_events();
            if self.options.export_session {
                self.export_session();
            }
            for done in self.synced.drain(..) {
                let _ = done.send(());
            }
            while let Some(t) = self.engine.poll_transmit() {
                out.push(t);
            }
            if !out.is_empty() {
                if let Err(e) = transport.send(&mut out).await {
                    if e.kind() != std::io::ErrorKind::BrokenPipe {
                        result = Err(e);
                    }
                    break;
                }
            }
            if self.engine.is_closed() {
                break;
            }
            if let Some(at) = eof_at {
                // The peer closed its side: finish what is in progress, then stop.
                if self.handlers.is_empty() || tokio::time::Instant::now() >= at {
                    break;
                }
            }
            let deadline = self
                .engine
                .poll_timeout()
                .map(tokio::time::Instant::from_std)
                .into_iter()
                .chain(eof_at)
                .min();
            self.publish_outstanding();
            tokio::select! {
                biased;
                cmd = self.commands.recv() => match cmd {
                    Some(c) => self.apply(c),
                    None => break,
                },
                // Before new frames, so that a busy peer cannot starve the handlers.
                Some((id, outcome)) = self.running.next(), if !self.running.is_empty() => {
                    // What the handler sent through its peer (progress, logs)
                    // goes out before its answer.
                    while let Ok(c) = self.commands.try_recv() {
                        self.apply(c);
                    }
                    self.handlers.remove(&id);
                    self.engine.respond(&id, outcome);
                }
                _ = async { self.notifying.as_mut().expect("checked").await }, if self.notifying.is_some() => {
                    self.next_notification();
                }
                frame = transport.recv(), if eof_at.is_none() => match frame {
                    Ok(Some(Incoming::WithExtensions { frame, extensions })) => {
                        // Requests decoded from this frame get these extensions.
                        self.frame_extensions = extensions;
                        match *frame {
                            Incoming::Bytes(bytes) => self.engine.handle_bytes(now(), &bytes),
                            Incoming::Decoded(inbound) => self.engine.handle_inbound(now(), inbound),
                            other => tracing::debug!(?other, "nested frame ignored"),
                        }
                    }
                    Ok(Some(Incoming::Bytes(bytes))) => self.engine.handle_bytes(now(), &bytes),
                    Ok(Some(Incoming::Decoded(inbound))) => self.engine.handle_inbound(now(), inbound),
                    Ok(Some(Incoming::Synced { frame, done })) => {
                        match *frame {
                            Incoming::Bytes(bytes) => self.engine.handle_bytes(now(), &bytes),
                            Incoming::Decoded(inbound) => self.engine.handle_inbound(now(), inbound),
                            other => tracing::debug!(?other, "nested frame ignored"),
                        }
                        self.synced.push(done);
                    }
                    Ok(Some(Incoming::TooLong { len, limit })) => {
                        let e = ErrorObject::invalid_request(format!(
                            "Invalid Request: message of {len} bytes exceeds the limit of {limit} bytes"
                        ));
                        out.push(tessera_proto::Transmit {
                            message: tessera_proto::Outbound::Single(
                                tessera_types::JsonRpcMessage::error(None, e),
                            ),
                            related: None,
                        });
                    }
                    Ok(None) | Err(_) => {
                        eof_at = Some(tokio::time::Instant::now() + self.options.drain_timeout);
                        // Long-lived subscriptions end with the connection; other
                        // requests in progress may still finish.
                        for (token, long_lived) in self.handlers.values() {
                            if *long_lived {
                                token.cancel();
                            }
                        }
                        // Nothing more will arrive: requests we sent cannot be answered.
                        self.fail_outgoing();
                    }
                },
                _ = sleep_until(deadline), if deadline.is_some() => {
                    self.engine.handle_timeout(now());
                }
            }
        }
        self.engine.close();
        self.process_events();
        for (_, (token, _)) in self.handlers.drain() {
            token.cancel();
        }
        self.fail_outgoing();
        if let Some(r) = self.connect_reply.take() {
            let _ = r.send(Err(PeerError::Closed));
        }
        self.notifications.clear();
        self.notifying = None;
        self.publish_outstanding();
        transport.close().await;
        result
    }

    /// Publishes the session's state when it changed since the last export.
    fn export_session(&mut self) {
        let revision = self.engine.session_revision() + self.data_revision;
        if revision == self.exported {
            return;
        }
        let Some(snapshot) = self.engine.session_snapshot() else {
            return;
        };
        self.exported = revision;
        let data = self.service.session_data(&self.peer);
        let export = Arc::new(crate::SessionExport {
            revision,
            snapshot,
            data,
        });
        self.info.send_modify(|i| i.session = Some(export));
    }

    fn publish_outstanding(&self) {
        self.peer.outstanding.publish(crate::peer::Outstanding {
            sent: self.engine.pending_requests(),
            waiting: self.outgoing.len(),
            handling: self.engine.inflight_requests(),
        });
    }

    fn fail_outgoing(&mut self) {
        for (_, o) in self.outgoing.drain() {
            let _ = o.reply.send(Err(PeerError::Closed));
        }
        self.tickets.clear();
    }

    fn process_events(&mut self) {
        while let Some(ev) = self.engine.poll_event() {
            match ev {
                Event::Request(r) => self.start_handler(r),
                Event::Notification { method, params } => {
                    self.notifications.push_back(Notification {
                        method,
                        params,
                        peer: self.peer.clone(),
                    });
                    if self.notifying.is_none() {
                        self.next_notification();
                    }
                }
                Event::Cancelled { id, reason } => {
                    tracing::debug!(%id, ?reason, "peer cancelled a request");
                    if let Some((t, _)) = self.handlers.get(&id) {
                        t.cancel();
                    }
                }
                Event::Response { id, outcome } => {
                    if let Some(o) = self.outgoing.remove(&id) {
                        self.tickets.remove(&o.ticket);
                        let _ = o.reply.send(outcome.map_err(PeerError::Call));
                    }
                }
                Event::Progress { id, params } => {
                    if let Some(p) = self.outgoing.get(&id).and_then(|o| o.progress.as_ref()) {
                        let _ = p.send(params);
                    }
                }
                Event::Initialized { version } => {
                    self.service.on_initialized(self.peer.clone(), version);
                }
                Event::Connected(c) => {
                    self.info.send_modify(|i| i.connected = Some(c.clone()));
                    if let Some(r) = self.connect_reply.take() {
                        let _ = r.send(Ok(c));
                    }
                }
                Event::ConnectFailed(e) => {
                    if let Some(r) = self.connect_reply.take() {
                        let _ = r.send(Err(PeerError::Call(e)));
                    }
                }
                Event::ProtocolViolation(what) => {
                    tracing::debug!(%what, "ignored a bad message from the peer");
                }
                other => tracing::debug!(?other, "unhandled engine event"),
            }
        }
        self.frame_extensions = crate::Extensions::default();
    }

    /// Starts handling the next waiting notification, if any.
    fn next_notification(&mut self) {
        self.notifying = self.notifications.pop_front().map(|n| {
            let fut = AssertUnwindSafe(self.service.handle_notification(n)).catch_unwind();
            Box::pin(async move {
                let _ = fut.await;
            }) as BoxFuture<'static, ()>
        });
    }

    fn start_handler(&mut self, r: tessera_proto::IncomingRequest) {
        let token = CancellationToken::new();
        let long_lived = r.method == methods::SUBSCRIPTIONS_LISTEN;
        self.handlers
            .insert(r.id.clone(), (token.clone(), long_lived));
        let id = r.id.clone();
        let fut = self.service.handle_request(Request::new(
            r,
            self.peer.clone(),
            token.clone(),
            self.frame_extensions.clone(),
        ));
        self.running.push(Box::pin(async move {
            tokio::select! {
                biased;
                // The engine sends nothing for a cancelled request; this only clears it.
                _ = token.cancelled() => (id, Err(ErrorObject::internal("cancelled"))),
                out = AssertUnwindSafe(fut).catch_unwind() => {
                    let outcome = out.unwrap_or_else(|_| {
                        Err(ErrorObject::internal("Internal error: the request handler panicked"))
                    });
                    (id, outcome)
                }
            }
        }));
    }

    fn apply(&mut self, c: Command) {
        match c {
            Command::Request(r) => {
                let OutgoingRequest {
                    ticket,
                    method,
                    params,
                    options,
                    reply,
                    progress,
                    assigned,
                } = *r;
                match self.engine.send_request(now(), &method, params, options) {
                    Ok(id) => {
                        if let Some(a) = assigned {
                            let _ = a.send(id.clone());
                        }
                        self.tickets.insert(ticket, id.clone());
                        self.outgoing.insert(
                            id,
                            Outgoing {
                                ticket,
                                reply,
                                progress,
                            },
                        );
                    }
                    Err(e) => {
                        let _ = reply.send(Err(PeerError::Send(e.to_string())));
                    }
                }
            }
            Command::CancelRequest { ticket, reason } => {
                if let Some(id) = self.tickets.remove(&ticket) {
                    self.outgoing.remove(&id);
                    self.engine.cancel(&id, reason.as_deref());
                }
            }
            notice @ (Command::Notify { .. } | Command::Progress { .. } | Command::Log { .. }) => {
                let _ = notice.send_notice(&mut self.engine);
            }
            Command::Connect { mode, reply } => {
                self.connect_reply = Some(reply);
                self.engine.connect(now(), mode);
            }
            Command::SessionChanged => self.data_revision += 1,
            Command::ApplySession(state) => {
                self.engine.restore_session(state.snapshot());
                self.service.on_restored(
                    self.peer.clone(),
                    state.protocol_version,
                    state.initialized,
                    &state.data,
                );
                // What came from elsewhere is not exported back.
                self.exported = self.engine.session_revision() + self.data_revision;
            }
            Command::Close => self.engine.close(),
        }
    }
}

async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}
