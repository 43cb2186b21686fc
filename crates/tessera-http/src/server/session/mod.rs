//! One legacy session: one task that drives the session's connection core
//! (see [`tessera_runtime::Connection`]) and sends each message it writes to
//! exactly one stream.
//!
//! The session task owns the core and every stream of the session; the HTTP
//! handlers talk to it with [`Command`]s. A request's route is registered in
//! the same step that hands its frame to the core, so it exists before any
//! answer can be written. The core is the only holder of protocol state: the
//! task asks it whether an id is in progress, whether batches are allowed,
//! which version was negotiated; it tracks only where messages go.
//!
//! Routing: a transmit `related` to a registered request goes to that
//! request's POST stream (its response ends the stream); anything else goes
//! to the standalone stream (stream 0: the GET stream, or the backlog while
//! none is open). A request whose first message is its response is answered
//! as JSON (in [`ResponseMode::Auto`]).
//!
//! A Streamable HTTP session also has a part in the state shared between
//! instances (`link`: its stored state, its bus topic, who holds its
//! standalone stream); see [`super::cluster`] for how state moves.

mod alarm;
mod backlog;
mod core;
mod handle;
mod link;
mod resume;
mod unstored;
mod whole;

use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize};
use std::sync::{Arc, Weak};
use std::time::Duration;

use foldhash::{HashMap, HashSet};

pub(crate) use self::core::SessionCore;

use bytes::Bytes;
use tessera_proto::{Outbound, Transmit};
use tessera_runtime::{BoxFuture, Incoming, Principal, SessionState};
use tessera_types::{JsonRpcMessage, ProtocolVersion, RequestId};
use tokio::sync::{Semaphore, mpsc, oneshot};

use super::client_share::InFlight;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::cluster::Note;
use super::event_store::{DynEventStore, EventId, StoredEvent};
use super::registry::{ClientKey, Full};
use super::{ResponseMode, Shared};
use crate::sse::{self, SseEvent};

/// What kind of session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SessionKind {
    /// Streamable HTTP (2025-03-26 … 2025-11-25).
    Streamable,
    /// HTTP+SSE (2024-11-05): one SSE stream carries everything.
    Sse,
}

/// How a registered request is answered.
pub(crate) enum FirstReply {
    /// One JSON body (the response).
    Json(Bytes),
    /// An SSE stream.
    Sse(mpsc::Receiver<Bytes>),
    /// A whole SSE stream, already ended: the request's first message was
    /// its response (see [`whole`]).
    SseDone(Bytes),
    /// The client cancelled the request: it gets no response.
    Cancelled,
    /// The request was refused before it reached the engine.
    Refused(RegisterError),
}

/// Why a request could not be registered.
#[derive(Debug)]
pub(crate) enum RegisterError {
    /// An id is already in progress in this session.
    Duplicate(RequestId),
    /// Batches need protocol version 2025-03-26.
    BatchNotAllowed(Option<ProtocolVersion>),
    /// A layer refused a request of the frame with an HTTP answer, before
    /// the response was committed (see [`tessera_runtime::middleware::Refusal`]).
    Refused(Box<tessera_runtime::middleware::Refusal>),
}

/// What the HTTP handlers ask of a session's router. Kept small (frames are
/// boxed): every session's command channel holds a block of these.
pub(crate) enum Command {
    /// Registers the requests of a frame, then hands the frame to the core
    /// (so the route exists before any answer can arrive).
    Submit(Box<Submit>),
    OpenGet {
        last: Option<EventId>,
        reply: oneshot::Sender<mpsc::Receiver<Bytes>>,
    },
    /// The client sent `notifications/cancelled` for this request.
    Cancelled(RequestId),
    /// The session ended (its `ended` token is cancelled): wakes its task,
    /// which checks the token before anything else it does.
    End,
    /// A handler asked to close its request's SSE connection (SEP-1699)
    /// through its [`StreamControl`](tessera_runtime::StreamControl).
    CloseStream(RequestId, Option<Duration>),
    /// Stores what the engine exported, if anything, then answers.
    Save(oneshot::Sender<()>),
    /// A frame without requests for the engine (or, on an HTTP+SSE session,
    /// with requests whose in-flight permits it carries, one per id).
    Forward(Box<Incoming>, Vec<(RequestId, InFlight)>),
}

