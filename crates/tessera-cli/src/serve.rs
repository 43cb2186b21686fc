//! `tessera serve`: the reference server on stdio or Streamable HTTP.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use clap::Args;
use tessera_http::{McpHttp, ResponseMode};

use crate::Failure;

/// `tessera serve`.
#[derive(Debug, Args)]
#[command(after_help = "\
HTTP: one endpoint serves every protocol version at once: 2025-03-26 to 2025-11-25 with \
sessions (Mcp-Session-Id, GET stream, DELETE, resumable SSE), 2026-07-28 statelessly, and \
the 2024-11-05 HTTP+SSE pair at /sse and /message. Host and Origin are checked against the \
bind address (a loopback bind accepts localhost, 127.0.0.1 and [::1] only).")]
pub struct ServeArgs {
    /// Serve on stdin/stdout (newline-delimited JSON-RPC).
    #[arg(long, conflicts_with = "http")]
    stdio: bool,

    /// Serve Streamable HTTP on ADDR (e.g. 127.0.0.1:8001); the endpoint is http://ADDR/mcp.
    #[arg(long, value_name = "ADDR")]
    http: Option<String>,

    /// Serve the metrics in the Prometheus text format at http://ADDR/metrics
    /// (OpenTelemetry's MCP duration histograms and tessera.* gauges).
    #[arg(long, value_name = "ADDR")]
    pub(crate) metrics: Option<String>,

    /// The path of the MCP endpoint.
    #[arg(long, value_name = "PATH", default_value = "/mcp", requires = "http")]
    path: String,

    /// No sessions: every POST gets a fresh server; GET and DELETE answer 405.
    #[arg(long, requires = "http")]
    stateless: bool,

    /// Answer every request with application/json, never an SSE stream.
    #[arg(long, requires = "http", conflicts_with = "sse_response")]
    json_response: bool,

    /// Answer every request with an SSE stream (default: JSON unless the
    /// handler sends notifications or requests first).
    #[arg(long, requires = "http")]
    sse_response: bool,

    /// Accept this Host header value (name, or name:port; repeatable) instead of
    /// the defaults derived from the bind address.
    #[arg(long = "allow-host", value_name = "HOST", requires = "http")]
    allow_host: Vec<String>,

    /// DANGEROUS: accept any Host header, which turns off DNS rebinding
    /// protection (a web page the user opens can reach the server). Only
    /// behind a reverse proxy that checks the Host itself.
    #[arg(long, requires = "http", conflicts_with = "allow_host")]
    allow_any_host: bool,

    /// Accept this Origin (scheme://host[:port]; repeatable) instead of the defaults.
    #[arg(long = "allow-origin", value_name = "ORIGIN", requires = "http")]
    allow_origin: Vec<String>,

    /// DANGEROUS: accept any Origin, so that any web page the user opens may
    /// call the server from the browser. Only behind a reverse proxy that
    /// checks the Origin itself.
    #[arg(long, requires = "http", conflicts_with = "allow_origin")]
    allow_any_origin: bool,

    /// The largest request body, in bytes (larger gets 413).
    #[arg(long, value_name = "BYTES", default_value_t = 4 * 1024 * 1024, requires = "http")]
    max_body_bytes: usize,

    #[command(flatten)]
    sessions: crate::session_limits::SessionLimits,

    /// The most requests one session may have in progress (a batch counts each);
    /// more wait up to 30 s for room, then get 429.
    #[arg(long, value_name = "N", default_value_t = 256, requires = "http")]
    max_requests_per_session: usize,

    /// The most messages in one JSON-RPC batch (a larger batch gets 400, none of it runs).
    #[arg(long, value_name = "N", default_value_t = 100, requires = "http")]
    max_batch: usize,

    /// Close a connection that has not sent a complete request head within this
    /// many seconds (0 = no limit).
    #[arg(long, value_name = "SECS", default_value_t = 10, requires = "http")]
    header_read_timeout: u64,

