//! [`Connection`]: the connection core. The engine, the handlers it started
//! and the queue of what [`Peer`] handles ask, in one value that the owner
//! drives with a poll-style step.
//!
//! Every way of running a conversation drives this one type: the driver task
//! of stdio, a child process and the client ([`crate::spawn`]), a legacy HTTP
//! session inside the session's own task, and a per-request HTTP engine
//! inside the request's task. It is the only holder of protocol state:
//! transports move frames in with [`Connection::handle`], take messages out
//! with [`Connection::poll_transmit`], and ask it what they need to know
//! ([`Connection::negotiated_version`], [`Connection::is_in_progress`],
//! [`Connection::allows_batches`]) instead of tracking it themselves.
//!
//! ```no_run
//! use std::sync::Arc;
//! use tessera_proto::{EngineConfig, ServerIdentity};
//! use tessera_runtime::{Connection, NoService};
//!
//! # async fn run(frame: bytes::BytesMut) {
//! let config = EngineConfig::server(ServerIdentity::default());
//! let mut core = Connection::new(Arc::new(config), Arc::new(NoService));
//! core.handle_bytes(&frame);
//! // Runs the handlers in this task and hands back what the engine writes.
//! while let Some(t) = core.next().await {
//!     println!("{}", String::from_utf8_lossy(&t.message.to_bytes()));
//! }
//! # }
//! ```

use std::collections::VecDeque;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use foldhash::HashMap;
use futures::FutureExt;
use futures::future::Either;
use tessera_proto::decode::Inbound;
use tessera_proto::{Engine, EngineConfig, Event, Reply, Transmit};
use tessera_types::{ErrorObject, JsonRpcMessage, ProtocolVersion, RequestId, methods};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::handlers::{HandlerRun, Running};
use crate::peer::{Command, OutgoingRequest, Peer, PeerError, ProgressSink};
use crate::service::{BoxFuture, Notification, Request, Service, boxed};
use crate::transport::Incoming;

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
    /// Where the connection goes, for telemetry ([`Peer::link`]); `None` by
    /// default.
    pub link: Option<Arc<crate::Link>>,
}

impl Default for ConnectionOptions {
    fn default() -> Self {
        ConnectionOptions {
            max_message_size: 16 * 1024 * 1024,
            drain_timeout: Duration::from_secs(10),
            export_session: false,
            request_id_base: 0,
            link: None,
        }
    }
}

/// A request this side sent, waiting for its answer.
struct Outgoing {
    ticket: u64,
    reply: oneshot::Sender<Result<Reply, PeerError>>,
    progress: Option<ProgressSink>,
}

/// What the core keeps only while it is needed (boxed: an idle connection
/// pays one pointer for it).
#[derive(Default)]
struct Rare {
    /// Client role: the caller of [`Peer::connect`].
    connect_reply: Option<oneshot::Sender<Result<tessera_proto::Connected, PeerError>>>,
    /// Senders of [`Incoming::Synced`] frames handled since the last step.
    synced: Vec<oneshot::Sender<()>>,
}

fn now() -> std::time::Instant {
    tokio::time::Instant::now().into_std()
}

/// The connection core: one [`Engine`], the request handlers and
/// notifications it started (run as futures of the task that drives the
/// core: no task per request), and the commands of its [`Peer`] handles.
///
/// Drive it by feeding frames ([`Connection::handle`]), taking what it
/// writes ([`Connection::poll_transmit`]) and stepping it
/// ([`Connection::poll_work`] / [`Connection::work`]) whenever it may have
/// progress to make; [`Connection::next`] does the last two for a caller
/// that serves a few messages and stops. Dropping it cancels every handler.
pub struct Connection<S> {
    engine: Engine,
    service: Arc<S>,
    /// The core's own handle; its shared state holds the command queue.
    peer: Peer,
    outgoing: HashMap<RequestId, Outgoing>,
    tickets: HashMap<u64, RequestId>,
    /// The request handlers in progress (and their cancellation).
    running: Running,
    /// Notifications waiting for the one being handled (one at a time, in
    /// arrival order).
    notifications: VecDeque<Notification>,
    notifying: Option<BoxFuture<'static, ()>>,
    /// What the requests of the frame being handled get.
    frame_extensions: crate::Extensions,
    /// The timer of the engine's next deadline (only while there is one).
    timer: Option<Pin<Box<tokio::time::Sleep>>>,
    /// The session revision (engine's plus `data_revision`) last exported.
    exported: u64,
    /// Counts [`Peer::session_changed`] calls.
    data_revision: u64,
    export_session: bool,
    rare: Option<Box<Rare>>,
}

