//! The engine: one MCP conversation as a value.
//!
//! The driver feeds it bytes or messages with [`Engine::handle_bytes`] and
//! [`Engine::handle_message`], tells it the time with every call, and drains
//! [`Engine::poll_transmit`] (messages to write) and [`Engine::poll_event`]
//! (work for the application). [`Engine::poll_timeout`] is the next instant at
//! which [`Engine::handle_timeout`] must be called.

use tessera_types::methods;

// Seeded per process, like std's hasher, but several times faster on request ids.
use foldhash::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use serde_json::value::RawValue;
use serde_json::{Value, json};
use tessera_types::{
    CancelledNotificationParams, Era, ErrorObject, JsonObject, JsonRpcMessage, Params,
    ProgressToken, ProtocolVersion, RequestId, ServerCapabilities,
};

use crate::config::{EngineConfig, Side};
use crate::decode::{self, Inbound};
use crate::error::{CallError, SendError};
use crate::event::{Event, Outbound, Transmit};
use crate::pending::{Pending, PendingKind, PendingTable, RequestOptions};
use crate::raw::{self, RawResponse, RawResult, Reply};
use crate::session::{Session, SessionSnapshot, level_passes};

/// Reserved `_meta` keys the engine reads and writes.
pub mod meta_keys {
    /// Protocol version of a modern request.
    pub const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
    /// Client capabilities of a modern request.
    pub const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
    /// Client identity of a modern request.
    pub const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
    /// Per-request minimum log level (modern).
    pub const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
    /// Server identity on modern results.
    pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
    /// Subscription correlation on `subscriptions/listen` notifications.
    pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
    /// Progress token.
    pub const PROGRESS_TOKEN: &str = "progressToken";
    /// A tag a client puts in a request's `_meta` (a string of at most
    /// [`MAX_REQUEST_TAG`](super::MAX_REQUEST_TAG) bytes, or an integer):
    /// the server copies it into the `_meta` of the notifications and
    /// requests it sends about that request (logs, stream control, its own
    /// requests of a legacy session), so that a client with many requests
    /// in flight on one stdio connection (a proxy) knows which one each
    /// belongs to. Other values are ignored.
    pub const REQUEST_TAG: &str = tessera_types::meta::REQUEST_TAG;
}

/// The longest string [`meta_keys::REQUEST_TAG`] a server echoes.
pub const MAX_REQUEST_TAG: usize = 64;
use meta_keys as mk;

mod inflight;
mod notice;
mod queue;
mod read_ahead;
mod refusal;
mod stamp;

use inflight::InflightTable;
use queue::Queue;

/// An incoming request being handled.
#[derive(Debug, Clone)]
pub(crate) struct Inflight {
    pub era: Era,
    pub progress_token: Option<ProgressToken>,
    pub last_progress: Option<f64>,
    pub cancelled: bool,
    pub batch: Option<u64>,
    pub log_level: Option<String>,
    /// Whether the request is `initialize` (never cancelled).
    pub initialize: bool,
    /// The request's [`meta_keys::REQUEST_TAG`], echoed on what relates to it.
    pub tag: Option<Value>,
}

#[derive(Debug, Default)]
struct Batch {
    waiting: HashSet<RequestId>,
    responses: Vec<JsonRpcMessage>,
    /// Set once every element has been handled: the batch is sent only then,
    /// so an answer given while its elements are still being read cannot send
    /// it early (and later elements always find it).
    sealed: bool,
}

/// The client's connection state machine.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Connect {
    Idle,
    Probing {
        version: ProtocolVersion,
        retried: bool,
    },
    Initializing,
    Connected {
        era: Era,
        version: ProtocolVersion,
    },
    Failed,
}

/// How a client connects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnectMode {
    /// Probe with `server/discover`; fall back to `initialize` for a legacy server.
    Auto,
    /// Only the legacy handshake, asking for this version.
    Legacy(ProtocolVersion),
    /// Only the modern era at this version (still sends `server/discover` to
    /// learn the server's capabilities).
    Modern(ProtocolVersion),
}

