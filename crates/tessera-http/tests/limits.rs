//! Session caps (global and per client, with eviction of idle sessions), the
//! handshake deadline, idle expiry, batch and in-flight limits, stalled
//! bodies, principal binding and slow clients, driven through the tower
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

fn sid_of(r: &http::Response<McpBody>) -> String {
    r.headers()["mcp-session-id"].to_str().unwrap().to_owned()
}

/// Sends `notifications/initialized` (the handshake is complete).
async fn initialized(app: &McpHttp, sid: &str) {
    let init = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let r = app.clone().oneshot(post(Some(sid), init)).await.unwrap();
    assert_eq!(r.status(), StatusCode::ACCEPTED);
}

/// Opens the standalone GET stream of a session (the session is busy while
/// the returned response is alive).
async fn open_stream(app: &McpHttp, sid: &str) -> http::Response<McpBody> {
    let get = Request::get("/mcp")
        .header("host", "localhost")
        .header("accept", "text/event-stream")
        .header("mcp-session-id", sid)
        .body(Full::new(Bytes::new()))
        .unwrap();
    let r = app.clone().oneshot(get).await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    r
}

#[tokio::test(start_paused = true)]
async fn the_session_cap_answers_503_while_every_session_is_busy() {
    let app = app(|b| b.max_sessions(2));
    let a = open(&app).await;
    assert_eq!(a.status(), StatusCode::OK);
    let sa = sid_of(&a);
    let b = open(&app).await;
    let sb = sid_of(&b);
    initialized(&app, &sa).await;
    initialized(&app, &sb).await;
    let stream_a = open_stream(&app, &sa).await;
    let _stream_b = open_stream(&app, &sb).await;
    let full = open(&app).await;
    assert_eq!(full.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(
        full.headers()["retry-after"],
        "5",
        "a 503 says when to retry"
    );
    let body = full.into_body().collect().await.unwrap().to_bytes();
    assert!(String::from_utf8_lossy(&body).contains("--max-sessions"));
    // The refusal is counted under its limit; the two streams are open.
    let stats = app.stats();
    assert_eq!(stats.refused_by(tessera_http::limit::MAX_SESSIONS), 1);
    assert_eq!(stats.refused().map(|(_, n)| n).sum::<u64>(), 1);
    assert_eq!(stats.streams_open(), 2);
    // Session a's stream closes: it is idle, and evicted for the newcomer.
    drop(stream_a);
    let c = open(&app).await;
    assert_eq!(c.status(), StatusCode::OK);
    settle(|| app.session_count() == 2).await;
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let r = app
        .clone()
        .oneshot(post(Some(&sa), list.clone()))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::NOT_FOUND, "a was evicted");
    let r = app.clone().oneshot(post(Some(&sb), list)).await.unwrap();
    assert_eq!(r.status(), StatusCode::OK, "b (busy) was kept");
}

#[tokio::test(start_paused = true)]
async fn unused_sessions_never_lock_anyone_out() {
    // The attack: open sessions up to the cap and never use them.
    let app = app(|b| b.max_sessions(8));
    for _ in 0..8 {
        assert_eq!(open(&app).await.status(), StatusCode::OK);
    }
    // Someone else still gets in at once (the least recently used idle one goes).
    let r = open(&app).await;
    assert_eq!(r.status(), StatusCode::OK);
    initialized(&app, &sid_of(&r)).await;
    // And sessions that never completed the handshake end within 10 s.
    tokio::time::sleep(Duration::from_secs(11)).await;
    settle(|| app.session_count() == 1).await;
}

fn from_addr(mut r: Request<Full<Bytes>>, ip: &str) -> Request<Full<Bytes>> {
    let addr = format!("{ip}:40000").parse().unwrap();
    r.extensions_mut().insert(tessera_http::RemoteAddr(addr));
    r
}

