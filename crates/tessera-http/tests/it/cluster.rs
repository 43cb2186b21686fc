//! Three `McpHttp` instances in one process, on loopback, sharing one
//! session store, one bus and one event store: a client whose requests go to
//! different instances notices nothing. Waits are on the streams themselves
//! (or on the other instances' state, yielding to them), never on a clock.

use crate::common;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::{BodyExt, Full};
use serde_json::{Value, json};
use tessera_http::{InMemoryEventStore, McpBody, McpHttp};
use tessera_runtime::{LocalBus, MemorySessionStore, SessionState, SessionStore, StoreError};
use tessera_server::{RequestContext, Server, resource, tool};
use tower::ServiceExt;

use common::{ACCEPT_BOTH, LEGACY, MODERN, Sse, TestServer, body_json, modern_meta, obj};

/// A session store that can be taken down.
#[derive(Default)]
struct Flaky {
    inner: MemorySessionStore,
    down: AtomicBool,
    loads: AtomicUsize,
}

impl Flaky {
    fn check(&self) -> Result<(), StoreError> {
        if self.down.load(Ordering::SeqCst) {
            Err(StoreError::Unavailable("connection refused".into()))
        } else {
            Ok(())
        }
    }
}

impl SessionStore for Flaky {
    async fn load(&self, id: &str) -> Result<Option<SessionState>, StoreError> {
        self.loads.fetch_add(1, Ordering::SeqCst);
        self.check()?;
        self.inner.load(id).await
    }
    async fn save(&self, state: &SessionState, ttl: std::time::Duration) -> Result<(), StoreError> {
        self.check()?;
        self.inner.save(state, ttl).await
    }
    async fn touch(&self, id: &str, ttl: std::time::Duration) -> Result<bool, StoreError> {
        self.check()?;
        self.inner.touch(id, ttl).await
    }
    async fn remove(&self, id: &str) -> Result<(), StoreError> {
        self.check()?;
        self.inner.remove(id).await
    }
}

/// What one instance's tools record.
#[derive(Default)]
struct Marks {
    calls: AtomicUsize,
    cancelled: AtomicBool,
    gate: tokio::sync::Notify,
}

/// Records a cancellation when dropped after the token fired.
struct Cancelled(Arc<Marks>, tokio_util::sync::CancellationToken);

impl Drop for Cancelled {
    fn drop(&mut self) {
        if self.1.is_cancelled() {
            self.0.cancelled.store(true, Ordering::SeqCst);
        }
    }
}

/// The server of one instance: tools that ask the client, wait to be
/// cancelled, report progress, and announce a resource update.
fn server(marks: Arc<Marks>) -> Server {
    let me: Arc<OnceLock<Server>> = Arc::default();
    let slot = me.clone();
    let m1 = marks.clone();
    let m2 = marks.clone();
    let m3 = marks.clone();
    let server = Server::builder()
        .name_version("cluster-fixture", "1.0.0")
        .tool(tool("echo").handler(move |ctx: RequestContext| {
            m1.calls.fetch_add(1, Ordering::SeqCst);
            async move { format!("echo from {}", ctx.protocol_version()) }
        }))
        .tool(tool("ask").handler(|ctx: RequestContext| async move {
            let params = obj(json!({
                "message": "Your name?",
                "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}
            }));
            let options = tessera_proto::RequestOptions {
                related: Some(ctx.request_id().clone()),
                ..Default::default()
            };
            match ctx
                .peer()
                .request("elicitation/create", Some(params), options)
                .await
            {
                Ok(r) => format!("hello {}", r["content"]["name"].as_str().unwrap_or("?")),
                Err(e) => format!("elicitation failed: {e}"),
            }
        }))
        .tool(tool("wait_cancel").handler(move |ctx: RequestContext| {
            let m = m2.clone();
            async move {
                ctx.progress(1.0, None, Some("waiting"));
                // The handler is dropped as soon as it is cancelled.
                let _seen = Cancelled(m, ctx.cancellation().clone());
                ctx.cancelled().await;
                "cancelled".to_owned()
            }
        }))
        .tool(tool("gated").handler(move |ctx: RequestContext| {
            let m = m3.clone();
            async move {
                ctx.progress(1.0, Some(2.0), Some("before the gate"));
                m.gate.notified().await;
                ctx.progress(2.0, Some(2.0), Some("after the gate"));
                "through".to_owned()
            }
        }))
        .tool(tool("steps").handler(|ctx: RequestContext| async move {
            for i in 1..=3 {
                ctx.progress(f64::from(i), Some(3.0), Some("step"));
            }
            "stepped".to_owned()
        }))
        .tool(tool("touch").handler(move |ctx: RequestContext| {
            let server = slot.get().cloned();
            async move {
                if let Some(s) = server {
                    s.notify_resource_updated("mem://doc");
                }
                // Then a message for the session's standalone stream.
                let mut p = serde_json::Map::new();
                p.insert("level".into(), json!("notice"));
                p.insert("data".into(), json!("touched"));
                let _ = ctx.peer().notify("notifications/message", Some(p), None);
                "touched".to_owned()
            }
        }))
        .resource(resource("mem://doc", "doc").handler(|| async { "the doc".to_owned() }))
        .build()
        .expect("builds");
    let _ = me.set(server.clone());
    server
}