/// One MCP conversation, either role, both eras. No I/O, no clock.
#[derive(Debug)]
pub struct Engine {
    pub(crate) config: Arc<EngineConfig>,
    transmits: Queue<Transmit>,
    events: Queue<Event>,
    pending: PendingTable,
    pub(crate) inflight: InflightTable,
    pub(crate) session: Session,
    batches: HashMap<u64, Batch>,
    next_batch: u64,
    pub(crate) connect: Connect,
    connect_mode: ConnectMode,
    closed: bool,
    /// Client role: what every 2026-07-28 request carries in `_meta`.
    client_wire: ClientWire,
    /// Frames answered with an error and a null id so far.
    unattributed: u32,
    /// Whether the notifications the engine acts on itself are reported
    /// too ([`Event::NotificationHandled`]).
    report_handled: bool,
}

/// The client's capabilities and `clientInfo` in their wire form, serialised
/// once when the engine starts (a client's identity does not change).
#[derive(Debug, Default)]
struct ClientWire {
    capabilities: Value,
    info: Option<Value>,
}

impl ClientWire {
    fn of(config: &EngineConfig) -> Self {
        if config.side != Side::Client {
            return ClientWire::default();
        }
        let c = &config.client;
        ClientWire {
            capabilities: serde_json::to_value(&c.capabilities)
                .unwrap_or_else(|_| Value::Object(JsonObject::new())),
            info: (!c.info.name.is_empty())
                .then(|| serde_json::to_value(&c.info).ok())
                .flatten(),
        }
    }
}

impl Engine {
    /// A new engine.
    pub fn new(config: impl Into<Arc<EngineConfig>>) -> Self {
        let config = config.into();
        let mut session = Session::default();
        if config.side == Side::Client {
            session.peer_capabilities = Arc::<ServerCapabilities>::default().into();
        }
        Engine {
            client_wire: ClientWire::of(&config),
            config,
            transmits: Queue::default(),
            events: Queue::default(),
            pending: PendingTable::default(),
            inflight: InflightTable::default(),
            session,
            batches: HashMap::default(),
            next_batch: 0,
            connect: Connect::Idle,
            connect_mode: ConnectMode::Auto,
            closed: false,
            unattributed: 0,
            report_handled: false,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// Replaces the server's identity (capabilities change when tools are added at run time).
    pub fn set_server_identity(&mut self, identity: crate::ServerIdentity) {
        Arc::make_mut(&mut self.config).server = identity;
    }

    /// Replaces the application-served methods.
    pub fn set_methods(&mut self, methods: Vec<String>) {
        Arc::make_mut(&mut self.config).methods = methods;
    }

    /// The next message to write, if any.
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        self.transmits.pop_front()
    }

    /// The next event for the driver, if any.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// When [`Engine::handle_timeout`] must next be called.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.pending.next_deadline()
    }

    /// Server role: the state of the legacy session once `initialize` has
    /// been answered (`None` before), for [`Engine::restore_session`] in a
    /// fresh engine, here or in another process.
    pub fn session_snapshot(&self) -> Option<SessionSnapshot> {
        let s = &self.session;
        Some(SessionSnapshot {
            version: s.version?,
            initialized: s.initialized,
            peer_capabilities: s.peer_capabilities.client_shared().unwrap_or_default(),
            peer_info: s.peer_info.clone(),
            log_level: s.log_level.clone(),
        })
    }

    /// Server role: carries on a legacy session whose handshake was answered
    /// elsewhere (by an engine now dropped, or another process), as
    /// [`Engine::session_snapshot`] saw it; or, for transports that serve each
    /// request on its own (stateless HTTP), starts as if a client had
    /// completed the handshake. No [`Event::Initialized`] is raised: the
    /// session was announced where it began. On a running engine, it replaces
    /// the session's state (requests in progress are kept).
    pub fn restore_session(&mut self, snapshot: SessionSnapshot) {
        let s = &mut self.session;
        s.version = Some(snapshot.version);
        s.initialized = snapshot.initialized;
        s.peer_capabilities = snapshot.peer_capabilities.into();
        s.peer_info = snapshot.peer_info;
        s.log_level = snapshot.log_level;
        s.revision += 1;
    }

