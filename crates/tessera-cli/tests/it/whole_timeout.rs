//! `--timeout` is the wall-clock bound of the whole command: a server that
//! floods progress cannot stretch `tessera call` past it, and the era probe
//! counts inside it. `--progress-timeout` is the bound restarted by each
//! progress notification.

use std::net::SocketAddr;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use tessera::http::McpHttp;
use tessera::server::{RequestContext, Server, tool};
use tokio::net::TcpListener;

/// A server with `flood` (progress every 20 ms, never an answer) and
/// `once` (one progress notification, then nothing).
async fn server() -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let server = Server::builder()
        .tool(tool("flood").description("progress forever").handler(
            |ctx: RequestContext| async move {
                for i in 0u32.. {
                    ctx.progress(f64::from(i), None, Some("still going"));
                    // The server's own pace, not a test waiting for a state.
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                "never"
            },
        ))
        .tool(
            tool("once")
                .description("one progress, then silence")
                .handler(|ctx: RequestContext| async move {
                    ctx.progress(1.0, None, Some("started"));
                    std::future::pending::<()>().await;
                    "never"
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

/// Runs tessera (off the async threads) and measures how long it took.
async fn timed(args: &[&str]) -> (Output, Duration) {
    let args: Vec<String> = args.iter().map(|s| (*s).to_owned()).collect();
    tokio::task::spawn_blocking(move || {
        let started = Instant::now();
        let out = Command::new(env!("CARGO_BIN_EXE_tessera"))
            .args(&args)
            // The era cache of this test only.
            .env(
                "TESSERA_CACHE_DIR",
                std::env::temp_dir().join(format!("tessera-timeout-{}", std::process::id())),
            )
            .stdin(Stdio::null())
            .output()
            .unwrap();
        (out, started.elapsed())
    })
    .await
    .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_progress_flood_cannot_extend_the_timeout() {
    let (addr, _stop) = server().await;
    let url = format!("http://{addr}/mcp");
    let (out, took) = timed(&["call", "flood", &url, "--timeout", "2"]).await;
    assert_eq!(out.status.code(), Some(6), "{}", stderr(&out));
    assert!(stderr(&out).contains("--timeout 2"), "{}", stderr(&out));
    // Before: each progress restarted the timeout, up to 600 s.
    assert!(took >= Duration::from_secs(2), "{took:?}");
    assert!(took < Duration::from_millis(3500), "{took:?}");
    eprintln!("call flood --timeout 2 ended after {took:?}");

    // --progress-timeout: one progress restarts it once, then silence ends it
    // long before --timeout.
    let (out, took) = timed(&[
        "call",
        "once",
        &url,
        "--timeout",
        "30",
        "--progress-timeout",
        "1",
    ])
    .await;
    assert_eq!(out.status.code(), Some(6), "{}", stderr(&out));
    assert!(took < Duration::from_secs(10), "{took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_probe_counts_inside_the_timeout() {
    // A stdio server that reads everything and never answers: the probe and
    // then initialize wait, both inside --timeout 3 (before: 3 s of probe,
    // then 3 s more for initialize, up to 8 s).
    let (out, took) = timed(&[
        "list",
        "tools",
        "--timeout",
        "3",
        "--",
        "sh",
        "-c",
        "cat >/dev/null",
    ])
    .await;
    assert_eq!(out.status.code(), Some(6), "{}", stderr(&out));
    assert!(took >= Duration::from_secs(3), "{took:?}");
    assert!(took < Duration::from_millis(4500), "{took:?}");
    eprintln!("list tools --timeout 3 against a silent server ended after {took:?}");
}
