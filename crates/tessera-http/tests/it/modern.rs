//! 2026-07-28 on the same endpoint: stateless requests, header checks and
//! their error codes, status mapping, long-lived listen streams.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use common::*;
use http::StatusCode;
use serde_json::{Value, json};
use tessera_http::McpHttp;
use tessera_proto::{EngineConfig, ServerIdentity};
use tessera_runtime::{HandlerResult, Request, Service};
use tessera_types::JsonObject;

fn modern_call(id: i64, tool: &str, args: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": tool, "arguments": args, "_meta": modern_meta()}})
}

#[tokio::test]
async fn discover_is_stateless_json() {
    let s = TestServer::start(|b| b).await;
    let r = s
        .send_json(
            s.modern("server/discover", None),
            json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": modern_meta()}}),
        )
        .await;
    assert_eq!(r.status(), StatusCode::OK);
    assert!(!r.headers().contains_key("mcp-session-id"));
    let v = body_json(r).await;
    assert!(
        v["result"]["supportedVersions"]
            .as_array()
            .unwrap()
            .contains(&json!(MODERN))
    );
    assert_eq!(s.mcp.session_count(), 0);

    let r = s
        .send_json(
            s.modern("tools/call", Some("echo")),
            modern_call(2, "echo", json!({"text": "modern"})),
        )
        .await;
    assert_eq!(r.status(), StatusCode::OK);
    let v = body_json(r).await;
    assert_eq!(v["result"]["content"][0]["text"], "modern");
    assert_eq!(v["result"]["resultType"], "complete");
}

#[tokio::test]
async fn get_and_delete_are_405_for_modern_clients() {
    let s = TestServer::start(|b| b).await;
    let r = s
        .send(s.get().header("mcp-protocol-version", MODERN), "")
        .await;
    assert_eq!(r.status(), StatusCode::METHOD_NOT_ALLOWED);
    let r = s
        .send(
            http::Request::delete("/mcp")
                .header("host", s.host())
                .header("mcp-protocol-version", MODERN),
            "",
        )
        .await;
    assert_eq!(r.status(), StatusCode::METHOD_NOT_ALLOWED);
}

async fn expect_code(
    r: http::Response<hyper::body::Incoming>,
    status: StatusCode,
    code: i64,
    id: Value,
) {
    assert_eq!(r.status(), status);
    let v = body_json(r).await;
    assert_eq!(v["error"]["code"], code, "{v}");
    assert_eq!(v["id"], id, "{v}");
}

#[tokio::test]
async fn header_mismatches_are_400_with_32020() {
    let s = TestServer::start(|b| b).await;
    let list = json!({"jsonrpc": "2.0", "id": 11, "method": "tools/list", "params": {"_meta": modern_meta()}});
    // Mcp-Method differs, or is missing, or differs in case.
    let r = s
        .send_json(s.modern("prompts/list", None), list.clone())
        .await;
    expect_code(r, StatusCode::BAD_REQUEST, -32020, json!(11)).await;
    let b = s.post().header("mcp-protocol-version", MODERN);
    let r = s.send_json(b, list.clone()).await;
    expect_code(r, StatusCode::BAD_REQUEST, -32020, json!(11)).await;
    let r = s
        .send_json(s.modern("TOOLS/LIST", None), list.clone())
        .await;
    expect_code(r, StatusCode::BAD_REQUEST, -32020, json!(11)).await;
    // Header names are case-insensitive; whitespace around values is not part of them.
    let b = s
        .post()
        .header("mcp-protocol-version", MODERN)
        .header("MCP-METHOD", "  tools/list  ");
    assert_eq!(s.send_json(b, list.clone()).await.status(), StatusCode::OK);

    // Mcp-Name.
    let c = modern_call(12, "echo", json!({"text": "x"}));
    let r = s
        .send_json(s.modern("tools/call", Some("wrong_tool")), c.clone())
        .await;
    expect_code(r, StatusCode::BAD_REQUEST, -32020, json!(12)).await;
    let r = s.send_json(s.modern("tools/call", None), c.clone()).await;
    expect_code(r, StatusCode::BAD_REQUEST, -32020, json!(12)).await;
    let r = s
        .send_json(
            s.modern("tools/call", Some("=?base64?ZWNobw==?=")),
            c.clone(),
        )
        .await;
    assert_eq!(r.status(), StatusCode::OK);

    // MCP-Protocol-Version header vs _meta.
    let mut other = list.clone();
    other["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2025-11-25");
    let r = s.send_json(s.modern("tools/list", None), other).await;
    expect_code(r, StatusCode::BAD_REQUEST, -32020, json!(11)).await;
}