    /// Counts the changes of the legacy session's state (the handshake,
    /// `notifications/initialized`, `logging/setLevel`, a restore): when it
    /// moves, [`Engine::session_snapshot`] has something new to store.
    pub fn session_revision(&self) -> u64 {
        self.session.revision
    }

    /// Numbers the requests this side sends from `base + 1` on. Engines that
    /// take turns serving one session (in several processes) each get their
    /// own range, so the peer never sees two requests with one id.
    pub fn set_request_id_base(&mut self, base: i64) {
        self.pending.set_base(base);
    }

    /// Reports every notification the engine acts on itself
    /// (`notifications/cancelled`, a server's `notifications/initialized`,
    /// the `notifications/progress` of a request in flight) as an
    /// [`Event::NotificationHandled`] after the events of that action: for a
    /// driver whose middleware sees every notification. Off by default.
    pub fn report_handled_notifications(&mut self, on: bool) {
        self.report_handled = on;
    }

    /// The negotiated legacy version (after `initialize`), if any.
    pub fn negotiated_version(&self) -> Option<ProtocolVersion> {
        self.session.version
    }

    /// Client role: the era and version once connected.
    pub fn connection(&self) -> Option<(Era, ProtocolVersion)> {
        match self.connect {
            Connect::Connected { era, version } => Some((era, version)),
            _ => None,
        }
    }

    /// How many requests this side is waiting on.
    pub fn pending_requests(&self) -> usize {
        self.pending.len()
    }

    /// How many incoming requests are being handled.
    pub fn inflight_requests(&self) -> usize {
        self.inflight.len()
    }

    /// Whether the incoming request `id` is being handled (a new request
    /// may not reuse its id until it is answered).
    pub fn is_in_progress(&self, id: &RequestId) -> bool {
        self.inflight.contains_key(id)
    }

    /// Whether the peer may send JSON-RPC batches: the version negotiated
    /// (or connected at) allows them.
    pub fn allows_batches(&self) -> bool {
        self.batches_allowed().is_some()
    }

    pub(crate) fn push_event(&mut self, e: Event) {
        self.events.push_back(e);
    }

    pub(crate) fn transmit(&mut self, message: JsonRpcMessage, related: Option<RequestId>) {
        self.transmits.push_back(Transmit {
            message: Outbound::Single(message),
            related,
            mirrored: None,
        });
    }

    // ----------------------------------------------------------------- input

    /// Feeds one frame of bytes (a stdio line, an HTTP body).
    pub fn handle_bytes(&mut self, now: Instant, bytes: &[u8]) {
        if self.pending.has_raw() && !self.closed {
            // The answer to a request sent with `send_request_raw` is read
            // only as far as its envelope; anything else is decoded in full.
            if let Some((id, result)) = raw::result_response(bytes) {
                if self.pending.is_raw(&id) {
                    self.pending.remove(&id);
                    self.push_event(Event::RawResponse { id, result });
                    return;
                }
            }
        }
        let inbound = decode::decode(bytes);
        self.handle_inbound(now, inbound);
    }

    /// Feeds one decoded frame.
    pub fn handle_inbound(&mut self, now: Instant, inbound: Inbound) {
        if self.closed {
            return;
        }
        match inbound {
            Inbound::Message(m) => self.handle_message_in(now, m, None),
            Inbound::Invalid(r) => self.reject(r, None),
            Inbound::Batch(items) => self.handle_batch(now, items),
        }
    }

    /// Feeds one valid message.
    pub fn handle_message(&mut self, now: Instant, message: JsonRpcMessage) {
        self.handle_message_in(now, message, None)
    }

    fn reject(&mut self, r: decode::InvalidMessage, batch: Option<u64>) {
        if r.silent {
            self.push_event(Event::ProtocolViolation(r.error.message));
        } else if r.id.is_none() && batch.is_none() {
            self.answer_unattributed(r.error);
        } else {
            self.answer(r.id, Err(r.error), batch);
        }
    }

    fn batches_allowed(&self) -> Option<ProtocolVersion> {
        let v = self.session.version.or(match self.connect {
            Connect::Connected { version, .. } => Some(version),
            _ => None,
        });
        v.filter(|v| v.allows_batches())
    }

