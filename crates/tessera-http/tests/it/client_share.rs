//! Each client's share of the requests in progress (issue 32 item 4): one
//! address flooding the server with slow calls — one session with 250
//! concurrent calls over HTTP/2 streams of one connection, then more from a
//! second session and a 2026-07-28 request — is held to
//! `max_requests_per_client` (the default, 256) and refused with `429` and
//! `Retry-After` beyond it, while a client from another address is still
//! answered. The slow tool waits on a gate the test opens; every wait is on
//! an explicit barrier (a message per started call), never a sleep.

use crate::common;

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::{Value, json};
use tessera_http::limit;
use tessera_server::{RawArgs, Server, tool};
use tokio::net::TcpSocket;
use tokio::sync::{Semaphore, mpsc};

use common::{LEGACY, MODERN, TestServer, body_json, call, initialize, modern_meta, within};

/// The default `max_requests_per_client`.
const SHARE: usize = 256;

/// A server whose `slow` tool says it started, then waits for a permit of
/// `gate`; `echo` answers at once.
fn slow_server(started: mpsc::UnboundedSender<()>, gate: Arc<Semaphore>) -> Server {
    Server::builder()
        .name_version("share-fixture", "1.0.0")
        .tool(
            tool("slow")
                .description("Waits for the gate")
                .handler(move || {
                    let started = started.clone();
                    let gate = gate.clone();
                    async move {
                        let _ = started.send(());
                        let _permit = gate.acquire().await;
                        "through the gate".to_owned()
                    }
                }),
        )
        .tool(
            tool("echo")
                .description("Echoes the text argument")
                .handler(|RawArgs(a): RawArgs| async move {
                    a.get("text")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned()
                }),
        )
        .build()
        .expect("the fixture builds")
}

/// One HTTP/2 connection to `server` from the local address `from`.
async fn h2_from(
    server: SocketAddr,
    from: IpAddr,
) -> hyper::client::conn::http2::SendRequest<Full<Bytes>> {
    let socket = TcpSocket::new_v4().expect("socket");
    socket.bind(SocketAddr::new(from, 0)).expect("bind");
    let stream = socket.connect(server).await.expect("connect");
    let (sender, conn) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(stream))
            .await
            .expect("HTTP/2 handshake");
    tokio::spawn(async move {
        let _ = conn.await;
    });
    sender
}

/// A POST of `body` to the endpoint, with `headers`.
fn post(server: &TestServer, headers: &[(&str, &str)], body: &Value) -> Request<Full<Bytes>> {
    let mut b = server.post().uri(format!("http://{}/mcp", server.host()));
    for (k, v) in headers {
        b = b.header(*k, *v);
    }
    b.body(Full::new(Bytes::from(serde_json::to_vec(body).unwrap())))
        .unwrap()
}

async fn send(
    h2: &mut hyper::client::conn::http2::SendRequest<Full<Bytes>>,
    req: Request<Full<Bytes>>,
) -> Response<Incoming> {
    within(async {
        h2.ready().await.expect("connection ready");
        h2.send_request(req).await.expect("response")
    })
    .await
}

/// Sends `req`, expects `200`, and returns the text of the tool's result.
async fn text_of(
    h2: &mut hyper::client::conn::http2::SendRequest<Full<Bytes>>,
    req: Request<Full<Bytes>>,
) -> Value {
    let r = send(h2, req).await;
    assert_eq!(r.status(), StatusCode::OK);
    body_json(r).await["result"]["content"][0]["text"].clone()
}

/// Sends `req` on a clone of `h2` in a task of its own (a call held open).
fn spawn_send(
    h2: &hyper::client::conn::http2::SendRequest<Full<Bytes>>,
    req: Request<Full<Bytes>>,
) -> tokio::task::JoinHandle<Response<Incoming>> {
    let mut h2 = h2.clone();
    tokio::spawn(async move { send(&mut h2, req).await })
}

/// Opens a legacy session over `h2`; returns its id.
async fn open_session(
    server: &TestServer,
    h2: &mut hyper::client::conn::http2::SendRequest<Full<Bytes>>,
) -> String {
    let r = send(h2, post(server, &[], &initialize(1, LEGACY))).await;
    assert_eq!(r.status(), StatusCode::OK);
    let sid = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let _ = body_json(r).await;
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let headers = [
        ("mcp-session-id", sid.as_str()),
        ("mcp-protocol-version", LEGACY),
    ];
    let r = send(h2, post(server, &headers, &initialized)).await;
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    sid
}

