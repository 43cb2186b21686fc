//! Issue 32 item 9: in Redis mode the session caps were per process (3,000
//! sessions from one address left 3,000 keys, and sessions an instance had
//! evicted still answered on both instances). Two `McpHttp` instances share
//! one private redis-server; the caps are counted there, a session ended to
//! make room is gone on every instance, and what Redis holds stays bounded.
//! Requests go through the tower service (no sockets); waits for the other
//! instance to hear of an ended session are bounded polls.

use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::{BodyExt, Full};
use serde_json::{Value, json};
use tessera_http::{McpHttp, RemoteAddr};
use tessera_redis::Redis;
use tessera_redis::redis::{self, AsyncCommands};
use tessera_redis::testing::RedisServer;
use tessera_server::{Server, tool};
use tower::ServiceExt;

const PREFIX: &str = "caps-test:";

async fn instance(server: &RedisServer) -> McpHttp {
    let redis = Redis::options(server.url())
        .prefix(PREFIX)
        .connect()
        .await
        .expect("connect");
    let app = Server::builder()
        .name_version("caps", "1")
        .tool(tool("hello").handler(|| async { "hello" }))
        .build()
        .unwrap();
    redis
        .install(McpHttp::builder(app))
        .max_sessions(4)
        .max_sessions_per_client(2)
        .build()
}

fn post(sid: Option<&str>, from: &str, v: Value) -> Request<Full<Bytes>> {
    let mut b = Request::post("/mcp")
        .header("host", "localhost")
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json");
    if let Some(s) = sid {
        b = b.header("mcp-session-id", s);
    }
    let mut r = b
        .body(Full::new(Bytes::from(serde_json::to_vec(&v).unwrap())))
        .unwrap();
    let addr: SocketAddr = format!("{from}:40000").parse().unwrap();
    r.extensions_mut().insert(RemoteAddr(addr));
    r
}

/// Opens a session on `app` from address `from`; returns its id.
async fn open(app: &McpHttp, from: &str) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "caps-test", "version": "1"}
    }});
    let r = app.clone().oneshot(post(None, from, init)).await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let sid = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let r = app
        .clone()
        .oneshot(post(Some(&sid), from, done))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    sid
}

/// The status of a `tools/list` in session `sid` on `app`.
async fn list(app: &McpHttp, sid: &str, from: &str) -> StatusCode {
    let req = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let r = app
        .clone()
        .oneshot(post(Some(sid), from, req))
        .await
        .unwrap();
    let status = r.status();
    let _ = r.into_body().collect().await;
    status
}

/// Waits (bounded) until `app` holds `n` local sessions.
async fn holds(app: &McpHttp, n: usize) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while app.session_count() != n {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the instance holds {} sessions, not {n}",
            app.session_count()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_session_caps_hold_across_instances() {
    let server = RedisServer::start().expect("start redis-server");
    let (a, b) = (instance(&server).await, instance(&server).await);
    let store = Redis::options(server.url())
        .prefix(PREFIX)
        .connect()
        .await
        .unwrap()
        .session_store();

    // One address, two sessions on a, a third on b: the per-client cap (2)
    // holds across the two, the least recently used one (s1) goes.
    let s1 = open(&a, "10.0.0.1").await;
    let s2 = open(&a, "10.0.0.1").await;
    assert_eq!(
        list(&b, &s1, "10.0.0.1").await,
        StatusCode::OK,
        "b serves a's session"
    );
    assert_eq!(list(&a, &s2, "10.0.0.1").await, StatusCode::OK);
    holds(&b, 1).await;
    let s3 = open(&b, "10.0.0.1").await;
    // Ended on both instances (a hears of it over the bus).
    holds(&a, 1).await;
    holds(&b, 1).await;
    assert_eq!(list(&a, &s1, "10.0.0.1").await, StatusCode::NOT_FOUND);
    assert_eq!(list(&b, &s1, "10.0.0.1").await, StatusCode::NOT_FOUND);
    for s in [&s2, &s3] {
        assert_eq!(list(&a, s, "10.0.0.1").await, StatusCode::OK);
        assert_eq!(list(&b, s, "10.0.0.1").await, StatusCode::OK);
    }

    // The attack: many sessions from one address, alternating instances.
    // Redis keeps its two, and the global cap (4) holds for everyone.
    for i in 0..30 {
        let app = if i % 2 == 0 { &a } else { &b };
        open(app, "10.0.0.2").await;
    }
    let others: Vec<String> = {
        let mut v = Vec::new();
        for (i, ip) in ["10.0.0.3", "10.0.0.4"].into_iter().enumerate() {
            v.push(open(if i == 0 { &a } else { &b }, ip).await);
        }
        v
    };
    assert!(store.counted().await.unwrap() <= 4);
    let client = redis::Client::open(server.url()).unwrap();
    let mut c = client.get_multiplexed_async_connection().await.unwrap();
    let states: Vec<String> = c.keys(format!("{PREFIX}sess:*")).await.unwrap();
    assert!(
        states.len() <= 4,
        "{} session states kept: {states:?}",
        states.len()
    );
    let theirs: u64 = c.zcard(format!("{PREFIX}sessc:a:10.0.0.2")).await.unwrap();
    assert!(theirs <= 2, "{theirs} sessions of one address counted");
    // The newest sessions of other clients are served on both instances.
    for s in &others {
        let from = if s == &others[0] {
            "10.0.0.3"
        } else {
            "10.0.0.4"
        };
        assert_eq!(list(&a, s, from).await, StatusCode::OK);
        assert_eq!(list(&b, s, from).await, StatusCode::OK);
    }
    // Every key the caps use expires.
    for k in [
        format!("{PREFIX}sessidx"),
        format!("{PREFIX}sessclient"),
        format!("{PREFIX}sessc:a:10.0.0.2"),
    ] {
        let ttl: i64 = c.pttl(&k).await.unwrap();
        assert!(ttl > 0, "{k}: {ttl}");
    }
}