    fn handle_batch(&mut self, now: Instant, items: Vec<decode::Decoded>) {
        if self.batches_allowed().is_none() {
            let why = match self.session.version {
                Some(v) => format!("JSON-RPC batches are not allowed in protocol version {v}"),
                None => "JSON-RPC batches are only allowed after negotiating protocol version 2025-03-26".to_owned(),
            };
            self.answer(None, Err(ErrorObject::invalid_request(why)), None);
            return;
        }
        let batch_id = self.next_batch;
        self.next_batch += 1;
        let mut batch = Batch::default();
        for item in &items {
            if let Ok(JsonRpcMessage::Request(r)) = item {
                batch.waiting.insert(r.id.clone());
            }
        }
        self.batches.insert(batch_id, batch);
        let mut seen = HashSet::default();
        for item in items {
            match item {
                Ok(JsonRpcMessage::Request(r)) if !seen.insert(r.id.clone()) => {
                    // A second request with the same id in one batch: refused on
                    // its own, without touching the wait for the first one.
                    let b = self.batches.get_mut(&batch_id).expect("batch exists");
                    b.responses.push(JsonRpcMessage::error(
                        Some(r.id.clone()),
                        ErrorObject::invalid_request(format!(
                            "Invalid Request: id {} is used twice in one batch",
                            r.id
                        )),
                    ));
                }
                Ok(JsonRpcMessage::Request(r)) if r.method == methods::INITIALIZE => {
                    self.answer(
                        Some(r.id),
                        Err(ErrorObject::invalid_request(
                            "initialize must not be part of a JSON-RPC batch",
                        )),
                        Some(batch_id),
                    );
                }
                Ok(m) => self.handle_message_in(now, m, Some(batch_id)),
                Err(r) if r.silent => self.push_event(Event::ProtocolViolation(r.error.message)),
                Err(r) => {
                    // An unreadable element still gets its own error entry.
                    let b = self.batches.get_mut(&batch_id).expect("batch exists");
                    b.responses
                        .push(JsonRpcMessage::error(r.id.clone(), r.error.clone()));
                }
            }
        }
        if let Some(b) = self.batches.get_mut(&batch_id) {
            b.sealed = true;
        }
        self.flush_batch(batch_id);
    }

    fn flush_batch(&mut self, batch_id: u64) {
        let done = self
            .batches
            .get(&batch_id)
            .is_some_and(|b| b.sealed && b.waiting.is_empty());
        if done {
            if let Some(b) = self.batches.remove(&batch_id) {
                if !b.responses.is_empty() {
                    self.transmits.push_back(Transmit {
                        message: Outbound::Batch(b.responses),
                        related: None,
                        mirrored: None,
                    });
                }
            }
        }
    }

    /// Sends (or collects into a batch) the answer to a request.
    pub(crate) fn answer(
        &mut self,
        id: Option<RequestId>,
        outcome: Result<JsonObject, ErrorObject>,
        batch: Option<u64>,
    ) {
        let message = match outcome {
            Ok(result) => match id.clone() {
                Some(id) => JsonRpcMessage::result(id, result),
                None => return,
            },
            Err(e) => JsonRpcMessage::error(id.clone(), e),
        };
        match batch.and_then(|b| self.batches.get_mut(&b).map(|x| (b, x))) {
            Some((b, batch)) => {
                if let Some(id) = &id {
                    batch.waiting.remove(id);
                }
                batch.responses.push(message);
                self.flush_batch(b);
            }
            None => self.transmit(message, id),
        }
    }

    fn handle_message_in(&mut self, now: Instant, m: JsonRpcMessage, batch: Option<u64>) {
        if self.closed {
            return;
        }
        match m {
            JsonRpcMessage::Request(r) => self.on_request(now, r.id, r.method, r.params, batch),
            JsonRpcMessage::Notification(n) => {
                self.on_notification(now, n.method, n.params.map(Params::into_object))
            }
            JsonRpcMessage::Result(r) => self.on_response(now, r.id, Ok(r.result)),
            JsonRpcMessage::Error(e) => match e.id {
                Some(id) => self.on_response(now, id, Err(e.error)),
                None => self.push_event(Event::ProtocolViolation(format!(
                    "peer reported an error for an unreadable message: {}",
                    e.error
                ))),
            },
        }
    }

