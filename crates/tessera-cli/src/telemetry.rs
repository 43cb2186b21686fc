//! Telemetry for the binary: OTLP export when the standard `OTEL_*`
//! variables ask for it (every command), and the Prometheus text format at
//! `http://ADDR/metrics` for `tessera serve --metrics ADDR`.

use std::sync::OnceLock;

use tessera::runtime::middleware::MiddlewareStack;
use tessera_telemetry::Telemetry;
use tessera_telemetry::export::{self, Exporting, MetricsEndpoint};

use crate::exit::Failure;

/// What was set up for this process.
static STATE: OnceLock<(Telemetry, Option<MetricsEndpoint>)> = OnceLock::new();

/// Sets telemetry up from the environment (with a Prometheus registry when
/// `prometheus`); `None` when nothing is to be recorded. The requests this
/// process sends are recorded from here on.
pub fn init(prometheus: bool) -> Result<Option<Exporting>, Failure> {
    let exporting = export::init_from_env("tessera", prometheus)
        .map_err(|e| Failure::Usage(format!("telemetry: {e}")))?;
    if let Some(e) = &exporting {
        e.telemetry().observe_outgoing();
        let _ = STATE.set((e.telemetry().clone(), e.metrics().cloned()));
    }
    Ok(exporting)
}

/// `stack` with the layer recording the requests a server of this process
/// receives and the observer of its sessions, when telemetry is on.
pub fn install(stack: MiddlewareStack) -> MiddlewareStack {
    match STATE.get() {
        Some((t, _)) => t.install(stack),
        None => stack,
    }
}

/// The telemetry, when on.
pub fn telemetry() -> Option<&'static Telemetry> {
    STATE.get().map(|(t, _)| t)
}

/// The Prometheus registry, when `--metrics` asked for it.
pub fn metrics() -> Option<MetricsEndpoint> {
    STATE.get().and_then(|(_, m)| m.clone())
}

/// Registers the operational `tessera.*` instruments of `tessera serve
/// --http`: sessions, connections and streams open, requests refused by
/// each limit (the endpoint's and the task caps), tasks, and Redis
/// operations when `--redis` is on.
pub fn operational(
    i: &tessera_telemetry::Instruments,
    mcp: &tessera::http::McpHttp,
    server: &tessera::server::Server,
    redis: Option<&tessera_redis::Redis>,
) {
    use tessera_telemetry as t;
    let m = mcp.clone();
    i.gauge(
        t::SESSIONS_OPEN,
        "Live sessions (Streamable HTTP and HTTP+SSE) of the endpoint.",
        move || m.session_count() as u64,
    );
    let stats = mcp.stats();
    let s = stats.clone();
    i.gauge(
        t::CONNECTIONS_OPEN,
        "Open HTTP connections of the endpoint.",
        move || s.connections_open() as u64,
    );
    let s = stats.clone();
    i.gauge(
        t::STREAMS_OPEN,
        "Open SSE response streams of the endpoint.",
        move || s.streams_open() as u64,
    );
    let tasks = server.clone();
    i.counter_by(
        t::REQUESTS_REFUSED,
        "Requests refused by a limit, by the limit's setting.",
        t::LIMIT,
        move || {
            let task_caps = tasks.task_stats().refused;
            stats
                .refused()
                .collect::<Vec<_>>()
                .into_iter()
                .chain(task_caps)
        },
    );
    let tasks = server.clone();
    i.gauge(
        t::TASKS_RUNNING,
        "Tasks running in this process.",
        move || tasks.task_stats().running as u64,
    );
    let tasks = server.clone();
    i.counter_by(
        t::TASKS_ENTERED,
        "How many times a task of this process entered each status.",
        t::TASK_STATUS,
        move || tasks.task_stats().entered,
    );
    if let Some(r) = redis {
        let s = r.stats();
        i.counter(
            t::REDIS_ROUND_TRIPS,
            "Operations sent to Redis (a command, a pipeline or a script each).",
            move || s.round_trips(),
        );
        let s = r.stats();
        i.counter(
            t::REDIS_ERRORS,
            "Redis operations that failed (an error answer, a broken connection, a timeout).",
            move || s.errors(),
        );
    }
}
