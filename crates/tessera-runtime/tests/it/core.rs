//! The connection core ([`Connection`]) on a paused clock: driven by its
//! task over a [`ChannelTransport`] (as stdio and the client drive it), and
//! inside the caller's task (as a per-request HTTP engine drives it).
//! Nothing sleeps on the wall clock: time moves only when every task waits.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tessera_proto::{EngineConfig, Outbound, RequestOptions, ServerIdentity, Transmit};
use tessera_runtime::{
    ChannelTransport, Connection, ConnectionOptions, HandlerResult, Incoming, Request, Service,
};
use tessera_types::{ErrorObject, JsonObject, JsonRpcMessage, ProtocolVersion, RequestId};
use tokio::sync::{Notify, mpsc};
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// The service under test.
///
/// - `echo`: answers its params, after logging `working` (tied to the request);
/// - `slow`: answers after `ms` milliseconds;
/// - `wait`: waits until cancelled, then tells `cancelled`;
/// - `progress`: reports progress 1, 2, 3 of 3, then answers;
/// - `ask`: asks the client for its roots, waiting `ms` at most;
/// - `boom`: panics.
#[derive(Default)]
struct Lab {
    /// Told when a `wait` handler ends (cancelled, or dropped with its core).
    cancelled: Arc<Notify>,
}

/// Tells its `Notify` when dropped.
struct Tell(Arc<Notify>);

impl Drop for Tell {
    fn drop(&mut self) {
        self.0.notify_one();
    }
}

fn obj(v: Value) -> JsonObject {
    v.as_object().cloned().unwrap_or_default()
}

fn ms_of(params: Option<&JsonObject>) -> u64 {
    params
        .and_then(|p| p.get("ms"))
        .and_then(Value::as_u64)
        .unwrap_or(0)
}

impl Service for Lab {
    fn methods(&self) -> Vec<String> {
        ["echo", "slow", "wait", "progress", "ask", "boom"]
            .map(String::from)
            .to_vec()
    }

    fn handle_request(
        self: Arc<Self>,
        r: Request,
    ) -> impl Future<Output = HandlerResult> + Send + 'static {
        // Made here, not in the future: a future dropped before its first
        // poll still tells.
        let tell = (r.method == "wait").then(|| Tell(self.cancelled.clone()));
        async move {
            match r.method.as_str() {
                "echo" => {
                    // Logged right before the answer: it must still go out first.
                    r.peer
                        .log("info", None, json!("working"), Some(r.id.clone()));
                    Ok(r.params.clone().unwrap_or_default().into_object())
                }
                "slow" => {
                    let ms = ms_of(r.params.as_ref().map(tessera_types::Params::object));
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    Ok(obj(json!({ "slept": ms })))
                }
                "wait" => {
                    let _tell = tell;
                    r.cancel.cancelled().await;
                    Err(ErrorObject::internal("cancelled"))
                }
                "progress" => {
                    for i in 1..=3 {
                        r.progress(f64::from(i), Some(3.0), None);
                    }
                    Ok(obj(json!({ "done": true })))
                }
                "ask" => {
                    let options = RequestOptions {
                        timeout: Some(Duration::from_millis(ms_of(
                            r.params.as_ref().map(tessera_types::Params::object),
                        ))),
                        related: Some(r.id.clone()),
                        ..RequestOptions::default()
                    };
                    match r.peer.request("roots/list", None, options).await {
                        Ok(roots) => Ok(roots),
                        Err(e) => Err(ErrorObject::internal(format!("ask failed: {e}"))),
                    }
                }
                _ => panic!("boom"),
            }
        }
    }
}

fn config(lab: &Lab) -> Arc<EngineConfig> {
    Arc::new(EngineConfig::server(ServerIdentity::default()).with_methods(lab.methods()))
}

/// A server core driven by its own task over a channel transport, and the
/// client's ends of it.
struct Wire {
    lab: Arc<Lab>,
    frames: mpsc::Sender<Incoming>,
    out: mpsc::UnboundedReceiver<Transmit>,
    peer: tessera_runtime::Peer,
    task: JoinHandle<std::io::Result<()>>,
}

impl Wire {
    fn start() -> Wire {
        let lab = Arc::new(Lab::default());
        let (transport, frames, out) = ChannelTransport::new(16);
        let (peer, task) = tessera_runtime::spawn_shared(
            config(&lab),
            transport,
            lab.clone(),
            ConnectionOptions::default(),
        );
        Wire {
            lab,
            frames,
            out,
            peer,
            task,
        }
    }