    /// Answer 408 and close when a request body stops arriving for this many
    /// seconds (0 = wait).
    #[arg(long, value_name = "SECS", default_value_t = 30, requires = "http")]
    body_read_timeout: u64,

    /// Answer 408 and close when a request body has not fully arrived this
    /// many seconds after it started, however steadily it trickles (0 = no
    /// bound).
    #[arg(long, value_name = "SECS", default_value_t = 60, requires = "http")]
    body_total_timeout: u64,

    /// Answer 408 and close when a request body arrives slower than this many
    /// bytes per second on average, after a grace of 10 s (0 = no minimum).
    #[arg(long, value_name = "BYTES", default_value_t = 1024, requires = "http")]
    body_min_rate: u64,

    /// Close a connection with no request in progress and no open stream after
    /// this many seconds (0 = never).
    #[arg(long, value_name = "SECS", default_value_t = 60, requires = "http")]
    idle_connection_timeout: u64,

    /// Drop a response or stream the peer does not read for this many seconds,
    /// and close its connection (0 = wait).
    #[arg(long, value_name = "SECS", default_value_t = 30, requires = "http")]
    write_timeout: u64,

    /// The most connections open at once (default: the file-descriptor limit
    /// less a tenth, at least 64, of headroom); beyond it a new connection gets
    /// 503 and is closed at once.
    #[arg(long, value_name = "N", requires = "http")]
    max_connections: Option<usize>,

    /// The most connections one peer address holds open at once (default:
    /// three quarters of --max-connections); beyond it a new connection from
    /// that address gets 429 and is closed at once. Behind a reverse proxy,
    /// raise it to --max-connections.
    #[arg(long, value_name = "N", requires = "http")]
    max_connections_per_client: Option<usize>,

    /// The most concurrent requests (HTTP/2 streams) on one connection.
    #[arg(long, value_name = "N", default_value_t = 100, requires = "http")]
    max_streams_per_connection: u32,

    /// Seconds between SSE keep-alive comments (0 = none).
    #[arg(long, value_name = "SECS", default_value_t = 15, requires = "http")]
    keep_alive: u64,

    /// Do not serve the 2024-11-05 HTTP+SSE transport at /sse and /message.
    #[arg(long, requires = "http")]
    no_legacy_sse: bool,

    /// Serve the skills under DIR (Skills extension, `skill://` URIs; repeatable).
    /// Changes on disk are picked up every few seconds.
    #[arg(long = "skills", value_name = "DIR")]
    skills: Vec<std::path::PathBuf>,

    /// Where tasks live: `memory` (the default; lost on exit) or `sqlite:PATH`
    /// (an SQLite file: finished tasks keep their results across a restart,
    /// tasks running at a restart are reported failed).
    #[arg(long, value_name = "STORE", default_value = "memory")]
    task_store: String,

    /// The most tasks one client (principal, else session or client name)
    /// may have running at once; more are refused naming the limit.
    #[arg(long, value_name = "N", default_value_t = tessera::server::task::DEFAULT_MAX_RUNNING_TASKS_PER_OWNER)]
    max_running_tasks_per_client: usize,

    /// The most tasks running at once in this process.
    #[arg(long, value_name = "N", default_value_t = tessera::server::task::DEFAULT_MAX_RUNNING_TASKS)]
    max_running_tasks: usize,

    /// The most unexpired tasks one client may have stored (finished ones
    /// count until their ttl ends).
    #[arg(long, value_name = "N", default_value_t = tessera::server::task::DEFAULT_MAX_STORED_TASKS_PER_OWNER)]
    max_tasks_per_client: usize,

    /// The most unexpired tasks stored in all.
    #[arg(long, value_name = "N", default_value_t = tessera::server::task::DEFAULT_MAX_STORED_TASKS)]
    max_tasks: usize,

    /// The largest result a task keeps, in bytes of JSON; a bigger one
    /// fails the task with an error naming its size.
    #[arg(long, value_name = "BYTES", default_value_t = tessera::server::task::DEFAULT_MAX_TASK_RESULT_BYTES)]
    max_task_result_bytes: usize,

