//! Shared test fixtures: a small server with tools that stream, a raw
//! hyper HTTP/1 client, and an SSE reader.
#![allow(dead_code, missing_docs)]

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tessera_http::sse::{SseDecoder, SseFrame};
use tessera_http::{McpHttp, McpHttpBuilder};
use tessera_server::{RawArgs, RequestContext, Server, tool};
use tokio::net::TcpStream;
use tokio::sync::oneshot;

pub const ACCEPT_BOTH: &str = "application/json, text/event-stream";
pub const LEGACY: &str = "2025-11-25";
pub const MODERN: &str = "2026-07-28";

/// What the fixture tools record.
#[derive(Default)]
pub struct Flags {
    pub cancelled: AtomicBool,
    pub gate: tokio::sync::Notify,
    /// Told each time a `gate` call starts waiting (a barrier for tests
    /// that act while a request is in progress).
    pub at_gate: tokio::sync::Notify,
}

/// Records a cancellation when dropped after the token fired.
struct SetIfCancelled(Arc<Flags>, tokio_util::sync::CancellationToken);

impl Drop for SetIfCancelled {
    fn drop(&mut self) {
        if self.1.is_cancelled() {
            self.0.cancelled.store(true, Ordering::SeqCst);
        }
    }
}

/// A server with tools that exercise the transport.
pub fn fixture(flags: Arc<Flags>) -> Server {
    let f1 = flags.clone();
    let f2 = flags.clone();
    Server::builder()
        .name_version("http-fixture", "1.0.0")
        .tool(
            tool("echo")
                .description("Echoes the text argument")
                .input_schema(obj(
                    json!({"type": "object", "properties": {"text": {"type": "string"}}}),
                ))
                .handler(|RawArgs(a): RawArgs| async move {
                    a.get("text")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned()
                }),
        )
        .tool(
            tool("progress")
                .description("Reports progress and logs three times, then answers")
                .handler(|ctx: RequestContext| async move {
                    for i in 1..=3 {
                        ctx.progress(f64::from(i), Some(3.0), Some("step"));
                        ctx.log(
                            tessera_types::LoggingLevel::Info,
                            Some("fixture"),
                            json!(format!("step {i}")),
                        );
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                    "done".to_owned()
                }),
        )
        .tool(
            tool("reconnect")
                .description("Closes its SSE connection mid-call (SEP-1699), then answers")
                .handler(|ctx: RequestContext| async move {
                    ctx.progress(1.0, None, Some("before"));
                    ctx.stream_control()
                        .close_sse_stream(Some(Duration::from_millis(50)));
                    ctx.progress(2.0, None, Some("after close"));
                    tokio::time::sleep(Duration::from_millis(300)).await;
                    "reconnected".to_owned()
                }),
        )
        .tool(
            tool("gate")
                .description("Waits until the test opens the gate")
                .handler(move || {
                    let f = f1.clone();
                    async move {
                        let opened = f.gate.notified();
                        f.at_gate.notify_one();
                        opened.await;
                        "gate opened".to_owned()
                    }
                }),
        )
        .tool(
            tool("wait_cancel")
                .description("Waits until cancelled and records it")
                .handler(move |ctx: RequestContext| {
                    let f = f2.clone();
                    async move {
                        ctx.progress(1.0, None, Some("waiting"));
                        // The driver may drop this future as soon as the token fires.
                        let _seen = SetIfCancelled(f, ctx.cancellation().clone());
                        ctx.cancelled().await;
                        "cancelled".to_owned()
                    }
                }),
        )
        .tool(
            tool("sample")
                .description("Asks the client to sample, returns its text")
                .handler(|ctx: RequestContext| async move {
                    let mut p = serde_json::Map::new();
                    p.insert("messages".into(), json!([]));
                    p.insert("maxTokens".into(), json!(10));
                    match ctx
                        .peer()
                        .request(
                            "sampling/createMessage",
                            Some(p),
                            tessera_proto::RequestOptions {
                                // Routes the request on the POST stream of this call.
                                related: Some(ctx.request_id().clone()),
                                ..Default::default()
                            },
                        )
                        .await
                    {
                        Ok(r) => r
                            .get("content")
                            .and_then(|c| c.get("text"))
                            .and_then(Value::as_str)
                            .unwrap_or("?")
                            .to_owned(),
                        Err(e) => format!("sampling failed: {e}"),
                    }
                }),
        )
        .tool(
            tool("notify_unrelated")
                .description("Sends a list_changed notification that belongs to no request")
                .handler(|ctx: RequestContext| async move {
                    let _ = ctx
                        .peer()
                        .notify("notifications/tools/list_changed", None, None);
                    "sent".to_owned()
                }),
        )
        .tool(
            tool("sql")
                .description("A tool with x-mcp-header parameters")
                .input_schema(obj(json!({
                    "type": "object",
                    "properties": {
                        "region": {"type": "string", "x-mcp-header": "Region"},
                        "limit": {"type": "integer", "x-mcp-header": "Limit"},
                        "query": {"type": "string"}
                    },
                    "required": ["region", "query"]
                })))
                .handler(|RawArgs(a): RawArgs| async move { format!("ran in {}", a["region"]) }),
        )
        .build()
        .expect("fixture server builds")
}

pub fn obj(v: Value) -> serde_json::Map<String, Value> {
    match v {
        Value::Object(o) => o,
        _ => panic!("not an object"),
    }
}

/// A running server.
pub struct TestServer {
    pub addr: SocketAddr,
    pub mcp: McpHttp,
    pub flags: Arc<Flags>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl TestServer {
    /// Starts the fixture on 127.0.0.1:0 with the builder adjusted by `adjust`.
    pub async fn start(adjust: impl FnOnce(McpHttpBuilder) -> McpHttpBuilder) -> TestServer {
        Self::start_inner(false, adjust).await
    }

    /// Like [`TestServer::start`], with the fixture behind a plain closure
    /// factory (which cannot read tool schemas directly).
    #[allow(dead_code)]
    pub async fn start_via_closure(
        adjust: impl FnOnce(McpHttpBuilder) -> McpHttpBuilder,
    ) -> TestServer {
        Self::start_inner(true, adjust).await
    }

    /// Starts `server` (instead of the fixture) on 127.0.0.1:0.
    pub async fn start_with(
        server: Server,
        adjust: impl FnOnce(McpHttpBuilder) -> McpHttpBuilder,
    ) -> TestServer {
        Self::start_server(server, Arc::new(Flags::default()), false, adjust).await
    }

    async fn start_inner(
        closure: bool,
        adjust: impl FnOnce(McpHttpBuilder) -> McpHttpBuilder,
    ) -> TestServer {
        let flags = Arc::new(Flags::default());
        Self::start_server(fixture(flags.clone()), flags, closure, adjust).await
    }

    async fn start_server(
        server: Server,
        flags: Arc<Flags>,
        closure: bool,
        adjust: impl FnOnce(McpHttpBuilder) -> McpHttpBuilder,
    ) -> TestServer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let builder = if closure {
            McpHttp::builder(move || (server.engine_config(), server.clone()))
        } else {
            McpHttp::builder(server)
        };
        let builder = builder.bind_address(addr).endpoint_path("/mcp");
        let mcp = adjust(builder).build();
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(tessera_http::serve(listener, mcp.clone(), async move {
            let _ = stopped.await;
        }));
        TestServer {
            addr,
            mcp,
            flags,
            stop: Some(stop),
            task: Some(task),
        }
    }

    /// Triggers graceful shutdown and returns the serve task.
    pub fn begin_shutdown(&mut self) -> tokio::task::JoinHandle<std::io::Result<()>> {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        self.task.take().expect("serve task")
    }

    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.addr.port())
    }

    /// The bytes of a plain HTTP/1.1 POST of `body` to /mcp (JSON, with its
    /// `Content-Length`), to write on a raw socket.
    pub fn raw_post(&self, body: &[u8]) -> Vec<u8> {
        let mut r = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nAccept: application/json, text/event-stream\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            self.host(),
            body.len()
        )
        .into_bytes();
        r.extend_from_slice(body);
        r
    }

    /// A POST to /mcp with the usual headers.
    pub fn post(&self) -> http::request::Builder {
        Request::post("/mcp")
            .header("host", self.host())
            .header("accept", ACCEPT_BOTH)
            .header("content-type", "application/json")
    }

    pub fn get(&self) -> http::request::Builder {
        Request::get("/mcp")
            .header("host", self.host())
            .header("accept", "text/event-stream")
    }

    pub async fn send(
        &self,
        b: http::request::Builder,
        body: impl Into<Bytes>,
    ) -> Response<Incoming> {
        send(self.addr, b.body(Full::new(body.into())).unwrap()).await
    }

    pub async fn send_json(&self, b: http::request::Builder, v: Value) -> Response<Incoming> {
        self.send(b, serde_json::to_vec(&v).unwrap()).await
    }

    /// Initializes a session at 2025-11-25 (or `version`) and sends
    /// `notifications/initialized`; returns the session id.
    /// Opens an HTTP+SSE (2024-11-05) stream: the stream, and the URI its
    /// `endpoint` event names for POSTs.
    pub async fn legacy_sse(&self) -> (Sse, String) {
        let r = self
            .send(
                Request::get("/sse")
                    .header("host", self.host())
                    .header("accept", "text/event-stream"),
                "",
            )
            .await;
        assert_eq!(r.status(), StatusCode::OK);
        let mut sse = Sse::new(r);
        let endpoint = sse.next().await.expect("the endpoint event");
        assert_eq!(endpoint.event.as_deref(), Some("endpoint"));
        (sse, endpoint.data)
    }

    /// POSTs `body` to an HTTP+SSE endpoint `uri` (from [`Self::legacy_sse`]).
    pub async fn post_message(&self, uri: &str, body: Value) -> Response<Incoming> {
        self.send_json(
            Request::post(uri)
                .header("host", self.host())
                .header("content-type", "application/json"),
            body,
        )
        .await
    }

    pub async fn session(&self, version: &str) -> String {
        let r = self.send_json(self.post(), initialize(1, version)).await;
        assert_eq!(r.status(), StatusCode::OK);
        let sid = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
        let _ = body_json(r).await;
        let r = self
            .send_json(
                self.post()
                    .header("mcp-session-id", &sid)
                    .header("mcp-protocol-version", version),
                json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            )
            .await;
        assert_eq!(r.status(), StatusCode::ACCEPTED);
        sid
    }

    pub fn in_session(&self, sid: &str) -> http::request::Builder {
        self.post()
            .header("mcp-session-id", sid)
            .header("mcp-protocol-version", LEGACY)
    }

    /// A 2026-07-28 POST with the metadata headers for `method`/`name`.
    pub fn modern(&self, method: &str, name: Option<&str>) -> http::request::Builder {
        let mut b = self
            .post()
            .header("mcp-protocol-version", MODERN)
            .header("mcp-method", method);
        if let Some(n) = name {
            b = b.header("mcp-name", n);
        }
        b
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
    }
}

