//! A server that speaks only the 2024-11-05 HTTP+SSE transport (`GET /sse`
//! for the event stream, `POST /message?sessionId=…`) and only protocol
//! version 2024-11-05, as old servers do: `tessera` reaches it at its `/sse`
//! URL (POST refused with 405, then the GET stream, as the backwards
//! compatibility rules say), and `tessera proxy --http` serves it to clients
//! of both eras, alone and aggregated.

use crate::common;

use common::start_proxy;
use std::net::SocketAddr;
use std::process::Stdio;

use tessera::client::Client;
use tessera::http::McpHttp;
use tessera::server::{Server, tool};
use tessera::types::ProtocolVersion;
use tessera_testkit::bounded;
use tokio::net::TcpListener;

const TESSERA: &str = env!("CARGO_BIN_EXE_tessera");

/// The old server: version 2024-11-05 only, and its Streamable HTTP endpoint
/// moved to a path no client is given, so that `/sse` and `/message` are all
/// it offers.
async fn old_server() -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let server = Server::builder()
        .name_version("old-sse", "0.9.0")
        .tool(
            tool("hello")
                .description("Says hello")
                .handler(|| async { "hello from 2024" }),
        )
        .build()
        .unwrap();
    let factory = move || {
        (
            server
                .engine_config()
                .with_versions([ProtocolVersion::V2024_11_05]),
            server.clone(),
        )
    };
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let mcp = McpHttp::builder(factory)
        .bind_address(addr)
        .endpoint_path("/not-offered")
        .build();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(tessera::http::serve(listener, mcp, async move {
        let _ = stopped.await;
    }));
    (addr, stop)
}

/// Runs the binary (bounded) and returns exit code, stdout and stderr.
async fn run(args: &[&str]) -> (i32, String, String) {
    let out = bounded(
        "tessera",
        tokio::process::Command::new(TESSERA)
            .args(args)
            .stdin(Stdio::null())
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("runs tessera");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_sse_only_server_is_a_target() {
    let (addr, stop) = old_server().await;
    let url = format!("http://{addr}/sse");

    let (code, out, err) = run(&["call", "hello", "{}", &url]).await;
    assert_eq!((code, out.trim()), (0, "hello from 2024"), "stderr: {err}");

    let (code, out, err) = run(&["discover", "--json", &url]).await;
    assert_eq!(code, 0, "stderr: {err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("one JSON document");
    assert_eq!(v["protocolVersion"], "2024-11-05", "{v}");
    assert_eq!(v["serverInfo"]["name"], "old-sse", "{v}");

    let (code, out, err) = run(&["list", "tools", "--json", &url]).await;
    assert_eq!(code, 0, "stderr: {err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("one JSON document");
    assert_eq!(v["tools"][0]["name"], "hello", "{v}");

    // Pinned to the modern era, it is told the server does not speak it.
    let (code, _, err) = run(&["call", "hello", "{}", "--era", "modern", &url]).await;
    assert_eq!(
        code, 9,
        "a 2024-11-05 server does not offer 2026-07-28 (exit 9): {err}"
    );
    assert!(err.contains("server/discover"), "says why: {err}");
    assert!(err.contains("--era"), "says what to change: {err}");
    let _ = stop.send(());
}

async fn connect(url: &str, v: ProtocolVersion) -> Client {
    bounded(
        "connecting to the proxy",
        Client::builder("sse-upstream-test", "1.0")
            .protocol_version(v)
            .connect_transport(tessera::http::HttpClientTransport::new(url).unwrap()),
    )
    .await
    .expect("connects")
}

async fn text(c: &Client, tool: &str) -> String {
    let r = bounded(tool, c.call_tool(tool, serde_json::json!({})))
        .await
        .expect(tool);
    assert_ne!(r.is_error, Some(true), "{tool}: {:?}", r.content);
    r.content[0].as_text().unwrap_or_default().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_sse_only_server_is_a_proxy_upstream() {
    let (addr, stop) = old_server().await;
    let upstream = format!("http://{addr}/sse");

    // One upstream: clients of both eras.
    let args = vec!["--http".into(), "127.0.0.1:0".into(), upstream.clone()];
    let (proxy, url) = tokio::task::spawn_blocking(move || start_proxy(&args))
        .await
        .unwrap();
    for v in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
        let c = connect(&url, v).await;
        assert_eq!(c.protocol_version(), v);
        assert_eq!(text(&c, "hello").await, "hello from 2024", "{v}");
        // A 2026-07-28 list needs caching hints the old server never gives:
        // the proxy adds the cautious ones.
        let page = bounded("tools/list", c.list_tools_page(None))
            .await
            .expect("lists");
        if v == ProtocolVersion::V2026_07_28 {
            assert_eq!(page.ttl_ms, Some(0));
            assert_eq!(
                serde_json::to_value(page.cache_scope).unwrap(),
                serde_json::json!("private")
            );
        }
        c.close().await;
    }
    drop(proxy);

    // Aggregated, declared as an SSE server in the mcpServers file.
    let dir = std::env::temp_dir().join(format!("tessera-cli-sse-up-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("servers.json");
    std::fs::write(
        &config,
        serde_json::to_vec(&serde_json::json!({"mcpServers": {
            "old": {"type": "sse", "url": upstream}
        }}))
        .unwrap(),
    )
    .unwrap();
    let args = vec![
        "--http".into(),
        "127.0.0.1:0".into(),
        "--config".into(),
        config.display().to_string(),
    ];
    let (proxy, url) = tokio::task::spawn_blocking(move || start_proxy(&args))
        .await
        .unwrap();
    for v in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
        let c = connect(&url, v).await;
        // The upstream connects in the background: wait (bounded) until it lists.
        bounded("the upstream's tools listed", async {
            loop {
                let tools = c.list_tools().await.expect("lists");
                if tools.iter().any(|t| t.name == "old__hello") {
                    break;
                }
                tokio::task::yield_now().await;
            }
        })
        .await;
        assert_eq!(text(&c, "old__hello").await, "hello from 2024", "{v}");
        c.close().await;
    }
    drop(proxy);
    let _ = stop.send(());
    let _ = std::fs::remove_dir_all(&dir);
}
