//! Property tests: random operation sequences on a client/server pair, and
//! arbitrary input thrown at lone engines.
//!
//! The pair here has explicit wire queues in both directions (instead of the
//! harness's pump-until-quiet) so that messages can be in flight while the
//! other side acts: a response can cross a cancellation, progress can arrive
//! after a timeout, garbage can land between any two messages.

use crate::harness;

use std::collections::{HashMap, HashSet, VecDeque};
use std::time::{Duration, Instant};

use harness::{client_config, events, initialize_request, modern_meta, server_config, wire};
use proptest::prelude::*;
use serde_json::{Value, json};
use tessera_proto::{
    CallError, ConnectMode, Engine, Event, Outbound, ProtocolVersion, RequestOptions, Transmit,
};
use tessera_types::{ErrorObject, RequestId};

// ------------------------------------------------------------ strategies

const METHODS: [&str; 6] = [
    "tools/list",
    "tools/call",
    "slow/op",
    "never/answered",
    "unknown/method",
    "ping",
];

#[derive(Debug, Clone)]
enum Garbage {
    Bytes(Vec<u8>),
    Json(Value),
    Truncated(usize),
    Response { id: i64, ok: bool },
    NullError,
    Request { method: usize },
    Progress { token: i64, progress: u8 },
    CancelInjected { pick: usize },
    Batch(Vec<u8>),
}

#[derive(Debug, Clone)]
enum Op {
    Send {
        method: usize,
        timeout: Option<u64>,
        max: Option<u64>,
        no_timeout: bool,
        progress: bool,
        reset: bool,
    },
    Answer {
        pick: usize,
        ok: bool,
    },
    Progress {
        pick: usize,
        step: u8,
    },
    Cancel {
        pick: usize,
    },
    Advance {
        ms: u64,
    },
    ToServer {
        n: usize,
    },
    ToClient {
        n: usize,
    },
    Garbage {
        to_server: bool,
        garbage: Garbage,
    },
    Settle,
}

fn arb_key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(vec![
            "jsonrpc", "id", "method", "params", "result", "error", "_meta", "code",
            "message", "data", "progressToken", "requestId", "protocolVersion",
        ])
        .prop_map(str::to_owned),
        1 => "[a-z_/.]{0,8}",
    ]
}

/// Arbitrary JSON, biased towards the keys and strings JSON-RPC cares about.
fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        (-5i64..5).prop_map(|n| json!(n)),
        any::<f64>().prop_filter_map("finite", |f| serde_json::Number::from_f64(f)
            .map(Value::Number)),
        prop::sample::select(vec![
            "2.0",
            "1.0",
            "ping",
            "initialize",
            "tools/list",
            "server/discover",
            "notifications/cancelled",
            "notifications/progress",
            "2025-03-26",
            "2026-07-28",
            "",
        ])
        .prop_map(|s| Value::String(s.to_owned())),
        "\\PC{0,10}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map(arb_key(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn arb_garbage() -> impl Strategy<Value = Garbage> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..40).prop_map(Garbage::Bytes),
        arb_json().prop_map(Garbage::Json),
        (0usize..60).prop_map(Garbage::Truncated),
        ((0i64..24), any::<bool>()).prop_map(|(id, ok)| Garbage::Response { id, ok }),
        Just(Garbage::NullError),
        (0usize..METHODS.len()).prop_map(|method| Garbage::Request { method }),
        ((0i64..24), any::<u8>())
            .prop_map(|(token, progress)| Garbage::Progress { token, progress }),
        any::<usize>().prop_map(|pick| Garbage::CancelInjected { pick }),
        prop::collection::vec(0u8..6, 1..5).prop_map(Garbage::Batch),
    ]
}