struct Trio {
    nodes: Vec<TestServer>,
    marks: Vec<Arc<Marks>>,
    store: Arc<Flaky>,
    events: Arc<InMemoryEventStore>,
}

impl Trio {
    async fn start() -> Trio {
        let store = Arc::new(Flaky::default());
        let bus = LocalBus::new();
        let events = Arc::new(InMemoryEventStore::default());
        let mut nodes = Vec::new();
        let mut marks = Vec::new();
        for _ in 0..3 {
            let m = Arc::new(Marks::default());
            let (store, bus, events) = (store.clone(), bus.clone(), events.clone());
            let node = TestServer::start_with(server(m.clone()), move |b| {
                b.session_store(store).bus(bus).event_store(events)
            })
            .await;
            node.mcp.ready().await;
            nodes.push(node);
            marks.push(m);
        }
        assert_eq!(bus.subscribers("tessera/events"), 3);
        Trio {
            nodes,
            marks,
            store,
            events,
        }
    }

    /// Initializes a session on node `n` (and sends `notifications/initialized` there).
    async fn session(&self, n: usize) -> String {
        let node = &self.nodes[n];
        let r = node
            .send_json(
                node.post(),
                json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                    "protocolVersion": LEGACY,
                    "capabilities": {"elicitation": {}, "sampling": {}},
                    "clientInfo": {"name": "roaming", "version": "1"}
                }}),
            )
            .await;
        assert_eq!(r.status(), StatusCode::OK);
        let sid = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
        body_json(r).await;
        let r = node
            .send_json(
                node.in_session(&sid),
                json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            )
            .await;
        assert_eq!(r.status(), StatusCode::ACCEPTED);
        sid
    }

    async fn call(
        &self,
        n: usize,
        sid: &str,
        id: i64,
        tool: &str,
    ) -> http::Response<hyper::body::Incoming> {
        self.nodes[n]
            .send_json(
                self.nodes[n].in_session(sid),
                json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                       "params": {"name": tool, "arguments": {},
                                  "_meta": {"progressToken": format!("p{id}")}}}),
            )
            .await
    }

    async fn post(&self, n: usize, sid: &str, v: Value) -> http::Response<hyper::body::Incoming> {
        self.nodes[n]
            .send_json(self.nodes[n].in_session(sid), v)
            .await
    }

    async fn get(&self, n: usize, sid: &str, last: Option<&str>) -> Sse {
        let mut b = self.nodes[n].get().header("mcp-session-id", sid);
        if let Some(l) = last {
            b = b.header("last-event-id", l);
        }
        let r = self.nodes[n].send(b, Bytes::new()).await;
        assert_eq!(r.status(), StatusCode::OK);
        Sse::new(r)
    }

    fn sessions(&self) -> Vec<usize> {
        self.nodes.iter().map(|n| n.mcp.session_count()).collect()
    }
}

/// Lets the other instances' tasks run until `cond` holds (no clock: the
/// runtime is single-threaded and every step is already queued).
async fn settle(mut cond: impl FnMut() -> bool) {
    for _ in 0..10_000 {
        if cond() {
            return;
        }
        tokio::task::yield_now().await;
    }
    panic!("condition not reached");
}

