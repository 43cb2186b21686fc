//! What a peer can make a session keep or echo is bounded in bytes (issue
//! 32 item 1): the attack was one 4 MB `tools/call count {"to":256}` with a
//! 3.9 MB `progressToken`, echoed in 256 progress events, each kept by the
//! resumable-stream event store (22 MB → 1,481 MB RSS). Here the store's
//! accounted bytes are read through `InMemoryEventStore::bytes`.

use crate::common;

use std::sync::Arc;

use common::*;
use http::StatusCode;
use serde_json::{Value, json};
use tessera_http::{InMemoryEventStore, ResponseMode};
use tessera_server::{RequestContext, Server, resource, tool};

/// A server with `count`: `to` progress notifications, then the count.
fn counting_server() -> Server {
    Server::builder()
        .name_version("count", "1")
        .tool(
            tool("count")
                .description("Counts to `to`, reporting progress at each step")
                .handler(
                    |ctx: RequestContext, tessera_server::RawArgs(a)| async move {
                        let to = a.get("to").and_then(Value::as_u64).unwrap_or(0);
                        for i in 1..=to {
                            ctx.progress(i as f64, Some(to as f64), None);
                        }
                        to.to_string()
                    },
                ),
        )
        .resource(resource("docs://readme", "readme").handler(|| async { "hello" }))
        .build()
        .unwrap()
}

fn count_call(id: i64, to: u64, token: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "count", "arguments": {"to": to}, "_meta": {"progressToken": token}
    }})
}

/// Reads a whole SSE answer: the progress notifications and the response.
async fn read_all(r: http::Response<hyper::body::Incoming>) -> (usize, Value) {
    let mut sse = Sse::new(r);
    let mut progress = 0;
    while let Some((_, v)) = sse.next_json().await {
        if v["method"] == "notifications/progress" {
            progress += 1;
        } else if v.get("id").is_some() {
            return (progress, v);
        }
    }
    panic!("the stream ended without a response");
}

#[tokio::test]
async fn a_huge_progress_token_is_refused_and_nothing_is_kept() {
    let store = Arc::new(InMemoryEventStore::default());
    let shared = store.clone();
    let s = TestServer::start_with(counting_server(), move |b| {
        b.event_store(shared).response_mode(ResponseMode::Sse)
    })
    .await;
    let sid = s.session(LEGACY).await;
    let token = "p".repeat(3_900_000);
    let r = s
        .send_json(s.in_session(&sid), count_call(2, 256, &token))
        .await;
    assert_eq!(r.status(), StatusCode::OK);
    let (progress, v) = read_all(r).await;
    assert_eq!(progress, 0);
    assert_eq!(v["error"]["code"], -32602, "{v}");
    let msg = v["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("progressToken is 3900000 bytes; the limit is 1024"),
        "{msg}"
    );
    // The priming event and the error: a few hundred bytes, not 1 GB.
    assert!(store.bytes() < 4096, "{} bytes kept", store.bytes());

    // The 2026-07-28 way in is bounded the same way.
    let mut body = count_call(3, 256, &token);
    body["params"]["_meta"]
        .as_object_mut()
        .unwrap()
        .extend(modern_meta().as_object().unwrap().clone());
    let r = s
        .send_json(s.modern("tools/call", Some("count")), body)
        .await;
    let v = body_json(r).await;
    assert_eq!(v["error"]["code"], -32602, "{v}");
}