pub fn initialize(id: i64, version: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": version,
        "capabilities": {"sampling": {}},
        "clientInfo": {"name": "test", "version": "1"}
    }})
}

pub fn call(id: i64, tool: &str, args: Value, progress: bool) -> Value {
    let mut params = json!({"name": tool, "arguments": args});
    if progress {
        params["_meta"] = json!({"progressToken": format!("p{id}")});
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

pub fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"}
    })
}

/// Sends one request on a fresh HTTP/1.1 connection.
pub async fn send(addr: SocketAddr, req: Request<Full<Bytes>>) -> Response<Incoming> {
    send_with_connection(addr, req).await.0
}

/// Like [`send`], also returning the connection task: aborting it closes the
/// socket, as a client that goes away does.
pub async fn send_with_connection(
    addr: SocketAddr,
    req: Request<Full<Bytes>>,
) -> (Response<Incoming>, tokio::task::JoinHandle<()>) {
    let stream = TcpStream::connect(addr).await.expect("connect");
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .expect("handshake");
    let task = tokio::spawn(async move {
        let _ = conn.await;
    });
    (
        within(sender.send_request(req)).await.expect("response"),
        task,
    )
}

/// Fails the test when `f` takes more than 10 s.
pub async fn within<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(10), f)
        .await
        .expect("timed out")
}

