//! Streamable HTTP, 2025-03-26 … 2025-11-25: sessions, status codes, SSE
//! framing, resumability, concurrent streams, server-to-client requests.

use crate::common;

use std::collections::HashSet;

use common::*;
use http::StatusCode;
use serde_json::{Value, json};
use tessera_http::ResponseMode;

#[tokio::test]
async fn initialize_issues_a_session_then_json_answers() {
    let s = TestServer::start(|b| b).await;
    let r = s.send_json(s.post(), initialize(1, LEGACY)).await;
    assert_eq!(r.status(), StatusCode::OK);
    assert!(content_type(&r).starts_with("application/json"));
    let sid = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    assert!(
        sid.len() >= 32 && sid.bytes().all(|b| (0x21..=0x7e).contains(&b)),
        "{sid}"
    );
    let v = body_json(r).await;
    assert_eq!(v["result"]["protocolVersion"], LEGACY);

    let r = s
        .send_json(
            s.in_session(&sid),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        )
        .await;
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    assert!(body_bytes(r).await.is_empty());

    let r = s
        .send_json(
            s.in_session(&sid),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        )
        .await;
    assert_eq!(r.status(), StatusCode::OK);
    assert!(content_type(&r).starts_with("application/json"));
    let v = body_json(r).await;
    assert!(v["result"]["tools"].as_array().unwrap().len() >= 5);
    assert_eq!(s.mcp.session_count(), 1);
}

#[tokio::test]
async fn accept_and_content_type_are_checked() {
    let s = TestServer::start(|b| b).await;
    let only_json = s.post().header("accept", "application/json");
    // The builder appends: replace the Accept header entirely.
    let mut req = only_json
        .body(http_body_util::Full::new(bytes::Bytes::from(
            serde_json::to_vec(&initialize(1, LEGACY)).unwrap(),
        )))
        .unwrap();
    req.headers_mut()
        .insert("accept", "application/json".parse().unwrap());
    let r = send(s.addr, req).await;
    assert_eq!(r.status(), StatusCode::NOT_ACCEPTABLE);
    let v = body_json(r).await;
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("text/event-stream")
    );

    let mut req = s
        .post()
        .body(http_body_util::Full::new(bytes::Bytes::from_static(b"{}")))
        .unwrap();
    req.headers_mut()
        .insert("content-type", "text/plain".parse().unwrap());
    let r = send(s.addr, req).await;
    assert_eq!(r.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);

    let sid = s.session(LEGACY).await;
    let mut req = s
        .get()
        .header("mcp-session-id", &sid)
        .body(Default::default())
        .unwrap();
    req.headers_mut()
        .insert("accept", "application/json".parse().unwrap());
    let r = send(s.addr, req).await;
    assert_eq!(r.status(), StatusCode::NOT_ACCEPTABLE);

    let r = s
        .send(http::Request::put("/mcp").header("host", s.host()), "")
        .await;
    assert_eq!(r.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert!(r.headers().contains_key("allow"));
}

#[tokio::test]
async fn session_rules_400_404_and_delete() {
    let s = TestServer::start(|b| b).await;
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let r = s.send_json(s.post(), list.clone()).await;
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    assert!(
        body_json(r).await["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Mcp-Session-Id")
    );

    let r = s
        .send_json(s.in_session("no-such-session"), list.clone())
        .await;
    assert_eq!(r.status(), StatusCode::NOT_FOUND);

    let sid = s.session(LEGACY).await;
    let r = s
        .send(http::Request::delete("/mcp").header("host", s.host()), "")
        .await;
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    let r = s
        .send(
            http::Request::delete("/mcp")
                .header("host", s.host())
                .header("mcp-session-id", &sid),
            "",
        )
        .await;
    assert!(r.status().is_success());
    let r = s.send_json(s.in_session(&sid), list.clone()).await;
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    let r = s
        .send(
            http::Request::delete("/mcp")
                .header("host", s.host())
                .header("mcp-session-id", &sid),
            "",
        )
        .await;
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    eventually(|| s.mcp.session_count() == 0).await;
}

