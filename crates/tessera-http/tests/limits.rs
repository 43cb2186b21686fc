//! Session cap, idle expiry and slow clients, driven through the tower
//! Service directly on tokio's paused clock (no sockets, no sleeping).

mod common;

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::{BodyExt, Full};
use serde_json::{Value, json};
use tessera_http::{McpBody, McpHttp, McpHttpBuilder};
use tower::ServiceExt;

use common::{Flags, call, fixture, initialize};

fn app(adjust: impl FnOnce(McpHttpBuilder) -> McpHttpBuilder) -> McpHttp {
    adjust(McpHttp::builder(fixture(Arc::new(Flags::default())))).build()
}

fn post(sid: Option<&str>, v: Value) -> Request<Full<Bytes>> {
    let mut b = Request::post("/mcp")
        .header("host", "localhost")
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json");
    if let Some(s) = sid {
        b = b.header("mcp-session-id", s);
    }
    b.body(Full::new(Bytes::from(serde_json::to_vec(&v).unwrap())))
        .unwrap()
}

async fn open(app: &McpHttp) -> http::Response<McpBody> {
    app.clone()
        .oneshot(post(None, initialize(1, "2025-11-25")))
        .await
        .unwrap()
}

async fn settle(mut cond: impl FnMut() -> bool) {
    for _ in 0..1000 {
        if cond() {
            return;
        }
        tokio::task::yield_now().await;
    }
    panic!("condition not reached");
}

#[tokio::test(start_paused = true)]
async fn the_session_cap_answers_503_until_one_ends() {
    let app = app(|b| b.max_sessions(2));
    let a = open(&app).await;
    assert_eq!(a.status(), StatusCode::OK);
    assert_eq!(open(&app).await.status(), StatusCode::OK);
    let full = open(&app).await;
    assert_eq!(full.status(), StatusCode::SERVICE_UNAVAILABLE);
    let body = full.into_body().collect().await.unwrap().to_bytes();
    assert!(String::from_utf8_lossy(&body).contains("--max-sessions"));
    let sid = a.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let del = Request::delete("/mcp")
        .header("host", "localhost")
        .header("mcp-session-id", &sid)
        .body(Full::new(Bytes::new()))
        .unwrap();
    assert!(
        app.clone()
            .oneshot(del)
            .await
            .unwrap()
            .status()
            .is_success()
    );
    settle(|| app.session_count() == 1).await;
    assert_eq!(open(&app).await.status(), StatusCode::OK);
}

#[tokio::test(start_paused = true)]
async fn idle_sessions_expire() {
    let app = app(|b| b.session_idle_timeout(Some(Duration::from_secs(60))));
    let r = open(&app).await;
    let sid = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    tokio::time::sleep(Duration::from_secs(30)).await;
    // Activity restarts the clock.
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    assert_eq!(
        app.clone()
            .oneshot(post(Some(&sid), list.clone()))
            .await
            .unwrap()
            .status(),
        StatusCode::OK
    );
    tokio::time::sleep(Duration::from_secs(45)).await;
    assert_eq!(app.session_count(), 1);
    tokio::time::sleep(Duration::from_secs(20)).await;
    settle(|| app.session_count() == 0).await;
    let r = app.clone().oneshot(post(Some(&sid), list)).await.unwrap();
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
}

#[tokio::test(start_paused = true)]
async fn a_slow_reader_loses_its_stream_not_the_server_memory() {
    let app = app(|b| b.stream_buffer(2));
    let r = open(&app).await;
    let sid = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let init = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let _ = app.clone().oneshot(post(Some(&sid), init)).await.unwrap();
    let r = app
        .clone()
        .oneshot(post(Some(&sid), call(3, "progress", json!({}), true)))
        .await
        .unwrap();
    // Do not read while the tool sends 6 notifications and its result.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let body = r.into_body().collect().await.unwrap().to_bytes();
    let text = String::from_utf8_lossy(&body);
    let events = text.matches("\n\n").count();
    assert!(events <= 2, "at most the buffer was kept: {text}");
    assert!(
        !text.contains("\"result\""),
        "the stream was cut before the result"
    );
}