fn arb_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (
            0usize..METHODS.len(),
            prop::option::of(50u64..4_000),
            prop::option::of(100u64..8_000),
            prop::bool::weighted(0.1),
            any::<bool>(),
            any::<bool>(),
        )
            .prop_map(|(method, timeout, max, no_timeout, progress, reset)| Op::Send {
                method,
                timeout,
                max,
                no_timeout,
                progress,
                reset,
            }),
        4 => (any::<usize>(), prop::bool::weighted(0.7)).prop_map(|(pick, ok)| Op::Answer { pick, ok }),
        2 => (any::<usize>(), 1u8..4).prop_map(|(pick, step)| Op::Progress { pick, step }),
        2 => any::<usize>().prop_map(|pick| Op::Cancel { pick }),
        3 => prop_oneof![0u64..200, 0u64..5_000].prop_map(|ms| Op::Advance { ms }),
        4 => (1usize..4).prop_map(|n| Op::ToServer { n }),
        4 => (1usize..4).prop_map(|n| Op::ToClient { n }),
        2 => (any::<bool>(), arb_garbage()).prop_map(|(to_server, garbage)| Op::Garbage { to_server, garbage }),
        1 => Just(Op::Settle),
    ]
}

fn arb_mode() -> impl Strategy<Value = ConnectMode> {
    prop::sample::select(vec![
        ConnectMode::Auto,
        ConnectMode::Legacy(ProtocolVersion::V2025_11_25),
        ConnectMode::Legacy(ProtocolVersion::V2025_06_18),
        ConnectMode::Legacy(ProtocolVersion::V2025_03_26),
        ConnectMode::Legacy(ProtocolVersion::V2024_11_05),
    ])
}

// ----------------------------------------------------------------- world

/// The messages of one transmit (a batch is several).
fn messages(t: &Transmit) -> Vec<Value> {
    match &t.message {
        Outbound::Single(_) | Outbound::Raw(_) => vec![wire(t)],
        Outbound::Batch(_) => match wire(t) {
            Value::Array(a) => a,
            other => panic!("a batch serialises to an array: {other}"),
        },
    }
}

fn is_response(m: &Value) -> bool {
    m.get("method").is_none() && (m.get("result").is_some() || m.get("error").is_some())
}

fn id_of(m: &Value) -> Option<RequestId> {
    serde_json::from_value(m.get("id")?.clone()).ok()
}

#[derive(Debug)]
struct World {
    now: Instant,
    client: Engine,
    server: Engine,
    c2s: VecDeque<Vec<u8>>,
    s2c: VecDeque<Vec<u8>>,

    // Client bookkeeping.
    /// Every id the client ever put on a request, in order.
    client_request_ids: Vec<RequestId>,
    /// User requests sent with `send_request`.
    sent: Vec<RequestId>,
    outcomes: HashMap<RequestId, Vec<Result<(), CallError>>>,
    cancelled_by_us: HashSet<RequestId>,

    // Server bookkeeping.
    /// Requests the application holds, in arrival order.
    held: Vec<RequestId>,
    /// Cancelled requests whose handler has not finished yet: finishing
    /// (`respond`) must send nothing.
    zombies: Vec<RequestId>,
    /// Last progress value sent per request.
    progress: HashMap<RequestId, f64>,
    /// Ids the server raised `Event::Cancelled` for.
    server_cancelled: HashSet<RequestId>,
    /// Responses the server wrote, per id.
    server_answers: HashMap<RequestId, usize>,
    /// Valid single-frame requests injected straight at the server.
    injected: Vec<RequestId>,
    next_injected: u64,
}

impl World {
    fn new(mode: ConnectMode) -> Self {
        let mut w = World {
            now: Instant::now(),
            client: Engine::new(client_config()),
            server: Engine::new(server_config()),
            c2s: VecDeque::new(),
            s2c: VecDeque::new(),
            client_request_ids: Vec::new(),
            sent: Vec::new(),
            outcomes: HashMap::new(),
            cancelled_by_us: HashSet::new(),
            held: Vec::new(),
            zombies: Vec::new(),
            progress: HashMap::new(),
            server_cancelled: HashSet::new(),
            server_answers: HashMap::new(),
            injected: Vec::new(),
            next_injected: 0,
        };
        w.client.connect(w.now, mode);
        w.collect();
        w.settle();
        assert!(w.client.connection().is_some(), "connected with {mode:?}");
        w
    }