fn text_of(result: &Value) -> &str {
    result["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or("")
}

/// The JSON-RPC messages of a response (a JSON body or an SSE stream, to its end).
async fn messages(r: http::Response<hyper::body::Incoming>) -> Vec<(Option<String>, Value)> {
    assert_eq!(r.status(), StatusCode::OK);
    if common::content_type(&r).starts_with("application/json") {
        return vec![(None, body_json(r).await)];
    }
    let mut sse = Sse::new(r);
    let mut out = Vec::new();
    while let Some(m) = sse.next_json().await {
        out.push(m);
    }
    out
}

#[tokio::test]
async fn a_session_roams_across_instances() {
    let t = Trio::start().await;
    // Initialize on A; tools/call on B.
    let sid = t.session(0).await;
    let r = t.call(1, &sid, 2, "echo").await;
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(r.headers()["mcp-session-id"], sid.as_str());
    let msgs = messages(r).await;
    let last = &msgs.last().unwrap().1;
    assert_eq!(text_of(last), "echo from 2025-11-25", "{msgs:?}");
    assert_eq!(t.marks[1].calls.load(Ordering::SeqCst), 1, "served by B");
    // Loaded once on B; later requests there need no store read.
    let loads = t.store.loads.load(Ordering::SeqCst);
    let r = t.call(1, &sid, 3, "echo").await;
    messages(r).await;
    assert_eq!(
        t.store.loads.load(Ordering::SeqCst),
        loads,
        "B's copy is cached"
    );
    assert_eq!(t.sessions(), vec![1, 1, 0]);

    // An elicitation raised by a tool on B, answered by a POST to C.
    let r = t.call(1, &sid, 4, "ask").await;
    if common::content_type(&r).starts_with("application/json") {
        panic!("{}", body_json(r).await);
    }
    let mut stream = Sse::new(r);
    let (_, ask) = stream.next_json().await.expect("the elicitation");
    assert_eq!(ask["method"], "elicitation/create");
    let answer = json!({"jsonrpc": "2.0", "id": ask["id"],
                        "result": {"action": "accept", "content": {"name": "Ada"}}});
    assert_eq!(t.post(2, &sid, answer).await.status(), StatusCode::ACCEPTED);
    let (_, done) = stream.next_json().await.expect("the result");
    assert_eq!(done["id"], 4);
    assert_eq!(text_of(&done), "hello Ada");

    // notifications/cancelled POSTed to A stops the request running on B.
    let r = t.call(1, &sid, 5, "wait_cancel").await;
    let mut waiting = Sse::new(r);
    let (_, progress) = waiting.next_json().await.expect("progress: it runs");
    assert_eq!(progress["method"], "notifications/progress");
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": 5, "reason": "changed my mind"}});
    assert_eq!(t.post(0, &sid, cancel).await.status(), StatusCode::ACCEPTED);
    assert!(
        waiting.next_json().await.is_none(),
        "no response for a cancelled request"
    );
    let marks = t.marks[1].clone();
    settle(|| marks.cancelled.load(Ordering::SeqCst)).await;

    // DELETE on C ends the session everywhere.
    let r = t.nodes[2]
        .send(
            Request::delete("/mcp")
                .header("host", t.nodes[2].host())
                .header("mcp-session-id", &sid),
            Bytes::new(),
        )
        .await;
    assert_eq!(r.status(), StatusCode::OK);
    settle(|| t.sessions() == vec![0, 0, 0]).await;
    for n in 0..3 {
        let r = t.call(n, &sid, 9, "echo").await;
        assert_eq!(r.status(), StatusCode::NOT_FOUND, "node {n}");
    }
    assert!(t.store.inner.load(&sid).await.unwrap().is_none());
}

#[tokio::test]
async fn a_get_stream_hears_what_happens_on_other_instances_exactly_once() {
    let t = Trio::start().await;
    let sid = t.session(0).await;
    // Subscribed through C; the standalone stream is held by A.
    let sub = json!({"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe",
                     "params": {"uri": "mem://doc"}});
    assert_eq!(
        body_json(t.post(2, &sid, sub).await).await["result"],
        json!({})
    );
    // B has a copy too (it will run the tool).
    messages(t.call(1, &sid, 3, "echo").await).await;
    let mut get = t.get(0, &sid, None).await;
    for round in 0..2 {
        // A tool call on B updates the resource and sends a message for the stream.
        let r = t.call(1, &sid, 10 + round, "touch").await;
        assert_eq!(text_of(&messages(r).await.last().unwrap().1), "touched");
        let (mut updated, mut touched) = (0, 0);
        while touched == 0 || updated == 0 {
            let (_, m) = get.next_json().await.expect("an event");
            match m["method"].as_str() {
                Some("notifications/resources/updated") => {
                    assert_eq!(m["params"]["uri"], "mem://doc");
                    updated += 1;
                }
                Some("notifications/message") => touched += 1,
                other => panic!("unexpected {other:?}: {m}"),
            }
        }
        assert_eq!(
            (updated, touched),
            (1, 1),
            "round {round}: each exactly once"
        );
    }

    // A 2026-07-28 client listening on C hears an update caused on A.
    let listen = json!({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": {
        "notifications": {"resourceSubscriptions": ["mem://doc"]}, "_meta": modern_meta()}});
    let r = t.nodes[2]
        .send_json(t.nodes[2].modern("subscriptions/listen", None), listen)
        .await;
    assert_eq!(r.status(), StatusCode::OK);
    let mut listening = Sse::new(r);
    let (_, ack) = listening.next_json().await.expect("acknowledged");
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    messages(t.call(0, &sid, 20, "touch").await).await;
    let (_, m) = listening.next_json().await.expect("the update");
    assert_eq!(m["method"], "notifications/resources/updated");
    assert_eq!(m["params"]["uri"], "mem://doc");
    // And the legacy GET stream on A heard it once as well.
    let mut seen = Vec::new();
    while seen.len() < 2 {
        seen.push(get.next_json().await.expect("an event").1["method"].clone());
    }
    seen.sort_by_key(|m| m.to_string());
    assert_eq!(
        seen,
        vec![
            json!("notifications/message"),
            json!("notifications/resources/updated")
        ]
    );
}

