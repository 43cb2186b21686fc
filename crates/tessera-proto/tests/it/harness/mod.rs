//! Shared test harness: two engines wired back to back on a virtual clock.
//!
//! Everything is deterministic: no threads, no sleeps, no real time. The
//! clock starts at an `Instant` taken once and only moves when a test calls
//! [`Pair::advance`].

#![allow(dead_code)]

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tessera_proto::{
    ClientIdentity, ConnectMode, Engine, EngineConfig, Event, IncomingRequest, ServerIdentity,
    Transmit,
};
use tessera_types::{ErrorObject, Implementation, JsonObject, RequestId};

/// Methods the fake application serves in the default server config.
pub const APP_METHODS: [&str; 6] = [
    "tools/list",
    "tools/call",
    "resources/read",
    "prompts/list",
    "slow/op",
    "never/answered",
];

/// A JSON object from a `json!` literal (panics on anything else).
pub fn obj(v: Value) -> JsonObject {
    match v {
        Value::Object(o) => o,
        other => panic!("not an object: {other}"),
    }
}

/// The server identity used by default.
pub fn server_identity() -> ServerIdentity {
    ServerIdentity {
        info: Implementation::new("test-server", "1.2.3"),
        capabilities: serde_json::from_value(
            json!({"tools": {"listChanged": true}, "logging": {}}),
        )
        .unwrap(),
        instructions: Some("be nice".into()),
        discover_ttl: Duration::from_secs(60),
    }
}

/// The client identity used by default.
pub fn client_identity() -> ClientIdentity {
    ClientIdentity {
        info: Implementation::new("test-client", "0.0.1"),
        capabilities: serde_json::from_value(json!({"roots": {"listChanged": true}})).unwrap(),
    }
}

/// A server config speaking every version and serving [`APP_METHODS`].
pub fn server_config() -> EngineConfig {
    EngineConfig::server(server_identity()).with_methods(APP_METHODS)
}

/// A client config speaking every version.
pub fn client_config() -> EngineConfig {
    EngineConfig::client(client_identity())
}

/// The wire form of a transmit, parsed back to JSON. Also checks the stdio
/// framing rule: a serialised message never contains a newline.
pub fn wire(t: &Transmit) -> Value {
    let bytes = t.message.to_bytes();
    assert!(
        !bytes.contains(&b'\n'),
        "a serialised message must not contain a newline"
    );
    serde_json::from_slice(&bytes).expect("the engine writes valid JSON")
}

/// Drains an engine's transmits as JSON.
pub fn drain(engine: &mut Engine) -> Vec<Value> {
    let mut out = Vec::new();
    while let Some(t) = engine.poll_transmit() {
        out.push(wire(&t));
    }
    out
}

/// Drains an engine's transmits, keeping the `related` tag.
pub fn drain_tagged(engine: &mut Engine) -> Vec<(Value, Option<RequestId>)> {
    let mut out = Vec::new();
    while let Some(t) = engine.poll_transmit() {
        out.push((wire(&t), t.related.clone()));
    }
    out
}

/// Drains an engine's events.
pub fn events(engine: &mut Engine) -> Vec<Event> {
    let mut out = Vec::new();
    while let Some(e) = engine.poll_event() {
        out.push(e);
    }
    out
}

/// Feeds a JSON value to an engine as one frame of bytes.
pub fn feed(engine: &mut Engine, now: Instant, v: &Value) {
    let bytes = serde_json::to_vec(v).unwrap();
    engine.handle_bytes(now, &bytes);
}

/// Feeds one frame and returns everything it made the engine transmit.
pub fn exchange(engine: &mut Engine, now: Instant, v: Value) -> Vec<Value> {
    feed(engine, now, &v);
    drain(engine)
}

/// The only message in `msgs`, or a panic.
pub fn only(msgs: Vec<Value>) -> Value {
    assert_eq!(msgs.len(), 1, "expected exactly one message, got {msgs:#?}");
    msgs.into_iter().next().unwrap()
}

/// The `error.code` of an error response.
pub fn error_code(v: &Value) -> i64 {
    v["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error response: {v}"))
}

/// A legacy `initialize` request.
pub fn initialize_request(id: Value, version: &str) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {"sampling": {}},
            "clientInfo": {"name": "raw", "version": "1"}
        }
    })
}