#[tokio::test]
async fn protocol_version_header() {
    let s = TestServer::start(|b| b).await;
    let sid = s.session(LEGACY).await;
    let list = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list"});
    let r = s
        .send_json(
            s.post()
                .header("mcp-session-id", &sid)
                .header("mcp-protocol-version", "1999-01-01"),
            list.clone(),
        )
        .await;
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    let v = body_json(r).await;
    assert_eq!(v["error"]["code"], -32022);
    assert_eq!(v["id"], 7);
    assert!(
        v["error"]["data"]["supported"]
            .as_array()
            .unwrap()
            .contains(&json!(LEGACY))
    );
    // Absent: 2025-03-26 is assumed; an older supported version in the header is fine too.
    let r = s
        .send_json(s.post().header("mcp-session-id", &sid), list.clone())
        .await;
    assert_eq!(r.status(), StatusCode::OK);
    let r = s
        .send_json(
            s.post()
                .header("mcp-session-id", &sid)
                .header("mcp-protocol-version", "2025-03-26"),
            list,
        )
        .await;
    assert_eq!(r.status(), StatusCode::OK);
}

#[tokio::test]
async fn malformed_input_gets_400_with_json_rpc_errors() {
    let s = TestServer::start(|b| b).await;
    let r = s.send(s.post(), "{not json").await;
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    let v = body_json(r).await;
    assert_eq!(v["error"]["code"], -32700);
    assert_eq!(v["id"], Value::Null);

    let r = s.send(s.post(), r#"{"jsonrpc":"2.0","id":5}"#).await;
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    let v = body_json(r).await;
    assert_eq!(v["error"]["code"], -32600);
    assert_eq!(v["id"], 5);

    // A request id already in progress in the session.
    let sid = s.session(LEGACY).await;
    let gate = s.send_json(s.in_session(&sid), call(40, "gate", json!({}), false));
    let dup = async {
        s.flags.at_gate.notified().await;
        let r = s
            .send_json(
                s.in_session(&sid),
                call(40, "echo", json!({"text": "x"}), false),
            )
            .await;
        assert_eq!(r.status(), StatusCode::BAD_REQUEST);
        assert_eq!(body_json(r).await["id"], 40);
        s.flags.gate.notify_one();
    };
    let (r, ()) = tokio::join!(gate, dup);
    assert_eq!(
        body_json(r).await["result"]["content"][0]["text"],
        "gate opened"
    );
}

#[tokio::test]
async fn oversize_bodies_get_413() {
    let s = TestServer::start(|b| b.max_body_bytes(1024)).await;
    let big = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"pad": "x".repeat(4096)}});
    let r = s.send_json(s.post(), big.clone()).await;
    assert_eq!(r.status(), StatusCode::PAYLOAD_TOO_LARGE);
    assert!(
        body_json(r).await["error"]["message"]
            .as_str()
            .unwrap()
            .contains("max-body-bytes")
    );

    // Without Content-Length (chunked): the streaming read stops at the limit.
    let (tx, body) = {
        let (tx, rx) = tokio::sync::mpsc::channel::<
            Result<http_body::Frame<bytes::Bytes>, std::convert::Infallible>,
        >(4);
        (tx, http_body_util::StreamBody::new(tokio_stream_from(rx)))
    };
    let stream = tokio::net::TcpStream::connect(s.addr).await.unwrap();
    let (mut sender, conn) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .unwrap();
    tokio::spawn(conn);
    let req = s.post().body(body).unwrap();
    let send = tokio::spawn(async move { sender.send_request(req).await });
    for _ in 0..8 {
        if tx
            .send(Ok(http_body::Frame::data(bytes::Bytes::from(vec![
                b' ';
                512
            ]))))
            .await
            .is_err()
        {
            break;
        }
    }
    drop(tx);
    let r = within(send).await.unwrap().unwrap();
    assert_eq!(r.status(), StatusCode::PAYLOAD_TOO_LARGE);
}

fn tokio_stream_from<T: Send + 'static>(
    mut rx: tokio::sync::mpsc::Receiver<T>,
) -> impl futures::Stream<Item = T> + Send + 'static {
    futures::stream::poll_fn(move |cx| rx.poll_recv(cx))
}