/// A frame with requests, and where their answer goes.
pub(crate) struct Submit {
    ids: Vec<RequestId>,
    batch: bool,
    mode: ResponseMode,
    frame: Incoming,
    first: oneshot::Sender<FirstReply>,
    /// The request's share of the session's in-flight limit, held until it is answered.
    permit: InFlight,
}

pub(crate) use backlog::{BacklogBudget, DEFAULT_BACKLOG_BYTES, DEFAULT_BACKLOG_TOTAL_BYTES};
#[cfg(test)]
pub(crate) use handle::request_base;
pub(crate) use handle::{EndReason, SessionHandle};

/// Starts a session: engine, router, registry entry. For an HTTP+SSE
/// session, `sse_sink` is its one stream. `client` is who it counts against;
/// `owner` the principal every later request must carry.
pub(crate) fn spawn(
    shared: &Arc<Shared>,
    kind: SessionKind,
    sse_sink: Option<mpsc::Sender<Bytes>>,
    client: ClientKey,
    owner: Option<Principal>,
) -> Result<Arc<SessionHandle>, Full> {
    start(shared, kind, sse_sink, client, owner, None)
}

/// Starts a local copy of a Streamable HTTP session from its stored state
/// (it began on another instance, or in a copy since ended). Two requests
/// restoring one session at once get the same copy.
pub(crate) fn restore(
    shared: &Arc<Shared>,
    state: SessionState,
    client: ClientKey,
) -> Result<Arc<SessionHandle>, Full> {
    let owner = state.principal.clone().map(Principal);
    start(
        shared,
        SessionKind::Streamable,
        None,
        client,
        owner,
        Some(state),
    )
}

fn start(
    shared: &Arc<Shared>,
    kind: SessionKind,
    sse_sink: Option<mpsc::Sender<Bytes>>,
    client: ClientKey,
    owner: Option<Principal>,
    restored: Option<SessionState>,
) -> Result<Arc<SessionHandle>, Full> {
    let id: Arc<str> = match &restored {
        Some(s) => s.id.as_str().into(),
        None => new_session_id().into(),
    };
    let ended = CancellationToken::new();
    let max_inflight = shared.config.max_requests_per_session.max(1);
    let mut parts = None;
    let handle = shared.sessions.admit_as(&id, &client, || {
        let (commands, commands_rx) = mpsc::unbounded_channel();
        let core = shared.session_core(kind, restored.as_ref());
        let peer = core.peer().clone();
        parts = Some((core, commands_rx));
        let id_header = http::HeaderValue::from_str(&id).ok();
        let stream_handle = handle::stream_handle(&commands);
        let mut request_base = handle::request_base(&id);
        request_base.insert(stream_handle.clone());
        Arc::new(SessionHandle {
            sse_headers: handle::sse_headers(id_header.as_ref()),
            request_base,
            id_header,
            id: id.clone(),
            kind,
            peer,
            ended: ended.clone(),
            born: Instant::now(),
            last_activity: AtomicU64::new(0),
            owner: owner.clone(),
            client: client.clone(),
            handshaken: AtomicBool::new(restored.is_some()),
            permits: Arc::new(Semaphore::new(max_inflight)),
            max_inflight,
            streams_open: Arc::new(AtomicUsize::new(0)),
            stored_at: AtomicU64::new(0),
            end: AtomicU8::new(EndReason::Local as u8),
            store_error: std::sync::OnceLock::new(),
            stream_handle,
            commands,
        })
    })?;
    let Some((core, commands_rx)) = parts else {
        // Another request restored this session first.
        return Ok(handle);
    };
    let c = &shared.config;
    let resumable = kind == SessionKind::Streamable && c.event_store.is_some();
    let standalone = match kind {
        SessionKind::Streamable => shared.cluster.stream_base(),
        SessionKind::Sse => 0,
    };
    let mut streams = HashMap::default();
    streams.insert(standalone, StreamState::new(sse_sink));
    let link = (kind == SessionKind::Streamable && shared.cluster.stores)
        .then(|| Box::new(link::Link::new(shared.cluster.clone(), &handle, restored)));
    let router = Router {
        core,
        session: id,
        kind,
        shared: Arc::downgrade(shared),
        handle: Arc::downgrade(&handle),
        store: if resumable {
            c.event_store.clone()
        } else {
            None
        },
        retry: c.retry,
        stream_buffer: c.stream_buffer,
        idle_timeout: c.idle_timeout,
        handshake_deadline: if handle.is_handshaken() {
            None
        } else {
            c.handshake_timeout.map(|t| Instant::now() + t)
        },
        sse_held: HashMap::default(),
        ended,
        commands: commands_rx,
        routes: HashMap::default(),
        by_request: HashMap::default(),
        next_route: 0,
        streams,
        standalone,
        next_stream: standalone + 1,
        backlog: backlog::Backlog::new(
            c.standalone_backlog,
            c.standalone_backlog_bytes,
            shared.backlog_budget.clone(),
        ),
        link,
        relay_ends: Vec::new(),
        relay_waits: Vec::new(),
        unstored: unstored::Pending::default(),
        unstarted: whole::Unstarted::default(),
    };
    tokio::spawn(router.run());
    Ok(handle)
}