#[tokio::test]
async fn unsupported_version_and_missing_meta_are_400() {
    let s = TestServer::start(|b| b).await;
    let mut d = json!({"jsonrpc": "2.0", "id": 301, "method": "server/discover", "params": {"_meta": modern_meta()}});
    d["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("v999.0.0");
    let r = s
        .send_json(
            s.post()
                .header("mcp-protocol-version", "v999.0.0")
                .header("mcp-method", "server/discover"),
            d,
        )
        .await;
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    let v = body_json(r).await;
    assert_eq!(v["error"]["code"], -32022);
    assert_eq!(v["id"], 301);
    assert_eq!(v["error"]["data"]["requested"], "v999.0.0");
    assert!(
        v["error"]["data"]["supported"]
            .as_array()
            .unwrap()
            .contains(&json!(MODERN))
    );

    let r = s
        .send_json(
            s.modern("server/discover", None),
            json!({"jsonrpc": "2.0", "id": 101, "method": "server/discover", "params": {}}),
        )
        .await;
    expect_code(r, StatusCode::BAD_REQUEST, -32602, json!(101)).await;
    let mut m = modern_meta();
    m.as_object_mut()
        .unwrap()
        .remove("io.modelcontextprotocol/clientCapabilities");
    let r = s
        .send_json(
            s.modern("server/discover", None),
            json!({"jsonrpc": "2.0", "id": 104, "method": "server/discover", "params": {"_meta": m}}),
        )
        .await;
    expect_code(r, StatusCode::BAD_REQUEST, -32602, json!(104)).await;
}

#[tokio::test]
async fn removed_and_unknown_methods_are_404_with_32601() {
    let s = TestServer::start(|b| b).await;
    for (i, method) in [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "unknown/method",
    ]
    .into_iter()
    .enumerate()
    {
        let id = 500 + i as i64;
        let r = s
            .send_json(
                s.modern(method, None),
                json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {"_meta": modern_meta()}}),
            )
            .await;
        expect_code(r, StatusCode::NOT_FOUND, -32601, json!(id)).await;
    }
}

#[tokio::test]
async fn mcp_param_headers_are_checked_against_the_arguments() {
    // A tessera_server::Server factory reads the schema directly; a closure
    // factory makes the transport ask the service with tools/list. Same rules.
    check_param_headers(&TestServer::start(|b| b).await).await;
    check_param_headers(&TestServer::start_via_closure(|b| b).await).await;
}

async fn check_param_headers(s: &TestServer) {
    let c = modern_call(
        20,
        "sql",
        json!({"region": "us-west1", "query": "select 1", "limit": 5}),
    );
    let ok = s
        .modern("tools/call", Some("sql"))
        .header("mcp-param-region", "us-west1")
        .header("Mcp-Param-Limit", "5");
    let r = s.send_json(ok, c.clone()).await;
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(
        body_json(r).await["result"]["content"][0]["text"],
        "ran in \"us-west1\""
    );

    let b64 = s
        .modern("tools/call", Some("sql"))
        .header("mcp-param-region", "=?base64?dXMtd2VzdDE=?=")
        .header("mcp-param-limit", "5.0");
    assert_eq!(s.send_json(b64, c.clone()).await.status(), StatusCode::OK);

    let missing = s
        .modern("tools/call", Some("sql"))
        .header("mcp-param-limit", "5");
    expect_code(
        s.send_json(missing, c.clone()).await,
        StatusCode::BAD_REQUEST,
        -32020,
        json!(20),
    )
    .await;
    let wrong = s
        .modern("tools/call", Some("sql"))
        .header("mcp-param-region", "eu-west1")
        .header("mcp-param-limit", "5");
    expect_code(
        s.send_json(wrong, c.clone()).await,
        StatusCode::BAD_REQUEST,
        -32020,
        json!(20),
    )
    .await;
    let bad_b64 = s
        .modern("tools/call", Some("sql"))
        .header("mcp-param-region", "=?base64?SGVsbG8?=")
        .header("mcp-param-limit", "5");
    expect_code(
        s.send_json(bad_b64, c).await,
        StatusCode::BAD_REQUEST,
        -32020,
        json!(20),
    )
    .await;
}