#[tokio::test(start_paused = true)]
async fn the_per_client_cap_applies_before_the_global_one() {
    let app = app(|b| b.max_sessions(100).max_sessions_per_client(2));
    let open_from = |ip: &'static str| {
        let app = app.clone();
        async move {
            app.oneshot(from_addr(post(None, initialize(1, "2025-11-25")), ip))
                .await
                .unwrap()
        }
    };
    let a1 = open_from("10.0.0.1").await;
    let a2 = open_from("10.0.0.1").await;
    let (s1, s2) = (sid_of(&a1), sid_of(&a2));
    initialized(&app, &s1).await;
    initialized(&app, &s2).await;
    let _busy1 = open_stream(&app, &s1).await;
    let _busy2 = open_stream(&app, &s2).await;
    // 10.0.0.1 holds two busy sessions: its third is refused with 429...
    let r = open_from("10.0.0.1").await;
    assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(r.headers()["retry-after"], "5", "a 429 says when to retry");
    let body = r.into_body().collect().await.unwrap().to_bytes();
    assert!(String::from_utf8_lossy(&body).contains("--max-sessions-per-client"));
    let stats = app.stats();
    assert_eq!(
        stats.refused_by(tessera_http::limit::MAX_SESSIONS_PER_CLIENT),
        1
    );
    assert_eq!(stats.refused_by(tessera_http::limit::MAX_SESSIONS), 0);
    // ...while another address is not affected.
    assert_eq!(open_from("10.0.0.2").await.status(), StatusCode::OK);
    assert_eq!(open_from("10.0.0.2").await.status(), StatusCode::OK);
    // At its own cap with idle sessions, a client's oldest idle one makes room.
    assert_eq!(open_from("10.0.0.2").await.status(), StatusCode::OK);
    settle(|| app.session_count() == 4).await;
}

/// Issue 32 item 5: a few addresses holding every session with open GET
/// streams locked everyone out. Now a newcomer takes the least recently
/// used session of the client holding the most, busy or not, while that
/// client holds more than the newcomer would; equal shares are left alone
/// (`503` with `Retry-After`).
#[tokio::test(start_paused = true)]
async fn at_the_cap_a_newcomer_reclaims_from_the_heaviest_holder() {
    let app = app(|b| b.max_sessions(6));
    let open_from = |ip: &'static str| {
        let app = app.clone();
        async move {
            app.oneshot(from_addr(post(None, initialize(1, "2025-11-25")), ip))
                .await
                .unwrap()
        }
    };
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let status = |sid: String| {
        let app = app.clone();
        let list = list.clone();
        async move { app.oneshot(post(Some(&sid), list)).await.unwrap().status() }
    };
    // 10.0.0.1 holds four busy sessions, 10.0.0.2 two: the table is full,
    // nothing is idle. Each is opened a second after the last (paused
    // clock), so "least recently used" is their order.
    let mut held = Vec::new();
    for ip in [
        "10.0.0.1", "10.0.0.1", "10.0.0.1", "10.0.0.1", "10.0.0.2", "10.0.0.2",
    ] {
        let r = open_from(ip).await;
        assert_eq!(r.status(), StatusCode::OK);
        let sid = sid_of(&r);
        initialized(&app, &sid).await;
        let stream = open_stream(&app, &sid).await;
        held.push((ip, sid, stream));
        tokio::time::advance(Duration::from_secs(1)).await;
    }
    // A newcomer gets in: 10.0.0.1's oldest session is ended for it.
    let r = open_from("10.0.0.9").await;
    assert_eq!(r.status(), StatusCode::OK, "the newcomer is not locked out");
    let n1 = sid_of(&r);
    initialized(&app, &n1).await;
    let _n1_stream = open_stream(&app, &n1).await;
    assert_eq!(status(held[0].1.clone()).await, StatusCode::NOT_FOUND);
    for (_, sid, _) in &held[1..] {
        // A request uses the session: a second apart keeps their order.
        assert_eq!(status(sid.clone()).await, StatusCode::OK, "kept");
        tokio::time::advance(Duration::from_secs(1)).await;
    }
    // Its second: 10.0.0.1 still holds three, more than the newcomer's two.
    let r = open_from("10.0.0.9").await;
    assert_eq!(r.status(), StatusCode::OK);
    let n2 = sid_of(&r);
    initialized(&app, &n2).await;
    let _n2_stream = open_stream(&app, &n2).await;
    assert_eq!(status(held[1].1.clone()).await, StatusCode::NOT_FOUND);
    // Now 10.0.0.1 and 10.0.0.2 hold two each, as the newcomer: a third
    // would leave it with more than any other, so it waits.
    let r = open_from("10.0.0.9").await;
    assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(r.headers()["retry-after"], "5");
    // The first newcomer's sessions are used (so 10.0.0.1's are now the
    // least recently used); another newcomer with none yet takes from a
    // holder of two.
    for sid in [&n1, &n2] {
        assert_eq!(status(sid.clone()).await, StatusCode::OK);
        tokio::time::advance(Duration::from_secs(1)).await;
    }
    let r = open_from("10.0.0.8").await;
    assert_eq!(r.status(), StatusCode::OK);
    settle(|| app.session_count() == 6).await;
    // Three clients hold two each: the least recently used session among
    // them (10.0.0.1's) went.
    assert_eq!(status(held[2].1.clone()).await, StatusCode::NOT_FOUND);
    for (_, sid, _) in &held[3..] {
        assert_eq!(status(sid.clone()).await, StatusCode::OK, "kept");
    }
    assert_eq!(status(n1).await, StatusCode::OK);
    assert_eq!(status(n2).await, StatusCode::OK);
}