    /// Moves transmits into the wire queues and applies the invariants that
    /// can be checked message by message.
    fn collect(&mut self) {
        while let Some(t) = self.client.poll_transmit() {
            for m in messages(&t) {
                if m.get("method").is_some() {
                    if let Some(id) = id_of(&m) {
                        assert!(
                            !self.client_request_ids.contains(&id),
                            "client reused request id {id}"
                        );
                        self.client_request_ids.push(id);
                    }
                }
            }
            self.c2s.push_back(t.message.to_bytes());
        }
        self.client_events();
        while let Some(t) = self.server.poll_transmit() {
            for m in messages(&t) {
                if is_response(&m) {
                    if let Some(id) = id_of(&m) {
                        assert!(
                            !self.server_cancelled.contains(&id),
                            "server answered {id} after it was cancelled: {m}"
                        );
                        *self.server_answers.entry(id).or_default() += 1;
                    }
                }
            }
            self.s2c.push_back(t.message.to_bytes());
        }
        self.server_events();
    }

    fn pending(&self) -> Vec<RequestId> {
        self.sent
            .iter()
            .filter(|id| !self.outcomes.contains_key(*id) && !self.cancelled_by_us.contains(*id))
            .cloned()
            .collect()
    }

    fn client_events(&mut self) {
        for e in events(&mut self.client) {
            match e {
                Event::Response { id, outcome } => {
                    assert!(
                        self.sent.contains(&id),
                        "outcome for a request never sent: {id}"
                    );
                    assert!(
                        !self.cancelled_by_us.contains(&id),
                        "outcome for {id} after the client cancelled it"
                    );
                    self.outcomes
                        .entry(id)
                        .or_default()
                        .push(outcome.map(|_| ()));
                }
                Event::Progress { id, .. } => {
                    assert!(
                        self.pending().contains(&id),
                        "progress for {id}, which is not pending"
                    );
                }
                Event::Connected(_) | Event::ConnectFailed(_) => {
                    // Only during the connect phase in `new`.
                }
                Event::Request(r) => panic!("the client serves no methods: {r:?}"),
                Event::Cancelled { id, .. } => panic!("the client has nothing to cancel: {id}"),
                _ => {}
            }
        }
    }

    fn server_events(&mut self) {
        for e in events(&mut self.server) {
            match e {
                Event::Request(r) => {
                    assert!(!self.held.contains(&r.id), "{} handed out twice", r.id);
                    self.held.push(r.id);
                }
                Event::Cancelled { id, .. } => {
                    assert!(
                        self.held.contains(&id),
                        "cancelled {id}, which the application does not hold"
                    );
                    assert!(self.server_cancelled.insert(id.clone()), "cancelled twice");
                    self.held.retain(|h| *h != id);
                    self.zombies.push(id);
                }
                Event::Response { .. } | Event::Progress { .. } => {
                    panic!("the server sent no requests: {e:?}")
                }
                _ => {}
            }
        }
    }

    fn deliver_to_server(&mut self, n: usize) {
        for _ in 0..n {
            let Some(bytes) = self.c2s.pop_front() else {
                return;
            };
            self.server.handle_bytes(self.now, &bytes);
            self.collect();
        }
    }

    fn deliver_to_client(&mut self, n: usize) {
        for _ in 0..n {
            let Some(bytes) = self.s2c.pop_front() else {
                return;
            };
            self.client.handle_bytes(self.now, &bytes);
            self.collect();
        }
    }

    /// Delivers everything both ways until both queues are empty.
    fn settle(&mut self) {
        for _ in 0..10_000 {
            if self.c2s.is_empty() && self.s2c.is_empty() {
                return;
            }
            self.deliver_to_server(usize::MAX);
            self.deliver_to_client(usize::MAX);
        }
        panic!("never settled");
    }

    fn advance(&mut self, d: Duration) {
        let target = self.now + d;
        loop {
            let next = [self.client.poll_timeout(), self.server.poll_timeout()]
                .into_iter()
                .flatten()
                .min();
            match next {
                Some(t) if t <= target => {
                    self.now = self.now.max(t);
                    self.client.handle_timeout(self.now);
                    self.server.handle_timeout(self.now);
                    self.collect();
                }
                _ => break,
            }
        }
        self.now = target;
    }