#[tokio::test]
async fn progress_streams_and_logs_need_a_log_level() {
    let s = TestServer::start(|b| b).await;
    let mut c = modern_call(30, "progress", json!({}));
    c["params"]["_meta"]["progressToken"] = json!("t");
    let r = s
        .send_json(s.modern("tools/call", Some("progress")), c.clone())
        .await;
    let mut sse = Sse::new(r);
    let mut methods = Vec::new();
    let mut last = Value::Null;
    while let Some(f) = sse.next().await {
        assert!(f.id.is_none(), "2026-07-28 streams are not resumable");
        let v: Value = serde_json::from_str(&f.data).unwrap();
        match v["method"].as_str() {
            Some(m) => methods.push(m.to_owned()),
            None => last = v,
        }
    }
    assert!(
        methods.iter().all(|m| m == "notifications/progress"),
        "{methods:?}"
    );
    assert_eq!(methods.len(), 3);
    assert_eq!(last["result"]["content"][0]["text"], "done");

    c["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("info");
    let mut sse = Sse::new(
        s.send_json(s.modern("tools/call", Some("progress")), c)
            .await,
    );
    let mut logs = 0;
    while let Some((_, v)) = sse.next_json().await {
        if v["method"] == "notifications/message" {
            logs += 1;
        }
    }
    assert_eq!(logs, 3);
}

/// Sets the flag when dropped after the token fired.
struct CancelledFlag(Arc<AtomicBool>, tokio_util::sync::CancellationToken);

impl Drop for CancelledFlag {
    fn drop(&mut self) {
        if self.1.is_cancelled() {
            self.0.store(true, Ordering::SeqCst);
        }
    }
}

/// A service with `subscriptions/listen` that waits until cancelled.
struct Listen(Arc<AtomicBool>);

impl Service for Listen {
    fn methods(&self) -> Vec<String> {
        vec!["subscriptions/listen".into()]
    }

    async fn handle_request(self: Arc<Self>, r: Request) -> HandlerResult {
        let flag = self.0.clone();
        {
            let mut p = JsonObject::new();
            p.insert(
                "_meta".into(),
                json!({"io.modelcontextprotocol/subscriptionId": "s1"}),
            );
            let _ = r.peer.notify(
                "notifications/subscriptions/acknowledged",
                Some(p),
                Some(r.id.clone()),
            );
            // The driver may drop this future as soon as the token fires.
            let _seen = CancelledFlag(flag, r.cancel.clone());
            r.cancel.cancelled().await;
            Ok(JsonObject::new())
        }
    }
}

#[tokio::test]
async fn listen_streams_keep_alive_and_a_disconnect_cancels() {
    let cancelled = Arc::new(AtomicBool::new(false));
    let flag = cancelled.clone();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let mcp = McpHttp::builder(move || {
        (
            EngineConfig::server(ServerIdentity::default()),
            Listen(flag.clone()),
        )
    })
    .bind_address(addr)
    .keep_alive(Some(Duration::from_millis(50)))
    .build();
    tokio::spawn(tessera_http::serve(listener, mcp, std::future::pending()));
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
                      "params": {"_meta": modern_meta(), "notifications": {"toolsListChanged": true}}});
    let req = http::Request::post("/")
        .header("host", format!("127.0.0.1:{}", addr.port()))
        .header("accept", ACCEPT_BOTH)
        .header("content-type", "application/json")
        .header("mcp-protocol-version", MODERN)
        .header("mcp-method", "subscriptions/listen")
        .body(http_body_util::Full::new(bytes::Bytes::from(
            serde_json::to_vec(&body).unwrap(),
        )))
        .unwrap();
    let (r, connection) = send_with_connection(addr, req).await;
    let mut sse = Sse::new(r);
    let (_, ack) = sse.next_json().await.unwrap();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    within(async {
        while !String::from_utf8_lossy(&sse.raw).contains("\n:\n\n") {
            assert!(sse.fill().await, "stream ended");
        }
    })
    .await;
    assert!(!cancelled.load(Ordering::SeqCst));
    // The client goes away: its connection closes.
    connection.abort();
    drop(sse);
    eventually(|| cancelled.load(Ordering::SeqCst)).await;
}

#[tokio::test]
async fn modern_notifications_are_accepted() {
    let s = TestServer::start(|b| b).await;
    let r = s
        .send_json(
            s.modern("notifications/cancelled", None),
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1, "_meta": modern_meta()}}),
        )
        .await;
    assert_eq!(r.status(), StatusCode::ACCEPTED);
}