    /// Starts a core and completes the handshake at `version`.
    async fn handshaken(version: ProtocolVersion) -> Wire {
        let mut w = Wire::start();
        w.send(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": version.as_str(),
                "capabilities": {"roots": {}},
                "clientInfo": {"name": "test", "version": "0"}
            }}),
        )
        .await;
        let init = w.message().await;
        assert_eq!(
            init["result"]["protocolVersion"],
            json!(version.as_str()),
            "{init}"
        );
        w.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        w
    }

    async fn send(&self, v: Value) {
        let bytes = serde_json::to_vec(&v).unwrap();
        self.frames
            .send(Incoming::Bytes(bytes.as_slice().into()))
            .await
            .unwrap();
    }

    async fn transmit(&mut self) -> Transmit {
        self.out.recv().await.expect("the core wrote a message")
    }

    /// The next message, as JSON.
    async fn message(&mut self) -> Value {
        let t = self.transmit().await;
        serde_json::from_slice(&t.message.to_bytes()).unwrap()
    }
}

fn call(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

#[tokio::test(start_paused = true)]
async fn answers_a_request_after_what_its_handler_logged() {
    let mut w = Wire::handshaken(ProtocolVersion::V2025_06_18).await;
    w.send(json!({"jsonrpc": "2.0", "id": 1, "method": "logging/setLevel", "params": {"level": "debug"}}))
        .await;
    assert_eq!(w.message().await["id"], json!(1));
    w.send(call(2, "echo", json!({"x": 1}))).await;
    let log = w.transmit().await;
    assert_eq!(log.related, Some(RequestId::Number(2)));
    let log: Value = serde_json::from_slice(&log.message.to_bytes()).unwrap();
    assert_eq!(log["method"], json!("notifications/message"));
    let answer = w.message().await;
    assert_eq!(
        answer,
        json!({"jsonrpc": "2.0", "id": 2, "result": {"x": 1}})
    );
    assert_eq!(w.peer.outstanding().handling, 0);
}

#[tokio::test(start_paused = true)]
async fn runs_handlers_concurrently() {
    let mut w = Wire::handshaken(ProtocolVersion::V2025_06_18).await;
    let start = Instant::now();
    w.send(call(1, "slow", json!({"ms": 300}))).await;
    w.send(call(2, "slow", json!({"ms": 100}))).await;
    w.send(call(3, "slow", json!({"ms": 200}))).await;
    let order: Vec<Value> = vec![
        w.message().await["id"].clone(),
        w.message().await["id"].clone(),
        w.message().await["id"].clone(),
    ];
    assert_eq!(order, vec![json!(2), json!(3), json!(1)]);
    // Side by side: the slowest one's time, not the sum.
    assert_eq!(start.elapsed(), Duration::from_millis(300));
}

#[tokio::test(start_paused = true)]
async fn a_cancelled_request_is_never_answered() {
    let mut w = Wire::handshaken(ProtocolVersion::V2025_06_18).await;
    w.send(call(1, "wait", json!({}))).await;
    let cancelled = w.lab.cancelled.notified();
    w.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 1, "reason": "changed my mind"}}),
    )
    .await;
    cancelled.await;
    // Its id is free again once the handler is gone, and what comes next is
    // the answer to the next request, not to the cancelled one.
    w.send(call(1, "echo", json!({"again": true}))).await;
    let _log = w.transmit().await;
    assert_eq!(
        w.message().await,
        json!({"jsonrpc": "2.0", "id": 1, "result": {"again": true}})
    );
}

#[tokio::test(start_paused = true)]
async fn a_duplicate_id_in_progress_is_refused() {
    let mut w = Wire::handshaken(ProtocolVersion::V2025_06_18).await;
    w.send(call(7, "slow", json!({"ms": 1000}))).await;
    w.send(call(7, "echo", json!({}))).await;
    let refusal = w.message().await;
    assert_eq!(refusal["error"]["code"], json!(-32600), "{refusal}");
    assert_eq!(w.message().await["result"]["slept"], json!(1000));
}

#[tokio::test(start_paused = true)]
async fn a_request_to_the_client_times_out() {
    let mut w = Wire::handshaken(ProtocolVersion::V2025_06_18).await;
    let start = Instant::now();
    w.send(call(1, "ask", json!({"ms": 2000}))).await;
    let ask = w.transmit().await;
    assert_eq!(ask.related, Some(RequestId::Number(1)));
    let ask: Value = serde_json::from_slice(&ask.message.to_bytes()).unwrap();
    assert_eq!(ask["method"], json!("roots/list"));
    // The client never answers: the engine's timer fires on the core's step.
    let cancel = w.message().await;
    assert_eq!(cancel["method"], json!("notifications/cancelled"));
    assert_eq!(cancel["params"]["requestId"], ask["id"]);
    let answer = w.message().await;
    assert_eq!(answer["id"], json!(1));
    let why = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(why.contains("ask failed"), "{answer}");
    assert_eq!(start.elapsed(), Duration::from_millis(2000));
    // A late answer from the client is dropped quietly.
    w.send(json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"roots": []}}))
        .await;
    w.send(call(2, "echo", json!({}))).await;
    let _log = w.transmit().await;
    assert_eq!(w.message().await["id"], json!(2));
}

