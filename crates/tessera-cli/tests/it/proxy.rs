//! `tessera proxy`, the built binary: a remote HTTP server offered on stdio
//! (in both eras, with `-H` headers passed on), an aggregation of a stdio
//! and an HTTP upstream from an mcpServers file, legacy sessions that
//! outlive the stdio server they share, and its usage errors.

use crate::common;

use common::{children_of, start_proxy};
use std::net::SocketAddr;
use std::process::{Command, Stdio};

use tessera::client::{ChildCommand, Client};
use tessera::http::McpHttp;
use tessera::server::{RequestContext, Server, tool};
use tessera::types::ProtocolVersion;
use tessera_http::http::HeaderMap;
use tessera_testkit::bounded;
use tokio::net::TcpListener;

const TESSERA: &str = env!("CARGO_BIN_EXE_tessera");

/// An HTTP server with `hello` and `headers` (the x-* headers it received).
async fn web_server() -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let server = Server::builder()
        .name_version("web", "1.0.0")
        .tool(
            tool("hello")
                .description("Says hello")
                .handler(|| async { "hello" }),
        )
        .tool(
            tool("headers")
                .description("The x-* headers of the request")
                .handler(|ctx: RequestContext| async move {
                    ctx.extension::<HeaderMap>()
                        .map(|h| {
                            h.iter()
                                .filter(|(k, _)| k.as_str().starts_with("x-"))
                                .map(|(k, v)| format!("{k}={}", v.to_str().unwrap_or("?")))
                                .collect::<Vec<_>>()
                                .join(",")
                        })
                        .unwrap_or_default()
                }),
        )
        .build()
        .unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let mcp = McpHttp::builder(server).bind_address(addr).build();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(tessera::http::serve(listener, mcp, async move {
        let _ = stopped.await;
    }));
    (addr, stop)
}

