//! `tessera proxy`: serve a stdio server over Streamable HTTP, a remote
//! server on stdio, or several servers behind one HTTP endpoint.

use std::ffi::OsString;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Args, ValueEnum};
use tessera_http::{HttpClientTransport, McpHttp};
use tessera_proxy::{Proxy, UpstreamOptions, UpstreamSpec};

use crate::Failure;
use crate::http_opts::HttpOptions;
use crate::target::{Target, TargetArgs};

/// `tessera proxy`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  tessera proxy --http 127.0.0.1:8002 -- tessera serve --stdio
  tessera proxy --stdio https://mcp.example.com/mcp
  tessera proxy --http 127.0.0.1:8003 --config servers.json

Clients of every protocol version reach the upstream whatever version it speaks: 2026-07-28 \
requests share one upstream connection, so do legacy sessions in front of a stdio upstream that \
speaks 2026-07-28 (a session that subscribes to a resource, uses tasks, or sets a log level with a \
server whose logs do not name their request gets an upstream session of its own, as every legacy \
session does in front of an HTTP or legacy-only upstream; see --legacy-sessions), and what cannot be translated between eras is refused with an \
error that says why. Over HTTP the \
endpoint is http://ADDR/mcp, plus the 2024-11-05 HTTP+SSE pair at /sse and /message.

--config FILE aggregates the servers of an mcpServers file ({\"mcpServers\": {NAME: {\"command\", \
\"args\", \"env\"} | {\"url\", \"headers\"}}}, plus optional \"timeout\" seconds, \"allowTools\", \
\"denyTools\", \"maxConcurrent\" and \"circuitBreaker\" per server): tools and prompts are offered as \
NAME__name, resource URIs as NAME+URI (\"prefix\": false on the only server keeps its own names, \
for a gateway in front of one server). \
A server that dies loses its tools until it is reconnected (with backoff); the others go on. \
A \"gateway\" section beside mcpServers names API keys and rules over principal x upstream x \
tool/prompt/resource (the guide: tessera::guide::proxy); `tessera proxy check` explains a decision.")]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct ProxyArgs {
    #[command(subcommand)]
    action: Option<ProxyAction>,

    /// Serve Streamable HTTP on ADDR (e.g. 127.0.0.1:8002).
    #[arg(long, value_name = "ADDR", conflicts_with = "stdio")]
    http: Option<String>,

    /// Serve on this process's stdin/stdout.
    #[arg(long)]
    stdio: bool,

    /// The path of the MCP endpoint (with --http).
    #[arg(long, value_name = "PATH", default_value = "/mcp", requires = "http")]
    path: String,

    /// Do not serve the 2024-11-05 HTTP+SSE transport at /sse and /message.
    #[arg(long, requires = "http")]
    no_legacy_sse: bool,

    /// Accept this Host header value (name, or name:port; repeatable) instead of
    /// the defaults derived from the bind address (behind a load balancer).
    #[arg(long = "allow-host", value_name = "HOST", requires = "http")]
    allow_host: Vec<String>,

    /// Seconds a forwarded request may wait for the upstream's answer,
    /// restarted by each progress notification (0 = no limit).
    #[arg(long, value_name = "SECS", default_value_t = 60)]
    timeout: u64,

    /// Seconds to wait for an upstream's answer to the `server/discover`
    /// probe before speaking to it as a legacy server (raise it for an
    /// upstream that is slow to start).
    #[arg(long, value_name = "SECS", default_value_t = 5)]
    probe_timeout: u64,

    /// How legacy client sessions reach an upstream that speaks
    /// 2026-07-28: `shared` over the proxy's one upstream connection (a
    /// session that subscribes, uses tasks, or sets a log level with a
    /// server whose logs do not name their request still gets its own),
    /// `own` an upstream session each, `auto` shared for a stdio upstream
    /// and own for an HTTP one.
    #[arg(long, value_enum, value_name = "HOW", default_value = "auto")]
    legacy_sessions: LegacySessions,

    /// The most upstream processes started for legacy sessions of their own
    /// in front of a stdio server (beside the one shared process); a session
    /// that needs one beyond it gets an error naming this limit. A session's
    /// process stops when the session ends, idles out or is evicted.
    #[arg(long, value_name = "N", default_value_t = tessera_proxy::DEFAULT_MAX_PROCESSES as u32,
          value_parser = clap::value_parser!(u32).range(1..))]
    max_upstream_processes: u32,

    #[command(flatten)]
    sessions: crate::session_limits::SessionLimits,

    #[command(flatten)]
    auth: Box<crate::serve_auth::AuthArgs>,

    /// Aggregate the servers listed in this mcpServers JSON file instead of one upstream.
    #[arg(long, value_name = "FILE")]
    config: Option<std::path::PathBuf>,

    /// Keep the gateway's rate-limit buckets in Redis (redis://HOST:PORT[/DB]),
    /// so that every proxy instance using it holds one limit (with --config).
    #[arg(
        long,
        value_name = "URL",
        env = "TESSERA_REDIS_URL",
        requires = "config"
    )]
    redis: Option<String>,

    /// The prefix of the proxy's Redis keys (instances holding one limit share it).
    #[arg(
        long,
        value_name = "PREFIX",
        default_value = "tessera-proxy:",
        requires = "redis"
    )]
    redis_prefix: String,

    /// The upstream: an http(s) URL.
    #[arg(value_name = "URL")]
    positional: Vec<String>,

    /// The upstream: a stdio server to start.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<OsString>,

    #[command(flatten)]
    upstream_http: HttpOptions,
}