    fn garbage_bytes(&mut self, to_server: bool, g: &Garbage) -> Vec<u8> {
        let fresh = |w: &mut World| {
            w.next_injected += 1;
            format!("g-{}", w.next_injected)
        };
        match g {
            Garbage::Bytes(b) => b.clone(),
            Garbage::Json(v) => {
                // Random JSON that happens to be a valid message (a
                // cancellation of a real request, say), or whose error would
                // echo an id (`{"id":1}`), could legitimately touch the real
                // requests: wrap it so that it is anonymous garbage for sure.
                use tessera_proto::decode::{Inbound, decode_value};
                let valid = match decode_value(v.clone()) {
                    Inbound::Message(_) => true,
                    Inbound::Batch(items) => items
                        .iter()
                        .any(|i| i.as_ref().map_or_else(|r| r.id.is_some(), |_| true)),
                    Inbound::Invalid(r) => r.id.is_some(),
                };
                if valid {
                    serde_json::to_vec(&json!({"wrapped": v})).unwrap()
                } else {
                    serde_json::to_vec(v).unwrap()
                }
            }
            Garbage::Truncated(n) => {
                let full = serde_json::to_vec(&json!({"jsonrpc":"2.0","id":"t","method":"tools/list","params":{"_meta": modern_meta("2026-07-28")}})).unwrap();
                full[..(*n).min(full.len() - 1)].to_vec()
            }
            Garbage::Response { id, ok } => {
                if *ok {
                    serde_json::to_vec(&json!({"jsonrpc":"2.0","id":id,"result":{"forged":true}}))
                        .unwrap()
                } else {
                    serde_json::to_vec(
                        &json!({"jsonrpc":"2.0","id":id,"error":{"code":-32000,"message":"forged"}}),
                    )
                    .unwrap()
                }
            }
            Garbage::NullError => {
                br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#
                    .to_vec()
            }
            Garbage::Request { method } => {
                let id = fresh(self);
                if to_server {
                    self.injected.push(RequestId::String(id.clone()));
                }
                serde_json::to_vec(&json!({"jsonrpc":"2.0","id":id,"method":METHODS[*method]}))
                    .unwrap()
            }
            Garbage::Progress { token, progress } => serde_json::to_vec(&json!({
                "jsonrpc":"2.0","method":"notifications/progress",
                "params":{"progressToken":token,"progress":progress}
            }))
            .unwrap(),
            Garbage::CancelInjected { pick } => {
                let id = if self.injected.is_empty() {
                    json!("g-none")
                } else {
                    json!(self.injected[pick % self.injected.len()])
                };
                serde_json::to_vec(&json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":id}})).unwrap()
            }
            Garbage::Batch(kinds) => {
                let items: Vec<Value> = kinds
                    .iter()
                    .map(|k| match k {
                        0 => json!({"jsonrpc":"2.0","id":fresh(self),"method":"ping"}),
                        1 => json!({"jsonrpc":"2.0","id":fresh(self),"method":"tools/list"}),
                        2 => json!({"jsonrpc":"2.0","method":"notifications/whatever"}),
                        3 => json!(7),
                        4 => json!({"jsonrpc":"2.0","id":fresh(self),"result":{}}),
                        _ => initialize_request(json!(fresh(self)), "2025-03-26"),
                    })
                    .collect();
                serde_json::to_vec(&items).unwrap()
            }
        }
    }

    fn apply(&mut self, op: &Op) {
        match op {
            Op::Send {
                method,
                timeout,
                max,
                no_timeout,
                progress,
                reset,
            } => {
                let options = RequestOptions {
                    timeout: timeout.map(Duration::from_millis),
                    max_timeout: max.map(Duration::from_millis),
                    no_timeout: *no_timeout,
                    reset_on_progress: *reset,
                    progress: *progress,
                    related: None,
                    meta: None,
                };
                let id = self
                    .client
                    .send_request(self.now, METHODS[*method], None, options)
                    .expect("the client can always send once connected");
                assert!(!self.sent.contains(&id), "send_request reused {id}");
                self.sent.push(id);
            }
            Op::Answer { pick, ok } => {
                if !self.zombies.is_empty() && pick % 3 == 0 {
                    // A cancelled handler finishes anyway: nothing is sent.
                    let id = self.zombies.remove(pick % self.zombies.len());
                    assert!(!self.server.respond(&id, Ok(harness::obj(json!({})))));
                    assert!(self.server.poll_transmit().is_none());
                    return;
                }
                if self.held.is_empty() {
                    return;
                }
                let id = self.held.remove(pick % self.held.len());
                let outcome = if *ok {
                    Ok(harness::obj(json!({"answer": true})))
                } else {
                    Err(ErrorObject::new(-1, "application error"))
                };
                assert!(
                    self.server.respond(&id, outcome),
                    "held {id} can be answered"
                );
                assert!(
                    !self.server.respond(&id, Ok(harness::obj(json!({})))),
                    "only once"
                );
            }
            Op::Progress { pick, step } => {
                if self.held.is_empty() {
                    return;
                }
                let id = self.held[pick % self.held.len()].clone();
                let next = self.progress.get(&id).copied().unwrap_or(0.0) + f64::from(*step);
                if self.server.notify_progress(&id, next, None, None) {
                    self.progress.insert(id.clone(), next);
                    // Never twice the same value.
                    assert!(!self.server.notify_progress(&id, next, None, None));
                }
            }
            Op::Cancel { pick } => {
                let pending = self.pending();
                if pending.is_empty() {
                    return;
                }
                let id = pending[pick % pending.len()].clone();
                assert!(self.client.cancel(&id, Some("test")), "{id} is pending");
                self.cancelled_by_us.insert(id.clone());
                assert!(!self.client.cancel(&id, None), "cancelled once");
            }
            Op::Advance { ms } => self.advance(Duration::from_millis(*ms)),
            Op::ToServer { n } => self.deliver_to_server(*n),
            Op::ToClient { n } => self.deliver_to_client(*n),
            Op::Garbage { to_server, garbage } => {
                let bytes = self.garbage_bytes(*to_server, garbage);
                if *to_server {
                    self.c2s.push_back(bytes);
                } else {
                    self.s2c.push_back(bytes);
                }
            }
            Op::Settle => self.settle(),
        }
        self.collect();
    }

    /// Delivers everything, answers everything still held, delivers again.
    fn finish(&mut self) {
        self.settle();
        while !self.held.is_empty() {
            let id = self.held.remove(0);
            assert!(self.server.respond(&id, Ok(harness::obj(json!({})))));
            self.collect();
            self.settle();
        }
        for id in std::mem::take(&mut self.zombies) {
            assert!(!self.server.respond(&id, Ok(harness::obj(json!({})))));
        }
        self.collect();
        self.settle();
    }

    fn check_final(&self) {
        // Every request the client sent has exactly one outcome, or none
        // because the client cancelled it itself.
        for id in &self.sent {
            let n = self.outcomes.get(id).map_or(0, Vec::len);
            if self.cancelled_by_us.contains(id) {
                assert_eq!(n, 0, "{id} was cancelled by the client");
            } else {
                assert_eq!(n, 1, "{id} must have exactly one outcome");
            }
        }
        assert_eq!(self.client.pending_requests(), 0);
        assert_eq!(self.client.poll_timeout(), None);

        // Ids never reused: checked as they went out; all distinct here too.
        let distinct: HashSet<&RequestId> = self.client_request_ids.iter().collect();
        assert_eq!(distinct.len(), self.client_request_ids.len());

        // The server answered every valid request exactly once, except those
        // it was told were cancelled before it answered (never answered).
        for id in self.client_request_ids.iter().chain(&self.injected) {
            let n = self.server_answers.get(id).copied().unwrap_or(0);
            if self.server_cancelled.contains(id) {
                assert_eq!(n, 0, "{id} answered after cancellation");
            } else {
                assert_eq!(n, 1, "{id} must be answered exactly once");
            }
        }
        for (id, n) in &self.server_answers {
            assert!(*n <= 1, "{id} answered {n} times");
        }
        assert_eq!(self.server.inflight_requests(), 0);
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 384,
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_operations_keep_the_invariants(
        mode in arb_mode(),
        ops in prop::collection::vec(arb_op(), 1..80),
    ) {
        let mut w = World::new(mode);
        for op in &ops {
            w.apply(op);
        }
        w.finish();
        w.check_final();
    }

    #[test]
    fn random_operations_then_close(
        mode in arb_mode(),
        ops in prop::collection::vec(arb_op(), 1..40),
    ) {
        let mut w = World::new(mode);
        for op in &ops {
            w.apply(op);
        }
        let pending = w.pending();
        w.client.close();
        w.collect();
        // Every pending request fails with Closed, once.
        for id in &pending {
            let outcomes = &w.outcomes[id];
            prop_assert_eq!(outcomes.len(), 1);
            prop_assert_eq!(&outcomes[0], &Err(CallError::Closed));
        }
        prop_assert_eq!(w.client.pending_requests(), 0);
        prop_assert!(w.client.poll_transmit().is_none());
        // Whatever still arrives is dropped without a word.
        while let Some(bytes) = w.s2c.pop_front() {
            w.client.handle_bytes(w.now, &bytes);
        }
        prop_assert!(w.client.poll_transmit().is_none());
        prop_assert!(w.client.poll_event().is_none());
    }
}

// ------------------------------------------------- arbitrary input, lone engine

#[derive(Debug, Clone)]
enum Frame {
    Bytes(Vec<u8>),
    Json(Value),
    Message(Value),
    Batch(Vec<Value>),
}

fn arb_meta() -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        Just(None),
        Just(Some(modern_meta("2026-07-28"))),
        Just(Some(modern_meta("1900-01-01"))),
        Just(Some(
            json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"})
        )),
        Just(Some(json!({"io.modelcontextprotocol/protocolVersion": 7}))),
        Just(Some(
            json!({"io.modelcontextprotocol/protocolVersion": "2025-03-26", "io.modelcontextprotocol/clientCapabilities": {}})
        )),
        (
            prop::sample::select(vec!["debug", "error", "bogus"]),
            any::<bool>()
        )
            .prop_map(|(l, tok)| {
                let mut m = modern_meta("2026-07-28");
                m["io.modelcontextprotocol/logLevel"] = json!(l);
                if tok {
                    m["progressToken"] = json!("p");
                }
                Some(m)
            }),
        Just(Some(json!("not an object"))),
    ]
}