    fn on_response(
        &mut self,
        now: Instant,
        id: RequestId,
        outcome: Result<JsonObject, ErrorObject>,
    ) {
        let Some(p) = self.pending.remove(&id) else {
            if !self.pending.was_cancelled(&id) {
                self.push_event(Event::ProtocolViolation(format!(
                    "response to unknown request id {id}"
                )));
            }
            return;
        };
        match p.kind {
            PendingKind::User => self.push_event(Event::Response {
                id,
                outcome: outcome.map_err(CallError::Remote),
            }),
            PendingKind::Probe => self.on_probe_answer(now, outcome),
            PendingKind::Initialize => self.on_initialize_answer(now, outcome),
        }
    }

    // ---------------------------------------------------------------- output

    /// Sends a request to the peer. Returns its id; the outcome arrives as
    /// [`Event::Response`].
    pub fn send_request(
        &mut self,
        now: Instant,
        method: &str,
        params: Option<JsonObject>,
        options: RequestOptions,
    ) -> Result<RequestId, SendError> {
        self.send_request_params(now, method, params.map(Params::from), options, false)
    }

    /// Like [`Engine::send_request`], for a result to pass on without reading
    /// it: a result answer that arrives as bytes ([`Engine::handle_bytes`])
    /// is checked (JSON-RPC envelope, id, an object result) and handed over
    /// as JSON text in [`Event::RawResponse`], not parsed into a tree. An
    /// answer fed already decoded, an error, a timeout or a closed
    /// connection arrive as [`Event::Response`] as usual.
    pub fn send_request_raw(
        &mut self,
        now: Instant,
        method: &str,
        params: Option<JsonObject>,
        options: RequestOptions,
    ) -> Result<RequestId, SendError> {
        self.send_request_params(now, method, params.map(Params::from), options, true)
    }

    /// [`Engine::send_request`] (or, with `raw`, [`Engine::send_request_raw`])
    /// with params that may be JSON text, such as a request's params a proxy
    /// passes on: the engine's own `_meta` members are stamped on the text,
    /// and the other members are written as they are.
    pub fn send_request_params(
        &mut self,
        now: Instant,
        method: &str,
        params: Option<Params>,
        options: RequestOptions,
        raw: bool,
    ) -> Result<RequestId, SendError> {
        if self.closed {
            return Err(SendError::Closed);
        }
        if self.config.side == Side::Server {
            let modern_only = options
                .related
                .as_ref()
                .and_then(|r| self.inflight.get(r))
                .is_some_and(|f| f.era == Era::Modern);
            if modern_only {
                return Err(SendError::NotAllowed(format!(
                    "a 2026-07-28 server cannot send {method} to the client; use an input-required result"
                )));
            }
            if !self.session.initialized && method != methods::PING {
                return Err(SendError::NotReady("the client has not initialized"));
            }
        }
        let id = self.send_request_kind(now, method, params, options, PendingKind::User)?;
        if raw {
            self.pending.mark_raw(&id);
        }
        Ok(id)
    }

