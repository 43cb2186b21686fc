//! The 2024-11-05 HTTP+SSE transport: GET /sse + POST /message.

use crate::common;

use common::*;
use http::StatusCode;
use serde_json::json;

#[tokio::test]
async fn sse_and_message_round_trip() {
    let s = TestServer::start(|b| b).await;
    let (mut sse, endpoint) = s.legacy_sse().await;
    assert!(endpoint.starts_with("/message?sessionId="), "{endpoint}");
    let post = |body: serde_json::Value| s.post_message(&endpoint, body);
    let r = post(initialize(1, "2024-11-05")).await;
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    let f = sse.next().await.unwrap();
    assert_eq!(f.event.as_deref(), Some("message"));
    let v: serde_json::Value = serde_json::from_str(&f.data).unwrap();
    assert_eq!(v["result"]["protocolVersion"], "2024-11-05");
    let r = post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    let r = post(call(2, "echo", json!({"text": "old"}), false)).await;
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    let (_, v) = sse.next_json().await.unwrap();
    assert_eq!(v["id"], 2);
    assert_eq!(v["result"]["content"][0]["text"], "old");
    let r = post(serde_json::Value::String("x".into())).await;
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    assert_eq!(s.mcp.session_count(), 1);

    // The session ends with its stream.
    drop(sse);
    eventually(|| s.mcp.session_count() == 0).await;
    let r = post(call(3, "echo", json!({"text": "late"}), false)).await;
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn message_needs_a_known_session() {
    let s = TestServer::start(|b| b).await;
    let r = s
        .send_json(
            http::Request::post("/message?sessionId=nope")
                .header("host", s.host())
                .header("content-type", "application/json"),
            initialize(1, "2024-11-05"),
        )
        .await;
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    let r = s
        .send_json(
            http::Request::post("/message")
                .header("host", s.host())
                .header("content-type", "application/json"),
            initialize(1, "2024-11-05"),
        )
        .await;
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    let r = s
        .send(
            http::Request::get("/sse")
                .header("host", "evil.example.com")
                .header("accept", "text/event-stream"),
            "",
        )
        .await;
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
}
