//! Notifications go through the same middleware as requests: a plain
//! `tower::Layer` sees both (the core's own `notifications/initialized` and
//! `notifications/cancelled` included), the metrics layer records them as
//! their own kind, and a layer that refuses one drops it without a word on
//! the wire while the server goes on serving.

use std::sync::{Arc, Mutex};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tessera_client::Client;
use tessera_runtime::middleware::{MetricsLayer, Outcome, RequestRecord};
use tessera_server::hub::ListKind;
use tessera_server::{Args, Server, ServerBuilder, tool};
use tessera_testkit::deadline::bounded;
use tessera_testkit::layers::{RefuseNotification, Seen, Tap};
use tessera_testkit::pair::{PIPE_BYTES, in_process, serve_raw};
use tessera_types::{ErrorCode, ProtocolVersion};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};
use tokio::sync::mpsc;
use tower::limit::ConcurrencyLimitLayer;
use tower::load_shed::LoadShedLayer;

#[derive(Debug, Deserialize, JsonSchema)]
struct Text {
    text: String,
}

async fn echo(Args(t): Args<Text>) -> String {
    t.text
}

fn builder() -> ServerBuilder {
    Server::builder().tool(tool("echo").description("Echoes").handler(echo))
}

type Lines = tokio::io::Lines<BufReader<ReadHalf<DuplexStream>>>;

/// A raw line client of `server` over an in-memory pipe.
fn raw(server: &Server) -> (Lines, WriteHalf<DuplexStream>) {
    let (r, w) = serve_raw(server, PIPE_BYTES);
    (BufReader::new(r).lines(), w)
}

async fn send(w: &mut WriteHalf<DuplexStream>, message: Value) {
    let mut line = serde_json::to_vec(&message).unwrap();
    line.push(b'\n');
    w.write_all(&line).await.unwrap();
}

/// The next line the server writes, as JSON.
async fn next_line(lines: &mut Lines) -> Value {
    let line = bounded("the next line", lines.next_line())
        .await
        .unwrap()
        .expect("the server is still there");
    serde_json::from_str(&line).unwrap()
}

fn notification(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

fn request(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// The legacy handshake, the handshake's answer checked.
async fn handshake(lines: &mut Lines, w: &mut WriteHalf<DuplexStream>) {
    send(
        w,
        request(
            0,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {"roots": {}},
                   "clientInfo": {"name": "raw", "version": "1"}}),
        ),
    )
    .await;
    let answer = next_line(lines).await;
    assert_eq!(
        answer["result"]["protocolVersion"], "2025-11-25",
        "{answer}"
    );
    send(w, notification("notifications/initialized", json!({}))).await;
}

/// Takes `n` records from `seen`, split by kind.
async fn take(seen: &mut mpsc::UnboundedReceiver<Seen>, n: usize) -> (Vec<String>, Vec<String>) {
    let (mut requests, mut notifications) = (Vec::new(), Vec::new());
    for _ in 0..n {
        match bounded("a message seen", seen.recv()).await.unwrap() {
            Seen::Request(m) => requests.push(m),
            Seen::Notification(m) => notifications.push(m),
        }
    }
    (requests, notifications)
}

#[tokio::test]
async fn a_plain_tower_layer_counts_requests_and_notifications_apart() {
    let (tx, mut seen) = mpsc::unbounded_channel();
    let server = builder().layer(Tap::on_arrival(tx)).build().unwrap();
    let (mut lines, mut w) = raw(&server);
    handshake(&mut lines, &mut w).await;

    send(&mut w, request(1, "tools/list", json!({}))).await;
    assert!(next_line(&mut lines).await["result"]["tools"].is_array());
    send(
        &mut w,
        notification("notifications/roots/list_changed", json!({})),
    )
    .await;
    send(
        &mut w,
        request(
            2,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "hi"}}),
        ),
    )
    .await;
    let answer = next_line(&mut lines).await;
    assert_eq!(answer["id"], 2);
    assert_eq!(answer["result"]["content"][0]["text"], "hi");
    // A cancellation of a request long answered, and a vendor's own.
    send(
        &mut w,
        notification("notifications/cancelled", json!({"requestId": 2})),
    )
    .await;
    send(&mut w, notification("vendor/poke", json!({"n": 1}))).await;

    // `initialize` is answered by the core itself, below no layer.
    let (requests, notifications) = take(&mut seen, 6).await;
    assert_eq!(requests, ["tools/list", "tools/call"]);
    assert_eq!(
        notifications,
        [
            "notifications/initialized",
            "notifications/roots/list_changed",
            "notifications/cancelled",
            "vendor/poke",
        ]
    );
    // Nothing more: the next thing the layer sees is the next request.
    send(&mut w, request(3, "tools/list", json!({}))).await;
    assert_eq!(next_line(&mut lines).await["id"], 3);
    assert_eq!(
        take(&mut seen, 1).await,
        (vec!["tools/list".to_owned()], vec![])
    );
    assert!(seen.try_recv().is_err(), "exactly what was sent");
}