    /// Keep all shared state in Redis (redis://HOST:PORT[/DB]): sessions, tasks,
    /// resumable streams and the requestState key ring, with messages between
    /// instances over Redis pub/sub, so that several instances serve one
    /// endpoint behind a load balancer.
    #[arg(long, value_name = "URL", env = "TESSERA_REDIS_URL")]
    redis: Option<String>,

    /// The prefix of every Redis key (instances of one endpoint share it).
    #[arg(
        long,
        value_name = "PREFIX",
        default_value = "tessera:",
        requires = "redis"
    )]
    redis_prefix: String,

    /// This instance's id in Redis, stable across its restarts: after a restart
    /// only its own unfinished tasks are reported failed (default: the host
    /// name and the --http address; a random id with --stdio or port 0).
    #[arg(long, value_name = "ID", requires = "redis")]
    instance_id: Option<String>,

    #[command(flatten)]
    auth: Box<crate::serve_auth::AuthArgs>,
}

impl ServeArgs {
    /// What clap parses from `tessera serve --stdio` with no other argument
    /// and none of [`ENV`] set: every option at its default. Building and
    /// running clap's parser for `serve` was about a quarter of the
    /// instructions `tessera serve --stdio` ran from exec to exit (issue 27);
    /// `main` takes this instead for that exact command line, and a test
    /// checks that it is what clap gives.
    pub(crate) fn plain_stdio() -> Self {
        use tessera::server::task;
        use tessera_auth::server::dpop::{DEFAULT_NONCE_PERIOD_SECS, DEFAULT_REPLAY_ENTRIES};
        Self {
            stdio: true,
            http: None,
            metrics: None,
            path: "/mcp".to_owned(),
            stateless: false,
            json_response: false,
            sse_response: false,
            allow_host: Vec::new(),
            allow_any_host: false,
            allow_origin: Vec::new(),
            allow_any_origin: false,
            max_body_bytes: 4 * 1024 * 1024,
            sessions: crate::session_limits::SessionLimits {
                session_idle_timeout: 1800,
                max_sessions: 1024,
                max_sessions_per_client: 256,
                handshake_timeout: 10,
                max_requests_per_client: 256,
            },
            max_requests_per_session: 256,
            max_batch: 100,
            header_read_timeout: 10,
            body_read_timeout: 30,
            body_total_timeout: 60,
            body_min_rate: 1024,
            idle_connection_timeout: 60,
            write_timeout: 30,
            max_connections: None,
            max_connections_per_client: None,
            max_streams_per_connection: 100,
            keep_alive: 15,
            no_legacy_sse: false,
            skills: Vec::new(),
            task_store: "memory".to_owned(),
            max_running_tasks_per_client: task::DEFAULT_MAX_RUNNING_TASKS_PER_OWNER,
            max_running_tasks: task::DEFAULT_MAX_RUNNING_TASKS,
            max_tasks_per_client: task::DEFAULT_MAX_STORED_TASKS_PER_OWNER,
            max_tasks: task::DEFAULT_MAX_STORED_TASKS,
            max_task_result_bytes: task::DEFAULT_MAX_TASK_RESULT_BYTES,
            redis: None,
            redis_prefix: "tessera:".to_owned(),
            instance_id: None,
            auth: Box::new(crate::serve_auth::AuthArgs {
                auth_dpop: Some("allowed".to_owned()),
                auth_dpop_nonce_period: DEFAULT_NONCE_PERIOD_SECS,
                auth_dpop_iat_window: 60,
                auth_dpop_replay_entries: DEFAULT_REPLAY_ENTRIES,
                ..Default::default()
            }),
        }
    }

    /// Whether this serves on stdio (`--stdio` without `--http`).
    pub(crate) fn is_stdio(&self) -> bool {
        self.stdio && self.http.is_none()
    }
}

/// The environment variables `tessera serve` reads options from (clap's
/// `env`): with any of them set, [`ServeArgs::plain_stdio`] does not apply.
pub(crate) const ENV: [&str; 2] = ["TESSERA_REDIS_URL", "TESSERA_AUTH_CLIENT_SECRET"];