#[tokio::test(start_paused = true)]
async fn sessions_that_never_finish_the_handshake_expire_in_10_s() {
    let app = app(|b| b);
    let unused = open(&app).await;
    let used = open(&app).await;
    initialized(&app, &sid_of(&used)).await;
    tokio::time::sleep(Duration::from_secs(9)).await;
    assert_eq!(app.session_count(), 2);
    tokio::time::sleep(Duration::from_secs(2)).await;
    settle(|| app.session_count() == 1).await;
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let r = app
        .clone()
        .oneshot(post(Some(&sid_of(&unused)), list.clone()))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    let r = app
        .clone()
        .oneshot(post(Some(&sid_of(&used)), list))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
}

#[tokio::test(start_paused = true)]
async fn a_batch_over_the_limit_is_refused_whole() {
    let app = app(|b| b.max_batch(3));
    let r = app
        .clone()
        .oneshot(post(None, initialize(1, "2025-03-26")))
        .await
        .unwrap();
    let sid = sid_of(&r);
    initialized(&app, &sid).await;
    let batch = |n: i64| {
        Value::Array(
            (0..n)
                .map(|i| json!({"jsonrpc": "2.0", "id": 100 + i, "method": "tools/list"}))
                .collect(),
        )
    };
    let r = app
        .clone()
        .oneshot(post(Some(&sid), batch(4)))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    let body: Value =
        serde_json::from_slice(&r.into_body().collect().await.unwrap().to_bytes()).unwrap();
    assert_eq!(body["error"]["code"], -32600);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("--max-batch")
    );
    assert_eq!(app.stats().refused_by(tessera_http::limit::MAX_BATCH), 1);
    let r = app
        .clone()
        .oneshot(post(Some(&sid), batch(3)))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let body: Value =
        serde_json::from_slice(&r.into_body().collect().await.unwrap().to_bytes()).unwrap();
    assert_eq!(body.as_array().map(Vec::len), Some(3));
}

/// A batch is counted before any element is read: one over the limit is
/// refused as such even when its elements could not be built at all (params
/// nested past the parser's depth limit), and before a session is looked up.
#[tokio::test(start_paused = true)]
async fn a_batch_is_counted_before_its_elements_are_read() {
    let app = app(|b| b.max_batch(3));
    let deep = format!("{}{}", "[".repeat(1_000), "]".repeat(1_000));
    let element =
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{"a":{deep}}}}}"#);
    let body = format!("[{}]", [element.as_str(); 4].join(","));
    let request = Request::post("/mcp")
        .header("host", "localhost")
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-session-id", "no-such-session")
        .body(Full::new(Bytes::from(body)))
        .unwrap();
    let r = app.clone().oneshot(request).await.unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    let body: Value =
        serde_json::from_slice(&r.into_body().collect().await.unwrap().to_bytes()).unwrap();
    assert_eq!(body["error"]["code"], -32600);
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("batch of 4") && message.contains("--max-batch"),
        "{message}"
    );
}