#[tokio::test]
async fn a_refused_notification_is_dropped_without_an_answer_and_the_server_serves_on() {
    let records: Arc<Mutex<Vec<RequestRecord>>> = Arc::default();
    let (tx, mut seen) = mpsc::unbounded_channel();
    let kept = records.clone();
    let server = builder()
        .layer(MetricsLayer::new(move |r| {
            kept.lock().unwrap().push(r.clone())
        }))
        .layer(RefuseNotification("notifications/roots/list_changed"))
        .layer(Tap::on_arrival(tx))
        .build()
        .unwrap();
    let (mut lines, mut w) = raw(&server);
    handshake(&mut lines, &mut w).await;
    send(
        &mut w,
        notification("notifications/roots/list_changed", json!({})),
    )
    .await;
    send(&mut w, notification("vendor/poke", json!({}))).await;
    // Only the notifications the refusal let through get below it.
    assert_eq!(
        take(&mut seen, 2).await,
        (
            vec![],
            vec![
                "notifications/initialized".to_owned(),
                "vendor/poke".to_owned()
            ]
        )
    );
    // The very next line is the answer to the next request: nothing was
    // written for the refused notification.
    send(
        &mut w,
        request(
            7,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "still here"}}),
        ),
    )
    .await;
    let answer = next_line(&mut lines).await;
    assert_eq!(answer["id"], 7, "{answer}");
    assert_eq!(answer["result"]["content"][0]["text"], "still here");

    let records = records.lock().unwrap().clone();
    let outcomes: Vec<(&str, Outcome)> = records
        .iter()
        .map(|r| (r.method.as_str(), r.outcome))
        .collect();
    assert_eq!(
        outcomes,
        [
            ("notifications/initialized", Outcome::Notified),
            (
                "notifications/roots/list_changed",
                Outcome::Dropped(ErrorCode::INVALID_REQUEST)
            ),
            ("vendor/poke", Outcome::Notified),
            ("tools/call", Outcome::Ok),
        ]
    );
    assert!(records[..3].iter().all(RequestRecord::is_notification));
    assert!(!records[3].is_notification());
}

/// Per test: a tool that waits until the test lets it go.
#[derive(Clone, Default)]
struct Gate(Arc<tokio::sync::Notify>, Arc<tokio::sync::Notify>);

#[tokio::test]
async fn a_shed_notification_is_dropped_and_never_answered() {
    let gate = Gate::default();
    let held = gate.clone();
    let records: Arc<Mutex<Vec<RequestRecord>>> = Arc::default();
    let kept = records.clone();
    let server = builder()
        .tool(tool("hold").handler(move || {
            let g = held.clone();
            async move {
                g.0.notify_one();
                g.1.notified().await;
                "released".to_owned()
            }
        }))
        .layer(MetricsLayer::new(move |r| {
            kept.lock().unwrap().push(r.clone())
        }))
        .layer(LoadShedLayer::new())
        .layer(ConcurrencyLimitLayer::new(1))
        .build()
        .unwrap();
    let (mut lines, mut w) = raw(&server);
    handshake(&mut lines, &mut w).await;
    send(
        &mut w,
        request(1, "tools/call", json!({"name": "hold", "arguments": {}})),
    )
    .await;
    // The one slot is taken.
    bounded("the tool holds the slot", gate.0.notified()).await;
    send(&mut w, notification("vendor/poke", json!({}))).await;
    send(&mut w, request(2, "tools/list", json!({}))).await;
    let busy = next_line(&mut lines).await;
    assert_eq!(
        busy["id"], 2,
        "the request is shed, the notification is not answered: {busy}"
    );
    assert!(busy["error"]["message"].as_str().unwrap().contains("busy"));
    gate.1.notify_one();
    let released = next_line(&mut lines).await;
    assert_eq!(released["id"], 1, "{released}");
    assert_eq!(released["result"]["content"][0]["text"], "released");

    let poke = records
        .lock()
        .unwrap()
        .iter()
        .find(|r| r.method == "vendor/poke")
        .map(|r| r.outcome);
    assert_eq!(poke, Some(Outcome::Dropped(ErrorCode::INTERNAL_ERROR)));
}

#[tokio::test]
async fn a_client_layer_sees_the_servers_notifications() {
    let server = builder().build().unwrap();
    let (tx, mut seen) = mpsc::unbounded_channel();
    let client: Client = in_process(
        &server,
        tessera_testkit::handlers::builder(ProtocolVersion::V2025_11_25).layer(Tap::on_arrival(tx)),
    )
    .await;
    let mut events = client.events();
    server.notify_list_changed(ListKind::Tools);
    let got = bounded("a notification seen", seen.recv()).await.unwrap();
    assert_eq!(
        got,
        Seen::Notification("notifications/tools/list_changed".into())
    );
    // Below the layer, the client still turns it into an event.
    loop {
        let e = bounded("the event", events.recv()).await.unwrap();
        if matches!(e, tessera_client::ClientEvent::ToolListChanged(_)) {
            break;
        }
    }
}