/// The modern `_meta` of a request.
pub fn modern_meta(version: &str) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

/// A modern request at 2026-07-28.
pub fn modern_request(id: Value, method: &str) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": method,
        "params": {"_meta": modern_meta("2026-07-28")}
    })
}

/// A server engine after a complete legacy handshake at `version`.
pub fn legacy_server(config: EngineConfig, now: Instant, version: &str) -> Engine {
    let mut s = Engine::new(config);
    let answer = only(exchange(&mut s, now, initialize_request(json!(0), version)));
    assert_eq!(answer["result"]["protocolVersion"], json!(version));
    feed(
        &mut s,
        now,
        &json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
    );
    assert!(
        matches!(events(&mut s).as_slice(), [Event::Initialized { .. }]),
        "handshake done"
    );
    s
}

/// How the fake application answers one method.
#[derive(Debug, Clone)]
pub enum Reply {
    /// Answer at once with this result.
    Result(JsonObject),
    /// Answer at once with this error.
    Error(ErrorObject),
    /// Keep the request; the test answers it (or not) later.
    Hold,
}

/// A small server application: answers `Event::Request` for configured
/// methods and keeps the others.
#[derive(Debug, Default)]
pub struct FakeApp {
    /// Per-method behaviour; unlisted methods are held.
    pub replies: HashMap<String, Reply>,
    /// Every request the application was given, in order.
    pub seen: Vec<IncomingRequest>,
    /// Requests held for the test to answer.
    pub held: Vec<RequestId>,
    /// Ids the server told the application were cancelled.
    pub cancelled: Vec<RequestId>,
}

impl FakeApp {
    /// Handles one server event; returns it for the event log.
    fn on_event(&mut self, server: &mut Engine, e: &Event) {
        match e {
            Event::Request(r) => {
                self.seen.push(r.clone());
                match self.replies.get(&r.method).cloned().unwrap_or(Reply::Hold) {
                    Reply::Result(mut res) => {
                        res.insert("echo".into(), json!(r.method));
                        assert!(server.respond(&r.id, Ok(res)), "fresh request answered");
                    }
                    Reply::Error(err) => {
                        assert!(server.respond(&r.id, Err(err)), "fresh request answered");
                    }
                    Reply::Hold => self.held.push(r.id.clone()),
                }
            }
            Event::Cancelled { id, .. } => {
                self.cancelled.push(id.clone());
                self.held.retain(|h| h != id);
            }
            _ => {}
        }
    }
}

/// A client engine and a server engine wired back to back.
#[derive(Debug)]
pub struct Pair {
    /// When the clock started.
    pub t0: Instant,
    /// The virtual now.
    pub now: Instant,
    /// The client engine.
    pub client: Engine,
    /// The server engine.
    pub server: Engine,
    /// The server-side application.
    pub app: FakeApp,
    /// Events the client raised, in order (tests may drain it).
    pub client_events: Vec<Event>,
    /// Events the server raised, in order.
    pub server_events: Vec<Event>,
    /// Everything the client wrote, in order.
    pub client_wire: Vec<Value>,
    /// Everything the server wrote, in order.
    pub server_wire: Vec<Value>,
}

impl Pair {
    /// A pair with the default configs.
    pub fn new() -> Self {
        Pair::with(client_config(), server_config())
    }

    /// A pair with the given configs.
    pub fn with(client: EngineConfig, server: EngineConfig) -> Self {
        let t0 = Instant::now();
        Pair {
            t0,
            now: t0,
            client: Engine::new(client),
            server: Engine::new(server),
            app: FakeApp::default(),
            client_events: Vec::new(),
            server_events: Vec::new(),
            client_wire: Vec::new(),
            server_wire: Vec::new(),
        }
    }

    /// Sets how the application answers a method.
    pub fn reply(&mut self, method: &str, reply: Reply) -> &mut Self {
        self.app.replies.insert(method.to_owned(), reply);
        self
    }

    /// Connects the client and pumps until quiet.
    pub fn connect(&mut self, mode: ConnectMode) {
        self.client.connect(self.now, mode);
        self.pump();
    }