/// Asserts `r` is the per-client refusal: `429`, `Retry-After`, the limit named.
async fn assert_refused_by_share(r: Response<Incoming>) {
    assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(r.headers()["retry-after"], "1");
    let body = body_json(r).await;
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("256 requests in progress")
            && message.contains("--max-requests-per-client"),
        "{body}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_flooding_slow_calls_is_held_to_its_share_and_another_is_answered() {
    let (started_tx, mut started) = mpsc::unbounded_channel();
    let gate = Arc::new(Semaphore::new(0));
    let server = TestServer::start_with(slow_server(started_tx, gate.clone()), |b| {
        // One connection carries the whole flood.
        b.max_streams_per_connection(1_000)
    })
    .await;
    let attacker: IpAddr = "127.0.0.1".parse().unwrap();
    let other: IpAddr = "127.0.0.2".parse().unwrap();

    // The attack: one session, 250 slow calls at once, as HTTP/2 streams of
    // one connection.
    let mut a = h2_from(server.addr, attacker).await;
    let sid = open_session(&server, &mut a).await;
    let in_session = [
        ("mcp-session-id", sid.as_str()),
        ("mcp-protocol-version", LEGACY),
    ];
    let mut flood = Vec::new();
    for i in 0..250 {
        let req = post(
            &server,
            &in_session,
            &call(100 + i, "slow", json!({}), false),
        );
        flood.push(spawn_send(&a, req));
    }
    for _ in 0..250 {
        within(started.recv()).await.expect("a slow call started");
    }

    // A second session of the same address takes the rest of the share…
    let sid2 = open_session(&server, &mut a).await;
    let in_session2 = [
        ("mcp-session-id", sid2.as_str()),
        ("mcp-protocol-version", LEGACY),
    ];
    for i in 0..(SHARE - 250) as i64 {
        let req = post(
            &server,
            &in_session2,
            &call(500 + i, "slow", json!({}), false),
        );
        flood.push(spawn_send(&a, req));
    }
    for _ in 250..SHARE {
        within(started.recv()).await.expect("a slow call started");
    }
    // …and nothing more: not in that session, not a batch, not a 2026-07-28
    // request, not over a new connection.
    let r = send(
        &mut a,
        post(&server, &in_session2, &call(900, "echo", json!({}), false)),
    )
    .await;
    assert_refused_by_share(r).await;
    let batch = json!([
        call(901, "echo", json!({}), false),
        call(902, "echo", json!({}), false)
    ]);
    assert_refused_by_share(send(&mut a, post(&server, &in_session2, &batch)).await).await;
    let modern = json!({"jsonrpc": "2.0", "id": 903, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "x"}, "_meta": modern_meta()}});
    let modern_headers = [
        ("mcp-protocol-version", MODERN),
        ("mcp-method", "tools/call"),
        ("mcp-name", "echo"),
    ];
    assert_refused_by_share(send(&mut a, post(&server, &modern_headers, &modern)).await).await;
    let mut a2 = h2_from(server.addr, attacker).await;
    assert_refused_by_share(
        send(
            &mut a2,
            post(&server, &in_session, &call(904, "echo", json!({}), false)),
        )
        .await,
    )
    .await;
    assert!(
        server
            .mcp
            .stats()
            .refused_by(limit::MAX_REQUESTS_PER_CLIENT)
            >= 4
    );

    // Another client is answered meanwhile, in a session and in 2026-07-28,
    // and may run slow calls of its own.
    let mut b = h2_from(server.addr, other).await;
    let sid_b = open_session(&server, &mut b).await;
    let b_session = [
        ("mcp-session-id", sid_b.as_str()),
        ("mcp-protocol-version", LEGACY),
    ];
    let hi = call(2, "echo", json!({"text": "hi"}), false);
    assert_eq!(text_of(&mut b, post(&server, &b_session, &hi)).await, "hi");
    assert_eq!(
        text_of(&mut b, post(&server, &modern_headers, &modern)).await,
        "x"
    );
    let b_slow = spawn_send(
        &b,
        post(&server, &b_session, &call(3, "slow", json!({}), false)),
    );
    within(started.recv())
        .await
        .expect("the other client's slow call started");

    // The gate opens: every call of the flood is answered, and the share is
    // given back.
    gate.add_permits(SHARE + 1);
    for f in flood {
        let r = within(f).await.unwrap();
        assert_eq!(r.status(), StatusCode::OK);
        assert_eq!(
            body_json(r).await["result"]["content"][0]["text"],
            "through the gate"
        );
    }
    assert_eq!(within(b_slow).await.unwrap().status(), StatusCode::OK);
    let again = call(905, "echo", json!({"text": "again"}), false);
    assert_eq!(
        text_of(&mut a, post(&server, &in_session, &again)).await,
        "again"
    );
}