/// Opens the task store named by `--task-store`.
fn task_store(
    spec: &str,
) -> Result<std::sync::Arc<dyn tessera::server::task::DynTaskStore>, Failure> {
    use tessera::server::task::{MemoryTaskStore, SqliteTaskStore};
    if spec == "memory" {
        return Ok(std::sync::Arc::new(MemoryTaskStore::new()));
    }
    if let Some(path) = spec.strip_prefix("sqlite:") {
        if path.is_empty() {
            return Err(Failure::Usage(
                "--task-store sqlite:PATH needs a file path (e.g. sqlite:tasks.db)".into(),
            ));
        }
        let store = SqliteTaskStore::open(path)
            .with_context(|| format!("opening the task store {path}"))?;
        return Ok(std::sync::Arc::new(store));
    }
    Err(Failure::Usage(format!(
        "--task-store {spec}: expected `memory` or `sqlite:PATH`"
    )))
}

/// Connects to Redis for `--redis URL`.
async fn connect_redis(url: &str, a: &ServeArgs) -> Result<tessera_redis::Redis, Failure> {
    let mut options = tessera_redis::Redis::options(url).prefix(a.redis_prefix.clone());
    if let Some(id) = a.instance_id.clone().or_else(|| default_instance_id(a)) {
        options = options.instance_id(id);
    }
    let redis = options
        .connect()
        .await
        .with_context(|| "connecting to Redis (--redis / TESSERA_REDIS_URL)")?;
    eprintln!(
        "tessera: state in Redis (prefix {:?}, instance {:?})",
        redis.prefix(),
        redis.instance_id()
    );
    Ok(redis)
}

/// `HOST/ADDR` for `--http ADDR` with a fixed port: stable across restarts.
fn default_instance_id(a: &ServeArgs) -> Option<String> {
    let addr = a.http.as_deref()?;
    let port = addr.rsplit_once(':').map(|(_, p)| p)?;
    if port == "0" {
        return None;
    }
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".to_owned());
    Some(format!("{host}/{addr}"))
}

/// Runs the reference server.
pub async fn run(a: ServeArgs) -> Result<ExitCode, Failure> {
    let mut options = crate::reference::Options::default();
    if !a.skills.is_empty() {
        let skills = tessera::server::skills::Skills::from_dirs(a.skills.iter().cloned())
            .context("loading the skills")?;
        let skills = std::sync::Arc::new(skills);
        // The watch stops with the process.
        let _watch = skills.watch(Duration::from_secs(2));
        options.skills = Some(skills);
    }
    if let Some(url) = &a.redis {
        if a.task_store != "memory" {
            return Err(Failure::Usage(format!(
                "--task-store {} and --redis: with --redis, tasks live in Redis",
                a.task_store
            )));
        }
        let redis = connect_redis(url, &a).await?;
        options.task_store = Some(std::sync::Arc::new(redis.task_store()));
        options.redis = Some(redis);
    } else {
        options.task_store = Some(task_store(&a.task_store)?);
    }
    options.task_caps = Some(crate::reference::TaskCaps {
        running_per_owner: a.max_running_tasks_per_client,
        running: a.max_running_tasks,
        stored_per_owner: a.max_tasks_per_client,
        stored: a.max_tasks,
        result_bytes: a.max_task_result_bytes,
    });
    let redis = options.redis.clone();
    options.telemetry = crate::telemetry::telemetry().cloned();
    let telemetry_on = options.telemetry.is_some();
    if let Some(addr) = &a.metrics {
        serve_metrics(addr).await?;
    }
    let server = crate::reference::server(options).context("building the reference server")?;
    // Tasks a previous process left running are reported failed from the start.
    server
        .recover_tasks()
        .await
        .map_err(|e| anyhow::anyhow!("recovering tasks: {}", e.message))?;
    if let Some(addr) = a.http.clone() {
        return serve_http(a, addr, server, redis).await;
    }
    if a.auth.auth_issuer.is_some() {
        // clap lets --stdio (which conflicts with --http) switch off `requires`.
        return Err(Failure::Usage(
            "--auth-issuer protects HTTP only: use it with --http ADDR, not --stdio".into(),
        ));
    }
    if let Some(flag) = http_only_flag(&a) {
        return Err(Failure::Usage(format!(
            "{flag} applies to --http only: use it with --http ADDR, not --stdio"
        )));
    }
    if !a.stdio {
        return Err(Failure::Usage(
            "choose a transport: --stdio, or --http ADDR (e.g. --http 127.0.0.1:8001)".into(),
        ));
    }
    // The process ends when stdin does: freeing the server's tables (every
    // tool's schemas) then only costs time, about 4% of the instructions of a
    // cold `tessera serve --stdio` (issue 27). Only when nothing it owns
    // does anything on drop: an SQLite task store closes its file, Redis its
    // connections, telemetry flushes.
    let inert = a.task_store == "memory" && a.redis.is_none() && !telemetry_on;
    let kept = inert.then(|| server.clone());
    let served = server.serve_stdio().await.context("serving on stdio");
    std::mem::forget(kept);
    served?;
    Ok(ExitCode::SUCCESS)
}