#[tokio::test]
async fn event_ids_are_unique_and_replay_anywhere() {
    let t = Trio::start().await;
    let sid = t.session(0).await;
    // A POST stream on A; the client reads its first event and goes away.
    let r = t.call(0, &sid, 2, "steps").await;
    let events = messages(r).await;
    assert_eq!(
        events.len(),
        4,
        "three progress notifications and the result"
    );
    let first = events[0].0.clone().expect("event ids");
    // The same tool on B: its stream's ids differ from A's.
    let on_b = messages(t.call(1, &sid, 3, "steps").await).await;
    for (a, b) in events.iter().zip(&on_b) {
        assert_ne!(a.0, b.0, "ids are unique across instances");
    }
    // Resumed on B after the first event: the rest of A's stream, replayed.
    let mut resumed = t.get(1, &sid, Some(&first)).await;
    let mut rest = Vec::new();
    while let Some((id, m)) = resumed.next_json().await {
        rest.push((id, m));
    }
    assert_eq!(rest, events[1..].to_vec());

    // The standalone stream: opened on A, resumed on C.
    let mut get = t.get(0, &sid, None).await;
    messages(t.call(1, &sid, 4, "touch").await).await;
    let (id1, m1) = get.next_json().await.expect("an event on A");
    assert_eq!(m1["method"], "notifications/message");
    drop(get);
    let stored = t.events.len();
    messages(t.call(1, &sid, 5, "touch").await).await;
    // A stores the message B sent it for the stream (nobody reads it now).
    let events = t.events.clone();
    settle(|| events.len() > stored).await;
    let mut resumed = t.get(2, &sid, id1.as_deref()).await;
    let (id2, m2) = resumed
        .next_json()
        .await
        .expect("the missed event, replayed on C");
    assert_eq!(m2["method"], "notifications/message");
    assert_ne!(id1, id2);
    // C holds the stream now: what B produces next arrives there.
    messages(t.call(1, &sid, 6, "touch").await).await;
    let (id3, m3) = resumed.next_json().await.expect("a new event on C");
    assert_eq!(m3["method"], "notifications/message");
    assert!(![&id1, &id2].contains(&&id3));
}

