//! `tessera call --era`: `legacy` speaks the initialize handshake without
//! the `server/discover` probe, `modern` 2026-07-28 only, and the default
//! probes (a Tessera server then answers in 2026-07-28).

use std::process::{Command, Output, Stdio};

use tessera::http::McpHttp;
use tessera::server::{RequestContext, Server, tool};
use tokio::net::TcpListener;

/// A server whose tool `version` answers with the protocol version of the request.
async fn mcp_server() -> (String, tokio::sync::oneshot::Sender<()>) {
    let server = Server::builder()
        .name_version("era-test", "1.0.0")
        .tool(
            tool("version")
                .description("The protocol version of this request")
                .handler(|ctx: RequestContext| async move {
                    ctx.protocol_version().as_str().to_owned()
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
    (format!("http://{addr}/mcp"), stop)
}

async fn tessera(args: Vec<String>) -> Output {
    tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_tessera"))
            .args(&args)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    })
    .await
    .unwrap()
}

async fn version_with(url: &str, era: Option<&str>) -> String {
    let mut args = vec!["call".to_owned(), "version".to_owned()];
    if let Some(e) = era {
        args.extend(["--era".to_owned(), e.to_owned()]);
    }
    args.push(url.to_owned());
    let out = tessera(args).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_era_option_picks_the_handshake() {
    let (url, _stop) = mcp_server().await;
    assert_eq!(version_with(&url, Some("legacy")).await, "2025-11-25");
    assert_eq!(version_with(&url, Some("modern")).await, "2026-07-28");
    assert_eq!(version_with(&url, None).await, "2026-07-28");
    let out = tessera(vec![
        "call".into(),
        "version".into(),
        "--era".into(),
        "ancient".into(),
        url,
    ])
    .await;
    assert_eq!(out.status.code(), Some(2), "a bad --era is a usage error");
}