/// Polls `cond` until it holds, failing after 10 s.
pub async fn eventually(mut cond: impl FnMut() -> bool) {
    within(async {
        while !cond() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
}

pub async fn body_bytes(r: Response<Incoming>) -> Bytes {
    within(r.into_body().collect())
        .await
        .expect("body")
        .to_bytes()
}

pub async fn body_json(r: Response<Incoming>) -> Value {
    let b = body_bytes(r).await;
    serde_json::from_slice(&b)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&b)))
}

pub fn content_type(r: &Response<Incoming>) -> &str {
    r.headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
}

/// Reads an SSE response frame by frame.
pub struct Sse {
    body: Incoming,
    decoder: SseDecoder,
    queue: VecDeque<SseFrame>,
    /// Every byte received, for checks on comments.
    pub raw: Vec<u8>,
    ended: bool,
}

impl Sse {
    pub fn new(r: Response<Incoming>) -> Sse {
        assert!(
            content_type(&r).starts_with("text/event-stream"),
            "not SSE: {:?}",
            r.headers()
        );
        Sse {
            body: r.into_body(),
            decoder: SseDecoder::new(),
            queue: VecDeque::new(),
            raw: Vec::new(),
            ended: false,
        }
    }

    /// Reads more bytes; false at the end of the stream.
    pub async fn fill(&mut self) -> bool {
        if self.ended {
            return false;
        }
        loop {
            match within(self.body.frame()).await {
                Some(Ok(f)) => {
                    if let Ok(d) = f.into_data() {
                        self.raw.extend_from_slice(&d);
                        self.queue.extend(
                            self.decoder
                                .feed(&d)
                                .expect("an event within the decoder's limit"),
                        );
                        return true;
                    }
                }
                _ => {
                    self.ended = true;
                    return false;
                }
            }
        }
    }

    /// The next frame, `None` at the end of the stream.
    pub async fn next(&mut self) -> Option<SseFrame> {
        loop {
            if let Some(f) = self.queue.pop_front() {
                return Some(f);
            }
            if !self.fill().await {
                return None;
            }
        }
    }

    /// The next frame with data, parsed as JSON.
    pub async fn next_json(&mut self) -> Option<(Option<String>, Value)> {
        loop {
            let f = self.next().await?;
            if !f.data.is_empty() {
                return Some((f.id, serde_json::from_str(&f.data).expect("JSON data")));
            }
        }
    }

    /// Every remaining frame.
    pub async fn rest(&mut self) -> Vec<SseFrame> {
        let mut out = Vec::new();
        while let Some(f) = self.next().await {
            out.push(f);
        }
        out
    }
}