impl<S> std::fmt::Debug for Connection<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("handlers", &self.running.len())
            .field("outgoing", &self.outgoing.len())
            .field("closed", &self.engine.is_closed())
            .finish_non_exhaustive()
    }
}

impl<S: Service> Connection<S> {
    /// A core over a shared configuration and service, with default options.
    /// The configuration must list the methods the service serves
    /// ([`EngineConfig::methods`]; [`Connection::for_service`] fills them in).
    pub fn new(config: Arc<EngineConfig>, service: Arc<S>) -> Self {
        Self::with_options(config, service, &ConnectionOptions::default())
    }

    /// A core for `service`, with [`EngineConfig::methods`] taken from it.
    pub fn for_service(config: EngineConfig, service: S, options: &ConnectionOptions) -> Self {
        let mut config = config;
        config.methods = service.methods();
        Self::with_options(Arc::new(config), Arc::new(service), options)
    }

    /// A core over a shared configuration and service.
    pub fn with_options(
        config: Arc<EngineConfig>,
        service: Arc<S>,
        options: &ConnectionOptions,
    ) -> Self {
        let mut engine = Engine::new(config);
        engine.set_request_id_base(options.request_id_base);
        // Middleware sees every notification, the engine's own included.
        engine.report_handled_notifications(true);
        let exported = engine.session_revision();
        let observer = service.outgoing_observer();
        Connection {
            engine,
            service,
            peer: Peer::new(options.link.clone(), observer),
            outgoing: HashMap::default(),
            tickets: HashMap::default(),
            running: Running::default(),
            notifications: VecDeque::new(),
            notifying: None,
            frame_extensions: crate::Extensions::default(),
            timer: None,
            exported,
            data_revision: 0,
            export_session: options.export_session,
            rare: None,
        }
    }

    /// Server role: carries on a legacy session from its stored `state`
    /// (begun in another process, or in a core since dropped): the engine
    /// takes the handshake's state ([`Engine::restore_session`]) and the
    /// service its data ([`Service::on_restored`]). The client notices
    /// nothing. What is restored is not exported back.
    pub fn restore_state(&mut self, state: &crate::SessionState) {
        self.engine.restore_session(state.snapshot());
        let _ = self.peer.shared.session_version.set(state.protocol_version);
        self.service.on_restored(
            self.peer.clone(),
            state.protocol_version,
            state.initialized,
            &state.data,
        );
        self.exported = self.engine.session_revision() + self.data_revision;
    }

    /// Server role: starts the engine as the handshake left it (see
    /// [`Engine::restore_session`]); for a transport that serves each
    /// request on its own (stateless HTTP), as if a client had completed it.
    pub fn restore_session(&mut self, snapshot: tessera_proto::SessionSnapshot) {
        self.engine.restore_session(snapshot);
    }

    /// The handle the service's handlers get; clones of it send requests,
    /// notifications, progress and logs through this core.
    pub fn peer(&self) -> &Peer {
        &self.peer
    }

    // ------------------------------------------------------------ protocol state

    /// Server role: the version the legacy handshake settled on, once
    /// `initialize` is answered.
    pub fn negotiated_version(&self) -> Option<ProtocolVersion> {
        self.engine.negotiated_version()
    }

    /// Whether a request with this id from the peer is being handled (a
    /// new request may not reuse it).
    pub fn is_in_progress(&self, id: &RequestId) -> bool {
        self.engine.is_in_progress(id)
    }

    /// Whether the peer may send JSON-RPC batches (the negotiated version
    /// allows them).
    pub fn allows_batches(&self) -> bool {
        self.engine.allows_batches()
    }

    /// Whether [`Connection::close`] was called (or the peer asked to close).
    pub fn is_closed(&self) -> bool {
        self.engine.is_closed()
    }

    /// The number of request handlers still running.
    pub fn handling(&self) -> usize {
        self.running.len()
    }

    /// Whether nothing runs here: no handler, no notification being handled
    /// or waiting, and no command queued by a [`Peer`].
    pub fn is_quiet(&self) -> bool {
        self.running.is_empty()
            && self.notifying.is_none()
            && self.notifications.is_empty()
            && self.peer.shared.commands.is_empty()
    }

    /// The engine, to read (the version, the session's state).
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    // ------------------------------------------------------------------- input