    pub(crate) fn send_request_kind(
        &mut self,
        now: Instant,
        method: &str,
        params: Option<Params>,
        options: RequestOptions,
        kind: PendingKind,
    ) -> Result<RequestId, SendError> {
        let id = self.pending.next_id();
        let mut params = params;
        let tag = options
            .related
            .as_ref()
            .and_then(|r| self.inflight.get(r))
            .and_then(|f| f.tag.as_ref());
        let modern = match self.connect {
            Connect::Connected {
                era: Era::Modern,
                version,
            } if self.config.side == Side::Client => Some(version),
            _ => None,
        };
        let mirrored = self.stamp(
            &mut params,
            &id,
            tag,
            modern,
            options.progress,
            options.meta.as_ref(),
        );
        let progress_token = options.progress.then(|| id.clone());
        let t = self.config.timeouts;
        let (timeout, max) = if options.no_timeout {
            (None, None)
        } else {
            (
                options.timeout.or(t.request),
                options.max_timeout.or(t.maximum),
            )
        };
        self.pending.insert(
            id.clone(),
            Pending {
                method: method.to_owned(),
                kind,
                sent_at: now,
                deadline: timeout.map(|t| now + t),
                hard_deadline: max.map(|t| now + t),
                timeout,
                reset_on_progress: options.reset_on_progress,
                progress_token,
                raw: false,
            },
        );
        let request = JsonRpcMessage::Request(tessera_types::JsonRpcRequest {
            jsonrpc: tessera_types::JsonRpcVersion,
            id: id.clone(),
            method: method.to_owned(),
            params,
        });
        self.transmits.push_back(Transmit {
            message: Outbound::Single(request),
            related: options.related,
            mirrored: mirrored.map(Box::new),
        });
        Ok(id)
    }

    /// Adds the modern per-request `_meta` fields (client role).
    pub(crate) fn add_modern_meta(&self, params: &mut JsonObject, version: ProtocolVersion) {
        let meta = meta_of(params);
        meta.insert(mk::PROTOCOL_VERSION.into(), json!(version.as_str()));
        meta.entry(mk::CLIENT_CAPABILITIES)
            .or_insert_with(|| self.client_wire.capabilities.clone());
        if let Some(info) = &self.client_wire.info {
            meta.entry(mk::CLIENT_INFO).or_insert_with(|| info.clone());
        }
    }

    /// Sends a notification. `related` ties it to an incoming request (progress,
    /// logs) so per-request transports can route it.
    pub fn notify(
        &mut self,
        method: &str,
        params: Option<JsonObject>,
        related: Option<RequestId>,
    ) -> Result<(), SendError> {
        if self.closed {
            return Err(SendError::Closed);
        }
        let mut params = params;
        if let Some(r) = &related {
            match self.inflight.get(r) {
                Some(f) if !f.cancelled => echo_tag(&mut params, Some(f)),
                _ => {
                    return Err(SendError::NotAllowed(format!(
                        "request {r} is no longer in progress"
                    )));
                }
            }
        }
        self.transmit(JsonRpcMessage::notification(method, params), related);
        Ok(())
    }

    /// Reports progress on an incoming request. Sent only when the caller gave a
    /// progress token, while the request is in progress, and when `progress`
    /// is greater than the last value sent. Returns whether it was sent.
    pub fn notify_progress(
        &mut self,
        request: &RequestId,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) -> bool {
        let Some(f) = self.inflight.get_mut(request) else {
            return false;
        };
        let Some(token) = f.progress_token.clone() else {
            return false;
        };
        if f.cancelled || !progress.is_finite() || f.last_progress.is_some_and(|l| progress <= l) {
            return false;
        }
        f.last_progress = Some(progress);
        let mut p = JsonObject::new();
        p.insert(
            "progressToken".into(),
            serde_json::to_value(token).unwrap_or_default(),
        );
        p.insert("progress".into(), json!(progress));
        if let Some(t) = total {
            p.insert("total".into(), json!(t));
        }
        if let Some(m) = message {
            p.insert("message".into(), json!(m));
        }
        self.transmit(
            JsonRpcMessage::notification(methods::NOTIFICATIONS_PROGRESS, Some(p)),
            Some(request.clone()),
        );
        true
    }

    /// Sends a `notifications/message` log entry if the level passes the
    /// filter: the session's `logging/setLevel` (legacy; everything when none was
    /// set) or the related request's `_meta` log level (modern; nothing when the
    /// request did not ask). Returns whether it was sent.
    pub fn notify_log(
        &mut self,
        level: &str,
        logger: Option<&str>,
        data: Value,
        related: Option<&RequestId>,
    ) -> bool {
        if self.closed {
            return false;
        }
        let inflight = related.and_then(|r| self.inflight.get(r));
        if related.is_some() && inflight.is_none_or(|f| f.cancelled) {
            return false;
        }
        let minimum = match inflight {
            Some(f) if f.era == Era::Modern => match &f.log_level {
                Some(l) => Some(l.clone()),
                None => return false,
            },
            _ => self.session.log_level.clone(),
        };
        if minimum.is_some_and(|m| !level_passes(level, &m)) {
            return false;
        }
        let mut p = JsonObject::new();
        p.insert("level".into(), json!(level));
        if let Some(l) = logger {
            p.insert("logger".into(), json!(l));
        }
        p.insert("data".into(), data);
        let mut params = Some(p);
        echo_tag(&mut params, inflight);
        self.transmit(
            JsonRpcMessage::notification(methods::NOTIFICATIONS_MESSAGE, params),
            related.cloned(),
        );
        true
    }