/// Something shaped like a JSON-RPC message, often valid, often slightly off.
fn arb_message() -> impl Strategy<Value = Value> {
    let jsonrpc = prop_oneof![
        6 => Just(Some(json!("2.0"))),
        1 => Just(None),
        1 => Just(Some(json!("1.0"))),
        1 => Just(Some(json!(2.0))),
    ];
    let id = prop_oneof![
        4 => (0i64..6).prop_map(|n| Some(json!(n))),
        2 => prop::sample::select(vec!["a", "b", ""]).prop_map(|s| Some(json!(s))),
        2 => Just(None),
        1 => prop_oneof![Just(json!(null)), Just(json!(1.5)), Just(json!(true)), Just(json!([1]))].prop_map(Some),
    ];
    let method = prop_oneof![
        8 => prop::sample::select(vec![
            "initialize", "ping", "tools/list", "tools/call", "server/discover",
            "logging/setLevel", "resources/subscribe", "subscriptions/listen",
            "notifications/initialized", "notifications/cancelled", "notifications/progress",
            "unknown/x",
        ])
        .prop_map(|m| Some(json!(m))),
        1 => Just(None),
        1 => Just(Some(json!(5))),
    ];
    let version = prop::sample::select(vec![
        "2024-11-05",
        "2025-03-26",
        "2025-06-18",
        "2025-11-25",
        "2026-07-28",
        "1999-01-01",
    ]);
    let extra = prop_oneof![
        4 => Just(None),
        1 => Just(Some(("result", json!({})))),
        1 => Just(Some(("result", json!(3)))),
        1 => Just(Some(("error", json!({"code": -1, "message": "m"})))),
        1 => Just(Some(("error", json!("bad")))),
        1 => Just(Some(("params", json!([1])))),
    ];
    (
        jsonrpc,
        id,
        method,
        arb_meta(),
        version,
        (0i64..6),
        any::<u8>(),
        extra,
    )
        .prop_map(
            |(jsonrpc, id, method, meta, version, target, level, extra)| {
                let mut m = serde_json::Map::new();
                if let Some(j) = jsonrpc {
                    m.insert("jsonrpc".into(), j);
                }
                if let Some(i) = id {
                    m.insert("id".into(), i);
                }
                if let Some(method) = method {
                    let mut params = serde_json::Map::new();
                    match method.as_str() {
                        Some("initialize") => {
                            params.insert("protocolVersion".into(), json!(version));
                            params.insert("capabilities".into(), json!({}));
                            params.insert("clientInfo".into(), json!({"name":"f","version":"1"}));
                        }
                        Some("notifications/cancelled") => {
                            params.insert("requestId".into(), json!(target));
                        }
                        Some("notifications/progress") => {
                            params.insert("progressToken".into(), json!(target));
                            params.insert("progress".into(), json!(level));
                        }
                        Some("logging/setLevel") => {
                            params.insert(
                                "level".into(),
                                json!(["debug", "error", "nope"][usize::from(level % 3)]),
                            );
                        }
                        _ => {}
                    }
                    if let Some(meta) = meta {
                        params.insert("_meta".into(), meta);
                    }
                    m.insert("method".into(), method);
                    m.insert("params".into(), Value::Object(params));
                }
                if let Some((k, v)) = extra {
                    m.insert(k.into(), v);
                }
                Value::Object(m)
            },
        )
}