#[tokio::test]
async fn host_and_origin_are_checked() {
    let s = TestServer::start(|b| b).await;
    let mut req = s
        .post()
        .body(http_body_util::Full::new(bytes::Bytes::from(
            serde_json::to_vec(&initialize(1, LEGACY)).unwrap(),
        )))
        .unwrap();
    req.headers_mut()
        .insert("host", "evil.example.com".parse().unwrap());
    let r = send(s.addr, req).await;
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    let msg = body_json(r).await["error"]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(msg.contains("--allow-host"), "{msg}");

    let r = s
        .send_json(
            s.post().header("origin", "http://evil.example.com"),
            initialize(1, LEGACY),
        )
        .await;
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    assert!(
        body_json(r).await["error"]["message"]
            .as_str()
            .unwrap()
            .contains("--allow-origin")
    );

    let mut req = s
        .post()
        .header("origin", format!("http://localhost:{}", s.addr.port()))
        .body(http_body_util::Full::new(bytes::Bytes::from(
            serde_json::to_vec(&initialize(1, LEGACY)).unwrap(),
        )))
        .unwrap();
    req.headers_mut().insert(
        "host",
        format!("localhost:{}", s.addr.port()).parse().unwrap(),
    );
    let r = send(s.addr, req).await;
    assert_eq!(r.status(), StatusCode::OK);
}

#[tokio::test]
async fn notifications_stream_as_sse_with_priming_and_ids() {
    let s = TestServer::start(|b| b).await;
    let sid = s.session(LEGACY).await;
    let r = s
        .send_json(s.in_session(&sid), call(3, "progress", json!({}), true))
        .await;
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(r.headers()["x-accel-buffering"], "no");
    let mut sse = Sse::new(r);
    let priming = sse.next().await.unwrap();
    assert!(priming.id.is_some(), "priming event has an id");
    assert_eq!(priming.data, "");
    assert_eq!(priming.retry, Some(1000));
    let frames = sse.rest().await;
    let mut ids = HashSet::new();
    ids.insert(priming.id.clone().unwrap());
    let mut progress = 0;
    let mut logs = 0;
    let mut last = Value::Null;
    for f in &frames {
        assert!(
            ids.insert(f.id.clone().expect("every event has an id")),
            "ids are unique"
        );
        let v: Value = serde_json::from_str(&f.data).unwrap();
        match v["method"].as_str() {
            Some("notifications/progress") => {
                progress += 1;
                assert_eq!(v["params"]["progressToken"], "p3");
            }
            Some("notifications/message") => logs += 1,
            _ => last = v,
        }
    }
    assert_eq!((progress, logs), (3, 3));
    assert_eq!(last["id"], 3);
    assert_eq!(last["result"]["content"][0]["text"], "done");
}

#[tokio::test]
async fn closed_stream_resumes_on_get_with_last_event_id() {
    let s = TestServer::start(|b| b).await;
    let sid = s.session(LEGACY).await;
    let r = s
        .send_json(s.in_session(&sid), call(9, "reconnect", json!({}), true))
        .await;
    let mut sse = Sse::new(r);
    let priming = sse.next().await.unwrap();
    let mut last_id = priming.id.clone().unwrap();
    let mut saw_result = false;
    let mut retry = priming.retry;
    while let Some(f) = sse.next().await {
        retry = f.retry.or(retry);
        if let Some(id) = &f.id {
            last_id = id.clone();
        }
        if f.data.contains("\"result\"") {
            saw_result = true;
        }
    }
    assert!(
        !saw_result,
        "the server closed the connection before the result"
    );
    assert_eq!(retry, Some(50), "the close carries the tool's retry");

    let r = s
        .send(
            s.get()
                .header("mcp-session-id", &sid)
                .header("last-event-id", &last_id),
            "",
        )
        .await;
    assert_eq!(r.status(), StatusCode::OK);
    let mut sse = Sse::new(r);
    let mut got = Vec::new();
    while let Some((id, v)) = sse.next_json().await {
        assert!(id.is_some());
        got.push(v);
    }
    let result = got
        .iter()
        .find(|v| v["id"] == 9)
        .expect("the result on the GET stream");
    assert_eq!(result["result"]["content"][0]["text"], "reconnected");
    // What was sent after the close but before the GET is replayed, exactly once.
    let after: Vec<_> = got
        .iter()
        .filter(|v| v["params"]["message"] == "after close")
        .collect();
    assert!(after.len() <= 1);
}