#[tokio::test(start_paused = true)]
async fn requests_beyond_the_session_limit_wait_then_get_429() {
    let flags = Arc::new(Flags::default());
    let app = McpHttp::builder(fixture(flags.clone()))
        .max_requests_per_session(2)
        .session_queue_timeout(Duration::from_secs(5))
        .response_mode(tessera_http::ResponseMode::Json)
        .build();
    let r = open(&app).await;
    let sid = sid_of(&r);
    initialized(&app, &sid).await;
    let gated = |id: i64| {
        let app = app.clone();
        let sid = sid.clone();
        tokio::spawn(async move {
            app.oneshot(post(Some(&sid), call(id, "gate", json!({}), false)))
                .await
                .unwrap()
                .status()
        })
    };
    let g1 = gated(10);
    let g2 = gated(11);
    for _ in 0..50 {
        tokio::task::yield_now().await;
    }
    // Two in progress: a third waits for room, then gives up with 429.
    let third = app.clone().oneshot(post(
        Some(&sid),
        call(12, "echo", json!({"text": "x"}), false),
    ));
    let third = tokio::spawn(third);
    tokio::time::sleep(Duration::from_secs(6)).await;
    let r = third.await.unwrap().unwrap();
    assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(r.headers().contains_key("retry-after"));
    assert_eq!(
        app.stats()
            .refused_by(tessera_http::limit::MAX_REQUESTS_PER_SESSION),
        1
    );
    // A waiting request gets in as soon as one finishes.
    let fourth = tokio::spawn(app.clone().oneshot(post(
        Some(&sid),
        call(13, "echo", json!({"text": "y"}), false),
    )));
    tokio::time::sleep(Duration::from_secs(1)).await;
    flags.gate.notify_one();
    assert_eq!(g1.await.unwrap(), StatusCode::OK);
    let r = fourth.await.unwrap().unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    flags.gate.notify_one();
    assert_eq!(g2.await.unwrap(), StatusCode::OK);
}

#[tokio::test(start_paused = true)]
async fn a_body_that_stops_arriving_gets_408() {
    use futures::StreamExt;
    // Only the gap between two reads (the rate and total bounds are below).
    let app = app(|b| {
        b.body_read_timeout(Some(Duration::from_secs(30)))
            .body_min_rate(None)
            .body_total_timeout(None)
    });
    let frames = futures::stream::iter([Ok::<_, std::io::Error>(http_body::Frame::data(
        Bytes::from_static(b"{\"jsonrpc\""),
    ))])
    .chain(futures::stream::pending());
    let req = Request::post("/mcp")
        .header("host", "localhost")
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(http_body_util::StreamBody::new(frames))
        .unwrap();
    let started = tokio::time::Instant::now();
    let r = app.clone().oneshot(req).await.unwrap();
    assert_eq!(r.status(), StatusCode::REQUEST_TIMEOUT);
    assert_eq!(r.headers()["connection"], "close");
    assert_eq!(started.elapsed(), Duration::from_secs(30));
    assert_eq!(
        app.stats()
            .refused_by(tessera_http::limit::BODY_READ_TIMEOUT),
        1
    );
}