    /// Answers an incoming request. A cancelled or unknown request gets nothing.
    /// In the modern era `resultType: "complete"` is added when missing, and a
    /// server adds its `serverInfo` to `_meta`. Returns whether a response was sent.
    pub fn respond(&mut self, id: &RequestId, outcome: Result<JsonObject, ErrorObject>) -> bool {
        let Some(f) = self.inflight.remove(id) else {
            return false;
        };
        if f.cancelled || self.closed {
            return false;
        }
        let outcome = outcome.map(|mut r| {
            if f.era == Era::Modern {
                self.shape_modern_result(&mut r);
            }
            r
        });
        self.answer(Some(id.clone()), outcome, f.batch);
        true
    }

    /// Answers an incoming request with a result given as JSON text, written
    /// as it is (a proxy passes its upstream's result on this way). What the
    /// engine adds to a 2026-07-28 result (`resultType`, and `_meta` with
    /// the server's identity) is written in front of the text when missing;
    /// only when `_meta` is there without the identity, or the request is
    /// part of a batch, is the text read into an object and answered as
    /// [`Engine::respond`] does. Returns whether a response was sent.
    pub fn respond_raw(&mut self, id: &RequestId, result: RawResult) -> bool {
        let (era, batch) = match self.inflight.get(id) {
            None => return false,
            Some(f) => (f.era, f.batch.is_some()),
        };
        let shaped = if batch {
            Err(result)
        } else if era == Era::Modern {
            // Written with what this engine adds (`RawResult::shaped`).
            if self
                .result_shape()
                .is_some_and(|shape| result.is_shaped_as(&shape))
            {
                Ok(result)
            } else if !self.adds_server_info() {
                raw::shape_modern::<RawValue>(result, None)
            } else if let Some(text) = self.config.server_info_text() {
                raw::shape_modern(result, Some(&**text))
            } else {
                raw::shape_modern(result, Some(&self.config.server.info))
            }
        } else {
            Ok(result)
        };
        let result = match shaped {
            Ok(r) => r,
            Err(r) => {
                let outcome = r.to_object().map_err(|e| {
                    ErrorObject::internal(format!("Internal error: the result cannot be read: {e}"))
                });
                return self.respond(id, outcome);
            }
        };
        let Some(f) = self.inflight.remove(id) else {
            return false;
        };
        if f.cancelled || self.closed {
            return false;
        }
        self.transmits.push_back(Transmit {
            message: Outbound::Raw(RawResponse {
                id: id.clone(),
                result,
            }),
            related: Some(id.clone()),
            mirrored: None,
        });
        true
    }

    /// Answers an incoming request with a [`Reply`] ([`Engine::respond`] for
    /// an object or an error, [`Engine::respond_raw`] for JSON text).
    pub fn respond_reply(&mut self, id: &RequestId, outcome: Result<Reply, ErrorObject>) -> bool {
        match outcome {
            Ok(Reply::Raw(r)) => self.respond_raw(id, r),
            Ok(Reply::Object(o)) => self.respond(id, Ok(o)),
            Err(e) => self.respond(id, Err(e)),
        }
    }

    /// Whether 2026-07-28 results get the server's identity in `_meta`.
    pub(crate) fn adds_server_info(&self) -> bool {
        self.config.side == Side::Server && !self.config.server.info.name.is_empty()
    }