async fn text(c: &Client, tool: &str, args: serde_json::Value) -> String {
    let r = bounded(tool, c.call_tool(tool, args)).await.expect(tool);
    assert_ne!(r.is_error, Some(true), "{tool}: {:?}", r.content);
    r.content[0].as_text().unwrap_or_default().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_server_on_stdio_in_both_eras() {
    let (addr, stop) = web_server().await;
    let url = format!("http://{addr}/mcp");
    for v in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
        let mut cmd = ChildCommand::new(
            TESSERA,
            ["proxy", "--stdio", url.as_str(), "-H", "X-Team: blue"],
        );
        cmd.inherit_stderr = false;
        let c = bounded(
            "connecting through tessera proxy --stdio",
            Client::builder("proxy-test", "1.0")
                .protocol_version(v)
                .connect_child(&cmd),
        )
        .await
        .expect("connects");
        assert_eq!(c.protocol_version(), v);
        assert_eq!(c.server_info().name, "web");
        assert_eq!(text(&c, "hello", serde_json::json!({})).await, "hello");
        assert_eq!(
            text(&c, "headers", serde_json::json!({})).await,
            "x-team=blue",
            "{v}"
        );
        c.close().await;
    }
    let _ = stop.send(());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aggregates_a_stdio_and_an_http_upstream() {
    let (addr, stop) = web_server().await;
    let dir = std::env::temp_dir().join(format!("tessera-cli-proxy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("servers.json");
    std::fs::write(
        &config,
        serde_json::to_vec(&serde_json::json!({"mcpServers": {
            "local": {"command": TESSERA, "args": ["serve", "--stdio"]},
            "web": {"url": format!("http://{addr}/mcp"), "headers": {"X-Team": "red"}, "denyTools": ["hello"]}
        }}))
        .unwrap(),
    )
    .unwrap();
    let config_arg = config.display().to_string();
    let (proxy, url) = tokio::task::spawn_blocking(move || {
        start_proxy(&["--http", "127.0.0.1:0", "--config", config_arg.as_str()])
    })
    .await
    .unwrap();
    let transport = tessera_http::HttpClientTransport::new(&url).unwrap();
    let c = bounded(
        "connecting to the aggregating proxy",
        Client::builder("proxy-test", "1.0").connect_transport(transport),
    )
    .await
    .expect("connects");
    // The upstreams connect in the background: wait (bounded) until both list tools.
    let names = bounded("both upstreams listed", async {
        loop {
            let names: Vec<String> = c
                .list_tools()
                .await
                .expect("lists")
                .into_iter()
                .map(|t| t.name)
                .collect();
            if names.iter().any(|n| n.starts_with("local__"))
                && names.iter().any(|n| n.starts_with("web__"))
            {
                break names;
            }
            tokio::task::yield_now().await;
        }
    })
    .await;
    assert!(names.contains(&"local__echo".to_owned()), "{names:?}");
    assert!(names.contains(&"web__headers".to_owned()), "{names:?}");
    assert!(
        !names.contains(&"web__hello".to_owned()),
        "denied: {names:?}"
    );
    assert_eq!(
        text(&c, "local__add", serde_json::json!({"a": 2, "b": 3})).await,
        "5"
    );
    assert_eq!(
        text(&c, "web__headers", serde_json::json!({})).await,
        "x-team=red"
    );
    c.close().await;
    drop(proxy);
    let _ = stop.send(());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Waits for the next tool list change among `events`.
async fn tools_changed(events: &mut tessera::client::EventStream) {
    bounded("notifications/tools/list_changed", async {
        loop {
            match events.recv().await {
                Some(tessera::client::ClientEvent::ToolListChanged(_)) => return,
                Some(_) => continue,
                None => panic!("the client closed before the list change arrived"),
            }
        }
    })
    .await
}

/// Legacy sessions served over the proxy's one shared connection to a stdio
/// server outlive that server: when it dies, the next request starts a new
/// one, and list changes reach the sessions again from the new process.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_sessions_outlive_the_shared_stdio_server() {
    let (proxy, url) = tokio::task::spawn_blocking(|| {
        start_proxy(&["--http", "127.0.0.1:0", "--", TESSERA, "serve", "--stdio"])
    })
    .await
    .unwrap();
    let legacy = || async {
        let t = tessera_http::HttpClientTransport::new(&url).unwrap();
        bounded(
            "connecting to the proxy",
            Client::builder("proxy-test", "1.0")
                .protocol_version(ProtocolVersion::V2025_11_25)
                .connect_transport(t),
        )
        .await
        .expect("connects")
    };
    let a = legacy().await;
    let mut events = a.events();
    let echo = serde_json::json!({"text": "one"});
    assert_eq!(text(&a, "echo", echo.clone()).await, "one");
    let first = children_of(proxy.0.id());
    assert_eq!(first.len(), 1, "one upstream process: {first:?}");
    text(&a, "test_trigger_tool_change", serde_json::json!({})).await;
    tools_changed(&mut events).await;

    // The upstream process dies.
    let killed = Command::new("kill")
        .args(["-9", &first[0].to_string()])
        .status()
        .expect("runs kill");
    assert!(killed.success());
    // A request that meets the dying connection may fail (it is not sent
    // twice); the next one starts a new upstream process and succeeds.
    let answered = bounded("a call after the upstream died", async {
        loop {
            match a.call_tool("echo", echo.clone()).await {
                Ok(r) => break r,
                Err(_) => tokio::task::yield_now().await,
            }
        }
    })
    .await;
    assert_eq!(answered.content[0].as_text(), Some("one"));
    let second = children_of(proxy.0.id());
    assert_eq!(second.len(), 1, "one upstream process again: {second:?}");
    assert_ne!(first, second, "a new process");

    // The proxy's listen stream is open again on the new process: a change
    // there reaches the old session and a new one.
    let b = legacy().await;
    let mut b_events = b.events();
    assert_eq!(text(&b, "echo", echo.clone()).await, "one");
    text(&a, "test_trigger_tool_change", serde_json::json!({})).await;
    tools_changed(&mut events).await;
    tools_changed(&mut b_events).await;
    assert_eq!(children_of(proxy.0.id()), second, "still one process");
    a.close().await;
    b.close().await;
    drop(proxy);
}

#[test]
fn usage_errors_exit_2() {
    let dir = std::env::temp_dir().join(format!("tessera-cli-proxy-usage-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.json");
    std::fs::write(&bad, br#"{"mcpServers": {"a": {}}}"#).unwrap();
    let bad = bad.display().to_string();
    let missing = dir.join("missing.json").display().to_string();
    for (args, says) in [
        (vec!["proxy", "--", "x"], "choose how to serve"),
        (vec!["proxy", "--http", "127.0.0.1:0"], "missing target"),
        (
            vec![
                "proxy",
                "--http",
                "127.0.0.1:0",
                "--config",
                missing.as_str(),
            ],
            "missing.json",
        ),
        (
            vec!["proxy", "--http", "127.0.0.1:0", "--config", bad.as_str()],
            "needs a command",
        ),
        (
            vec!["proxy", "--stdio", "--config", bad.as_str()],
            "add --http",
        ),
    ] {
        let out = Command::new(TESSERA)
            .args(&args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