#[tokio::test(start_paused = true)]
async fn a_trickling_body_gets_408_by_its_rate_and_its_total_time() {
    use futures::StreamExt;
    // One byte every `every`, for ever: never a 30 s gap.
    fn trickle(
        every: Duration,
    ) -> http_body_util::StreamBody<
        futures::stream::BoxStream<'static, Result<http_body::Frame<Bytes>, std::io::Error>>,
    > {
        let frames = futures::stream::unfold((), move |()| async move {
            tokio::time::sleep(every).await;
            Some((Ok(http_body::Frame::data(Bytes::from_static(b" "))), ()))
        });
        http_body_util::StreamBody::new(frames.boxed())
    }
    let post = |body| {
        Request::post("/mcp")
            .header("host", "localhost")
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(body)
            .unwrap()
    };
    // The defaults: a byte every 10 s is cut by the rate at 10 s (before:
    // held for ever).
    let app_defaults = app(|b| b);
    let started = tokio::time::Instant::now();
    let r = app_defaults
        .clone()
        .oneshot(post(trickle(Duration::from_secs(10))))
        .await
        .unwrap();
    let took = started.elapsed();
    assert_eq!(r.status(), StatusCode::REQUEST_TIMEOUT);
    assert_eq!(r.headers()["connection"], "close");
    assert!(
        took >= Duration::from_secs(10) && took < Duration::from_secs(11),
        "{took:?}"
    );
    let body = r.into_body().collect().await.unwrap().to_bytes();
    let text = String::from_utf8_lossy(&body);
    assert!(text.contains("--body-min-rate"), "{text}");
    let stats = app_defaults.stats();
    assert_eq!(stats.refused_by(tessera_http::limit::BODY_MIN_RATE), 1);
    assert_eq!(stats.refused_by(tessera_http::limit::BODY_TOTAL_TIMEOUT), 0);

    // Fast enough for the rate but never ending: cut at the total time.
    let app_short = app(|b| b.body_total_timeout(Some(Duration::from_secs(20))));
    let started = tokio::time::Instant::now();
    let r = app_short
        .clone()
        .oneshot(post(trickle(Duration::from_millis(1))))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::REQUEST_TIMEOUT);
    let took = started.elapsed();
    assert!(
        took >= Duration::from_secs(20) && took < Duration::from_secs(21),
        "{took:?}"
    );
    let body = r.into_body().collect().await.unwrap().to_bytes();
    let text = String::from_utf8_lossy(&body);
    assert!(text.contains("--body-total-timeout"), "{text}");
    assert_eq!(
        app_short
            .stats()
            .refused_by(tessera_http::limit::BODY_TOTAL_TIMEOUT),
        1
    );
}

/// A request made by `who` (as an authentication layer would mark it).
fn by(mut r: Request<Full<Bytes>>, who: &str) -> Request<Full<Bytes>> {
    let mut e = tessera_runtime::Extensions::new();
    e.insert(tessera_runtime::Principal(who.to_owned()));
    r.extensions_mut().insert(e);
    r
}

#[tokio::test(start_paused = true)]
async fn a_session_answers_only_the_principal_that_opened_it() {
    let flags = Arc::new(Flags::default());
    let app = McpHttp::builder(fixture(flags.clone()))
        .response_mode(tessera_http::ResponseMode::Json)
        .build();
    let r = app
        .clone()
        .oneshot(by(post(None, initialize(1, "2025-11-25")), "alice"))
        .await
        .unwrap();
    let sid = sid_of(&r);
    let init = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let r = app
        .clone()
        .oneshot(by(post(Some(&sid), init), "alice"))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    // Mallory presents alice's session id: 404, and the handler never runs.
    let cancel_probe = call(5, "wait_cancel", json!({}), false);
    for (req, what) in [
        (
            by(post(Some(&sid), cancel_probe.clone()), "mallory"),
            "mallory's token",
        ),
        (post(Some(&sid), cancel_probe.clone()), "no token"),
    ] {
        let r = app.clone().oneshot(req).await.unwrap();
        assert_eq!(r.status(), StatusCode::NOT_FOUND, "{what}");
    }
    let get = Request::get("/mcp")
        .header("host", "localhost")
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &sid)
        .body(Full::new(Bytes::new()))
        .unwrap();
    assert_eq!(
        app.clone()
            .oneshot(by(get, "mallory"))
            .await
            .unwrap()
            .status(),
        StatusCode::NOT_FOUND
    );
    let del = Request::delete("/mcp")
        .header("host", "localhost")
        .header("mcp-session-id", &sid)
        .body(Full::new(Bytes::new()))
        .unwrap();
    assert_eq!(
        app.clone()
            .oneshot(by(del, "mallory"))
            .await
            .unwrap()
            .status(),
        StatusCode::NOT_FOUND
    );
    // Alice's session is untouched and still hers.
    let echo = call(6, "echo", json!({"text": "hi"}), false);
    let r = app
        .clone()
        .oneshot(by(post(Some(&sid), echo), "alice"))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let body = r.into_body().collect().await.unwrap().to_bytes();
    assert!(String::from_utf8_lossy(&body).contains("hi"));
    assert!(!flags.cancelled.load(std::sync::atomic::Ordering::SeqCst));
}

