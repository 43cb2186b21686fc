//! A legacy session outlives its connection core: its state is exported,
//! stored, the core dropped, and a fresh core restored from the stored state
//! carries on — the client notices nothing (no new handshake, same log level,
//! the service's per-session data back, server-to-client requests allowed).

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tessera_proto::decode::Inbound;
use tessera_proto::{EngineConfig, Outbound, ServerIdentity, Transmit};
use tessera_runtime::{
    ChannelTransport, ConnectionOptions, HandlerResult, Incoming, MemorySessionStore, Peer,
    Request, Service, SessionState, SessionStore,
};
use tessera_types::{JsonObject, JsonRpcMessage, ProtocolVersion};
use tokio::sync::mpsc;

/// Keeps a counter per session; `add` changes it (and says so), `get` reads
/// it, `log` logs at two levels, `ask` asks the client for its roots.
#[derive(Default)]
struct Counter {
    counts: Mutex<Vec<(u64, i64)>>,
}

impl Counter {
    fn get(&self, peer: &Peer) -> i64 {
        let c = self.counts.lock().unwrap();
        c.iter()
            .find(|(k, _)| *k == peer.connection_id())
            .map_or(0, |(_, n)| *n)
    }
    fn set(&self, peer: &Peer, n: i64) {
        let mut c = self.counts.lock().unwrap();
        c.retain(|(k, _)| *k != peer.connection_id());
        c.push((peer.connection_id(), n));
    }
}

fn obj(v: Value) -> JsonObject {
    v.as_object().cloned().unwrap_or_default()
}

impl Service for Counter {
    fn methods(&self) -> Vec<String> {
        ["add", "get", "log", "ask"].map(String::from).to_vec()
    }

    fn handle_request(
        self: Arc<Self>,
        r: Request,
    ) -> impl Future<Output = HandlerResult> + Send + 'static {
        // Answered as the request is taken in; only "ask" waits.
        let answered = match r.method.as_str() {
            "add" => {
                let by = r
                    .params
                    .as_ref()
                    .and_then(|p| p["by"].as_i64())
                    .unwrap_or(0);
                let n = self.get(&r.peer) + by;
                self.set(&r.peer, n);
                r.peer.session_changed();
                Some(Ok(obj(json!({"n": n}))))
            }
            "get" => Some(Ok(obj(json!({"n": self.get(&r.peer)})))),
            "log" => {
                r.peer.log("info", None, json!("quiet"), None);
                r.peer.log("error", None, json!("loud"), None);
                Some(Ok(JsonObject::new()))
            }
            _ => None,
        };
        async move {
            if let Some(answer) = answered {
                return answer;
            }
            let roots = r
                .peer
                .request("roots/list", None, Default::default())
                .await
                .map_err(|e| tessera_types::ErrorObject::internal(e.to_string()))?;
            Ok(roots)
        }
    }

    fn session_data(&self, peer: &Peer) -> JsonObject {
        obj(json!({"counter": self.get(peer)}))
    }

    fn on_restored(&self, peer: Peer, _: ProtocolVersion, _: bool, data: &JsonObject) {
        self.set(
            &peer,
            data.get("counter").and_then(Value::as_i64).unwrap_or(0),
        );
    }
}

fn config() -> Arc<EngineConfig> {
    let identity = ServerIdentity {
        capabilities: tessera_types::ServerCapabilities {
            logging: Some(JsonObject::new()),
            ..Default::default()
        },
        ..Default::default()
    };
    let service = Counter::default();
    Arc::new(EngineConfig::server(identity).with_methods(service.methods()))
}

/// The client's end of one core.
struct Wire {
    to: mpsc::Sender<Incoming>,
    from: mpsc::UnboundedReceiver<Transmit>,
}

impl Wire {
    async fn send(&self, v: Value) {
        let m: JsonRpcMessage = serde_json::from_value(v).unwrap();
        self.to
            .send(Incoming::Decoded(Inbound::Message(m)))
            .await
            .unwrap();
    }

    async fn next(&mut self) -> Value {
        let t = tokio::time::timeout(Duration::from_secs(10), self.from.recv())
            .await
            .expect("an answer in time")
            .expect("the core is running");
        match t.message {
            Outbound::Single(m) => serde_json::to_value(m).unwrap(),
            Outbound::Batch(_) | Outbound::Raw(_) => panic!("no batches or raw results here"),
        }
    }

    async fn call(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        self.next().await
    }
}

fn options() -> ConnectionOptions {
    ConnectionOptions {
        export_session: true,
        ..Default::default()
    }
}