#[tokio::test(start_paused = true)]
async fn an_answered_request_to_the_client_reaches_its_handler() {
    let mut w = Wire::handshaken(ProtocolVersion::V2025_06_18).await;
    w.send(call(1, "ask", json!({"ms": 60000}))).await;
    let ask = w.message().await;
    w.send(json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"roots": [{"uri": "file:///r"}]}}))
        .await;
    assert_eq!(
        w.message().await,
        json!({"jsonrpc": "2.0", "id": 1, "result": {"roots": [{"uri": "file:///r"}]}})
    );
    assert_eq!(w.peer.outstanding().sent, 0);
}

#[tokio::test(start_paused = true)]
async fn progress_goes_out_in_order_before_the_answer() {
    let mut w = Wire::handshaken(ProtocolVersion::V2025_06_18).await;
    w.send(call(
        1,
        "progress",
        json!({"_meta": {"progressToken": "p"}}),
    ))
    .await;
    for i in 1..=3 {
        let n = w.message().await;
        assert_eq!(n["method"], json!("notifications/progress"));
        assert_eq!(n["params"]["progressToken"], json!("p"));
        assert_eq!(n["params"]["progress"], json!(f64::from(i)));
    }
    assert_eq!(w.message().await["result"]["done"], json!(true));
    // Without a token, no progress is sent.
    w.send(call(2, "progress", json!({}))).await;
    assert_eq!(w.message().await["id"], json!(2));
}