#[tokio::test]
async fn a_lower_share_holds_stateless_and_http_sse_requests_too() {
    let (started_tx, mut started) = mpsc::unbounded_channel();
    let gate = Arc::new(Semaphore::new(0));
    let stateless = TestServer::start_with(slow_server(started_tx.clone(), gate.clone()), |b| {
        b.stateless(true).max_requests_per_client(2)
    })
    .await;
    let mut a = h2_from(stateless.addr, "127.0.0.1".parse().unwrap()).await;
    let v = [("mcp-protocol-version", LEGACY)];
    let mut held = Vec::new();
    for i in 0..2 {
        held.push(spawn_send(
            &a,
            post(&stateless, &v, &call(i, "slow", json!({}), false)),
        ));
        within(started.recv()).await.expect("started");
    }
    let r = send(
        &mut a,
        post(&stateless, &v, &call(9, "echo", json!({}), false)),
    )
    .await;
    assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(r.headers()["retry-after"], "1");
    let mut b = h2_from(stateless.addr, "127.0.0.2".parse().unwrap()).await;
    let other = call(10, "echo", json!({"text": "b"}), false);
    assert_eq!(text_of(&mut b, post(&stateless, &v, &other)).await, "b");
    gate.add_permits(2);
    for h in held {
        assert_eq!(within(h).await.unwrap().status(), StatusCode::OK);
    }
    let r = send(
        &mut a,
        post(&stateless, &v, &call(11, "echo", json!({}), false)),
    )
    .await;
    assert_eq!(r.status(), StatusCode::OK, "the share was given back");

    // HTTP+SSE (2024-11-05): a POST whose request is beyond the share gets
    // 429 at once; the requests held are answered on the stream later.
    let (started_tx, mut started) = mpsc::unbounded_channel();
    let gate = Arc::new(Semaphore::new(0));
    let s = TestServer::start_with(slow_server(started_tx, gate.clone()), |b| {
        b.max_requests_per_client(2)
    })
    .await;
    let (mut sse, endpoint) = s.legacy_sse().await;
    let post_message = |body: Value| s.post_message(&endpoint, body);
    assert_eq!(
        post_message(initialize(1, "2024-11-05")).await.status(),
        StatusCode::ACCEPTED
    );
    let _ = sse.next_json().await.expect("initialize answered");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(
        post_message(initialized).await.status(),
        StatusCode::ACCEPTED
    );
    for id in [2, 3] {
        let r = post_message(call(id, "slow", json!({}), false)).await;
        assert_eq!(r.status(), StatusCode::ACCEPTED);
        within(started.recv()).await.expect("started");
    }
    let r = post_message(call(4, "echo", json!({}), false)).await;
    assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(r.headers()["retry-after"], "1");
    gate.add_permits(2);
    let mut answered = Vec::new();
    for _ in 0..2 {
        let (_, v) = sse.next_json().await.expect("an answer on the stream");
        answered.push(v["id"].as_i64().unwrap());
    }
    answered.sort_unstable();
    assert_eq!(answered, [2, 3]);
    let r = post_message(call(5, "echo", json!({"text": "after"}), false)).await;
    assert_eq!(r.status(), StatusCode::ACCEPTED, "the share was given back");
    let (_, v) = sse.next_json().await.expect("answered");
    assert_eq!(v["result"]["content"][0]["text"], "after");
}