    /// Feeds one frame from the transport. The handlers of the requests it
    /// carries start at the next step.
    pub fn handle(&mut self, frame: Incoming) {
        match frame {
            Incoming::Bytes(bytes) => self.engine.handle_bytes(now(), &bytes),
            Incoming::Decoded(inbound) => self.engine.handle_inbound(now(), inbound),
            Incoming::Result { bytes, id, result } => {
                self.engine.handle_result(now(), &bytes, id, result)
            }
            Incoming::WithExtensions { frame, extensions } => {
                self.frame_extensions = extensions;
                self.handle_nested(*frame);
            }
            Incoming::Synced { frame, done } => {
                self.handle_nested(*frame);
                self.rare.get_or_insert_default().synced.push(done);
            }
            Incoming::TooLong {
                len,
                limit,
                response_to,
            } => {
                // The answer to one of our requests fails that request; a
                // request or notification of the peer's gets -32600.
                let answered = response_to
                    .is_some_and(|id| self.engine.refuse_oversized_response(&id, len, limit));
                if !answered {
                    self.engine
                        .refuse_frame(ErrorObject::invalid_request(format!(
                            "Invalid Request: message of {len} bytes exceeds the limit of {limit} bytes"
                        )));
                }
            }
        }
        self.settle();
    }

    fn handle_nested(&mut self, frame: Incoming) {
        match frame {
            Incoming::Bytes(bytes) => self.engine.handle_bytes(now(), &bytes),
            Incoming::Decoded(inbound) => self.engine.handle_inbound(now(), inbound),
            Incoming::Result { bytes, id, result } => {
                self.engine.handle_result(now(), &bytes, id, result)
            }
            Incoming::WithExtensions { frame, extensions } => {
                self.frame_extensions = extensions;
                self.handle_nested(*frame);
            }
            other => tracing::debug!(?other, "nested frame ignored"),
        }
    }

    /// Feeds one frame of bytes (a stdio line, an HTTP body).
    pub fn handle_bytes(&mut self, bytes: &[u8]) {
        self.engine.handle_bytes(now(), bytes);
        self.settle();
    }

    /// Feeds one decoded frame; the handlers of the requests it carries see
    /// `extensions`.
    pub fn handle_inbound(&mut self, inbound: Inbound, extensions: crate::Extensions) {
        self.frame_extensions = extensions;
        self.engine.handle_inbound(now(), inbound);
        self.settle();
    }

    /// Feeds one message; the handlers of the requests it carries see
    /// `extensions`.
    pub fn handle_message(&mut self, message: JsonRpcMessage, extensions: crate::Extensions) {
        self.frame_extensions = extensions;
        self.engine.handle_message(now(), message);
        self.settle();
    }

    /// The peer gave up on request `id` (as `notifications/cancelled` says):
    /// its handler is cancelled and its answer dropped.
    pub fn cancel(&mut self, id: &RequestId, reason: &str) {
        let cancelled = tessera_types::CancelledNotificationParams {
            meta: None,
            request_id: Some(id.clone()),
            reason: Some(reason.to_owned()),
        };
        // An id and a string: always encoded.
        let p = tessera_types::encode_params(&cancelled).unwrap_or_default();
        let n = JsonRpcMessage::notification(methods::NOTIFICATIONS_CANCELLED, Some(p));
        self.handle_message(n, crate::Extensions::new());
    }

    /// The peer closed its side: nothing more arrives. Long-lived handlers
    /// (`subscriptions/listen`) are cancelled, and the requests this side
    /// sent fail; other handlers may still finish.
    pub fn peer_closed(&mut self) {
        self.running.cancel_long_lived();
        self.fail_outgoing();
        self.publish_outstanding();
    }

    /// Closes the connection: the engine sends nothing more, every handler is
    /// cancelled and every request this side sent fails. What the engine
    /// queued before is still given by [`Connection::poll_transmit`].
    pub fn close(&mut self) {
        self.engine.close();
        self.process_events();
        self.running.cancel_all();
        self.running.clear();
        self.fail_outgoing();
        if let Some(r) = self.rare.as_mut().and_then(|r| r.connect_reply.take()) {
            let _ = r.send(Err(PeerError::Closed));
        }
        self.notifications.clear();
        self.notifying = None;
        self.timer = None;
        self.publish_outstanding();
    }

    // ------------------------------------------------------------------ output