#[tokio::test]
async fn several_post_streams_at_once_each_get_their_own_messages() {
    let s = TestServer::start(|b| b).await;
    let sid = s.session(LEGACY).await;
    let calls = (0..3).map(|i| {
        let s = &s;
        let sid = sid.clone();
        async move {
            let r = s
                .send_json(
                    s.in_session(&sid),
                    call(100 + i, "progress", json!({}), true),
                )
                .await;
            assert_eq!(r.status(), StatusCode::OK);
            let mut sse = Sse::new(r);
            let mut msgs = Vec::new();
            while let Some((_, v)) = sse.next_json().await {
                msgs.push(v);
            }
            (i, msgs)
        }
    });
    for (i, msgs) in futures::future::join_all(calls).await {
        let token = format!("p{}", 100 + i);
        for m in &msgs {
            if m["method"] == "notifications/progress" {
                assert_eq!(m["params"]["progressToken"], token.as_str());
            }
        }
        assert_eq!(msgs.last().unwrap()["id"], 100 + i);
    }
}

#[tokio::test]
async fn server_requests_reach_the_client_and_its_answer_reaches_the_handler() {
    let s = TestServer::start(|b| b).await;
    let sid = s.session(LEGACY).await;
    let r = s
        .send_json(s.in_session(&sid), call(5, "sample", json!({}), false))
        .await;
    let mut sse = Sse::new(r);
    let (_, req) = sse.next_json().await.unwrap();
    assert_eq!(req["method"], "sampling/createMessage");
    let answer = json!({"jsonrpc": "2.0", "id": req["id"], "result": {
        "role": "assistant", "content": {"type": "text", "text": "sampled!"}, "model": "m"
    }});
    let r = s.send_json(s.in_session(&sid), answer).await;
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    let (_, result) = sse.next_json().await.unwrap();
    assert_eq!(result["id"], 5);
    assert_eq!(result["result"]["content"][0]["text"], "sampled!");
    assert!(
        sse.next().await.is_none(),
        "the stream ends after the response"
    );
}

#[tokio::test]
async fn a_cancelled_request_ends_its_stream_without_a_response() {
    let s = TestServer::start(|b| b).await;
    let sid = s.session(LEGACY).await;
    let r = s
        .send_json(s.in_session(&sid), call(6, "wait_cancel", json!({}), true))
        .await;
    let mut sse = Sse::new(r);
    let (_, v) = sse.next_json().await.unwrap();
    assert_eq!(v["method"], "notifications/progress");
    let cancel =
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 6}});
    let r = s.send_json(s.in_session(&sid), cancel).await;
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    assert!(
        sse.next_json().await.is_none(),
        "the stream ends, with no response"
    );
    eventually(|| s.flags.cancelled.load(std::sync::atomic::Ordering::SeqCst)).await;

    // Cancelled before anything was sent: the waiting POST is released.
    let pending = s.send_json(s.in_session(&sid), call(7, "gate", json!({}), false));
    let cancel = async {
        s.flags.at_gate.notified().await;
        let c = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}});
        s.send_json(s.in_session(&sid), c).await
    };
    let (r, c) = tokio::join!(pending, cancel);
    assert_eq!(c.status(), StatusCode::ACCEPTED);
    assert!(Sse::new(r).rest().await.is_empty());
}

#[tokio::test]
async fn unrelated_messages_go_to_the_get_stream_only() {
    let s = TestServer::start(|b| b).await;
    let sid = s.session(LEGACY).await;
    // Sent while no GET stream is open: kept in the backlog.
    let r = s
        .send_json(
            s.in_session(&sid),
            call(1, "notify_unrelated", json!({}), false),
        )
        .await;
    assert!(
        content_type(&r).starts_with("application/json"),
        "nothing related: JSON"
    );
    assert_eq!(body_json(r).await["result"]["content"][0]["text"], "sent");
    let r = s.send(s.get().header("mcp-session-id", &sid), "").await;
    assert_eq!(r.status(), StatusCode::OK);
    let mut get = Sse::new(r);
    let (_, v) = get.next_json().await.unwrap();
    assert_eq!(v["method"], "notifications/tools/list_changed");
    // While the GET stream is open, it goes there directly.
    let r = s
        .send_json(
            s.in_session(&sid),
            call(2, "notify_unrelated", json!({}), false),
        )
        .await;
    let _ = body_json(r).await;
    let (id, v) = get.next_json().await.unwrap();
    assert!(id.is_some());
    assert_eq!(v["method"], "notifications/tools/list_changed");
}

