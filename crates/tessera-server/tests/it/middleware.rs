//! MCP-level middleware on a server and a client: rejecting, rewriting,
//! the ready layers (tracing, metrics) and tower's own (concurrency limit,
//! load shedding, timeout), on a paused clock.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tessera_client::{Client, ClientBuilder};
use tessera_runtime::middleware::{
    MetricsLayer, Next, Outcome, RequestRecord, TraceLayer, from_fn,
};
use tessera_runtime::{Reply, ReplyResult, Request};
use tessera_server::{Args, RequestContext, Server, ServerBuilder, tool};
use tessera_testkit::deadline::bounded;
use tessera_testkit::layers::{Seen as Taken, Tap};
use tessera_testkit::pair::in_process;
use tessera_types::{ErrorCode, ErrorObject, methods};
use tokio::time::Instant;
use tower::limit::ConcurrencyLimitLayer;
use tower::load_shed::LoadShedLayer;
use tower::timeout::TimeoutLayer;

#[derive(Debug, Deserialize, JsonSchema)]
struct Text {
    text: String,
}

async fn echo(Args(t): Args<Text>) -> String {
    t.text
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Work {
    /// Who asks (the key of the counters; read by the principal layer).
    who: String,
    /// How long the work takes, in seconds.
    secs: u64,
}

/// Per `who`: requests running now and the most seen at once (tests run in
/// parallel, each with its own `who`).
static COUNTS: Mutex<Vec<(String, usize, usize)>> = Mutex::new(Vec::new());

fn count(who: &str, delta: isize) {
    let mut c = COUNTS.lock().unwrap();
    let i = match c.iter().position(|e| e.0 == who) {
        Some(i) => i,
        None => {
            c.push((who.to_owned(), 0, 0));
            c.len() - 1
        }
    };
    c[i].1 = c[i].1.checked_add_signed(delta).unwrap();
    c[i].2 = c[i].2.max(c[i].1);
}

fn most(who: &str) -> usize {
    let c = COUNTS.lock().unwrap();
    c.iter().find(|e| e.0 == who).map_or(0, |e| e.2)
}

async fn work(Args(w): Args<Work>) -> String {
    count(&w.who, 1);
    tokio::time::sleep(Duration::from_secs(w.secs)).await;
    count(&w.who, -1);
    "done".to_owned()
}

async fn ask_roots(ctx: RequestContext) -> Result<String, tessera_server::ProtocolError> {
    match ctx.roots().await {
        Ok(r) => Ok(format!("{} roots", r.roots.len())),
        Err(e) => Ok(format!("refused: {e}")),
    }
}

fn builder() -> ServerBuilder {
    Server::builder()
        .tool(tool("echo").description("Echoes").handler(echo))
        .tool(tool("work").description("Works a while").handler(work))
        .tool(
            tool("roots")
                .description("Asks for roots")
                .handler(ask_roots),
        )
}

async fn connect_with(server: Server, client: ClientBuilder) -> Client {
    in_process(&server, client).await
}

async fn connect(server: Server) -> Client {
    connect_with(server, Client::builder("middleware-tests", "1.0")).await
}

fn text(r: &tessera_types::CallToolResult) -> String {
    serde_json::to_value(&r.content[0]).unwrap()["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// An allow-list: only `echo` may be called.
async fn only_echo(request: Request, next: Next) -> ReplyResult {
    if request.method == methods::TOOLS_CALL && request.target() != Some("echo") {
        return Err(ErrorObject::invalid_params(format!(
            "tool {} is not allowed",
            request.target().unwrap_or("?")
        )));
    }
    next.run(request).await
}

#[tokio::test]
async fn a_layer_rejects_before_the_handler_runs() {
    let server = builder().layer(from_fn(only_echo)).build().unwrap();
    let client = connect(server).await;
    let ok = client
        .call_tool("echo", json!({"text": "hi"}))
        .await
        .unwrap();
    assert_eq!(text(&ok), "hi");
    let err = client
        .call_tool("work", json!({"who": "refused", "secs": 0}))
        .await
        .unwrap_err();
    let remote = err.remote().expect("a JSON-RPC error");
    assert_eq!(remote.code, ErrorCode::INVALID_PARAMS.0);
    assert!(remote.message.contains("not allowed"), "{remote:?}");
    assert_eq!(most("refused"), 0, "the handler never ran");
    // Other methods pass.
    assert_eq!(client.list_tools().await.unwrap().len(), 3);
}

#[tokio::test]
async fn a_layer_rewrites_params_and_results() {
    let upper = from_fn(|mut request: Request, next: Next| async move {
        if let Some(args) = request
            .params
            .as_mut()
            .and_then(|p| p.object_mut().get_mut("arguments"))
            .and_then(Value::as_object_mut)
        {
            if let Some(Value::String(t)) = args.get_mut("text") {
                *t = t.to_uppercase();
            }
        }
        let typed = request
            .params_as::<tessera_types::CallToolRequest>()
            .expect("typed params");
        assert_eq!(typed.name, "echo");
        let mut result = next.run(request).await?.into_object().expect("a result");
        let mut meta = tessera_types::JsonObject::new();
        meta.insert("rewritten".into(), json!(true));
        result.insert("_meta".into(), Value::Object(meta));
        Ok(Reply::Object(result))
    });
    let server = builder().layer(upper).build().unwrap();
    let client = connect(server).await;
    let r = client
        .call_tool("echo", json!({"text": "hi"}))
        .await
        .unwrap();
    assert_eq!(text(&r), "HI");
    assert_eq!(r.meta.as_ref().unwrap()["rewritten"], true);
}

#[tokio::test(start_paused = true)]
async fn the_metrics_hook_sees_method_target_duration_and_outcome() {
    let records: Arc<Mutex<Vec<RequestRecord>>> = Arc::default();
    let seen = records.clone();
    let server = builder()
        .layer(MetricsLayer::new(move |r| {
            seen.lock().unwrap().push(r.clone())
        }))
        .build()
        .unwrap();
    let client = connect(server).await;
    client
        .call_tool("work", json!({"who": "a", "secs": 3}))
        .await
        .unwrap();
    let _ = client.call_tool("nope", json!({})).await;
    let records = records.lock().unwrap().clone();
    let calls: Vec<_> = records
        .iter()
        .filter(|r| r.method == methods::TOOLS_CALL)
        .collect();
    assert_eq!(calls.len(), 2, "{records:?}");
    assert_eq!(calls[0].target.as_deref(), Some("work"));
    assert_eq!(calls[0].outcome, Outcome::Ok);
    assert_eq!(calls[0].duration, Duration::from_secs(3));
    assert_eq!(calls[1].target.as_deref(), Some("nope"));
    assert_eq!(
        calls[1].outcome,
        Outcome::Error(ErrorCode::INVALID_PARAMS),
        "no such tool"
    );
}

#[tokio::test(start_paused = true)]
async fn the_timeout_answers_and_stops_the_handler() {
    let server = builder()
        .layer(TimeoutLayer::new(Duration::from_secs(5)))
        .build()
        .unwrap();
    let client = connect(server).await;
    let start = Instant::now();
    let err = client
        .call_tool("work", json!({"who": "t", "secs": 50}))
        .await
        .unwrap_err();
    assert_eq!(start.elapsed(), Duration::from_secs(5));
    let remote = err.remote().expect("a JSON-RPC error");
    assert_eq!(remote.code, ErrorCode::INTERNAL_ERROR.0);
    assert!(remote.message.contains("timed out"), "{remote:?}");
    // Quick requests are untouched.
    let ok = client
        .call_tool("echo", json!({"text": "x"}))
        .await
        .unwrap();
    assert_eq!(text(&ok), "x");
}

/// Two calls at once, each working `secs`; how long both took.
async fn two_at_once(client: &Client, a: &str, b: &str, secs: u64) -> Duration {
    let start = Instant::now();
    let (x, y) = tokio::join!(
        client.call_tool("work", json!({"who": a, "secs": secs})),
        client.call_tool("work", json!({"who": b, "secs": secs})),
    );
    x.unwrap();
    y.unwrap();
    start.elapsed()
}

#[tokio::test(start_paused = true)]
async fn towers_limit_runs_at_most_n_requests_at_once() {
    let server = builder()
        .layer(ConcurrencyLimitLayer::new(1))
        .build()
        .unwrap();
    let client = connect(server).await;
    let d = two_at_once(&client, "narrow", "narrow", 2).await;
    assert_eq!(d, Duration::from_secs(4), "the second call waited");
    assert_eq!(most("narrow"), 1);

    let wide = builder()
        .layer(ConcurrencyLimitLayer::new(2))
        .build()
        .unwrap();
    let client = connect(wide).await;
    let d = two_at_once(&client, "wide", "wide", 2).await;
    assert_eq!(d, Duration::from_secs(2));
    assert_eq!(most("wide"), 2);
}

#[tokio::test(start_paused = true)]
async fn towers_load_shed_answers_at_once_instead_of_queueing() {
    let server = builder()
        .layer(LoadShedLayer::new())
        .layer(ConcurrencyLimitLayer::new(1))
        .build()
        .unwrap();
    let client = connect(server).await;
    let start = Instant::now();
    let (x, y) = tokio::join!(
        client.call_tool("work", json!({"who": "shed", "secs": 2})),
        async {
            // The first call holds the slot by now (the clock is paused).
            tokio::time::sleep(Duration::from_secs(1)).await;
            let refused = client
                .call_tool("work", json!({"who": "shed", "secs": 2}))
                .await;
            (refused, start.elapsed())
        },
    );
    assert_eq!(text(&x.unwrap()), "done");
    let (refused, at) = y;
    assert_eq!(at, Duration::from_secs(1), "answered at once, not queued");
    let remote = refused.unwrap_err();
    let remote = remote.remote().expect("a JSON-RPC error");
    assert_eq!(remote.code, ErrorCode::INTERNAL_ERROR.0);
    assert!(remote.message.contains("Server busy"), "{remote:?}");
    assert_eq!(most("shed"), 1);
    // With the slot free, the next call runs.
    let ok = client
        .call_tool("work", json!({"who": "shed", "secs": 1}))
        .await
        .unwrap();
    assert_eq!(text(&ok), "done");
}

/// A result no layer reads leaves the stack as the JSON text the tool
/// wrote; a layer that reads it gets the same content.
#[tokio::test]
async fn results_pass_through_layers_that_do_not_read_them_as_text() {
    let kinds: Arc<Mutex<Vec<bool>>> = Arc::default();
    let seen = kinds.clone();
    let look = from_fn(move |request: Request, next: Next| {
        let seen = seen.clone();
        async move {
            let reply = next.run(request).await?;
            seen.lock().unwrap().push(matches!(reply, Reply::Raw(_)));
            Ok(reply)
        }
    });
    let server = builder()
        .layer(TraceLayer::new())
        .layer(look)
        .layer(ConcurrencyLimitLayer::new(8))
        .build()
        .unwrap();
    let client = connect(server).await;
    let r = client
        .call_tool("echo", json!({"text": "raw"}))
        .await
        .unwrap();
    assert_eq!(text(&r), "raw");
    assert_eq!(*kinds.lock().unwrap(), vec![true], "tools/call stays text");
}

/// Collects what the fmt subscriber writes.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test(start_paused = true)]
async fn the_trace_layer_spans_each_request() {
    let out = Captured::default();
    let writer = out.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .with_max_level(tracing::Level::INFO)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let server = builder().layer(TraceLayer::new()).build().unwrap();
    let client = connect(server).await;
    client
        .call_tool("work", json!({"who": "a", "secs": 1}))
        .await
        .unwrap();
    let _ = client.call_tool("nope", json!({})).await;
    let log = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
    let done = log
        .lines()
        .find(|l| l.contains("request done") && l.contains("target=\"work\""))
        .unwrap_or_else(|| panic!("no span for work in:\n{log}"));
    assert!(done.contains("mcp.request"), "{done}");
    assert!(done.contains("method=tools/call"), "{done}");
    assert!(done.contains("duration_ms=1000"), "{done}");
    assert!(done.contains("outcome=\"ok\""), "{done}");
    let failed = log
        .lines()
        .find(|l| l.contains("request failed") && l.contains("target=\"nope\""))
        .unwrap_or_else(|| panic!("no failure for nope in:\n{log}"));
    assert!(failed.contains("outcome=\"error\""), "{failed}");
}

/// A notification's span carries the version the session speaks.
#[tokio::test]
async fn the_trace_layer_spans_each_notification_with_its_version() {
    let out = Captured::default();
    let writer = out.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .with_max_level(tracing::Level::DEBUG)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    // Told once the trace layer below is done with each message.
    let (tx, mut done) = tokio::sync::mpsc::unbounded_channel();
    let server = builder()
        .layer(Tap::once_done(tx))
        .layer(TraceLayer::new())
        .build()
        .unwrap();
    let _client = connect_with(
        server,
        Client::builder("middleware-tests", "1.0")
            .protocol_version(tessera_types::ProtocolVersion::V2025_11_25),
    )
    .await;
    loop {
        let seen = bounded("the handshake's notification", done.recv()).await;
        if let Some(Taken::Notification(m)) = seen {
            if m == "notifications/initialized" {
                break;
            }
        }
    }
    let log = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
    let taken = log
        .lines()
        .find(|l| l.contains("notification taken") && l.contains("notifications/initialized"))
        .unwrap_or_else(|| panic!("no span for notifications/initialized in:\n{log}"));
    assert!(taken.contains("mcp.notification"), "{taken}");
    assert!(taken.contains("version=\"2025-11-25\""), "{taken}");
    assert!(taken.contains("outcome=\"notified\""), "{taken}");
}

#[tokio::test]
async fn a_client_layer_sees_the_servers_requests() {
    let refuse_roots = from_fn(|request: Request, next: Next| async move {
        if request.method == methods::ROOTS_LIST {
            return Err(ErrorObject::invalid_request("roots are private"));
        }
        next.run(request).await
    });
    let server = builder().build().unwrap();
    let client = Client::builder("middleware-tests", "1.0")
        .protocol_version(tessera_types::ProtocolVersion::V2025_11_25)
        .roots(vec![tessera_types::Root::new("file:///tmp")])
        .layer(refuse_roots);
    let client = connect_with(server, client).await;
    let r = client.call_tool("roots", json!({})).await.unwrap();
    assert!(text(&r).contains("roots are private"), "{}", text(&r));

    let server = builder().build().unwrap();
    let plain = Client::builder("middleware-tests", "1.0")
        .protocol_version(tessera_types::ProtocolVersion::V2025_11_25)
        .roots(vec![tessera_types::Root::new("file:///tmp")]);
    let client = connect_with(server, plain).await;
    let r = client.call_tool("roots", json!({})).await.unwrap();
    assert_eq!(text(&r), "1 roots");
}

/// What a client layer saw of a request: method, input key, era.
type Seen = Arc<Mutex<Vec<(String, Option<String>, tessera_types::Era)>>>;

#[tokio::test]
async fn a_client_layer_sees_the_input_requests_of_a_modern_result() {
    let seen: Seen = Arc::default();
    let record = seen.clone();
    let watch = from_fn(move |request: Request, next: Next| {
        let record = record.clone();
        async move {
            let key = request
                .extension::<tessera_client::InputRequestKey>()
                .map(|k| k.0.clone());
            record
                .lock()
                .unwrap()
                .push((request.method.clone(), key, request.context.era));
            if request.method == methods::ROOTS_LIST {
                return Err(ErrorObject::invalid_request("roots are private"));
            }
            next.run(request).await
        }
    });
    let modern = || {
        Client::builder("middleware-tests", "1.0")
            .protocol_version(tessera_types::ProtocolVersion::V2026_07_28)
            .roots(vec![tessera_types::Root::new("file:///tmp")])
    };
    let client = connect_with(builder().build().unwrap(), modern().layer(watch)).await;
    assert_eq!(client.era(), tessera_types::Era::Modern);
    let err = client.call_tool("roots", json!({})).await.unwrap_err();
    match &err {
        tessera_client::ClientError::Input { method, error, .. } => {
            assert_eq!(method, methods::ROOTS_LIST);
            assert!(error.message.contains("roots are private"), "{error:?}");
        }
        other => panic!("expected the layer's refusal, got {other:?}"),
    }
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].0, methods::ROOTS_LIST);
    assert!(seen[0].1.is_some(), "the input key is attached");
    assert_eq!(seen[0].2, tessera_types::Era::Modern);

    // Without the layer the same input request is answered.
    let client = connect_with(builder().build().unwrap(), modern()).await;
    let r = client.call_tool("roots", json!({})).await.unwrap();
    assert_eq!(text(&r), "1 roots");
}
