//! Capabilities, both ways. `tessera discover` shows every capability key
//! the server sent, those Tessera's types do not model included: in the
//! table, and in `--json`, which is exactly the protocol result (the server
//! is a Tessera server over HTTP whose results gain capabilities from the
//! future on their way out). And the CLI's client is a 2025-11-25 task
//! receiver: a server may send it sampling and elicitation as tasks.

use std::process::{Command, Output, Stdio};

use bytes::Bytes;
use http_body_util::{BodyExt, Either, Full};
use serde_json::{Value, json};
use tessera::http::McpHttp;
use tessera::server::{RequestContext, Server, tool};
use tokio::net::TcpListener;

/// What the wrapper adds to the capabilities it passes on.
fn future_capabilities(caps: &mut serde_json::Map<String, Value>) {
    caps.insert("com.example/holograms".into(), json!({"depth": 3}));
    caps.insert("quantum".into(), json!(true));
    if let Some(Value::Object(tools)) = caps.get_mut("tools") {
        tools.insert("streaming".into(), json!(true));
    }
    caps.insert(
        "experimental".into(),
        json!({"com.example/beta": {"level": "alpha"}}),
    );
}

/// A Tessera server whose discovery and initialize results carry
/// [`future_capabilities`].
async fn server() -> (String, tokio::sync::oneshot::Sender<()>) {
    use tower::ServiceExt;
    let server = Server::builder()
        .name_version("future-caps", "1.0.0")
        .tool(tool("t").handler(|| async { "ok" }))
        .build()
        .unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let mcp = McpHttp::builder(server).bind_address(addr).build();
    let inner = mcp.clone();
    let svc = tower::service_fn(move |req: http::Request<hyper::body::Incoming>| {
        let mcp = inner.clone();
        async move {
            let response = mcp.oneshot(req).await?;
            let json_body = response
                .headers()
                .get(http::header::CONTENT_TYPE)
                .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
            if !json_body {
                // Streams and empty answers pass through untouched.
                return Ok::<_, std::convert::Infallible>(response.map(Either::Right));
            }
            let (mut parts, body) = response.into_parts();
            let bytes = body
                .collect()
                .await
                .map(|b| b.to_bytes())
                .unwrap_or_default();
            let bytes = match serde_json::from_slice::<Value>(&bytes) {
                Ok(mut v) => {
                    if let Some(Value::Object(caps)) = v.pointer_mut("/result/capabilities") {
                        future_capabilities(caps);
                    }
                    parts.headers.remove(http::header::CONTENT_LENGTH);
                    Bytes::from(v.to_string())
                }
                Err(_) => bytes,
            };
            Ok(http::Response::from_parts(
                parts,
                Either::Left(Full::new(bytes)),
            ))
        }
    });
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(tessera::http::serve_with(listener, mcp, svc, async move {
        let _ = stopped.await;
    }));
    (format!("http://{addr}/mcp"), stop)
}

async fn tessera(args: &[&str]) -> Output {
    let args: Vec<String> = args.iter().map(|s| (*s).to_owned()).collect();
    tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_tessera"))
            .args(&args)
            .env(
                "TESSERA_CACHE_DIR",
                std::env::temp_dir().join("tessera-discover-caps"),
            )
            .stdin(Stdio::null())
            .output()
            .unwrap()
    })
    .await
    .unwrap()
}

fn stdout(o: &Output) -> String {
    assert_eq!(
        o.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discover_shows_capabilities_it_does_not_model() {
    let (url, _stop) = server().await;
    let o = tessera(&["discover", "--json", "--era", "modern", &url]).await;
    let v: Value = serde_json::from_str(&stdout(&o)).expect("one JSON document");
    let caps = &v["capabilities"];
    assert_eq!(caps["com.example/holograms"], json!({"depth": 3}), "{v}");
    assert_eq!(caps["quantum"], json!(true), "{v}");
    assert_eq!(caps["tools"]["streaming"], json!(true), "{v}");
    assert_eq!(
        caps["experimental"],
        json!({"com.example/beta": {"level": "alpha"}}),
        "{v}"
    );
    assert!(v["supportedVersions"].is_array(), "the whole result: {v}");

    let text = stdout(&tessera(&["discover", "--era", "modern", &url]).await);
    let line = |prefix: &str| {
        text.lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix} line in:\n{text}"))
            .to_owned()
    };
    let caps_line = line("capabilities:");
    for shown in [
        "com.example/holograms (depth=3)",
        "quantum=true",
        "streaming",
    ] {
        assert!(caps_line.contains(shown), "{shown} in {caps_line}");
    }
    assert!(
        line("experimental:").contains("com.example/beta (level=\"alpha\")"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_discover_shows_them_too() {
    let (url, _stop) = server().await;
    let o = tessera(&["discover", "--json", "--era", "legacy", &url]).await;
    let v: Value = serde_json::from_str(&stdout(&o)).expect("one JSON document");
    assert_eq!(v["capabilities"]["quantum"], json!(true), "{v}");
    assert!(
        v["protocolVersion"].is_string(),
        "the initialize result: {v}"
    );
    let text = stdout(&tessera(&["discover", "--era", "legacy", &url]).await);
    assert!(text.contains("com.example/holograms (depth=3)"), "{text}");
}

/// Asks the client's model as a task, then waits for the task's result.
async fn ask_model(ctx: RequestContext) -> Result<String, String> {
    let o = |v: Value| v.as_object().cloned();
    let declared = ctx
        .client_capabilities()
        .tasks
        .as_ref()
        .and_then(|t| t.requests.as_ref())
        .and_then(|r| r.sampling.as_ref())
        .and_then(|s| s.create_message.as_ref());
    if declared.is_none() {
        return Err(format!(
            "no sampling tasks declared: {:?}",
            ctx.client_capabilities()
        ));
    }
    let created = ctx
        .request_client(
            "sampling/createMessage",
            o(json!({
                "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                "maxTokens": 5,
                "task": {"ttl": 60000}
            })),
        )
        .await
        .map_err(|e| e.to_string())?;
    let id = created["task"]["taskId"].clone();
    if created["task"]["status"] != "working" {
        return Err(format!("not a task: {created:?}"));
    }
    let result = ctx
        .request_client("tasks/result", o(json!({"taskId": id})))
        .await
        .map_err(|e| e.to_string())?;
    let related = &result["_meta"]["io.modelcontextprotocol/related-task"]["taskId"];
    if *related != id {
        return Err(format!("the result is not tied to the task: {result:?}"));
    }
    Ok(result["content"]["text"].as_str().unwrap_or("?").to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tessera_call_runs_a_sampling_request_as_a_task() {
    let server = Server::builder()
        .tool(tool("ask_model").handler(ask_model))
        .build()
        .unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let mcp = McpHttp::builder(server).bind_address(addr).build();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(tessera::http::serve(listener, mcp, async move {
        let _ = stopped.await;
    }));
    let url = format!("http://{addr}/mcp");
    let o = tessera(&[
        "call",
        "ask_model",
        "--era",
        "legacy",
        "--sampling-command",
        "echo sampled",
        &url,
    ])
    .await;
    assert_eq!(stdout(&o).trim(), "sampled");
    let _ = stop.send(());
}
