//! Telemetry of the built binary: OTLP spans following the MCP semantic
//! conventions from `tessera serve`, `tessera proxy` and the client verbs
//! (decoded by a receiver built on the official OTLP protobuf definitions),
//! one trace across `tessera call` → `tessera proxy` → `tessera serve`,
//! calls unaffected by a collector that refuses or never answers, and
//! `tessera serve --metrics` scraped by a real Prometheus.

use crate::common;
mod prometheus;
mod receiver;

use std::process::{Command, Stdio};
use std::time::Duration;

use common::{Running, spawn_serving};
use receiver::{Mode, Received, Receiver};

const TESSERA: &str = env!("CARGO_BIN_EXE_tessera");
/// The bound of anything awaited.
const BOUND: Duration = Duration::from_secs(60);

/// The OTEL_* variables that send everything to `endpoint` quickly.
fn otel_env(endpoint: &str, service: &str) -> Vec<(&'static str, String)> {
    vec![
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.to_owned()),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf".to_owned()),
        ("OTEL_SERVICE_NAME", service.to_owned()),
        ("OTEL_BSP_SCHEDULE_DELAY", "100".to_owned()),
        ("OTEL_METRIC_EXPORT_INTERVAL", "200".to_owned()),
        ("OTEL_EXPORTER_OTLP_TIMEOUT", "2000".to_owned()),
        (
            "TESSERA_CACHE_DIR",
            std::env::temp_dir()
                .join("tessera-telemetry-test")
                .display()
                .to_string(),
        ),
    ]
}

/// The variables that send traces over OTLP/gRPC to `endpoint`.
fn grpc_env(endpoint: &str, service: &str) -> Vec<(&'static str, String)> {
    let mut env = otel_env(endpoint, service);
    env.retain(|(k, _)| *k != "OTEL_EXPORTER_OTLP_PROTOCOL");
    env.push(("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc".to_owned()));
    env.push(("OTEL_METRICS_EXPORTER", "none".to_owned()));
    env
}

/// Starts `tessera serve --http 127.0.0.1:0` exporting to `endpoint`;
/// returns it and its MCP URL.
async fn serve(endpoint: &str) -> (Running, String) {
    serve_env(otel_env(endpoint, "serve")).await
}