#[tokio::test]
async fn a_post_stream_resumed_on_another_instance_goes_on_there() {
    let t = Trio::start().await;
    let sid = t.session(0).await;
    // A call on A streams its first progress; the client's connection drops.
    let r = t.call(0, &sid, 2, "gated").await;
    let mut first = Sse::new(r);
    let (id, m) = first.next_json().await.expect("progress 1");
    assert_eq!(m["params"]["progress"], 1.0);
    drop(first);
    // It resumes on B while the request still runs on A.
    let mut resumed = t.get(1, &sid, id.as_deref()).await;
    t.marks[0].gate.notify_one();
    let (id2, m2) = resumed.next_json().await.expect("progress 2, relayed");
    assert_eq!(m2["params"]["progress"], 2.0);
    let (id3, done) = resumed.next_json().await.expect("the result, relayed");
    assert_eq!(done["id"], 2);
    assert_eq!(text_of(&done), "through");
    assert!(
        resumed.next_json().await.is_none(),
        "the stream ends with its response"
    );
    // The ids are A's, in order.
    let seq = |id: &Option<String>| -> (String, u64) {
        let (s, n) = id.as_deref().unwrap().split_once('-').unwrap();
        (s.to_owned(), n.parse().unwrap())
    };
    let (s1, n1) = seq(&id);
    let (s2, n2) = seq(&id2);
    let (s3, n3) = seq(&id3);
    assert!(s1 == s2 && s2 == s3, "one stream");
    assert!(n1 < n2 && n2 < n3, "in order");
}

/// A request with `principal` carried in, as an authentication layer does.
fn as_user(host: &str, user: &str, v: Value, sid: Option<&str>) -> Request<Full<Bytes>> {
    let mut b = Request::post("/mcp")
        .header("host", host)
        .header("accept", ACCEPT_BOTH)
        .header("content-type", "application/json")
        .header("mcp-protocol-version", LEGACY);
    if let Some(s) = sid {
        b = b.header("mcp-session-id", s);
    }
    let mut r = b
        .body(Full::new(Bytes::from(serde_json::to_vec(&v).unwrap())))
        .unwrap();
    let mut carried = tessera_runtime::Extensions::new();
    carried.insert(tessera_runtime::Principal(user.into()));
    r.extensions_mut().insert(carried);
    r
}

async fn status_and_body(
    mcp: &McpHttp,
    r: Request<Full<Bytes>>,
) -> (StatusCode, String, Option<String>) {
    let resp: http::Response<McpBody> = mcp.clone().oneshot(r).await.unwrap();
    let sid = resp
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_owned());
    let status = resp.status();
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8_lossy(&body).into_owned(), sid)
}

#[tokio::test]
async fn a_restored_session_stays_bound_to_its_principal() {
    let t = Trio::start().await;
    let (a, b) = (&t.nodes[0].mcp, &t.nodes[1].mcp);
    let (ha, hb) = (t.nodes[0].host(), t.nodes[1].host());
    let init = common::initialize(1, LEGACY);
    let (status, _, sid) = status_and_body(a, as_user(&ha, "alice", init, None)).await;
    assert_eq!(status, StatusCode::OK);
    let sid = sid.unwrap();
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                      "params": {"name": "echo", "arguments": {}}});
    let (status, _, _) =
        status_and_body(b, as_user(&hb, "mallory", call.clone(), Some(&sid))).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(
        t.marks[1].calls.load(Ordering::SeqCst),
        0,
        "the handler never ran"
    );
    assert_eq!(b.session_count(), 0, "and nothing was restored");
    let (status, body, _) = status_and_body(b, as_user(&hb, "alice", call, Some(&sid))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(t.marks[1].calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_store_that_is_down_gets_503_and_stateless_requests_go_on() {
    let t = Trio::start().await;
    let sid = t.session(0).await;
    t.store.down.store(true, Ordering::SeqCst);
    // B must load the session: it cannot.
    let r = t.call(1, &sid, 2, "echo").await;
    assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
    let body = body_json(r).await;
    assert_eq!(body["jsonrpc"], "2.0");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("session store is down"),
        "{body}"
    );
    // A new session cannot be stored either.
    let r = t.nodes[2]
        .send_json(t.nodes[2].post(), common::initialize(1, LEGACY))
        .await;
    assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(r.headers().get("mcp-session-id").is_none());
    assert!(
        body_json(r).await["error"]["message"]
            .as_str()
            .unwrap()
            .contains("store")
    );
    // A 2026-07-28 request needs no session: it is served.
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                      "params": {"name": "echo", "arguments": {}, "_meta": modern_meta()}});
    let r = t.nodes[1]
        .send_json(t.nodes[1].modern("tools/call", Some("echo")), call)
        .await;
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(text_of(&body_json(r).await), format!("echo from {MODERN}"));
    // A's own copy goes on; once the store is back, B serves the session.
    assert_eq!(t.call(0, &sid, 4, "echo").await.status(), StatusCode::OK);
    t.store.down.store(false, Ordering::SeqCst);
    assert_eq!(t.call(1, &sid, 5, "echo").await.status(), StatusCode::OK);
}