    /// The next message to write, if any.
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        self.engine.poll_transmit()
    }

    /// One step: applies what the [`Peer`] handles asked, answers the
    /// requests whose handlers finished (after what those handlers sent),
    /// runs the notification in progress and fires the engine's timer.
    /// `Ready` when something happened (new messages may be waiting in
    /// [`Connection::poll_transmit`]); `Pending` when there is nothing to do
    /// until `cx` is woken.
    pub fn poll_work(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let mut progressed = false;
        // Commands first: a handler's progress and logs go out in order.
        let mut budget = 128;
        while budget > 0 {
            match self.peer.shared.commands.poll_recv(cx) {
                Poll::Ready(c) => {
                    self.apply(c);
                    progressed = true;
                    budget -= 1;
                }
                Poll::Pending => break,
            }
        }
        while !self.running.is_empty() {
            match self.running.poll_next(cx) {
                Poll::Ready((id, outcome)) => {
                    // What the handler sent through its peer (progress,
                    // logs) goes out before its answer.
                    while let Some(c) = self.peer.shared.commands.try_recv() {
                        self.apply(c);
                    }
                    self.engine.respond_reply(&id, outcome);
                    self.process_events();
                    progressed = true;
                }
                Poll::Pending => break,
            }
        }
        if let Some(n) = self.notifying.as_mut() {
            if n.as_mut().poll(cx).is_ready() {
                self.next_notification();
                progressed = true;
            }
        }
        match self.engine.poll_timeout() {
            Some(at) => {
                let at = tokio::time::Instant::from_std(at);
                let timer = self
                    .timer
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(at)));
                if timer.deadline() != at {
                    timer.as_mut().reset(at);
                }
                if timer.as_mut().poll(cx).is_ready() {
                    self.timer = None;
                    self.engine.handle_timeout(now());
                    progressed = true;
                }
            }
            None => self.timer = None,
        }
        if progressed {
            self.settle();
            Poll::Ready(())
        } else {
            self.publish_outstanding();
            Poll::Pending
        }
    }

    /// [`Connection::poll_work`] as a future: one step, once there is
    /// something to do.
    pub fn work(&mut self) -> impl Future<Output = ()> + Send + '_ {
        std::future::poll_fn(move |cx| self.poll_work(cx))
    }

    /// The next message the engine writes, running the handlers and
    /// notifications in this task meanwhile. `None` once nothing is left in
    /// progress (nothing could produce a message any more), or the core is
    /// closed. For callers that serve a few messages and stop (a per-request
    /// HTTP engine).
    pub async fn next(&mut self) -> Option<Transmit> {
        loop {
            if let Some(t) = self.engine.poll_transmit() {
                return Some(t);
            }
            if self.engine.is_closed() {
                return None;
            }
            if self.running.is_empty() && self.notifying.is_none() {
                // Nothing can produce a message any more, except a command
                // already queued (a late notification from a handler's peer).
                match self.peer.shared.commands.try_recv() {
                    Some(c) => {
                        self.apply(c);
                        self.settle();
                        continue;
                    }
                    None => return None,
                }
            }
            self.work().await;
        }
    }

    // ---------------------------------------------------------------- internals

    /// After any input: starts what the engine asked for, exports the
    /// session's state if it changed, and tells the senders of synced frames.
    fn settle(&mut self) {
        self.process_events();
        if self.export_session {
            self.export();
        }
        if let Some(rare) = self.rare.as_mut() {
            for done in rare.synced.drain(..) {
                let _ = done.send(());
            }
        }
    }

    /// Publishes the session's state when it changed since the last export.
    fn export(&mut self) {
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
        self.peer.shared.publish(|i| i.session = Some(export));
    }

    fn publish_outstanding(&self) {
        self.peer
            .shared
            .outstanding
            .publish(crate::peer::Outstanding {
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
                    self.queue_notification(method, params, false)
                }
                Event::NotificationHandled { method, params } => {
                    self.queue_notification(method, params, true)
                }
                Event::Cancelled { id, reason } => {
                    tracing::debug!(%id, ?reason, "peer cancelled a request");
                    self.running.cancel(&id);
                }
                Event::Response { id, outcome } => {
                    if let Some(o) = self.outgoing.remove(&id) {
                        self.tickets.remove(&o.ticket);
                        let _ = o
                            .reply
                            .send(outcome.map(Reply::Object).map_err(PeerError::Call));
                    }
                }
                Event::RawResponse { id, result } => {
                    if let Some(o) = self.outgoing.remove(&id) {
                        self.tickets.remove(&o.ticket);
                        let _ = o.reply.send(Ok(Reply::Raw(result)));
                    }
                }
                Event::Progress { id, params } => {
                    if let Some(p) = self.outgoing.get(&id).and_then(|o| o.progress.as_ref()) {
                        let _ = p.send(params);
                    }
                }
                Event::Initialized { version } => {
                    let _ = self.peer.shared.session_version.set(version);
                    self.service.on_initialized(self.peer.clone(), version);
                }
                Event::Connected(c) => {
                    self.peer.shared.publish(|i| i.connected = Some(c.clone()));
                    if let Some(r) = self.rare.as_mut().and_then(|r| r.connect_reply.take()) {
                        let _ = r.send(Ok(c));
                    }
                }
                Event::ConnectFailed(e) => {
                    if let Some(r) = self.rare.as_mut().and_then(|r| r.connect_reply.take()) {
                        let _ = r.send(Err(PeerError::Call(e)));
                    }
                }
                Event::ProtocolViolation(what) => {
                    tracing::debug!(%what, "ignored a bad message from the peer");
                }
                Event::PeerMisbehaving(what) => {
                    tracing::warn!("{}", what.escape_debug());
                }
                other => tracing::debug!(?other, "unhandled engine event"),
            }
        }
        if !self.frame_extensions.is_empty() {
            self.frame_extensions = crate::Extensions::default();
        }
    }

    /// Queues a notification of the peer's for the service (behind the one
    /// being handled).
    fn queue_notification(
        &mut self,
        method: String,
        params: Option<tessera_types::JsonObject>,
        handled_by_core: bool,
    ) {
        let version = self
            .engine
            .negotiated_version()
            .or_else(|| self.engine.connection().map(|(_, v)| v));
        self.notifications.push_back(Notification {
            method,
            params,
            version,
            peer: self.peer.clone(),
            extensions: self.frame_extensions.clone(),
            handled_by_core,
        });
        if self.notifying.is_none() {
            self.next_notification();
        }
    }

    /// Starts handling the next waiting notification, if any: through the
    /// layers the transport attached to its message, then the service's own
    /// ([`Service::notify`]).
    fn next_notification(&mut self) {
        self.notifying = self.notifications.pop_front().map(|n| {
            let taken = match n.extensions.get::<crate::middleware::RequestLayers>() {
                Some(layers) if !layers.0.is_empty() => {
                    let endpoint = crate::middleware::endpoint(self.service.clone());
                    Either::Left(crate::middleware::notify(&layers.0.wrap(endpoint), n))
                }
                _ => Either::Right(self.service.clone().notify(n)),
            };
            // One allocation per notification: the taker and its panic guard.
            let fut = AssertUnwindSafe(taken).catch_unwind();
            Box::pin(async move {
                let _ = fut.await;
            }) as BoxFuture<'static, ()>
        });
    }

    fn start_handler(&mut self, r: tessera_proto::IncomingRequest) {
        let token = CancellationToken::new();
        let long_lived = r.method == methods::SUBSCRIPTIONS_LISTEN;
        let id = r.id.clone();
        let request = Request::new(
            r,
            self.peer.clone(),
            token.clone(),
            self.frame_extensions.clone(),
        );
        let answer = match self
            .frame_extensions
            .get::<crate::middleware::RequestLayers>()
        {
            // Layers the transport attached run outside the service's own
            // (built for this request: keep layers that count across
            // requests, such as limits, on the service).
            Some(layers) if !layers.0.is_empty() => {
                let endpoint = crate::middleware::endpoint(self.service.clone());
                let stack = layers.0.wrap(endpoint);
                boxed(crate::middleware::serve(&stack, request))
            }
            _ => boxed(self.service.clone().handle(request)),
        };
        self.running
            .push(HandlerRun::new(id, answer, token, long_lived));
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
                    observed,
                    raw,
                } = *r;
                let sent = self
                    .engine
                    .send_request_params(now(), &method, params, options, raw);
                match sent {
                    Ok(id) => {
                        if let Some(a) = assigned {
                            let _ = a.send(id.clone());
                        }
                        if let Some(a) = observed {
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
                self.rare.get_or_insert_default().connect_reply = Some(reply);
                self.engine.connect(now(), mode);
            }
            Command::SessionChanged => self.data_revision += 1,
            Command::ApplySession(state) => self.restore_state(&state),
            Command::Close => self.close(),
        }
    }
}

impl<S> Drop for Connection<S> {
    fn drop(&mut self) {
        // Handles see the connection gone: their commands are refused, and
        // receivers of the peer's info see the channel closed.
        self.peer.shared.close();
        // Handlers holding a clone of their token see the request end.
        self.running.cancel_all();
    }
}