/// A fresh session id: 32 characters from a CSPRNG, visible ASCII only.
pub(crate) fn new_session_id() -> String {
    use rand::Rng;
    use rand::distr::Alphanumeric;
    rand::rng()
        .sample_iter(&Alphanumeric)
        .take(32)
        .map(char::from)
        .collect()
}

enum RouteState {
    Pending {
        first: oneshot::Sender<FirstReply>,
        mode: ResponseMode,
    },
    Stream(u64),
}

struct Route {
    state: RouteState,
    ids: Vec<RequestId>,
    batch: bool,
    /// Released (dropped) when the route ends.
    _permit: InFlight,
}

struct StreamState {
    /// The next sequence number.
    seq: u64,
    /// The connection currently attached, if any.
    sink: Option<mpsc::Sender<Bytes>>,
    /// Whether the stream's connection is on another instance (see [`resume`]).
    relay: resume::Relay,
}

impl StreamState {
    fn new(sink: Option<mpsc::Sender<Bytes>>) -> Self {
        StreamState {
            seq: 0,
            sink,
            relay: resume::Relay::Here,
        }
    }
}

struct Router {
    /// The session's connection core, driven by this task.
    core: Box<dyn SessionCore>,
    session: Arc<str>,
    kind: SessionKind,
    shared: Weak<Shared>,
    handle: Weak<SessionHandle>,
    store: Option<Arc<dyn DynEventStore>>,
    retry: Option<Duration>,
    stream_buffer: usize,
    idle_timeout: Option<Duration>,
    /// A session whose client has sent nothing after `initialize` by then ends.
    handshake_deadline: Option<Instant>,
    /// HTTP+SSE sessions: the in-flight permits of requests not yet answered.
    sse_held: HashMap<RequestId, InFlight>,
    ended: CancellationToken,
    commands: mpsc::UnboundedReceiver<Command>,
    routes: HashMap<u64, Route>,
    by_request: HashMap<RequestId, u64>,
    next_route: u64,
    /// Open (unfinished) streams, the standalone stream among them.
    streams: HashMap<u64, StreamState>,
    /// The number of the standalone stream (0 for a lone instance; see
    /// [`super::cluster`]).
    standalone: u64,
    next_stream: u64,
    /// Standalone messages not yet delivered to any GET stream.
    backlog: backlog::Backlog,
    /// The session's part in the shared state (Streamable HTTP sessions).
    link: Option<Box<link::Link>>,
    /// Streams relayed to another instance that ended, to tell it.
    relay_ends: Vec<(u32, u64)>,
    /// Streams resumed here waiting for their owner's first answer, with
    /// the deadline after which they end.
    relay_waits: Vec<(u64, Instant)>,
    /// Events written before the event store kept them (see [`unstored`]).
    unstored: unstored::Pending,
    /// SSE requests whose stream has not started (see [`whole`]).
    unstarted: whole::Unstarted,
}