/// The first HTTP-only option given without `--http` (the ones clap cannot tell from their
/// defaults are left out).
fn http_only_flag(a: &ServeArgs) -> Option<&'static str> {
    [
        (a.path != "/mcp", "--path"),
        (a.stateless, "--stateless"),
        (a.json_response, "--json-response"),
        (a.sse_response, "--sse-response"),
        (!a.allow_host.is_empty(), "--allow-host"),
        (a.allow_any_host, "--allow-any-host"),
        (!a.allow_origin.is_empty(), "--allow-origin"),
        (a.allow_any_origin, "--allow-any-origin"),
        (a.no_legacy_sse, "--no-legacy-sse"),
        (a.max_connections.is_some(), "--max-connections"),
        (
            a.max_connections_per_client.is_some(),
            "--max-connections-per-client",
        ),
    ]
    .into_iter()
    .find_map(|(given, flag)| given.then_some(flag))
    .or_else(|| a.sessions.changed_flag())
}

async fn serve_http(
    a: ServeArgs,
    addr: String,
    server: tessera::server::Server,
    redis: Option<tessera_redis::Redis>,
) -> Result<ExitCode, Failure> {
    if !a.path.starts_with('/') {
        return Err(Failure::Usage(format!(
            "--path must start with '/': {:?}",
            a.path
        )));
    }
    let listener = tokio::net::TcpListener::bind(&addr)
        .await
        .with_context(|| format!("cannot listen on {addr}"))?;
    let local = listener.local_addr().context("reading the bound address")?;
    let mode = if a.json_response {
        ResponseMode::Json
    } else if a.sse_response {
        ResponseMode::Sse
    } else {
        ResponseMode::Auto
    };
    let scope_source = server.clone();
    let ready_check: crate::readiness::Check = {
        let server = server.clone();
        std::sync::Arc::new(move || {
            let server = server.clone();
            Box::pin(async move { server.check_task_store().await })
        })
    };
    let tasks = server.clone();
    let mut b = McpHttp::builder(server)
        .bind_address(local)
        .endpoint_path(a.path.clone())
        .stateless(a.stateless)
        .response_mode(mode)
        .max_body_bytes(a.max_body_bytes)
        .max_requests_per_session(a.max_requests_per_session)
        .max_batch(a.max_batch)
        .header_read_timeout(secs(a.header_read_timeout))
        .body_read_timeout(secs(a.body_read_timeout))
        .body_total_timeout(secs(a.body_total_timeout))
        .body_min_rate(Some(a.body_min_rate))
        .connection_idle_timeout(secs(a.idle_connection_timeout))
        .write_timeout(secs(a.write_timeout))
        .max_streams_per_connection(a.max_streams_per_connection)
        .keep_alive(secs(a.keep_alive));
    b = a.sessions.apply(b);
    if let Some(n) = a.max_connections {
        b = b.max_connections(n);
    }
    if let Some(n) = a.max_connections_per_client {
        b = b.max_connections_per_client(n);
    }
    if a.no_legacy_sse {
        b = b.legacy_sse(None);
    }
    if a.allow_any_host {
        b = b.dangerous().allow_any_host();
    } else if !a.allow_host.is_empty() {
        b = b.allowed_hosts(a.allow_host.clone());
    }
    if a.allow_any_origin {
        b = b.dangerous().allow_any_origin();
    } else if !a.allow_origin.is_empty() {
        b = b.allowed_origins(a.allow_origin.clone());
    }
    if let Some(redis) = &redis {
        b = redis.install(b);
    }
    let mcp = b.build();
    if let Some(t) = crate::telemetry::telemetry() {
        crate::telemetry::operational(t.instruments(), &mcp, &tasks, redis.as_ref());
    }
    let shown = if local.ip().is_unspecified() {
        format!(
            "{}:{}",
            if local.is_ipv4() {
                "127.0.0.1"
            } else {
                "[::1]"
            },
            local.port()
        )
    } else {
        local.to_string()
    };
    let shared = match &redis {
        Some(r) if a.auth.auth_issuer.is_some() => {
            let nonce_secret =
                if a.auth.auth_dpop_nonce {
                    Some(r.dpop_nonce_secret().await.with_context(
                        || "reading the shared DPoP nonce secret from Redis (--redis)",
                    )?)
                } else {
                    None
                };
            Some(crate::serve_auth::SharedDpop {
                replay: r.dpop_replay_cache(),
                nonce_secret,
            })
        }
        _ => None,
    };
    let protection = crate::serve_auth::protection(
        &a.auth,
        &format!("http://{shown}{}", a.path),
        "tessera reference server",
        move |name| scope_source.tool_scopes(name),
        shared,
    )
    .await?;
    eprintln!(
        "tessera: serving MCP (Streamable HTTP{}) at http://{shown}{}{}",
        if a.stateless { ", stateless" } else { "" },
        a.path,
        if a.no_legacy_sse {
            String::new()
        } else {
            format!("; HTTP+SSE (2024-11-05) at http://{shown}/sse")
        },
    );
    // `GET /readyz` (the task store's check) in front of everything, authorization included.
    match protection {
        Some(p) => {
            eprintln!("tessera: authorization: {}", p.summary);
            let service = crate::readiness::Readiness::new(
                tower::Layer::layer(&p.layer, mcp.clone()),
                ready_check,
            );
            tessera_http::serve_with(listener, mcp, service, shutdown_signal()).await
        }
        None => {
            let service = crate::readiness::Readiness::new(mcp.clone(), ready_check);
            tessera_http::serve_with(listener, mcp, service, shutdown_signal()).await
        }
    }
    .context("serving HTTP")?;
    Ok(ExitCode::SUCCESS)
}

/// Serves the Prometheus metrics on `addr` (`--metrics`) for the life of
/// the process.
async fn serve_metrics(addr: &str) -> Result<(), Failure> {
    let Some(endpoint) = crate::telemetry::metrics() else {
        return Err(Failure::Usage(
            "--metrics: the metrics could not be set up".into(),
        ));
    };
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("--metrics: cannot listen on {addr}"))?;
    let local = listener.local_addr().context("reading the bound address")?;
    eprintln!("tessera: metrics at http://{local}/metrics");
    // The task ends with the runtime.
    drop(tessera_telemetry::export::serve_metrics(listener, endpoint));
    Ok(())
}

/// Seconds as an optional duration: 0 means none.
fn secs(n: u64) -> Option<Duration> {
    (n > 0).then(|| Duration::from_secs(n))
}

/// Ctrl-C or SIGTERM.
pub(crate) async fn shutdown_signal() {
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(s) => s,
                Err(_) => {
                    let _ = tokio::signal::ctrl_c().await;
                    return;
                }
            };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
    eprintln!("tessera: shutting down (finishing requests in progress)");
}
