//! What one principal opens, another cannot use, with real tokens: the
//! bearer layer in front of `tessera_http::McpHttp` over loopback HTTP, and
//! two valid tokens from the test authorization server (`sub` alice and
//! `sub` mallory, same issuer, audience and scope). Mallory presenting
//! alice's session id, message endpoint or task id is told they do not
//! exist, and no handler runs for her.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tessera_auth::server::{BearerAuthLayer, JwtVerifier};
use tessera_auth::testing::TestAuthorizationServer;
use tessera_http::McpHttp;
use tessera_server::{RawArgs, Server, tool};
use tessera_types::tool::TaskSupport;
use tokio::sync::Semaphore;
use tower::Layer;

const MODERN: &str = "2026-07-28";

struct Fixture {
    addr: SocketAddr,
    asrv: TestAuthorizationServer,
    resource: String,
    /// Runs of the `touch` tool.
    touches: Arc<AtomicUsize>,
    /// Each permit lets one `gated` call finish.
    gate: Arc<Semaphore>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Fixture {
    async fn start() -> Fixture {
        let asrv = TestAuthorizationServer::start().await.unwrap();
        let touches = Arc::new(AtomicUsize::new(0));
        let gate = Arc::new(Semaphore::new(0));
        let (t, g) = (touches.clone(), gate.clone());
        let server = Server::builder()
            .name_version("binding", "1.0.0")
            .tool(tool("touch").handler(move || {
                let t = t.clone();
                async move { t.fetch_add(1, Ordering::SeqCst).to_string() }
            }))
            .tool(tool("gated").task_support(TaskSupport::Optional).handler(
                move |RawArgs(a): RawArgs| {
                    let g = g.clone();
                    async move {
                        if let Ok(p) = g.acquire().await {
                            p.forget();
                        }
                        format!("done {}", a["label"].as_str().unwrap_or_default())
                    }
                },
            ))
            .build()
            .unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let resource = format!("http://{addr}/mcp");
        let mcp = McpHttp::builder(server).bind_address(addr).build();
        let verifier = JwtVerifier::builder(asrv.issuer(), &resource)
            .min_refresh_interval(Duration::ZERO)
            .build();
        let layer = BearerAuthLayer::builder(&resource, verifier)
            .authorization_server(asrv.issuer())
            .require_scopes(["mcp"])
            .build();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(tessera_http::serve_with(
            listener,
            mcp.clone(),
            layer.layer(mcp),
            async move {
                let _ = stopped.await;
            },
        ));
        Fixture {
            addr,
            asrv,
            resource,
            touches,
            gate,
            stop: Some(stop),
            task,
        }
    }

    /// A valid token for `sub` (same issuer, audience and scope for all).
    fn token(&self, sub: &str) -> String {
        let mut claims = self.asrv.claims(&self.resource, &["mcp"]);
        claims.insert("sub".into(), json!(sub));
        self.asrv.token(&claims)
    }

    fn request(&self, method: http::Method, path: &str, token: &str) -> http::request::Builder {
        Request::builder()
            .method(method)
            .uri(path)
            .header("host", self.addr.to_string())
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("authorization", format!("Bearer {token}"))
    }

    /// A POST to /mcp in the legacy session `sid` (or opening one).
    fn legacy(&self, token: &str, sid: Option<&str>) -> http::request::Builder {
        let b = self
            .request(http::Method::POST, "/mcp", token)
            .header("mcp-protocol-version", "2025-11-25");
        match sid {
            Some(s) => b.header("mcp-session-id", s),
            None => b,
        }
    }

    /// A 2026-07-28 POST to /mcp with its routing headers.
    fn modern(&self, token: &str, method: &str, name: Option<&str>) -> http::request::Builder {
        let b = self
            .request(http::Method::POST, "/mcp", token)
            .header("mcp-protocol-version", MODERN)
            .header("mcp-method", method);
        match name {
            Some(n) => b.header("mcp-name", n),
            None => b,
        }
    }

    async fn send(&self, b: http::request::Builder, v: &Value) -> Response<Incoming> {
        send(
            self.addr,
            b.body(Full::new(Bytes::from(v.to_string()))).unwrap(),
        )
        .await
    }

    /// Sends `v` and returns the JSON-RPC response (from a JSON body or
    /// the first response on an SSE stream), asserting 200.
    async fn rpc(&self, b: http::request::Builder, v: &Value) -> Value {
        let r = self.send(b, v).await;
        assert_eq!(r.status(), StatusCode::OK, "{v}");
        response_of(r).await
    }

    /// Opens a legacy session for `token` (handshake complete); its id.
    async fn open_session(&self, token: &str) -> String {
        let r = self.send(self.legacy(token, None), &initialize()).await;
        assert_eq!(r.status(), StatusCode::OK);
        let sid = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
        let _ = response_of(r).await;
        let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let r = self.send(self.legacy(token, Some(&sid)), &done).await;
        assert_eq!(r.status(), StatusCode::ACCEPTED);
        sid
    }

    async fn stop(mut self) {
        self.gate.close();
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        let _ = tokio::time::timeout(Duration::from_secs(10), &mut self.task).await;
    }
}

async fn send(addr: SocketAddr, req: Request<Full<Bytes>>) -> Response<Incoming> {
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(async move {
        let _ = conn.await;
    });
    tokio::time::timeout(Duration::from_secs(10), sender.send_request(req))
        .await
        .expect("a response within 10 s")
        .unwrap()
}

/// Reads SSE events (their `data`) off a response body, within 10 s each.
struct Events {
    body: Incoming,
    buf: String,
}

impl Events {
    fn new(r: Response<Incoming>) -> Events {
        Events {
            body: r.into_body(),
            buf: String::new(),
        }
    }