#[tokio::test]
async fn a_session_carries_on_in_a_fresh_core_from_its_stored_state() {
    let store = MemorySessionStore::default();
    let ttl = Duration::from_secs(60);
    let service = Arc::new(Counter::default());

    // A session opened and used on the first core.
    let (transport, to, from) = ChannelTransport::new(8);
    let (peer, task) =
        tessera_runtime::spawn_shared(config(), transport, service.clone(), options());
    let mut wire = Wire { to, from };
    let init = wire
        .call(
            1,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {"roots": {}},
                   "clientInfo": {"name": "c", "version": "1"}}),
        )
        .await;
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    wire.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    assert_eq!(
        wire.call(2, "logging/setLevel", json!({"level": "error"}))
            .await["result"],
        json!({})
    );
    assert_eq!(
        wire.call(3, "add", json!({"by": 5})).await["result"]["n"],
        5
    );

    // Its state, as exported before the last answer went out, is stored.
    let export = peer.info().borrow().session.clone().expect("exported");
    assert_eq!(export.data["counter"], 5);
    let mut state = SessionState::new("s-1", ProtocolVersion::V2025_06_18);
    state.update_from(&export);
    assert!(state.initialized);
    assert_eq!(state.log_level.as_deref(), Some("error"));
    store.save(&state, ttl).await.unwrap();

    // The core is dropped.
    drop(wire);
    task.await.unwrap().unwrap();
    assert!(!peer.is_open());

    // A fresh core (and a fresh service: another process) restored from the store.
    let stored = store.load("s-1").await.unwrap().expect("stored");
    let (transport, to, from) = ChannelTransport::new(8);
    let mut options = options();
    options.request_id_base = 1 << 32;
    let (peer, _task) = tessera_runtime::spawn_restored(
        config(),
        transport,
        Arc::new(Counter::default()),
        options,
        &stored,
    );
    let mut wire = Wire { to, from };
    // No handshake: the session goes on where it was.
    assert_eq!(wire.call(4, "get", json!({})).await["result"]["n"], 5);
    assert_eq!(
        wire.call(5, "add", json!({"by": 2})).await["result"]["n"],
        7
    );
    // The log level set on the first core still filters.
    wire.send(json!({"jsonrpc": "2.0", "id": 6, "method": "log"}))
        .await;
    let log = wire.next().await;
    assert_eq!(log["method"], "notifications/message");
    assert_eq!(log["params"]["data"], "loud");
    assert_eq!(wire.next().await["id"], 6);
    // The client initialized: the server may ask it, with ids of its own range.
    wire.send(json!({"jsonrpc": "2.0", "id": 7, "method": "ask"}))
        .await;
    let ask = wire.next().await;
    assert_eq!(ask["method"], "roots/list");
    assert_eq!(ask["id"], (1i64 << 32) + 1);
    wire.send(json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"roots": []}}))
        .await;
    let answer = wire.next().await;
    assert_eq!(answer["id"], 7);
    assert_eq!(answer["result"], json!({"roots": []}));
    // A second initialize is refused, as on the first core.
    let again = wire
        .call(
            8,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}}),
        )
        .await;
    assert!(
        again["error"]["message"]
            .as_str()
            .unwrap()
            .contains("already")
    );
    // The fresh core exports its own changes for the next save.
    let export = peer.info().borrow().session.clone().expect("exported");
    assert_eq!(export.data["counter"], 7);
}

#[tokio::test]
async fn state_changed_elsewhere_is_applied_to_a_running_core() {
    let (transport, to, from) = ChannelTransport::new(8);
    let mut stored = SessionState::new("s-2", ProtocolVersion::V2025_11_25);
    stored.initialized = false;
    let (peer, _task) = tessera_runtime::spawn_restored(
        config(),
        transport,
        Arc::new(Counter::default()),
        options(),
        &stored,
    );
    let mut wire = Wire { to, from };
    // Not initialized yet: the server may not ask the client.
    wire.send(json!({"jsonrpc": "2.0", "id": 1, "method": "ask"}))
        .await;
    assert!(
        wire.next().await["error"]["message"]
            .as_str()
            .unwrap()
            .contains("initialized")
    );
    // notifications/initialized and a log level arrived at another core.
    stored.initialized = true;
    stored.log_level = Some("error".into());
    stored.data = obj(json!({"counter": 40}));
    peer.apply_session_state(stored);
    assert_eq!(wire.call(2, "get", json!({})).await["result"]["n"], 40);
    wire.send(json!({"jsonrpc": "2.0", "id": 3, "method": "ask"}))
        .await;
    assert_eq!(wire.next().await["method"], "roots/list");
    // What was applied is not exported back as a change of this core.
    assert!(peer.info().borrow().session.is_none());
}