fn upstream_spec(target: Target, http: &HttpOptions) -> Result<UpstreamSpec, Failure> {
    match target {
        Target::Command { program, args, .. } => {
            http.only_for_http()?;
            Ok(UpstreamSpec::stdio(program, args))
        }
        Target::Url { url, .. } => {
            // Checked once here, so that building it again later cannot fail on the options.
            http.transport(&url)?;
            // `-H Authorization: ...` wins over a workload token, which wins
            // over a token stored by `tessera login`.
            let authorizer = http.authorizer(&url)?;
            let http = http.clone();
            let u = url.clone();
            Ok(UpstreamSpec::http_with(url, move || {
                let builder = http
                    .apply(HttpClientTransport::builder(&u))
                    .unwrap_or_else(|_| HttpClientTransport::builder(&u));
                Ok(authorizer.install(builder.build()?))
            }))
        }
    }
}

/// What `tessera proxy` does besides serving.
#[derive(Debug, clap::Subcommand)]
enum ProxyAction {
    /// Print which gateway rule decides whether a principal may use an item, and why.
    Check(crate::proxy_check::CheckArgs),
}

/// How a proxy serves legacy client sessions (`--legacy-sessions`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum LegacySessions {
    /// Shared for a stdio upstream, an upstream session each for HTTP.
    Auto,
    /// Over the proxy's one upstream connection.
    Shared,
    /// An upstream session each.
    Own,
}