impl Router {
    async fn run(mut self) {
        if self.kind == SessionKind::Sse {
            self.announce_endpoint();
        }
        let legacy_sink = self
            .streams
            .get(&self.standalone)
            .and_then(|s| s.sink.clone());
        if let Some(link) = &mut self.link {
            link.subscribe(&self.session).await;
        }
        // Kept across turns (built on every turn, it was registered with
        // the runtime and taken out again): one timer for the idle, relay
        // and handshake deadlines. The end of the session is not awaited:
        // whoever ends it sends `Command::End` after cancelling `ended`,
        // and every turn checks `ended` first.
        let mut alarm = alarm::Alarm::default();
        'serve: loop {
            // What the core wrote goes to its streams first (a change of
            // the session's state it made is stored before, in `route`).
            while let Some(t) = self.core.poll_transmit() {
                self.route(t).await;
                if self.kind == SessionKind::Sse
                    && self
                        .streams
                        .get(&self.standalone)
                        .is_none_or(|s| s.sink.is_none())
                {
                    break 'serve;
                }
            }
            if !self.unstarted.is_empty() {
                self.start_waiting();
            }
            if self.core.is_closed() {
                break;
            }
            // A change the core exported without a message to follow it (a
            // notification) is stored before anything else happens.
            if self.link.as_ref().is_some_and(|l| l.changed()) {
                Box::pin(self.save_state()).await;
            }
            if !self.relay_ends.is_empty() {
                Box::pin(self.end_relays()).await;
            }
            // The end of the session first; then the first branches of the
            // select below, in its order, without building it: most turns
            // have a command waiting or a step of the core to make (a
            // request's frame, then its handler).
            if self.ended.is_cancelled() {
                break;
            }
            if legacy_sink.as_ref().is_some_and(mpsc::Sender::is_closed) {
                tracing::debug!(session = %self.session, "HTTP+SSE client went away");
                break;
            }
            // Taken here only while the task has budget left: a command
            // counts against it as one `recv` takes does, and with none
            // left the select's `recv` makes the task yield (a flood of
            // commands does not hold the thread).
            if tokio::task::coop::has_budget_remaining() {
                match self.commands.try_recv() {
                    Ok(c) => {
                        tokio::task::coop::consume_budget().await;
                        self.command(c).await;
                        continue;
                    }
                    Err(mpsc::error::TryRecvError::Disconnected) => break,
                    Err(mpsc::error::TryRecvError::Empty) => {}
                }
            }
            if whole::step(&mut self.core, &mut self.unstarted).await {
                continue;
            }
            // The core has nothing to do for now (its wakers are this
            // task's): the select steps it when it is woken again.
            let idle_at = self.idle_deadline();
            let relay_at = self.relay_waits.iter().map(|(_, d)| *d).min();
            let due = earliest(earliest(idle_at, relay_at), self.handshake_deadline);
            if let Some(at) = due {
                alarm.set(at);
            }
            tokio::select! {
                biased;
                _ = closed(legacy_sink.as_ref()), if legacy_sink.is_some() => {
                    tracing::debug!(session = %self.session, "HTTP+SSE client went away");
                    break;
                }
                cmd = self.commands.recv() => match cmd {
                    Some(_) if self.ended.is_cancelled() => break,
                    Some(c) => self.command(c).await,
                    None => break,
                },
                // The handlers run as futures of this task.
                () = whole::work_after_step(&mut self.core, &mut self.unstarted) => {}
                () = self.unstored.next(), if !self.unstored.is_empty() => {}
                note = link::next_note(&mut self.link) => Box::pin(self.on_note(note)).await,
                // One timer for every deadline (a timer built on each turn
                // would be registered and taken out again each time); it may
                // go off early (a deadline moved later), and every deadline
                // is checked here.
                () = alarm.rung(), if due.is_some() => {
                    if self.handshake_deadline.is_some_and(|d| d <= Instant::now()) {
                        self.handshake_deadline = None;
                        if self.handle.upgrade().is_some_and(|h| !h.is_handshaken()) {
                            tracing::debug!(session = %self.session, "session ended: no message after initialize within the handshake timeout");
                            break;
                        }
                    }
                    if relay_at.is_some_and(|d| d <= Instant::now()) {
                        self.expire_relays();
                    }
                    if idle_at.is_none_or(|d| d > Instant::now()) {
                        continue;
                    }
                    if self.busy() {
                        if let Some(h) = self.handle.upgrade() { h.touch(); }
                    } else if self.idle_deadline().is_some_and(|d| d <= Instant::now()) {
                        tracing::debug!(session = %self.session, "session expired after being idle");
                        break;
                    }
                }
                // Requests waiting for the core's step got it (above): their
                // streams start on the next turn unless they were answered.
                () = std::future::ready(()), if !self.unstarted.is_empty() => {}
            }
        }
        drop(legacy_sink);
        self.finish().await;
    }

    async fn finish(&mut self) {
        self.ended.cancel();
        let reason = self
            .handle
            .upgrade()
            .map_or(EndReason::Local, |h| h.end_reason());
        self.core.close();
        let shared = self.shared.upgrade();
        if let Some(s) = &shared {
            s.sessions.remove_if(&self.session, &self.handle);
        }
        // The session is over for good when the client deleted it, or when
        // this lone instance ended it; a copy among several (or one shutting
        // down) leaves the shared state to the others and to its TTL.
        let alone = shared.as_ref().is_none_or(|s| s.cluster.bus.is_none());
        // A session evicted to make room is over everywhere: its state goes
        // and the other copies are told, or it would answer again there.
        let over = match reason {
            EndReason::Deleted | EndReason::Evicted => true,
            EndReason::Local => alone,
            EndReason::Shutdown | EndReason::Remote => false,
        };
        let local = matches!(reason, EndReason::Local | EndReason::Evicted);
        if over && local && self.link.is_some() {
            if let Some(s) = &shared {
                if let Err(e) = s.cluster.store.remove(&self.session).await {
                    tracing::warn!(session = %self.session, %e, "could not remove the session's stored state");
                }
                if reason == EndReason::Evicted {
                    if let Err(e) = s.cluster.publish(&self.session, Note::Ended).await {
                        tracing::warn!(session = %self.session, %e, "other instances were not told the session ended");
                    }
                }
            }
        }
        self.unstored.settle().await;
        if let (true, Some(store)) = (over, &self.store) {
            store.remove_session_boxed(&self.session).await;
        }
        // Dropping the sinks and the pending answers ends every stream.
        self.streams.clear();
        self.routes.clear();
    }

    fn idle_deadline(&self) -> Option<Instant> {
        let t = self.idle_timeout?;
        let h = self.handle.upgrade()?;
        Some(h.last_activity() + t)
    }

    /// Whether a request is in progress or a stream is open.
    fn busy(&self) -> bool {
        !self.routes.is_empty()
            || self
                .streams
                .values()
                .any(|s| s.sink.as_ref().is_some_and(|k| !k.is_closed()))
    }

    fn announce_endpoint(&mut self) {
        let Some(shared) = self.shared.upgrade() else {
            return;
        };
        let path = shared
            .config
            .legacy_sse
            .as_ref()
            .map_or("/message", |p| p.message.as_str());
        let url = format!("{path}?sessionId={}", self.session);
        let ev = SseEvent::data(url.as_bytes()).event("endpoint").to_bytes();
        self.deliver(self.standalone, ev);
    }

    async fn command(&mut self, c: Command) {
        match c {
            Command::Submit(submit) => {
                let Submit {
                    ids,
                    batch,
                    mode,
                    frame,
                    first,
                    permit,
                } = *submit;
                if batch && !self.core.allows_batches() {
                    let _ = first.send(FirstReply::Refused(RegisterError::BatchNotAllowed(
                        self.core.negotiated_version(),
                    )));
                    return;
                }
                let core = &self.core;
                let duplicate = match ids.as_slice() {
                    [id] => core.is_in_progress(id).then_some(id),
                    _ => {
                        let mut seen = HashSet::default();
                        ids.iter()
                            .find(|id| core.is_in_progress(id) || !seen.insert(*id))
                    }
                };
                if let Some(dup) = duplicate {
                    let _ = first.send(FirstReply::Refused(RegisterError::Duplicate(dup.clone())));
                    return;
                }
                let key = self.next_route;
                self.next_route += 1;
                for id in &ids {
                    self.by_request.insert(id.clone(), key);
                }
                self.routes.insert(
                    key,
                    Route {
                        state: RouteState::Pending { first, mode },
                        ids,
                        batch,
                        _permit: permit,
                    },
                );
                let refusals = refusal_frame(&frame);
                if self.core.is_closed() {
                    // The core is closed: so is the session.
                    if mode == ResponseMode::Sse {
                        self.start_stream(key);
                    }
                    self.end_route(key);
                    return;
                }
                self.core.handle(frame);
                // The handlers' layers ran as the frame was handled: a
                // refusal with an HTTP answer takes the POST over (its
                // JSON-RPC answers, when they come, go nowhere).
                if let Some(refusal) = refusals.and_then(|f| f.refusal()) {
                    if refusal.http().is_some() {
                        if let Some(Route {
                            state: RouteState::Pending { first, .. },
                            ..
                        }) = self.end_route(key)
                        {
                            let _ = first.send(FirstReply::Refused(RegisterError::Refused(
                                Box::new(refusal),
                            )));
                        }
                        return;
                    }
                }
                if mode == ResponseMode::Sse {
                    // Started after the core's next step, or answered whole.
                    self.unstarted.push(key);
                }
            }
            Command::Forward(frame, held) => {
                self.sse_held.extend(held);
                self.core.handle(*frame);
            }
            Command::Save(done) => {
                if self.link.as_ref().is_some_and(|l| l.changed()) {
                    Box::pin(self.save_state()).await;
                }
                let _ = done.send(());
            }
            Command::OpenGet { last, reply } => {
                let rx = Box::pin(self.open_get(last)).await;
                let _ = reply.send(rx);
            }
            Command::CloseStream(id, retry) => {
                let retry = retry.or(self.retry);
                self.close_stream_of(&id, retry);
            }
            // Checked on the next turn.
            Command::End => {}
            Command::Cancelled(id) => {
                self.sse_held.remove(&id);
                // The engine sends nothing for a cancelled request: end its
                // route here, or its connection would wait forever.
                let key = self.by_request.get(&id).copied();
                if let Some(route) = key.and_then(|k| self.routes.get(&k)) {
                    if !route.batch {
                        if let Some(Route {
                            state: RouteState::Pending { first, .. },
                            ..
                        }) = key.and_then(|k| self.end_route(k))
                        {
                            let _ = first.send(FirstReply::Cancelled);
                        }
                    }
                }
            }
        }
    }

    /// Turns a pending route into an SSE stream (priming event first).
    fn start_stream(&mut self, key: u64) -> Option<u64> {
        let route = self.routes.get_mut(&key)?;
        let stream = self.next_stream;
        let (tx, rx) = mpsc::channel(self.stream_buffer);
        let old = std::mem::replace(&mut route.state, RouteState::Stream(stream));
        if let RouteState::Pending { first, .. } = old {
            let _ = first.send(FirstReply::Sse(rx));
        }
        self.next_stream += 1;
        self.streams.insert(stream, StreamState::new(Some(tx)));
        if self.store.is_some() {
            self.prime(stream);
        }
        Some(stream)
    }

    /// The priming event: an id and empty data (and `retry:`), so the client
    /// can resume even before the first message.
    fn prime(&mut self, stream: u64) {
        let Some(s) = self.streams.get_mut(&stream) else {
            return;
        };
        let id = EventId { stream, seq: s.seq };
        s.seq += 1;
        let mut buf = [0u8; 41];
        let mut ev = SseEvent::data(b"").id(id.encode(&mut buf));
        if let Some(r) = self.retry {
            ev = ev.retry(r);
        }
        let bytes = ev.to_bytes();
        self.deliver(stream, bytes);
    }

    async fn route(&mut self, t: Transmit) {
        let related = t.related.clone();
        if self.kind == SessionKind::Sse {
            match &t.message {
                Outbound::Single(m) if is_response(m) => {
                    if let Some(id) = m.id() {
                        self.sse_held.remove(id);
                    }
                }
                Outbound::Batch(items) => {
                    for id in items
                        .iter()
                        .filter(|m| is_response(m))
                        .filter_map(|m| m.id())
                    {
                        self.sse_held.remove(id);
                    }
                }
                Outbound::Raw(r) => {
                    self.sse_held.remove(&r.id);
                }
                Outbound::Single(_) => {}
            }
            let bytes = Bytes::from(t.message.to_bytes());
            let ev = SseEvent::data(&bytes).event("message").to_bytes();
            self.deliver(self.standalone, ev);
            return;
        }
        if self.link.as_ref().is_some_and(|l| l.changed()) {
            // Stored before the message that follows the change leaves.
            Box::pin(self.save_state()).await;
        }
        let (key, is_final) = match &t.message {
            Outbound::Single(_) | Outbound::Raw(_) => {
                let key = related
                    .as_ref()
                    .and_then(|r| self.by_request.get(r))
                    .copied();
                // The answer to the related request ends a single request's stream.
                let answers = match &t.message {
                    Outbound::Single(m) => is_response_to(m, related.as_ref()),
                    Outbound::Raw(r) => related.as_ref() == Some(&r.id),
                    Outbound::Batch(_) => false,
                };
                let is_final = answers
                    && key
                        .and_then(|k| self.routes.get(&k))
                        .is_some_and(|r| !r.batch);
                (key, is_final)
            }
            Outbound::Batch(items) => {
                let key = items
                    .iter()
                    .filter(|m| is_response(m))
                    .find_map(|m| m.id().and_then(|id| self.by_request.get(id)))
                    .copied();
                (key, key.is_some())
            }
        };
        if let Some(key) = key.filter(|k| is_final && self.unstarted_sse(*k)) {
            self.answer_whole(key, &t.message).await;
            return;
        }
        let bytes = Bytes::from(t.message.to_bytes());
        let Some(key) = key else {
            let response = match &t.message {
                Outbound::Single(m) => is_response(m),
                Outbound::Batch(items) => items.iter().any(is_response),
                Outbound::Raw(_) => true,
            };
            if response {
                tracing::debug!(session = %self.session, "dropped a response nobody waits for");
                return;
            }
            self.unrelated(&t.message, bytes).await;
            return;
        };
        let Some(route) = self.routes.get(&key) else {
            return;
        };
        let state = match &route.state {
            RouteState::Pending { mode, .. } => Some(*mode),
            RouteState::Stream(s) => {
                let s = *s;
                let stored = self.emit(s, bytes).await;
                self.after_emit(key, is_final, stored);
                return;
            }
        };
        match state {
            Some(ResponseMode::Json) | Some(ResponseMode::Auto) if is_final => {
                if let Some(route) = self.end_route(key) {
                    if let RouteState::Pending { first, .. } = route.state {
                        let _ = first.send(FirstReply::Json(bytes));
                    }
                }
            }
            Some(ResponseMode::Json) => self.unrelated(&t.message, bytes).await,
            _ => {
                if let Some(s) = self.start_stream(key) {
                    let stored = self.emit(s, bytes).await;
                    self.after_emit(key, is_final, stored);
                }
            }
        }
    }

    /// After an event of route `key` went out: a final one ends the route
    /// and its stream (whether or not the store has kept the event yet; see
    /// [`unstored`]).
    fn after_emit(&mut self, key: u64, is_final: bool, stored: Option<BoxFuture<'static, ()>>) {
        if is_final {
            self.end_route(key);
        }
        self.unstored.hold(stored);
    }

    /// The request is answered: forget its route; its stream ends once the
    /// connection has written what is queued.
    fn end_route(&mut self, key: u64) -> Option<Route> {
        let route = self.routes.remove(&key)?;
        for id in &route.ids {
            self.by_request.remove(id);
        }
        if let RouteState::Stream(s) = route.state {
            if let Some(StreamState {
                relay: resume::Relay::To(to),
                ..
            }) = self.streams.remove(&s)
            {
                self.relay_ends.push((to, s));
            }
        }
        Some(route)
    }

    /// SEP-1699: closes the connection of a request's stream without ending
    /// the stream; the client resumes it with GET and `Last-Event-ID`.
    fn close_stream_of(&mut self, id: &RequestId, retry: Option<Duration>) {
        if self.store.is_none() {
            tracing::debug!(%id, "close-stream asked, but resumability is off: ignored");
            return;
        }
        let Some(key) = self.by_request.get(id).copied() else {
            return;
        };
        let stream = match self.routes.get(&key).map(|r| &r.state) {
            None => return,
            Some(RouteState::Stream(s)) => *s,
            Some(RouteState::Pending { .. }) => match self.start_stream(key) {
                Some(s) => s,
                None => return,
            },
        };
        if let Some(r) = retry {
            self.deliver(stream, sse::retry_field(r));
        }
        if let Some(s) = self.streams.get_mut(&stream) {
            s.sink = None;
        }
    }

    /// Sends one message on a stream, with an event id when resumable. The
    /// event goes out while the store keeps it: what comes back is the
    /// store's future when it is not done yet (see [`unstored`]); the caller
    /// hands it to [`unstored::Pending::hold`].
    #[must_use]
    async fn emit(&mut self, stream: u64, data: Bytes) -> Option<BoxFuture<'static, ()>> {
        if self.store.is_some() && self.unstored.full() {
            // A slow store: wait for it rather than queue without bound.
            self.unstored.next().await;
        }
        let s = self.streams.get_mut(&stream)?;
        let relay = s.relay;
        let (bytes, stored) = match &self.store {
            Some(store) => {
                let id = EventId { stream, seq: s.seq };
                s.seq += 1;
                let stored = unstored::Pending::start(store.store_boxed(
                    &self.session,
                    StoredEvent {
                        id,
                        data: data.clone(),
                    },
                ));
                if let resume::Relay::To(to) = relay {
                    Box::pin(self.relay_event(to, id, &data)).await;
                    return stored;
                }
                let mut buf = [0u8; 41];
                let bytes = SseEvent::data(&data).id(id.encode(&mut buf)).to_bytes();
                (bytes, stored)
            }
            None => (SseEvent::data(&data).to_bytes(), None),
        };
        self.deliver(stream, bytes);
        stored
    }

    /// Puts encoded bytes on a stream's connection. A full queue (a slow or
    /// vanished client) drops the connection; the events stay replayable.
    fn deliver(&mut self, stream: u64, bytes: Bytes) {
        let Some(s) = self.streams.get_mut(&stream) else {
            return;
        };
        let delivered = match &s.sink {
            Some(sink) => match sink.try_send(bytes.clone()) {
                Ok(()) => true,
                Err(mpsc::error::TrySendError::Full(_)) => {
                    tracing::warn!(session = %self.session, stream, "client too slow: closing its SSE stream");
                    s.sink = None;
                    false
                }
                Err(mpsc::error::TrySendError::Closed(_)) => {
                    s.sink = None;
                    false
                }
            },
            None => false,
        };
        if !delivered
            && stream == self.standalone
            && self.kind == SessionKind::Streamable
            && self.backlog.push(bytes) > 0
        {
            tracing::debug!(session = %self.session, "standalone backlog full: dropped the oldest messages");
        }
    }
}

/// Whether a stream number names a standalone (GET) stream (see
/// [`super::cluster`]: its lower 32 bits are 0).
fn is_standalone(stream: u64) -> bool {
    stream & u64::from(u32::MAX) == 0
}

fn is_response(m: &JsonRpcMessage) -> bool {
    matches!(m, JsonRpcMessage::Result(_) | JsonRpcMessage::Error(_))
}

fn is_response_to(m: &JsonRpcMessage, id: Option<&RequestId>) -> bool {
    is_response(m) && id.is_some() && m.id() == id
}

async fn closed(sink: Option<&mpsc::Sender<Bytes>>) {
    match sink {
        Some(s) => s.closed().await,
        None => std::future::pending().await,
    }
}

fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The [`MessageScope`](tessera_runtime::middleware::MessageScope) the HTTP handler
/// attached to a frame's requests, if any.
fn refusal_frame(frame: &Incoming) -> Option<tessera_runtime::middleware::MessageScope> {
    match frame {
        Incoming::WithExtensions { extensions, .. } => extensions
            .get::<tessera_runtime::middleware::MessageScope>()
            .cloned(),
        _ => None,
    }
}