    /// The next event's data, skipping events without data (priming, comments).
    async fn next(&mut self) -> String {
        loop {
            while let Some(end) = self.buf.find("\n\n") {
                let event: String = self.buf.drain(..end + 2).collect();
                let data: Vec<&str> = event
                    .lines()
                    .filter_map(|l| l.strip_prefix("data:"))
                    .map(|d| d.strip_prefix(' ').unwrap_or(d))
                    .collect();
                if !data.is_empty() && data.iter().any(|d| !d.is_empty()) {
                    return data.join("\n");
                }
            }
            let frame = tokio::time::timeout(Duration::from_secs(10), self.body.frame())
                .await
                .expect("an event within 10 s")
                .expect("the stream is open")
                .unwrap();
            if let Ok(data) = frame.into_data() {
                self.buf.push_str(&String::from_utf8_lossy(&data));
            }
        }
    }

    async fn next_json(&mut self) -> Value {
        serde_json::from_str(&self.next().await).unwrap()
    }
}

async fn response_of(r: Response<Incoming>) -> Value {
    let sse = r
        .headers()
        .get("content-type")
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    if sse {
        let mut events = Events::new(r);
        loop {
            let v = events.next_json().await;
            if v.get("id").is_some() && v.get("method").is_none() {
                return v;
            }
        }
    }
    let b = r.into_body().collect().await.unwrap().to_bytes();
    serde_json::from_slice(&b).unwrap()
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "shared-app", "version": "1"}
    }})
}

/// 2026-07-28 `_meta` declaring the Tasks extension. Alice and mallory use
/// the same client name: only their tokens tell them apart.
fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities":
            {"extensions": {"io.modelcontextprotocol/tasks": {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "shared-app", "version": "1"}
    })
}

