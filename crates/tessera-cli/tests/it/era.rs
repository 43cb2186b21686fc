//! `tessera call --era`: `legacy` speaks the initialize handshake without
//! the `server/discover` probe, `modern` 2026-07-28 only, and the default
//! probes (a Tessera server then answers in 2026-07-28). A server that
//! ignores the probe costs the probe timeout once: later runs remember it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

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

/// An empty cache directory for one test (the era verdicts live there).
fn cache_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tessera-era-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

async fn tessera(args: Vec<String>) -> Output {
    tessera_with_cache(args, &cache_dir("default")).await
}

async fn tessera_with_cache(args: Vec<String>, cache: &Path) -> Output {
    let cache = cache.to_owned();
    tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_tessera"))
            .args(&args)
            .env("TESSERA_CACHE_DIR", cache)
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

/// How the server in front of which [`wrapped_server`] sits misbehaves.
#[derive(Clone, Copy)]
enum Quirk {
    /// Never answers `server/discover` (a legacy-only server that ignores
    /// the probe: the request stays open until the client gives up).
    IgnoresTheProbe,
    /// Answers 404 to anything but a 2026-07-28 request (a server that
    /// dropped the legacy era).
    ModernOnly,
}

/// A server over HTTP with `quirk`; counts the probes it sees.
async fn wrapped_server(
    quirk: Quirk,
) -> (String, Arc<AtomicUsize>, tokio::sync::oneshot::Sender<()>) {
    use tower::ServiceExt;
    let server = Server::builder()
        .name_version("quirky-http", "1.0.0")
        .tool(tool("version").handler(|ctx: RequestContext| async move {
            ctx.protocol_version().as_str().to_owned()
        }))
        .build()
        .unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let mcp = McpHttp::builder(server)
        .bind_address(addr)
        .endpoint_path("/mcp")
        .build();
    let probes = Arc::new(AtomicUsize::new(0));
    let counted = probes.clone();
    let inner = mcp.clone();
    let svc = tower::service_fn(move |mut req: http::Request<hyper::body::Incoming>| {
        let (mcp, probes) = (inner.clone(), counted.clone());
        async move {
            let method = req.headers().get("mcp-method").cloned();
            if method.is_some_and(|m| m == "server/discover") {
                probes.fetch_add(1, Ordering::SeqCst);
                if matches!(quirk, Quirk::IgnoresTheProbe) {
                    std::future::pending::<()>().await;
                }
            }
            let modern = req
                .headers()
                .get("mcp-protocol-version")
                .is_some_and(|v| v == "2026-07-28");
            if matches!(quirk, Quirk::ModernOnly) && !modern {
                *req.uri_mut() = http::Uri::from_static("/no-legacy-here");
            }
            mcp.oneshot(req).await
        }
    });
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(tessera::http::serve_with(listener, mcp, svc, async move {
        let _ = stopped.await;
    }));
    (format!("http://{addr}/mcp"), probes, stop)
}

async fn version_cached(url: &str, cache: &Path, era: Option<&str>) -> String {
    let mut args = vec![
        "call".to_owned(),
        "version".to_owned(),
        // The whole command, the probe (half of it at most) included.
        "--timeout".to_owned(),
        "6".to_owned(),
    ];
    if let Some(e) = era {
        args.extend(["--era".to_owned(), e.to_owned()]);
    }
    args.push(url.to_owned());
    let out = tessera_with_cache(args, cache).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_ignores_the_probe_costs_it_once() {
    let (url, probes, _stop) = wrapped_server(Quirk::IgnoresTheProbe).await;
    let cache = cache_dir("ignores");
    // The first run probes, waits out the probe timeout, then initializes.
    assert_eq!(version_cached(&url, &cache, None).await, "2025-11-25");
    assert_eq!(probes.load(Ordering::SeqCst), 1);
    let file = std::fs::read_to_string(cache.join("era.json")).unwrap();
    assert!(file.contains(&url), "{file}");
    // The next runs remember the verdict and do not probe.
    assert_eq!(version_cached(&url, &cache, None).await, "2025-11-25");
    assert_eq!(version_cached(&url, &cache, None).await, "2025-11-25");
    assert_eq!(probes.load(Ordering::SeqCst), 1);
    // `--era legacy` never probes, with or without a verdict.
    let fresh = cache_dir("ignores-legacy");
    assert_eq!(
        version_cached(&url, &fresh, Some("legacy")).await,
        "2025-11-25"
    );
    assert_eq!(probes.load(Ordering::SeqCst), 1);
    assert!(!fresh.join("era.json").exists(), "nothing to remember");
    // An expired verdict is probed again.
    let mut v: serde_json::Value = serde_json::from_str(&file).unwrap();
    v["legacy"][url.as_str()] = serde_json::json!(0);
    std::fs::write(cache.join("era.json"), v.to_string()).unwrap();
    assert_eq!(version_cached(&url, &cache, None).await, "2025-11-25");
    assert_eq!(probes.load(Ordering::SeqCst), 2);
    let _ = std::fs::remove_dir_all(&cache);
    let _ = std::fs::remove_dir_all(&fresh);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remembered_verdict_that_no_longer_holds_is_probed_again() {
    // Remembered as legacy-only, the target now speaks 2026-07-28 only: the
    // legacy attempt fails, the run probes and succeeds, and the verdict is
    // forgotten.
    let (url, probes, _stop) = wrapped_server(Quirk::ModernOnly).await;
    let cache = cache_dir("stale");
    std::fs::create_dir_all(&cache).unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let stale = serde_json::json!({"legacy": {url.as_str(): now}});
    std::fs::write(cache.join("era.json"), stale.to_string()).unwrap();
    assert_eq!(version_cached(&url, &cache, None).await, "2026-07-28");
    assert_eq!(probes.load(Ordering::SeqCst), 1);
    let file = std::fs::read_to_string(cache.join("era.json")).unwrap();
    assert!(!file.contains(&url), "{file}");
    let _ = std::fs::remove_dir_all(&cache);
}