#[tokio::test(start_paused = true)]
async fn a_batch_is_answered_as_one_batch() {
    let mut w = Wire::handshaken(ProtocolVersion::V2025_03_26).await;
    w.send(json!([
        call(1, "slow", json!({"ms": 50})),
        {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
        call(2, "slow", json!({"ms": 10})),
        call(3, "nope", json!({})),
    ]))
    .await;
    let t = w.transmit().await;
    let Outbound::Batch(items) = t.message else {
        panic!("expected one batch, got {:?}", t.message);
    };
    let ids: Vec<_> = items.iter().filter_map(|m| m.id().cloned()).collect();
    assert_eq!(items.len(), 3);
    for id in [1, 2, 3] {
        assert!(ids.contains(&RequestId::Number(id)), "{ids:?}");
    }
    assert!(items.iter().any(|m| matches!(m, JsonRpcMessage::Error(e)
        if e.id == Some(RequestId::Number(3)) && e.error.code == -32601)));
}

#[tokio::test(start_paused = true)]
async fn a_batch_is_refused_where_the_version_forbids_it() {
    let mut w = Wire::handshaken(ProtocolVersion::V2025_06_18).await;
    w.send(json!([
        call(1, "echo", json!({})),
        call(2, "echo", json!({}))
    ]))
    .await;
    let refusal = w.message().await;
    assert_eq!(refusal["error"]["code"], json!(-32600), "{refusal}");
    assert_eq!(refusal["id"], Value::Null);
}

#[tokio::test(start_paused = true)]
async fn a_panicking_handler_gets_an_internal_error() {
    let mut w = Wire::handshaken(ProtocolVersion::V2025_06_18).await;
    w.send(call(1, "boom", json!({}))).await;
    let e = w.message().await;
    assert_eq!(e["error"]["code"], json!(-32603), "{e}");
    w.send(call(2, "slow", json!({}))).await;
    assert_eq!(w.message().await["id"], json!(2), "the core goes on");
}

#[tokio::test(start_paused = true)]
async fn when_the_peer_closes_requests_in_progress_finish_then_the_task_ends() {
    let w = Wire::handshaken(ProtocolVersion::V2025_06_18).await;
    let start = Instant::now();
    w.send(call(1, "slow", json!({"ms": 500}))).await;
    let Wire {
        frames,
        mut out,
        peer,
        task,
        ..
    } = w;
    drop(frames);
    let answer: Value =
        serde_json::from_slice(&out.recv().await.unwrap().message.to_bytes()).unwrap();
    assert_eq!(answer["result"]["slept"], json!(500));
    task.await.unwrap().unwrap();
    assert_eq!(start.elapsed(), Duration::from_millis(500));
    assert!(!peer.is_open());
}

#[tokio::test(start_paused = true)]
async fn a_handler_that_never_ends_is_cancelled_after_the_drain_timeout() {
    let w = Wire::handshaken(ProtocolVersion::V2025_06_18).await;
    let start = Instant::now();
    w.send(call(1, "wait", json!({}))).await;
    let cancelled = w.lab.cancelled.notified();
    drop(w.frames);
    w.task.await.unwrap().unwrap();
    cancelled.await;
    assert_eq!(start.elapsed(), ConnectionOptions::default().drain_timeout);
}

#[tokio::test(start_paused = true)]
async fn closing_through_the_peer_cancels_handlers_and_ends_the_task() {
    let mut w = Wire::handshaken(ProtocolVersion::V2025_06_18).await;
    w.send(call(1, "wait", json!({}))).await;
    w.send(call(2, "ask", json!({"ms": 60000}))).await;
    let _ask = w.message().await;
    let cancelled = w.lab.cancelled.notified();
    w.peer.close();
    w.task.await.unwrap().unwrap();
    cancelled.await;
    assert!(
        w.out.recv().await.is_none(),
        "nothing is written after close"
    );
    assert_eq!(
        w.peer.outstanding(),
        tessera_runtime::Outstanding::default()
    );
}

// ------------------------------------------------ driven inside the caller's task

fn per_request() -> (Arc<Lab>, Connection<Lab>) {
    let lab = Arc::new(Lab::default());
    let core = Connection::new(config(&lab), lab.clone());
    (lab, core)
}

fn request(id: i64, method: &str, params: Value) -> JsonRpcMessage {
    JsonRpcMessage::request(RequestId::Number(id), method, Some(obj(params)))
}

#[tokio::test(start_paused = true)]
async fn in_the_callers_task_it_serves_after_an_assumed_handshake() {
    let (_, mut core) = per_request();
    core.restore_session(tessera_proto::SessionSnapshot::new(
        ProtocolVersion::V2025_11_25,
    ));
    assert_eq!(
        core.negotiated_version(),
        Some(ProtocolVersion::V2025_11_25)
    );
    core.handle_message(request(1, "echo", json!({"x": 1})), Default::default());
    assert!(core.is_in_progress(&RequestId::Number(1)));
    let log = core.next().await.expect("the log message");
    assert_eq!(log.related, Some(RequestId::Number(1)));
    let Some(Outbound::Single(JsonRpcMessage::Result(r))) = core.next().await.map(|t| t.message)
    else {
        panic!("expected the result");
    };
    assert_eq!(r.result.get("x"), Some(&1.into()));
    assert!(!core.is_in_progress(&RequestId::Number(1)));
    assert!(core.next().await.is_none(), "nothing left in progress");
    assert!(core.is_quiet());
}

#[tokio::test(start_paused = true)]
async fn in_the_callers_task_it_refuses_before_a_handshake_and_cancels() {
    let (lab, mut core) = per_request();
    core.handle_message(request(1, "echo", json!({})), Default::default());
    let t = core.next().await.expect("an error");
    assert!(matches!(
        t.message,
        Outbound::Single(JsonRpcMessage::Error(_))
    ));
    assert!(!core.allows_batches());
    core.restore_session(tessera_proto::SessionSnapshot::new(
        ProtocolVersion::V2025_03_26,
    ));
    assert!(core.allows_batches());
    core.handle_message(request(2, "wait", json!({})), Default::default());
    let cancelled = lab.cancelled.notified();
    core.cancel(&RequestId::Number(2), "gone");
    assert!(
        core.next().await.is_none(),
        "a cancelled request gets no answer"
    );
    cancelled.await;
}

#[tokio::test(start_paused = true)]
async fn in_the_callers_task_requests_to_the_client_time_out() {
    let (_, mut core) = per_request();
    core.restore_session(
        tessera_proto::SessionSnapshot::new(ProtocolVersion::V2025_06_18).with_peer(
            Arc::new(tessera_types::ClientCapabilities::from_object(&obj(
                json!({"roots": {}}),
            ))),
            None,
        ),
    );
    let start = Instant::now();
    core.handle_message(request(1, "ask", json!({"ms": 500})), Default::default());
    let mut methods = Vec::new();
    while let Some(t) = core.next().await {
        let v: Value = serde_json::from_slice(&t.message.to_bytes()).unwrap();
        methods.push(v.get("method").cloned().unwrap_or(v["id"].clone()));
    }
    assert_eq!(
        methods,
        vec![
            json!("roots/list"),
            json!("notifications/cancelled"),
            json!(1)
        ]
    );
    assert_eq!(start.elapsed(), Duration::from_millis(500));
}

#[tokio::test(start_paused = true)]
async fn dropping_the_core_cancels_its_handlers() {
    let (lab, mut core) = per_request();
    core.restore_session(tessera_proto::SessionSnapshot::new(
        ProtocolVersion::V2025_06_18,
    ));
    core.handle_message(request(1, "wait", json!({})), Default::default());
    // One step starts the handler; it then waits.
    let step = tokio::time::timeout(Duration::from_secs(1), core.work()).await;
    assert!(step.is_err(), "nothing to do while the handler waits");
    let peer = core.peer().clone();
    drop(core);
    assert!(!peer.is_open());
    // The handler's future went with the core.
    lab.cancelled.notified().await;
}