fn rpc(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn modern_rpc(id: i64, method: &str, mut params: Value) -> Value {
    params["_meta"] = modern_meta();
    rpc(id, method, params)
}

#[tokio::test]
async fn a_streamable_session_refuses_another_principals_token() {
    let f = Fixture::start().await;
    let (alice, mallory) = (f.token("alice"), f.token("mallory"));
    let sid = f.open_session(&alice).await;
    let touch = rpc(2, "tools/call", json!({"name": "touch", "arguments": {}}));

    // Mallory's valid token with alice's session id: 404 for every verb.
    let r = f.send(f.legacy(&mallory, Some(&sid)), &touch).await;
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    let get = f
        .request(http::Method::GET, "/mcp", &mallory)
        .header("mcp-session-id", &sid)
        .body(Full::new(Bytes::new()))
        .unwrap();
    assert_eq!(send(f.addr, get).await.status(), StatusCode::NOT_FOUND);
    let del = f
        .request(http::Method::DELETE, "/mcp", &mallory)
        .header("mcp-session-id", &sid)
        .body(Full::new(Bytes::new()))
        .unwrap();
    assert_eq!(send(f.addr, del).await.status(), StatusCode::NOT_FOUND);
    assert_eq!(f.touches.load(Ordering::SeqCst), 0, "the handler never ran");

    // Alice's session is still hers and still open.
    let v = f.rpc(f.legacy(&alice, Some(&sid)), &touch).await;
    assert_eq!(v["result"]["content"][0]["text"], "0", "{v}");
    assert_eq!(f.touches.load(Ordering::SeqCst), 1);
    f.stop().await;
}

/// Issue 32 item 11: tokens naming neither `sub` nor `client_id`/`azp` used
/// to share one identity, and `sub: "svc"` was the same principal as
/// `client_id: "svc"`. Each identity-less token is now its own principal,
/// and a subject is never a client id.
#[tokio::test]
async fn identity_less_tokens_and_a_client_named_like_a_subject_share_nothing() {
    let f = Fixture::start().await;
    let token_with = |edit: &dyn Fn(&mut serde_json::Map<String, Value>)| {
        let mut claims = f.asrv.claims(&f.resource, &["mcp"]);
        edit(&mut claims);
        f.asrv.token(&claims)
    };
    let nobody = |c: &mut serde_json::Map<String, Value>| {
        c.remove("sub");
        c.remove("client_id");
    };
    let (first, second) = (token_with(&nobody), token_with(&nobody));
    let as_subject = token_with(&|c| {
        c.insert("sub".into(), json!("svc"));
        c.remove("client_id");
    });
    let as_client = token_with(&|c| {
        c.remove("sub");
        c.insert("client_id".into(), json!("svc"));
    });
    let touch = rpc(2, "tools/call", json!({"name": "touch", "arguments": {}}));
    for (owner, intruder) in [(&first, &second), (&as_subject, &as_client)] {
        let sid = f.open_session(owner).await;
        let r = f.send(f.legacy(intruder, Some(&sid)), &touch).await;
        assert_eq!(r.status(), StatusCode::NOT_FOUND);
        let v = f.rpc(f.legacy(owner, Some(&sid)), &touch).await;
        assert!(v["result"]["content"][0]["text"].is_string(), "{v}");
    }
    assert_eq!(
        f.touches.load(Ordering::SeqCst),
        2,
        "only the owners' calls ran"
    );
    f.stop().await;
}

#[tokio::test]
async fn an_http_sse_session_refuses_another_principals_token() {
    let f = Fixture::start().await;
    let (alice, mallory) = (f.token("alice"), f.token("mallory"));
    let get = f
        .request(http::Method::GET, "/sse", &alice)
        .header("accept", "text/event-stream")
        .body(Full::new(Bytes::new()))
        .unwrap();
    let r = send(f.addr, get).await;
    assert_eq!(r.status(), StatusCode::OK);
    let mut stream = Events::new(r);
    let endpoint = stream.next().await;
    assert!(endpoint.contains("sessionId="), "{endpoint}");
    let post = |token: &str, v: &Value| {
        f.request(http::Method::POST, &endpoint, token)
            .body(Full::new(Bytes::from(v.to_string())))
            .unwrap()
    };
    let mut init = initialize();
    init["params"]["protocolVersion"] = json!("2024-11-05");
    let r = send(f.addr, post(&mallory, &init)).await;
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    let r = send(f.addr, post(&alice, &init)).await;
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    let answer = stream.next_json().await;
    assert_eq!(answer["id"], 1, "{answer}");
    assert!(answer["result"]["serverInfo"].is_object(), "{answer}");
    let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(
        send(f.addr, post(&alice, &done)).await.status(),
        StatusCode::ACCEPTED
    );
    let touch = rpc(2, "tools/call", json!({"name": "touch", "arguments": {}}));
    let r = send(f.addr, post(&mallory, &touch)).await;
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    assert_eq!(f.touches.load(Ordering::SeqCst), 0, "the handler never ran");
    assert_eq!(
        send(f.addr, post(&alice, &touch)).await.status(),
        StatusCode::ACCEPTED
    );
    let answer = stream.next_json().await;
    assert_eq!(answer["id"], 2, "{answer}");
    assert_eq!(answer["result"]["content"][0]["text"], "0", "{answer}");
    f.stop().await;
}

#[tokio::test]
async fn legacy_tasks_belong_to_the_principal_not_the_session() {
    let f = Fixture::start().await;
    let (alice, mallory) = (f.token("alice"), f.token("mallory"));
    let a1 = f.open_session(&alice).await;
    let created = f
        .rpc(
            f.legacy(&alice, Some(&a1)),
            &rpc(
                2,
                "tools/call",
                json!({"name": "gated", "arguments": {"label": "A"}, "task": {}}),
            ),
        )
        .await;
    let id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {created}"))
        .to_owned();

    // Mallory, in her own session: alice's task does not exist.
    let m = f.open_session(&mallory).await;
    for (n, method) in ["tasks/get", "tasks/result", "tasks/cancel"]
        .into_iter()
        .enumerate()
    {
        let n = i64::try_from(n).unwrap() + 10;
        let v = f
            .rpc(
                f.legacy(&mallory, Some(&m)),
                &rpc(n, method, json!({"taskId": id})),
            )
            .await;
        assert_eq!(v["error"]["code"], -32602, "{method}: {v}");
    }
    let v = f
        .rpc(
            f.legacy(&mallory, Some(&m)),
            &rpc(20, "tasks/list", json!({})),
        )
        .await;
    assert_eq!(v["result"]["tasks"], json!([]), "{v}");

    // Alice, in another session of hers, sees it still working.
    let a2 = f.open_session(&alice).await;
    let v = f
        .rpc(
            f.legacy(&alice, Some(&a2)),
            &rpc(21, "tasks/get", json!({"taskId": id})),
        )
        .await;
    assert_eq!(v["result"]["status"], "working", "{v}");
    let v = f
        .rpc(
            f.legacy(&alice, Some(&a2)),
            &rpc(22, "tasks/list", json!({})),
        )
        .await;
    assert_eq!(v["result"]["tasks"][0]["taskId"], id.as_str(), "{v}");
    f.gate.add_permits(1);
    let v = f
        .rpc(
            f.legacy(&alice, Some(&a2)),
            &rpc(23, "tasks/result", json!({"taskId": id})),
        )
        .await;
    assert_eq!(v["result"]["content"][0]["text"], "done A", "{v}");
    f.stop().await;
}

/// Creates a 2026-07-28 `gated` task for `token`; its id.
async fn modern_task(f: &Fixture, token: &str, label: &str) -> String {
    let v = f
        .rpc(
            f.modern(token, "tools/call", Some("gated")),
            &modern_rpc(
                1,
                "tools/call",
                json!({"name": "gated", "arguments": {"label": label}}),
            ),
        )
        .await;
    assert_eq!(v["result"]["resultType"], "task", "{v}");
    v["result"]["taskId"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn modern_tasks_belong_to_the_principal_not_the_client_name() {
    let f = Fixture::start().await;
    let (alice, mallory) = (f.token("alice"), f.token("mallory"));
    let id = modern_task(&f, &alice, "A").await;
    for method in ["tasks/get", "tasks/cancel"] {
        let v = f
            .rpc(
                f.modern(&mallory, method, Some(&id)),
                &modern_rpc(2, method, json!({"taskId": id})),
            )
            .await;
        assert_eq!(v["error"]["code"], -32602, "{method}: {v}");
    }
    let v = f
        .rpc(
            f.modern(&alice, "tasks/get", Some(&id)),
            &modern_rpc(3, "tasks/get", json!({"taskId": id})),
        )
        .await;
    assert_eq!(
        v["result"]["status"], "working",
        "mallory's cancel did nothing: {v}"
    );
    f.stop().await;
}

#[tokio::test]
async fn listen_streams_carry_only_the_listeners_tasks() {
    let f = Fixture::start().await;
    let (alice, mallory) = (f.token("alice"), f.token("mallory"));
    let theirs = modern_task(&f, &alice, "A").await;
    let mine = modern_task(&f, &mallory, "M").await;
    let listen = async |token: &str, ids: &[&str]| {
        let body = modern_rpc(
            5,
            "subscriptions/listen",
            json!({"notifications": {"taskIds": ids}}),
        );
        f.send(f.modern(token, "subscriptions/listen", None), &body)
            .await
    };
    let r = listen(&mallory, &[&theirs, &mine]).await;
    assert_eq!(r.status(), StatusCode::OK);
    let mut mallorys = Events::new(r);
    let ack = mallorys.next_json().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    let r = listen(&alice, &[&theirs]).await;
    let mut alices = Events::new(r);
    let ack = alices.next_json().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");

    // Alice's task ends first (she cancels it), then mallory's completes.
    let v = f
        .rpc(
            f.modern(&alice, "tasks/cancel", Some(&theirs)),
            &modern_rpc(6, "tasks/cancel", json!({"taskId": theirs})),
        )
        .await;
    assert!(v.get("result").is_some(), "{v}");
    let n = alices.next_json().await;
    assert_eq!(n["method"], "notifications/tasks", "{n}");
    assert_eq!(n["params"]["taskId"], theirs.as_str());
    assert_eq!(n["params"]["status"], "cancelled");
    // Two permits: the cancelled handler may still take one as it stops.
    f.gate.add_permits(2);
    // Changes reach listeners in order: the first mallory sees is her own.
    let n = mallorys.next_json().await;
    assert_eq!(n["method"], "notifications/tasks", "{n}");
    assert_eq!(n["params"]["taskId"], mine.as_str(), "{n}");
    assert_eq!(n["params"]["status"], "completed");
    f.stop().await;
}