#[tokio::test]
async fn many_large_events_stay_within_the_session_and_total_budgets() {
    // 256 events per session as before, now also 64 KiB per session and
    // 160 KiB in all.
    let store = Arc::new(InMemoryEventStore::with_bytes(
        256,
        1024,
        64 << 10,
        160 << 10,
    ));
    let shared = store.clone();
    let s = TestServer::start_with(counting_server(), move |b| {
        b.event_store(shared).response_mode(ResponseMode::Sse)
    })
    .await;
    // A token at the limit: each progress event is over 1 KiB.
    let token = "t".repeat(1024);
    let mut sessions = Vec::new();
    for i in 0..4 {
        let sid = s.session(LEGACY).await;
        let r = s
            .send_json(s.in_session(&sid), count_call(10 + i, 200, &token))
            .await;
        let (progress, v) = read_all(r).await;
        assert_eq!(progress, 200, "every step went out");
        assert_eq!(v["result"]["content"][0]["text"], "200");
        // 200 events of about 1.2 KiB: 240 KiB sent, at most 64 KiB kept
        // (200 stays under the stream's 256-event buffer, which a handler
        // emitting without pause would fill before the client reads).
        assert!(store.session_bytes(&sid) <= 64 << 10);
        assert!(store.bytes() <= 160 << 10, "{}", store.bytes());
        sessions.push(sid);
    }
    // The newest session's latest events are there to replay; the oldest
    // session made room.
    assert!(store.session_bytes(&sessions[3]) > 32 << 10);
    assert_eq!(store.session_bytes(&sessions[0]), 0);
}

#[tokio::test]
async fn an_unknown_uri_is_not_echoed_whole() {
    let s = TestServer::start_with(counting_server(), |b| b).await;
    let sid = s.session(LEGACY).await;
    let uri = format!("file:///{}", "u".repeat(3 << 20));
    let r = s
        .send_json(
            s.in_session(&sid),
            json!({"jsonrpc": "2.0", "id": 4, "method": "resources/read", "params": {"uri": uri}}),
        )
        .await;
    let bytes = body_bytes(r).await;
    assert!(bytes.len() < 8192, "{} bytes answered", bytes.len());
    let v: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(v["error"]["data"]["uriBytes"], uri.len(), "{v}");
    assert_eq!(
        v["error"]["data"]["uri"].as_str().unwrap().len(),
        tessera_server::MAX_ECHOED_URI
    );
}

/// A JSON-RPC id of megabytes is refused with `-32600` and id `null`, in a
/// session and in a 2026-07-28 request, and the answer does not quote it;
/// the session goes on serving the next request.
#[tokio::test]
async fn a_huge_id_is_refused_with_a_null_id_and_not_echoed() {
    let store = Arc::new(InMemoryEventStore::default());
    let shared = store.clone();
    let s = TestServer::start_with(counting_server(), move |b| {
        b.event_store(shared).response_mode(ResponseMode::Sse)
    })
    .await;
    let sid = s.session(LEGACY).await;
    let id = "i".repeat(3 << 20);
    let call = |id: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "count", "arguments": {"to": 3}
        }})
    };
    let r = s.send_json(s.in_session(&sid), call(json!(id))).await;
    let bytes = body_bytes(r).await;
    assert!(bytes.len() < 1024, "{} bytes answered", bytes.len());
    let text = String::from_utf8_lossy(&bytes);
    let v: Value = text
        .lines()
        .find_map(|l| serde_json::from_str(l.strip_prefix("data:")?.trim()).ok())
        .or_else(|| serde_json::from_slice(&bytes).ok())
        .unwrap_or_else(|| panic!("no JSON answer: {text}"));
    assert_eq!(v["id"], Value::Null, "{v}");
    assert_eq!(v["error"]["code"], -32600, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains(&format!("limit of {} bytes", tessera_proto::MAX_ID_BYTES)),
        "{v}"
    );
    assert!(store.bytes() < 4096, "{} bytes kept", store.bytes());

    // The session still serves.
    let r = s.send_json(s.in_session(&sid), call(json!(7))).await;
    let (_, v) = read_all(r).await;
    assert_eq!(v["id"], 7);
    assert_eq!(v["result"]["content"][0]["text"], "3", "{v}");

    // A 2026-07-28 request with such an id is refused the same way.
    let mut body = call(json!(id));
    body["params"]["_meta"] = modern_meta();
    let r = s
        .send_json(s.modern("tools/call", Some("count")), body)
        .await;
    let bytes = body_bytes(r).await;
    assert!(bytes.len() < 1024, "{} bytes answered", bytes.len());
    let v: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(
        (v["id"].clone(), v["error"]["code"].clone()),
        (Value::Null, json!(-32600))
    );
}