/// A decoded frame with serde_json's wording left out of its errors (it
/// names a position in the text, which differs between a frame and a tree).
fn outcome(inbound: tessera_proto::decode::Inbound) -> Value {
    use tessera_proto::decode::{Decoded, Inbound};
    fn one(d: &Decoded) -> Value {
        match d {
            Ok(m) => serde_json::to_value(m).unwrap(),
            Err(r) => json!({"id": r.id, "code": r.error.code, "silent": r.silent}),
        }
    }
    match inbound {
        Inbound::Message(m) => one(&Ok(m)),
        Inbound::Invalid(r) => one(&Err(r)),
        Inbound::Batch(items) => Value::Array(items.iter().map(one).collect()),
    }
}

fn arb_frame() -> impl Strategy<Value = Frame> {
    prop_oneof![
        1 => prop::collection::vec(any::<u8>(), 0..64).prop_map(Frame::Bytes),
        2 => arb_json().prop_map(Frame::Json),
        6 => arb_message().prop_map(Frame::Message),
        2 => prop::collection::vec(arb_message(), 0..5).prop_map(Frame::Batch),
    ]
}

fn frame_bytes(f: &Frame) -> Vec<u8> {
    match f {
        Frame::Bytes(b) => b.clone(),
        Frame::Json(v) | Frame::Message(v) => serde_json::to_vec(v).unwrap(),
        Frame::Batch(items) => serde_json::to_vec(items).unwrap(),
    }
}