/// Starts `tessera serve --http 127.0.0.1:0` with `env`.
async fn serve_env(env: Vec<(&'static str, String)>) -> (Running, String) {
    let (child, port) = tokio::task::spawn_blocking(move || {
        let mut cmd = Command::new(TESSERA);
        cmd.args(["serve", "--http", "127.0.0.1:0"]).envs(env);
        spawn_serving(&mut cmd, BOUND)
    })
    .await
    .unwrap();
    (Running(child), format!("http://127.0.0.1:{port}/mcp"))
}

/// Runs a client verb exporting to `endpoint`; returns its exit status
/// and output.
async fn verb(endpoint: &str, service: &str, args: &[&str]) -> (bool, String) {
    verb_env(otel_env(endpoint, service), args).await
}

/// Runs a client verb with `env`.
async fn verb_env(env: Vec<(&'static str, String)>, args: &[&str]) -> (bool, String) {
    let out = tokio::time::timeout(
        BOUND,
        tokio::process::Command::new(TESSERA)
            .args(args)
            .envs(env)
            .stdin(Stdio::null())
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("the verb finishes")
    .expect("the verb runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

/// The spans of `service` named `name`.
fn find<'a>(spans: &'a [Received], service: &str, name: &str) -> Vec<&'a Received> {
    spans
        .iter()
        .filter(|s| s.service == service && s.name() == name)
        .collect()
}

const CLIENT: i32 = 3; // SPAN_KIND_CLIENT
const SERVER: i32 = 2; // SPAN_KIND_SERVER
const STATUS_ERROR: i32 = 2;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn spans_follow_the_mcp_conventions_in_both_eras() {
    let rx = Receiver::start(Mode::Answer).await;
    let (_server, url) = serve(&rx.endpoint()).await;
    let legacy = ["--protocol-version", "2025-11-25"];
    let modern = ["--protocol-version", "2026-07-28"];

    // A tool call, legacy era (a session).
    let (ok, out) = verb(
        &rx.endpoint(),
        "call-legacy",
        &[&["call", "add", r#"{"a":1,"b":2}"#, &url][..], &legacy[..]].concat(),
    )
    .await;
    assert!(ok, "{out}");
    rx.wait_for("the legacy tool call's spans", BOUND, |r| {
        let s = r.spans();
        !find(&s, "call-legacy", "tools/call add").is_empty()
            && s.iter().any(|x| {
                x.service == "serve"
                    && x.name() == "tools/call add"
                    && x.attr("mcp.session.id").is_some()
            })
    })
    .await;
    let spans = rx.spans();
    let client = find(&spans, "call-legacy", "tools/call add")[0];
    assert_eq!(client.span.kind, CLIENT);
    assert_eq!(
        client.attr("mcp.method.name").as_deref(),
        Some("tools/call")
    );
    assert_eq!(client.attr("gen_ai.tool.name").as_deref(), Some("add"));
    assert_eq!(
        client.attr("gen_ai.operation.name").as_deref(),
        Some("execute_tool")
    );
    assert_eq!(
        client.attr("mcp.protocol.version").as_deref(),
        Some("2025-11-25")
    );
    assert!(client.attr("jsonrpc.request.id").is_some());
    assert_eq!(client.attr("network.transport").as_deref(), Some("tcp"));
    assert_eq!(
        client.attr("network.protocol.name").as_deref(),
        Some("http")
    );
    assert_eq!(
        client.attr("network.protocol.version").as_deref(),
        Some("1.1"),
        "the HTTP version of the handshake's answer"
    );
    assert_eq!(client.attr("server.address").as_deref(), Some("127.0.0.1"));
    assert_eq!(
        client.attr("server.port"),
        url.split(':')
            .nth(2)
            .and_then(|p| p.split('/').next())
            .map(str::to_owned)
    );
    assert_eq!(client.attr("error.type"), None);
    assert_ne!(
        client.span.status.as_ref().map_or(0, |s| s.code),
        STATUS_ERROR
    );
    let server = spans
        .iter()
        .find(|x| x.service == "serve" && x.trace_id() == client.trace_id())
        .expect("the server's span is in the client's trace");
    assert_eq!(server.name(), "tools/call add");
    assert_eq!(server.span.kind, SERVER);
    assert_eq!(
        server.parent_id(),
        client.span_id(),
        "parented on the client span"
    );
    assert_eq!(server.attr("network.transport").as_deref(), Some("tcp"));
    assert_eq!(
        server.attr("network.protocol.name").as_deref(),
        Some("http")
    );
    assert_eq!(
        server.attr("network.protocol.version").as_deref(),
        Some("1.1")
    );
    assert_eq!(server.attr("client.address").as_deref(), Some("127.0.0.1"));
    assert!(server.attr("client.port").is_some());
    assert!(
        server.attr("mcp.session.id").is_some(),
        "a legacy request is in a session"
    );
    assert_eq!(
        client.attr("mcp.session.id"),
        server.attr("mcp.session.id"),
        "both sides name the session"
    );
    assert_eq!(
        server.attr("jsonrpc.request.id"),
        client.attr("jsonrpc.request.id")
    );

    // A tool returning isError, a JSON-RPC error, a prompt, a resource
    // read, and a 2026-07-28 call.
    let runs: [(&str, &[&str], &[&str], bool); 5] = [
        (
            "call-iserror",
            &["call", "test_error_handling"],
            &legacy,
            false,
        ),
        ("call-unknown", &["call", "no_such_tool"], &legacy, false),
        ("get-prompt", &["get", "test_simple_prompt"], &legacy, true),
        (
            "read-resource",
            &["read", "test://static-text"],
            &legacy,
            true,
        ),
        (
            "call-modern",
            &["call", "echo", r#"{"text":"hi"}"#],
            &modern,
            true,
        ),
    ];
    for (service, args, version, succeeds) in runs {
        let args = [args, &[url.as_str()][..], version].concat();
        let (ok, out) = verb(&rx.endpoint(), service, &args).await;
        // An isError result and an unknown tool fail the verb.
        assert_eq!(ok, succeeds, "{service}: {out}");
    }
    let wanted = [
        ("call-iserror", "tools/call test_error_handling"),
        ("call-unknown", "tools/call no_such_tool"),
        ("get-prompt", "prompts/get test_simple_prompt"),
        ("read-resource", "resources/read"),
        ("call-modern", "tools/call echo"),
    ];
    rx.wait_for(
        "the spans of every verb and their server spans",
        BOUND,
        |r| {
            let s = r.spans();
            wanted.iter().all(|(svc, name)| {
                find(&s, svc, name).iter().any(|c| {
                    s.iter()
                        .any(|x| x.service == "serve" && x.parent_id() == c.span_id())
                })
            })
        },
    )
    .await;
    let spans = rx.spans();
    let pair = |svc: &str, name: &str| {
        let c = find(&spans, svc, name)[0].clone();
        let s = spans
            .iter()
            .find(|x| x.service == "serve" && x.parent_id() == c.span_id())
            .unwrap()
            .clone();
        assert_eq!(s.name(), name);
        assert_eq!(s.trace_id(), c.trace_id());
        (c, s)
    };

    let (c, s) = pair("call-iserror", "tools/call test_error_handling");
    for x in [&c, &s] {
        assert_eq!(x.attr("error.type").as_deref(), Some("tool_error"), "{x:?}");
        assert_eq!(x.span.status.as_ref().unwrap().code, STATUS_ERROR);
        assert_eq!(
            x.attr("rpc.response.status_code"),
            None,
            "a result, not a JSON-RPC error"
        );
    }

    let (c, s) = pair("call-unknown", "tools/call no_such_tool");
    for x in [&c, &s] {
        let code = x.attr("error.type").expect("error.type is set");
        assert!(
            code.parse::<i64>().is_ok_and(|n| n < 0),
            "a JSON-RPC code: {code}"
        );
        assert_eq!(x.attr("rpc.response.status_code"), Some(code));
        let status = x.span.status.as_ref().unwrap();
        assert_eq!(status.code, STATUS_ERROR);
        assert!(
            !status.message.is_empty(),
            "the status carries the error message"
        );
    }

    let (c, s) = pair("get-prompt", "prompts/get test_simple_prompt");
    for x in [&c, &s] {
        assert_eq!(
            x.attr("gen_ai.prompt.name").as_deref(),
            Some("test_simple_prompt")
        );
        assert_eq!(x.attr("gen_ai.operation.name"), None);
        assert_eq!(x.attr("error.type"), None);
    }

    let (c, s) = pair("read-resource", "resources/read");
    for x in [&c, &s] {
        assert_eq!(
            x.attr("mcp.resource.uri").as_deref(),
            Some("test://static-text")
        );
    }

    let (c, s) = pair("call-modern", "tools/call echo");
    for x in [&c, &s] {
        assert_eq!(
            x.attr("mcp.protocol.version").as_deref(),
            Some("2026-07-28")
        );
        assert_eq!(x.attr("mcp.session.id"), None, "2026-07-28 has no session");
    }
    assert_eq!(
        c.attr("tessera.server.name").as_deref(),
        Some("tessera-reference")
    );
    // A connection's handshake is a span of its own, named for the era it
    // found: the verbs above connected in both.
    let init = find(&spans, "call-legacy", "initialize");
    assert_eq!(init.len(), 1, "{init:?}");
    assert_eq!(init[0].span.kind, CLIENT);
    assert_eq!(
        init[0].attr("mcp.protocol.version").as_deref(),
        Some("2025-11-25")
    );
    let (ok, out) = verb(&rx.endpoint(), "discover", &["discover", &url]).await;
    assert!(ok, "{out}");
    rx.wait_for("the server/discover span", BOUND, |r| {
        !find(&r.spans(), "discover", "server/discover").is_empty()
    })
    .await;
    let d = find(&rx.spans(), "discover", "server/discover")[0].clone();
    assert_eq!(
        d.attr("mcp.protocol.version").as_deref(),
        Some("2026-07-28")
    );
    assert_eq!(
        d.attr("tessera.server.name").as_deref(),
        Some("tessera-reference")
    );

    // The four duration histograms reach the collector too (the server's
    // session ends when each verb closes its session).
    rx.wait_for("the duration metrics", BOUND, |r| {
        let names = r.metric_names();
        [
            "mcp.client.operation.duration",
            "mcp.server.operation.duration",
            "mcp.client.session.duration",
            "mcp.server.session.duration",
        ]
        .iter()
        .all(|n| names.contains(*n))
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_trace_runs_from_call_through_proxy_to_serve() {
    let rx = Receiver::start(Mode::Answer).await;
    let (_server, url) = serve(&rx.endpoint()).await;
    let env = otel_env(&rx.endpoint(), "proxy");
    let upstream = url.clone();
    let (_proxy, proxy_url) = tokio::task::spawn_blocking(move || {
        common::start_proxy_env(&[upstream.as_str(), "--http", "127.0.0.1:0"], &env)
    })
    .await
    .unwrap();
    let (ok, out) = verb(
        &rx.endpoint(),
        "call",
        &[
            "call",
            "add",
            r#"{"a":2,"b":3}"#,
            &proxy_url,
            "--protocol-version",
            "2025-11-25",
        ],
    )
    .await;
    assert!(ok, "{out}");
    check_chain(&rx, "call", "proxy", "tcp").await;

    // The same through a proxy the verb starts on its stdio.
    let args = [
        "call",
        "add",
        r#"{"a":2,"b":3}"#,
        "--protocol-version",
        "2025-11-25",
        "--",
        "env",
        "OTEL_SERVICE_NAME=proxy-stdio",
        TESSERA,
        "proxy",
        &url,
        "--stdio",
    ];
    let (ok, out) = verb(&rx.endpoint(), "call-stdio", &args).await;
    assert!(ok, "{out}");
    check_chain(&rx, "call-stdio", "proxy-stdio", "pipe").await;
}

/// Waits for the trace of `caller`'s `tools/call add` and checks its chain:
/// the caller's `CLIENT` span, the proxy's `SERVER` span under it (over
/// `transport`), the proxy's `CLIENT` span under that, and the server's
/// `SERVER` span at the bottom.
async fn check_chain(rx: &Receiver, caller: &str, proxy: &str, transport: &str) {
    rx.wait_for("four spans in one trace", BOUND, |r| {
        let s = r.spans();
        let Some(c) = find(&s, caller, "tools/call add").first().cloned() else {
            return false;
        };
        s.iter()
            .filter(|x| x.trace_id() == c.trace_id() && x.name() == "tools/call add")
            .count()
            >= 4
    })
    .await;
    let spans = rx.spans();
    let call = find(&spans, caller, "tools/call add")[0];
    let in_trace: Vec<&Received> = spans
        .iter()
        .filter(|x| x.trace_id() == call.trace_id() && x.name() == "tools/call add")
        .collect();
    let child_of = |parent: &Received, service: &str, kind: i32| -> Received {
        in_trace
            .iter()
            .find(|x| {
                x.service == service && x.span.kind == kind && x.parent_id() == parent.span_id()
            })
            .map(|x| (*x).clone())
            .unwrap_or_else(|| {
                panic!("no {service} span of kind {kind} under {parent:?}; trace: {in_trace:#?}")
            })
    };
    assert_eq!(call.span.kind, CLIENT);
    assert_eq!(call.parent_id(), "", "the verb's span is the root");
    assert_eq!(call.attr("network.transport").as_deref(), Some(transport));
    let proxy_in = child_of(call, proxy, SERVER);
    assert_eq!(
        proxy_in.attr("network.transport").as_deref(),
        Some(transport)
    );
    let proxy_out = child_of(&proxy_in, proxy, CLIENT);
    assert_eq!(proxy_out.attr("network.transport").as_deref(), Some("tcp"));
    let served = child_of(&proxy_out, "serve", SERVER);
    assert_eq!(served.attr("gen_ai.tool.name").as_deref(), Some("add"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn spans_travel_over_otlp_grpc() {
    let rx = Receiver::start_grpc().await;
    let (_server, url) = serve_env(grpc_env(&rx.endpoint(), "serve")).await;
    let args = [
        "call",
        "add",
        r#"{"a":1,"b":2}"#,
        &url,
        "--protocol-version",
        "2026-07-28",
    ];
    let (ok, out) = verb_env(grpc_env(&rx.endpoint(), "call"), &args).await;
    assert!(ok, "{out}");
    rx.wait_for("the client and server spans over gRPC", BOUND, |r| {
        let s = r.spans();
        find(&s, "call", "tools/call add").iter().any(|c| {
            s.iter().any(|x| {
                x.service == "serve" && x.span.kind == SERVER && x.parent_id() == c.span_id()
            })
        })
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn calls_succeed_when_the_collector_refuses_or_never_answers() {
    // Refuses: a port nothing listens on.
    let refused = format!("http://127.0.0.1:{}", common::free_port());
    let hanging = Receiver::start(Mode::Hang).await;
    for endpoint in [refused, hanging.endpoint()] {
        let (_server, url) = serve(&endpoint).await;
        for _ in 0..5 {
            let (ok, out) = verb(
                &endpoint,
                "call",
                &[
                    "call",
                    "add",
                    r#"{"a":1,"b":1}"#,
                    &url,
                    "--protocol-version",
                    "2025-11-25",
                    "--json",
                ],
            )
            .await;
            assert!(ok, "the call succeeds whatever the collector does: {out}");
            assert!(out.contains("2"), "{out}");
        }
    }
    // The stuck collector was reached (the exports were attempted).
    assert!(hanging.requests() > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_collector_that_never_answers_costs_a_bounded_queue() {
    let hanging = Receiver::start(Mode::Hang).await;
    let mut env = otel_env(&hanging.endpoint(), "serve");
    env.extend([
        ("OTEL_BSP_MAX_QUEUE_SIZE", "8".to_owned()),
        ("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "4".to_owned()),
        ("TESSERA_LOG", "warn".to_owned()),
    ]);
    let (child, port, lines) = tokio::task::spawn_blocking(move || {
        let mut cmd = Command::new(TESSERA);
        cmd.args(["serve", "--http", "127.0.0.1:0"]).envs(env);
        common::spawn_serving_logged(&mut cmd, BOUND)
    })
    .await
    .unwrap();
    let _server = Running(child);
    let url = format!("http://127.0.0.1:{port}/mcp");
    // Far more spans than the queue holds while the first export hangs:
    // every call still gets its answer.
    let http = reqwest::Client::new();
    for i in 0..40 {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"n{i}"}},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}},"io.modelcontextprotocol/clientInfo":{{"name":"t","version":"1"}}}}}}}}"#
        );
        let r = http
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", "echo")
            .body(body)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let text = r.text().await.unwrap();
        assert!(text.contains(&format!("n{i}")), "{text}");
    }
    // The queue is full, so new spans are dropped (not kept), and the SDK
    // says so once.
    let said = tokio::task::spawn_blocking(move || {
        let deadline = std::time::Instant::now() + BOUND;
        let mut said = Vec::new();
        while let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) {
            match lines.recv_timeout(left) {
                Ok(l) if l.contains("SpanDroppingStarted") => return Ok(l),
                Ok(l) => said.push(l),
                Err(_) => break,
            }
        }
        Err(said)
    })
    .await
    .unwrap();
    assert!(said.is_ok(), "no warning of dropped spans: {said:?}");
    assert!(hanging.requests() > 0, "the export was attempted");
}

/// Sends a 2026-07-28 `tools/call echo` to `url` over HTTP/2 with prior
/// knowledge (h2c); returns the status.
async fn call_over_h2(url: &str) -> u16 {
    use http_body_util::{BodyExt, Full};
    use hyper_util::rt::{TokioExecutor, TokioIo};
    let uri: http::Uri = url.parse().unwrap();
    let authority = uri.authority().unwrap().as_str().to_owned();
    let tcp = tokio::net::TcpStream::connect(&authority).await.unwrap();
    let (mut send, conn) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(tcp))
            .await
            .expect("an HTTP/2 handshake");
    tokio::spawn(conn);
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"h2"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"h2","version":"1"}}}}"#;
    let req = http::Request::post(uri)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "echo")
        .body(Full::new(bytes::Bytes::from_static(body.as_bytes())))
        .unwrap();
    let r = send.send_request(req).await.expect("an answer over HTTP/2");
    let status = r.status().as_u16();
    let _ = r.into_body().collect().await;
    status
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_request_over_http2_is_recorded_as_version_2() {
    let rx = Receiver::start(Mode::Answer).await;
    let (_server, url) = serve(&rx.endpoint()).await;
    assert_eq!(call_over_h2(&url).await, 200);
    rx.wait_for("the server span of the HTTP/2 call", BOUND, |r| {
        find(&r.spans(), "serve", "tools/call echo")
            .iter()
            .any(|s| s.attr("network.protocol.version").is_some())
    })
    .await;
    let spans = rx.spans();
    let s = find(&spans, "serve", "tools/call echo")[0];
    assert_eq!(s.span.kind, SERVER);
    assert_eq!(s.attr("network.protocol.name").as_deref(), Some("http"));
    assert_eq!(s.attr("network.protocol.version").as_deref(), Some("2"));
    assert_eq!(s.attr("mcp.session.id"), None, "2026-07-28 has no session");
}