    pub(crate) fn shape_modern_result(&self, r: &mut JsonObject) {
        r.entry("resultType").or_insert_with(|| json!("complete"));
        let info = &self.config.server.info;
        if self.adds_server_info() {
            meta_of(r).entry(mk::SERVER_INFO).or_insert_with(|| {
                serde_json::to_value(info).unwrap_or_else(|_| Value::Object(JsonObject::new()))
            });
        }
    }

    /// Cancels a request this side sent: forgets it, drops its late answer and
    /// tells the peer with `notifications/cancelled` (never for `initialize`).
    /// Returns whether the request was pending.
    pub fn cancel(&mut self, id: &RequestId, reason: Option<&str>) -> bool {
        let Some(p) = self.pending.remove(id) else {
            return false;
        };
        self.pending
            .remember_cancelled(id.clone(), self.config.cancelled_memory);
        if p.method != methods::INITIALIZE {
            self.send_cancelled(id, reason);
        }
        if p.kind != PendingKind::User {
            // The connection attempt rode on this request: it is over.
            self.connect = Connect::Failed;
            self.push_event(Event::ConnectFailed(CallError::Cancelled));
        }
        true
    }

    fn send_cancelled(&mut self, id: &RequestId, reason: Option<&str>) {
        let p = CancelledNotificationParams {
            meta: None,
            request_id: Some(id.clone()),
            reason: reason.map(str::to_owned),
        };
        self.transmit(
            JsonRpcMessage::notification(
                methods::NOTIFICATIONS_CANCELLED,
                Some(crate::serve::to_object(&p)),
            ),
            None,
        );
    }

    /// Fails every request whose deadline has passed (and tells the peer).
    pub fn handle_timeout(&mut self, now: Instant) {
        for (id, p) in self.pending.expire(now) {
            self.pending
                .remember_cancelled(id.clone(), self.config.cancelled_memory);
            let elapsed = now.saturating_duration_since(p.sent_at);
            match p.kind {
                PendingKind::User => {
                    if p.method != methods::INITIALIZE {
                        self.send_cancelled(&id, Some("request timed out"));
                    }
                    self.push_event(Event::Response {
                        id,
                        outcome: Err(CallError::Timeout(elapsed)),
                    });
                }
                PendingKind::Probe => {
                    self.send_cancelled(
                        &id,
                        Some("no answer to server/discover; assuming a legacy server"),
                    );
                    self.start_initialize(now);
                }
                PendingKind::Initialize => {
                    self.connect = Connect::Failed;
                    self.push_event(Event::ConnectFailed(CallError::Timeout(elapsed)));
                }
            }
        }
    }

    /// The transport closed: every pending request fails with
    /// [`CallError::Closed`], and nothing more is sent.
    pub fn close(&mut self) {
        if self.closed {
            return;
        }
        self.closed = true;
        for (id, p) in self.pending.drain() {
            match p.kind {
                PendingKind::User => self.push_event(Event::Response {
                    id,
                    outcome: Err(CallError::Closed),
                }),
                _ => self.push_event(Event::ConnectFailed(CallError::Closed)),
            }
        }
        self.inflight.clear();
    }

    /// Whether [`Engine::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    pub(crate) fn connect_mode(&self) -> ConnectMode {
        self.connect_mode
    }

    pub(crate) fn set_connect_mode(&mut self, m: ConnectMode) {
        self.connect_mode = m;
    }
}

/// Copies the tag of the request `f` is handling, if it carried one, into
/// `params._meta` ([`meta_keys::REQUEST_TAG`]).
fn echo_tag(params: &mut Option<JsonObject>, f: Option<&Inflight>) {
    if let Some(tag) = f.and_then(|f| f.tag.as_ref()) {
        meta_of(params.get_or_insert_with(JsonObject::new))
            .insert(mk::REQUEST_TAG.into(), tag.clone());
    }
}

/// `params._meta` as a mutable object, created when missing (or not an object).
pub(crate) fn meta_of(params: &mut JsonObject) -> &mut JsonObject {
    let slot = params
        .entry("_meta")
        .or_insert_with(|| Value::Object(JsonObject::new()));
    if !slot.is_object() {
        *slot = Value::Object(JsonObject::new());
    }
    slot.as_object_mut().expect("just made an object")
}