    /// Moves every transmit to the other side (through bytes) until both are quiet.
    pub fn pump(&mut self) {
        for _ in 0..10_000 {
            let mut moved = false;
            while let Some(t) = self.client.poll_transmit() {
                let v = wire(&t);
                self.server.handle_bytes(self.now, &t.message.to_bytes());
                self.client_wire.push(v);
                moved = true;
            }
            self.drain_server_events();
            while let Some(t) = self.server.poll_transmit() {
                let v = wire(&t);
                self.client.handle_bytes(self.now, &t.message.to_bytes());
                self.server_wire.push(v);
                moved = true;
            }
            self.drain_client_events();
            if !moved {
                return;
            }
        }
        panic!("the engines never went quiet");
    }

    fn drain_server_events(&mut self) {
        while let Some(e) = self.server.poll_event() {
            self.app.on_event(&mut self.server, &e);
            self.server_events.push(e);
        }
    }

    fn drain_client_events(&mut self) {
        while let Some(e) = self.client.poll_event() {
            self.client_events.push(e);
        }
    }

    /// The earliest deadline of either engine.
    pub fn next_deadline(&self) -> Option<Instant> {
        match (self.client.poll_timeout(), self.server.poll_timeout()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Moves the virtual clock forward by `d`, stopping at every deadline on
    /// the way to call `handle_timeout` on the engine that is due and pump.
    pub fn advance(&mut self, d: Duration) {
        let target = self.now + d;
        while let Some(deadline) = self.next_deadline().filter(|t| *t <= target) {
            self.now = self.now.max(deadline);
            if self.client.poll_timeout().is_some_and(|t| t <= self.now) {
                self.client.handle_timeout(self.now);
            }
            if self.server.poll_timeout().is_some_and(|t| t <= self.now) {
                self.server.handle_timeout(self.now);
            }
            self.pump();
        }
        self.now = target;
        self.pump();
    }

    /// Milliseconds since the start of the virtual clock.
    pub fn elapsed_ms(&self) -> u128 {
        (self.now - self.t0).as_millis()
    }

    /// Takes the client's events collected so far.
    pub fn take_client_events(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.client_events)
    }

    /// Takes the server's events collected so far.
    pub fn take_server_events(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.server_events)
    }

    /// The messages the client wrote with this method.
    pub fn client_sent(&self, method: &str) -> Vec<&Value> {
        self.client_wire
            .iter()
            .filter(|m| m["method"] == json!(method))
            .collect()
    }

    /// The server's responses (result or error) with this id.
    pub fn server_responses(&self, id: &RequestId) -> Vec<&Value> {
        let id = serde_json::to_value(id).unwrap();
        self.server_wire
            .iter()
            .filter(|m| m.get("method").is_none() && m["id"] == id)
            .collect()
    }

    /// Sends a request from the client and pumps.
    pub fn request(
        &mut self,
        method: &str,
        params: Option<JsonObject>,
        options: tessera_proto::RequestOptions,
    ) -> RequestId {
        let id = self
            .client
            .send_request(self.now, method, params, options)
            .expect("send_request");
        self.pump();
        id
    }

    /// The client's `Event::Response` outcomes for an id.
    pub fn outcomes(&self, id: &RequestId) -> Vec<&Result<JsonObject, tessera_proto::CallError>> {
        self.client_events
            .iter()
            .filter_map(|e| match e {
                Event::Response { id: i, outcome } if i == id => Some(outcome),
                _ => None,
            })
            .collect()
    }
}

impl Default for Pair {
    fn default() -> Self {
        Pair::new()
    }
}

/// A pair connected in the legacy era at `version`, handshake complete.
pub fn legacy_pair(version: tessera_proto::ProtocolVersion) -> Pair {
    let mut p = Pair::new();
    p.connect(ConnectMode::Legacy(version));
    assert_eq!(
        p.client.connection(),
        Some((tessera_proto::Era::Legacy, version))
    );
    p.client_events.clear();
    p.server_events.clear();
    p
}

/// A pair connected in the modern era (Auto against a dual-era server).
pub fn modern_pair() -> Pair {
    let mut p = Pair::new();
    p.connect(ConnectMode::Auto);
    assert_eq!(
        p.client.connection(),
        Some((
            tessera_proto::Era::Modern,
            tessera_proto::ProtocolVersion::V2026_07_28
        ))
    );
    p.client_events.clear();
    p.server_events.clear();
    p
}