#[tokio::test(start_paused = true)]
async fn an_http_sse_session_answers_only_the_principal_that_opened_it() {
    let app = app(|b| b);
    let get = Request::get("/sse")
        .header("host", "localhost")
        .header("accept", "text/event-stream")
        .body(Full::new(Bytes::new()))
        .unwrap();
    let r = app.clone().oneshot(by(get, "alice")).await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let mut body = r.into_body();
    let first = body.frame().await.unwrap().unwrap().into_data().unwrap();
    let text = String::from_utf8_lossy(&first).into_owned();
    let path = text
        .lines()
        .find_map(|l| l.strip_prefix("data: "))
        .unwrap()
        .to_owned();
    let msg = |who: &str| {
        by(
            Request::post(path.as_str())
                .header("host", "localhost")
                .header("content-type", "application/json")
                .body(Full::new(Bytes::from(
                    serde_json::to_vec(&initialize(1, "2024-11-05")).unwrap(),
                )))
                .unwrap(),
            who,
        )
    };
    assert_eq!(
        app.clone().oneshot(msg("mallory")).await.unwrap().status(),
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        app.clone().oneshot(msg("alice")).await.unwrap().status(),
        StatusCode::ACCEPTED
    );
    // Alice's answer arrives on her stream; nothing of mallory's did.
    let next = body.frame().await.unwrap().unwrap().into_data().unwrap();
    let text = String::from_utf8_lossy(&next);
    assert!(
        text.contains("\"id\":1") && text.contains("serverInfo"),
        "{text}"
    );
}

#[tokio::test(start_paused = true)]
async fn idle_sessions_expire() {
    let app = app(|b| b.session_idle_timeout(Some(Duration::from_secs(60))));
    let r = open(&app).await;
    let sid = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    initialized(&app, &sid).await;
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

#[tokio::test(start_paused = true)]
async fn towers_load_shed_answers_429_with_retry_after() {
    use tessera_server::{Server, tool};
    use tokio::sync::Notify;
    let (gate, at_gate) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let (g, a) = (gate.clone(), at_gate.clone());
    let server = Server::builder()
        .name_version("limits", "1.0.0")
        .layer(tower::load_shed::LoadShedLayer::new())
        .layer(tower::limit::ConcurrencyLimitLayer::new(1))
        .tool(tool("gate").handler(move || {
            let (g, a) = (g.clone(), a.clone());
            async move {
                let opened = g.notified();
                a.notify_one();
                opened.await;
                "gate opened".to_owned()
            }
        }))
        .build()
        .unwrap();
    let app = McpHttp::builder(server).build();
    let r = open(&app).await;
    let sid = sid_of(&r);
    initialized(&app, &sid).await;
    let first = tokio::spawn(
        app.clone()
            .oneshot(post(Some(&sid), call(2, "gate", json!({}), false))),
    );
    at_gate.notified().await;
    // The server's one slot is taken: refused at once, 429 and Retry-After.
    let r = app
        .clone()
        .oneshot(post(Some(&sid), call(3, "gate", json!({}), false)))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(r.headers()["retry-after"], "1");
    assert!(r.headers().get("mcp-session-id").is_none());
    let body: Value =
        serde_json::from_slice(&r.into_body().collect().await.unwrap().to_bytes()).unwrap();
    assert_eq!(body["id"], 3);
    assert_eq!(body["error"]["code"], -32603);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Server busy"),
        "{body}"
    );
    gate.notify_one();
    let r = first.await.unwrap().unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let body = r.into_body().collect().await.unwrap().to_bytes();
    assert!(String::from_utf8_lossy(&body).contains("gate opened"));
    // The slot is free again.
    let again = tokio::spawn(
        app.clone()
            .oneshot(post(Some(&sid), call(4, "gate", json!({}), false))),
    );
    at_gate.notified().await;
    gate.notify_one();
    assert_eq!(again.await.unwrap().unwrap().status(), StatusCode::OK);
}