/// Runs `tessera proxy`.
pub async fn run(mut a: ProxyArgs) -> Result<ExitCode, Failure> {
    if let Some(ProxyAction::Check(c)) = a.action.take() {
        return crate::proxy_check::run(c);
    }
    if let Some(path) = a.config.clone() {
        return aggregate(&a, &path).await;
    }
    let mut positional = a.positional.clone();
    let words = TargetArgs {
        command: a.command.clone(),
        ..TargetArgs::default()
    };
    let target = words.resolve(&mut positional, 0)?;
    if let Some(extra) = positional.first() {
        return Err(Failure::Usage(format!("unexpected argument {extra:?}")));
    }
    if a.http.is_none() && !a.stdio {
        return Err(Failure::Usage(
            "choose how to serve: --http ADDR (e.g. --http 127.0.0.1:8002) or --stdio".into(),
        ));
    }
    if a.http.is_none() && a.auth.auth_issuer.is_some() {
        // clap lets --stdio (which conflicts with --http) switch off `requires`.
        return Err(Failure::Usage(
            "--auth-issuer protects HTTP only: use it with --http ADDR, not --stdio".into(),
        ));
    }
    if let (None, Some(flag)) = (&a.http, a.sessions.changed_flag()) {
        return Err(Failure::Usage(format!(
            "{flag} applies to --http only: use it with --http ADDR, not --stdio"
        )));
    }
    let spec = upstream_spec(target, &a.upstream_http)?;
    let options = UpstreamOptions {
        request_timeout: (a.timeout > 0).then(|| Duration::from_secs(a.timeout)),
        probe_timeout: Duration::from_secs(a.probe_timeout),
        share_legacy_sessions: match a.legacy_sessions {
            LegacySessions::Auto => None,
            LegacySessions::Shared => Some(true),
            LegacySessions::Own => Some(false),
        },
        max_processes: Some(a.max_upstream_processes as usize),
        ..UpstreamOptions::default()
    };
    let described = spec.describe();
    let proxy = Proxy::connect(spec, options)
        .await
        .with_context(|| format!("connecting to the upstream {described}"))?;
    match a.http.clone() {
        Some(addr) => {
            let name = match proxy.server_info().name.as_str() {
                "" => "the upstream server".to_owned(),
                name => name.to_owned(),
            };
            let p = proxy.clone();
            let health = tessera_proxy::HealthLayer::new(move || p.readiness());
            let out = serve_http(&a, &addr, proxy.clone(), &name, None, health).await;
            proxy.close().await;
            out
        }
        None => {
            let layers =
                crate::telemetry::install(tessera::runtime::middleware::MiddlewareStack::new());
            proxy
                .serve_stdio_with(layers)
                .await
                .context("serving on stdio")?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Runs `tessera proxy --config FILE`.
async fn aggregate(a: &ProxyArgs, path: &std::path::Path) -> Result<ExitCode, Failure> {
    if !a.positional.is_empty() || !a.command.is_empty() {
        return Err(Failure::Usage(
            "--config lists the upstreams: give no URL or `-- COMMAND` with it".into(),
        ));
    }
    let Some(addr) = a.http.clone() else {
        return Err(Failure::Usage(
            "--config serves over HTTP: add --http ADDR (e.g. --http 127.0.0.1:8003)".into(),
        ));
    };
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::Usage(format!("--config {}: {e}", path.display())))?;
    let config = tessera_proxy::parse_config(&text, |var| std::env::var(var).ok())
        .and_then(|c| c.check_front(a.auth.auth_issuer.is_some()).map(|()| c))
        .map_err(|e| Failure::Usage(format!("--config {}: {e}", path.display())))?;
    let options = UpstreamOptions {
        request_timeout: (a.timeout > 0).then(|| Duration::from_secs(a.timeout)),
        probe_timeout: Duration::from_secs(a.probe_timeout),
        ..UpstreamOptions::default()
    };
    let buckets = match &a.redis {
        None => None,
        Some(url) => Some(crate::proxy_redis::connect(url, &a.redis_prefix).await?),
    };
    let aggregator = tessera_proxy::Aggregator::start(config.servers, options)
        .map_err(|e| Failure::Usage(format!("--config {}: {e}", path.display())))?;
    aggregator.set_policy(config.gateway.policy);
    aggregator.set_rate_limits(crate::proxy_redis::limits(
        config.gateway.rate_limits,
        buckets.as_ref(),
    ));
    // Always in place, so that a reload can add keys.
    let keys = tessera_proxy::ApiKeyLayer::new(config.gateway.api_keys);
    let watch = crate::proxy_reload::spawn(
        path.to_path_buf(),
        &text,
        aggregator.clone(),
        keys.clone(),
        buckets,
        a.auth.auth_issuer.is_some(),
    );
    let names = aggregator.names().join(", ");
    let g = aggregator.clone();
    let health = tessera_proxy::HealthLayer::new(move || g.readiness());
    let out = serve_http(
        a,
        &addr,
        aggregator.clone(),
        &format!("the upstreams {names}"),
        Some(keys),
        health,
    )
    .await;
    watch.abort();
    aggregator.close();
    out
}

/// Serves `factory` over HTTP, with telemetry's layer over its requests
/// when telemetry is on.
async fn serve_http<F: tessera_http::ServiceFactory>(
    a: &ProxyArgs,
    addr: &str,
    factory: F,
    what: &str,
    keys: Option<tessera_proxy::ApiKeyLayer>,
    health: tessera_proxy::HealthLayer,
) -> Result<ExitCode, Failure> {
    let stack = crate::telemetry::install(tessera::runtime::middleware::MiddlewareStack::new());
    if stack.is_empty() {
        return serve_factory(a, addr, factory, what, keys, health).await;
    }
    let layered = tessera_http::LayeredFactory::new(factory, stack);
    serve_factory(a, addr, layered, what, keys, health).await
}

async fn serve_factory<F: tessera_http::ServiceFactory>(
    a: &ProxyArgs,
    addr: &str,
    factory: F,
    what: &str,
    keys: Option<tessera_proxy::ApiKeyLayer>,
    health: tessera_proxy::HealthLayer,
) -> Result<ExitCode, Failure> {
    if !a.path.starts_with('/') {
        return Err(Failure::Usage(format!(
            "--path must start with '/': {:?}",
            a.path
        )));
    }
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot listen on {addr}"))?;
    let local = listener.local_addr().context("reading the bound address")?;
    let mut b = McpHttp::builder(factory)
        .bind_address(local)
        .endpoint_path(a.path.clone());
    if a.no_legacy_sse {
        b = b.legacy_sse(None);
    }
    if !a.allow_host.is_empty() {
        b = b.allowed_hosts(a.allow_host.clone());
    }
    b = a.sessions.apply(b);
    let mcp = b.build();
    let shown = if local.ip().is_unspecified() {
        std::net::SocketAddr::new(std::net::Ipv4Addr::LOCALHOST.into(), local.port())
    } else {
        local
    };
    // The same OAuth resource-server front as `tessera serve` (one verifier,
    // the same DPoP checks); the upstream's tool scopes are not known here.
    let protection = crate::serve_auth::protection(
        &a.auth,
        &format!("http://{shown}{}", a.path),
        "tessera proxy",
        |_| None,
        None,
    )
    .await?;
    // `what` holds the upstream's name: peer text.
    eprintln!(
        "tessera: proxying {} at http://{shown}{}",
        crate::peer_text::line(what),
        a.path
    );
    if let Some(p) = &protection {
        eprintln!("tessera: authorization: {}", p.summary);
    }
    let stop = crate::serve::shutdown_signal();
    use tower::Layer as _;
    // A request a rate limit refuses whole gets 429 with Retry-After.
    let health = tower::layer::util::Stack::new(tessera_proxy::RetryAfterLayer, health);
    // The health probes answer first, without credentials; an API key,
    // when one is presented, admits without the OAuth token.
    match (keys, protection) {
        (Some(keys), Some(p)) => {
            let service = health.layer(keys.or_pass_on().layer(p.layer.layer(mcp.clone())));
            tessera_http::serve_with(listener, mcp, service, stop).await
        }
        (Some(keys), None) => {
            let service = health.layer(keys.layer(mcp.clone()));
            tessera_http::serve_with(listener, mcp, service, stop).await
        }
        (None, Some(p)) => {
            let service = health.layer(p.layer.layer(mcp.clone()));
            tessera_http::serve_with(listener, mcp, service, stop).await
        }
        (None, None) => {
            let service = health.layer(mcp.clone());
            tessera_http::serve_with(listener, mcp, service, stop).await
        }
    }
    .context("serving HTTP")?;
    Ok(ExitCode::SUCCESS)
}