/// Feeds every frame; checks that each frame gets at most one transmit of
/// its own and that everything written is a well-formed JSON-RPC message or
/// batch. A batch is answered once every request in it is, so a later frame
/// (cancelling the request it waits for) may release an earlier batch's
/// answer too. `answer` makes the application answer each request at once
/// (after the frame's own transmits were counted).
fn feed_frames(engine: &mut Engine, frames: &[Frame], answer: bool) -> Result<(), TestCaseError> {
    let t0 = Instant::now();
    // Batch frames whose answer may still come.
    let mut waiting = 0usize;
    for (i, f) in frames.iter().enumerate() {
        let now = t0 + Duration::from_millis(i as u64 * 700);
        engine.handle_bytes(now, &frame_bytes(f));
        if engine.poll_timeout().is_some_and(|t| t <= now) {
            engine.handle_timeout(now);
        }
        let mut count = 0;
        while let Some(t) = engine.poll_transmit() {
            count += 1;
            check_written(&t)?;
        }
        prop_assert!(
            count <= 1 + waiting,
            "frame {:?} was answered {} times ({} earlier batches waiting)",
            f,
            count,
            waiting
        );
        if matches!(f, Frame::Batch(_)) {
            waiting = waiting + 1 - count;
        } else {
            waiting -= count.saturating_sub(1);
        }
        let evs = events(engine);
        if answer {
            let cancelled: HashSet<RequestId> = evs
                .iter()
                .filter_map(|e| match e {
                    Event::Cancelled { id, .. } => Some(id.clone()),
                    _ => None,
                })
                .collect();
            for e in evs {
                if let Event::Request(r) = e {
                    let answered = engine.respond(&r.id, Ok(harness::obj(json!({}))));
                    // Cancelled in the same frame (a batch): nothing to send.
                    prop_assert_eq!(answered, !cancelled.contains(&r.id));
                }
            }
            while let Some(t) = engine.poll_transmit() {
                check_written(&t)?;
            }
        }
    }
    Ok(())
}