#[tokio::test]
async fn json_only_and_sse_only_modes() {
    let s = TestServer::start(|b| b.response_mode(ResponseMode::Json)).await;
    let sid = s.session(LEGACY).await;
    let r = s
        .send_json(s.in_session(&sid), call(3, "progress", json!({}), true))
        .await;
    assert!(content_type(&r).starts_with("application/json"));
    assert_eq!(body_json(r).await["result"]["content"][0]["text"], "done");

    let s = TestServer::start(|b| b.response_mode(ResponseMode::Sse)).await;
    let sid = s.session(LEGACY).await;
    let r = s
        .send_json(
            s.in_session(&sid),
            json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}),
        )
        .await;
    let mut sse = Sse::new(r);
    assert_eq!(sse.next().await.unwrap().data, "", "priming event first");
    let (_, v) = sse.next_json().await.unwrap();
    assert_eq!(v["id"], 4);
}

#[tokio::test]
async fn stateless_mode_needs_no_session() {
    let s = TestServer::start(|b| b.stateless(true)).await;
    let r = s.send_json(s.post(), initialize(1, LEGACY)).await;
    assert_eq!(r.status(), StatusCode::OK);
    assert!(!r.headers().contains_key("mcp-session-id"));
    let r = s
        .send_json(
            s.post().header("mcp-protocol-version", LEGACY),
            call(2, "echo", json!({"text": "hi"}), false),
        )
        .await;
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(body_json(r).await["result"]["content"][0]["text"], "hi");
    let r = s
        .send_json(
            s.post(),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        )
        .await;
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    let r = s.send(s.get(), "").await;
    assert_eq!(r.status(), StatusCode::METHOD_NOT_ALLOWED);
    let r = s
        .send(http::Request::delete("/mcp").header("host", s.host()), "")
        .await;
    assert_eq!(r.status(), StatusCode::METHOD_NOT_ALLOWED);
    // Progress still streams.
    let r = s
        .send_json(s.post(), call(3, "progress", json!({}), true))
        .await;
    let mut sse = Sse::new(r);
    let mut last = Value::Null;
    while let Some((_, v)) = sse.next_json().await {
        last = v;
    }
    assert_eq!(last["id"], 3);
}

#[tokio::test]
async fn batches_follow_the_negotiated_version() {
    let s = TestServer::start(|b| b).await;
    let sid = s.session("2025-03-26").await;
    let batch = json!([
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "b"}}}
    ]);
    let r = s
        .send_json(
            s.post()
                .header("mcp-session-id", &sid)
                .header("mcp-protocol-version", "2025-03-26"),
            batch.clone(),
        )
        .await;
    assert_eq!(r.status(), StatusCode::OK);
    let v = body_json(r).await;
    assert_eq!(v.as_array().map(Vec::len), Some(2));

    let sid = s.session(LEGACY).await;
    let r = s.send_json(s.in_session(&sid), batch).await;
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn graceful_shutdown_finishes_requests_then_closes_streams() {
    let mut s = TestServer::start(|b| b).await;
    let sid = s.session(LEGACY).await;
    let get = Sse::new(s.send(s.get().header("mcp-session-id", &sid), "").await);
    let slow = {
        let addr = s.addr;
        let req = s
            .in_session(&sid)
            .body(http_body_util::Full::new(bytes::Bytes::from(
                serde_json::to_vec(&call(8, "gate", json!({}), false)).unwrap(),
            )))
            .unwrap();
        tokio::spawn(async move { body_json(send(addr, req).await).await })
    };
    eventually(|| s.mcp.session_count() == 1).await;
    s.flags.at_gate.notified().await;
    let serve = s.begin_shutdown();
    eventually(|| s.mcp.is_shutting_down()).await;
    s.flags.gate.notify_one();
    let v = within(slow).await.unwrap();
    assert_eq!(v["result"]["content"][0]["text"], "gate opened");
    let mut get = get;
    let _ = get.rest().await; // the standalone stream ends
    within(serve).await.unwrap().unwrap();
}