fn check_written(t: &Transmit) -> Result<(), TestCaseError> {
    for m in messages(t) {
        prop_assert_eq!(&m["jsonrpc"], &json!("2.0"));
        let is_request = m.get("method").is_some();
        prop_assert!(is_request || is_response(&m), "{}", m);
        if let Some(e) = m.get("error") {
            prop_assert!(e["code"].is_i64() && e["message"].is_string(), "{}", m);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 512,
        ..ProptestConfig::default()
    })]

    #[test]
    fn arbitrary_bytes_never_panic_a_fresh_server(frames in prop::collection::vec(arb_frame(), 1..30)) {
        let mut s = Engine::new(server_config());
        feed_frames(&mut s, &frames, false)?;
    }

    #[test]
    fn arbitrary_input_to_a_batch_enabled_server(
        frames in prop::collection::vec(arb_frame(), 1..30),
        answer in any::<bool>(),
    ) {
        let mut s = harness::legacy_server(server_config(), Instant::now(), "2025-03-26");
        feed_frames(&mut s, &frames, answer)?;
    }

    #[test]
    fn arbitrary_input_to_a_modern_only_server(frames in prop::collection::vec(arb_frame(), 1..30)) {
        let cfg = server_config().with_versions([ProtocolVersion::V2026_07_28]);
        let mut s = Engine::new(cfg);
        feed_frames(&mut s, &frames, true)?;
    }

    #[test]
    fn arbitrary_input_to_a_connecting_client(
        frames in prop::collection::vec(arb_frame(), 1..30),
        mode in arb_mode(),
    ) {
        let mut c = Engine::new(client_config().with_methods(["roots/list"]));
        c.connect(Instant::now(), mode);
        while c.poll_transmit().is_some() {}
        // A frame may complete the connection and so carry one more message
        // (notifications/initialized or the fallback initialize) besides its
        // answer; check only that nothing panics and all output is well formed.
        let t0 = Instant::now();
        for (i, f) in frames.iter().enumerate() {
            let now = t0 + Duration::from_millis(i as u64 * 900);
            c.handle_bytes(now, &frame_bytes(f));
            c.handle_timeout(now);
            while let Some(t) = c.poll_transmit() {
                check_written(&t)?;
            }
            events(&mut c);
        }
    }

    /// The frame decoder reads messages from their text; it must come to
    /// the same outcome as reading the whole frame as a tree would, for
    /// messages, batches and any JSON at all.
    #[test]
    fn text_decoding_agrees_with_tree_decoding(frame in arb_frame()) {
        use tessera_proto::decode::{decode, decode_value, parse};
        let bytes = frame_bytes(&frame);
        let by_tree = match parse(&bytes) {
            Ok(v) => decode_value(v),
            Err(r) => tessera_proto::decode::Inbound::Invalid(r),
        };
        let by_text = decode(&bytes);
        prop_assert_eq!(outcome(by_text), outcome(by_tree));
    }

    #[test]
    fn arbitrary_bytes_decode_without_panicking(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let _ = tessera_proto::decode::decode(&bytes);
        let mut s = Engine::new(server_config());
        s.handle_bytes(Instant::now(), &bytes);
        let mut n = 0;
        while let Some(t) = s.poll_transmit() {
            n += 1;
            check_written(&t)?;
        }
        prop_assert!(n <= 1);
    }
}
