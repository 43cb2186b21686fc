//! The Streamable HTTP load generator: `concurrency` clients, each with its
//! own keep-alive connection and (legacy era) its own session, call `echo` back
//! to back for a warm-up and then for a measured window.
//!
//! Only requests that complete inside the window count. The server's CPU time
//! (utime + stime from /proc) is read at both ends of the window, so CPU per
//! request is the server's CPU over the window divided by the requests that
//! completed in it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use indicatif::ProgressBar;
use serde::{Deserialize, Serialize};

use crate::client::{BodyKind, Client, Era, Target};
use crate::procfs;

/// The text every `echo` call sends.
pub const ECHO_TEXT: &str = "Hello, MCP benchmark! 0123456789";

/// One load point.
#[derive(Debug, Clone)]
pub struct PointSpec {
    /// The server.
    pub target: Arc<Target>,
    /// The protocol era.
    pub era: Era,
    /// Clients calling at once.
    pub concurrency: usize,
    /// Not measured, before the window.
    pub warmup: Duration,
    /// The measured window.
    pub duration: Duration,
    /// The server's pid (for CPU time), if known.
    pub pid: Option<u32>,
    /// Other processes the server depends on (a redis-server, say), whose
    /// CPU time over the window is reported beside the server's.
    pub others: Vec<u32>,
    /// Instead of a timed window: stop after this many calls in all (no
    /// warm-up; the window is the whole run). For profiling.
    pub max_requests: Option<u64>,
}

/// The figures of one load point.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PointResult {
    /// Clients calling at once.
    pub concurrency: usize,
    /// Calls that succeeded inside the window.
    pub requests: u64,
    /// Calls that failed inside the window.
    pub errors: u64,
    /// The window, in seconds.
    pub seconds: f64,
    /// `requests / seconds`.
    pub rps: f64,
    /// Latency percentiles and mean of the successful calls, in microseconds.
    pub p50_us: f64,
    /// 90th percentile.
    pub p90_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// Slowest.
    pub max_us: f64,
    /// Mean.
    pub mean_us: f64,
    /// Server CPU seconds (user + system) over the window.
    pub server_cpu_s: Option<f64>,
    /// Server CPU microseconds per successful call.
    pub cpu_us_per_req: Option<f64>,
    /// Share of one core the server used over the window (server CPU ÷
    /// window): near 1 means the server was the bottleneck.
    #[serde(default)]
    pub server_busy: Option<f64>,
    /// The harness's own CPU (load generator) per successful call, µs.
    #[serde(default)]
    pub client_cpu_us_per_req: Option<f64>,
    /// The CPU of the other processes named for the point (all of them
    /// together) per successful call, µs.
    #[serde(default)]
    pub others_cpu_us_per_req: Option<f64>,
    /// What the server answered `tools/call` with: `json` or `sse`.
    pub body: String,
    /// The first error seen, if any (warm-up included).
    pub first_error: Option<String>,
}

struct Shared {
    stop: AtomicBool,
    issued: AtomicU64,
    completed: AtomicU64,
    max_requests: Option<u64>,
}

struct WorkerLog {
    /// (completion time, latency in ns) of each successful call.
    ok: Vec<(Instant, u64)>,
    /// Completion time of each failed call.
    failed: Vec<Instant>,
    first_error: Option<String>,
    kind: BodyKind,
}

/// Opens `n` clients, at most 16 handshakes at a time.
pub async fn open_clients(target: &Arc<Target>, era: Era, n: usize) -> anyhow::Result<Vec<Client>> {
    let mut clients = Vec::with_capacity(n);
    let mut pending = Vec::new();
    for i in 0..n {
        let t = target.clone();
        pending.push(tokio::spawn(async move { Client::open(t, era).await }));
        if pending.len() == 16 || i + 1 == n {
            for h in pending.drain(..) {
                clients.push(
                    h.await
                        .context("client task")?
                        .context("opening a client")?,
                );
            }
        }
    }
    Ok(clients)
}

/// Runs one load point.
pub async fn run_point(
    spec: &PointSpec,
    progress: Option<&ProgressBar>,
    label: &str,
) -> anyhow::Result<PointResult> {
    let clients = open_clients(&spec.target, spec.era, spec.concurrency).await?;
    let shared = Arc::new(Shared {
        stop: AtomicBool::new(false),
        issued: AtomicU64::new(0),
        completed: AtomicU64::new(0),
        max_requests: spec.max_requests,
    });
    let text_json = serde_json::to_string(ECHO_TEXT)?;
    let start = Instant::now();
    let mut handles = Vec::with_capacity(clients.len());
    for client in clients {
        let shared = shared.clone();
        let text_json = text_json.clone();
        handles.push(tokio::spawn(worker(client, shared, text_json)));
    }

    let cpu = |pid: Option<u32>| pid.and_then(procfs::cpu_seconds);
    let others = || -> Option<f64> {
        if spec.others.is_empty() {
            return None;
        }
        spec.others.iter().map(|p| procfs::cpu_seconds(*p)).sum()
    };
    let (w0, c0, w1, c1, me0, me1, o0, o1);
    if let Some(max) = spec.max_requests {
        w0 = start;
        c0 = cpu(spec.pid);
        me0 = procfs::cpu_seconds(std::process::id());
        o0 = others();
        while shared.completed.load(Ordering::Relaxed) < max
            && !handles.iter().all(|h| h.is_finished())
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
            tick(progress, label, &shared, start, 0);
        }
        w1 = Instant::now();
        c1 = cpu(spec.pid);
        me1 = procfs::cpu_seconds(std::process::id());
        o1 = others();
    } else {
        sleep_ticking(spec.warmup, progress, label, &shared, start, 0).await;
        w0 = Instant::now();
        c0 = cpu(spec.pid);
        me0 = procfs::cpu_seconds(std::process::id());
        o0 = others();
        let base = shared.completed.load(Ordering::Relaxed);
        sleep_ticking(spec.duration, progress, label, &shared, w0, base).await;
        w1 = Instant::now();
        c1 = cpu(spec.pid);
        me1 = procfs::cpu_seconds(std::process::id());
        o1 = others();
    }
    shared.stop.store(true, Ordering::Relaxed);

    let mut latencies: Vec<u64> = Vec::new();
    let mut errors = 0u64;
    let mut first_error = None;
    let mut kind = BodyKind::None;
    for h in handles {
        let log = h.await.context("load worker")?;
        latencies.extend(
            log.ok
                .iter()
                .filter(|(t, _)| *t >= w0 && *t <= w1)
                .map(|(_, l)| *l),
        );
        errors += log.failed.iter().filter(|t| **t >= w0 && **t <= w1).count() as u64;
        if first_error.is_none() {
            first_error = log.first_error;
        }
        if kind == BodyKind::None {
            kind = log.kind;
        }
    }
    latencies.sort_unstable();
    let seconds = (w1 - w0).as_secs_f64();
    let n = latencies.len() as u64;
    let us = |ns: u64| ns as f64 / 1000.0;
    let server_cpu_s = match (c0, c1) {
        (Some(a), Some(b)) => Some(b - a),
        _ => None,
    };
    Ok(PointResult {
        concurrency: spec.concurrency,
        requests: n,
        errors,
        seconds,
        rps: n as f64 / seconds,
        p50_us: us(percentile(&latencies, 0.50)),
        p90_us: us(percentile(&latencies, 0.90)),
        p99_us: us(percentile(&latencies, 0.99)),
        max_us: us(latencies.last().copied().unwrap_or(0)),
        mean_us: latencies.iter().sum::<u64>().checked_div(n).map_or(0.0, us),
        cpu_us_per_req: server_cpu_s.filter(|_| n > 0).map(|c| c * 1e6 / n as f64),
        server_busy: server_cpu_s.map(|c| c / seconds),
        client_cpu_us_per_req: match (me0, me1) {
            (Some(a), Some(b)) if n > 0 => Some((b - a) * 1e6 / n as f64),
            _ => None,
        },
        others_cpu_us_per_req: match (o0, o1) {
            (Some(a), Some(b)) if n > 0 => Some((b - a) * 1e6 / n as f64),
            _ => None,
        },
        server_cpu_s,
        body: kind.as_str().to_owned(),
        first_error,
    })
}

async fn worker(mut client: Client, shared: Arc<Shared>, text_json: String) -> WorkerLog {
    let mut log = WorkerLog {
        ok: Vec::with_capacity(1 << 14),
        failed: Vec::new(),
        first_error: None,
        kind: BodyKind::None,
    };
    while !shared.stop.load(Ordering::Relaxed) {
        if let Some(max) = shared.max_requests
            && shared.issued.fetch_add(1, Ordering::Relaxed) >= max
        {
            break;
        }
        let t = Instant::now();
        let r = client.call_echo(crate::load::ECHO_TEXT, &text_json).await;
        let end = Instant::now();
        match r {
            Ok(()) => {
                log.ok.push((end, (end - t).as_nanos() as u64));
                shared.completed.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => {
                log.failed.push(end);
                if log.first_error.is_none() {
                    log.first_error = Some(format!("{e:#}"));
                }
                // Do not spin on a server that refuses everything.
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        }
    }
    log.kind = client.last_kind;
    log
}

fn tick(progress: Option<&ProgressBar>, label: &str, shared: &Shared, since: Instant, base: u64) {
    if let Some(pb) = progress {
        let done = shared
            .completed
            .load(Ordering::Relaxed)
            .saturating_sub(base);
        let rate = done as f64 / since.elapsed().as_secs_f64().max(1e-3);
        pb.set_message(format!("{label}  {rate:.0} req/s"));
    }
}

async fn sleep_ticking(
    d: Duration,
    progress: Option<&ProgressBar>,
    label: &str,
    shared: &Shared,
    since: Instant,
    base: u64,
) {
    let end = Instant::now() + d;
    loop {
        let now = Instant::now();
        if now >= end {
            return;
        }
        tokio::time::sleep((end - now).min(Duration::from_millis(250))).await;
        tick(progress, label, shared, since, base);
    }
}

/// Nearest-rank percentile of sorted values (0 when empty).
pub fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (p * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// What opening many sessions costs the server in memory.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SessionsResult {
    /// Sessions opened (and kept open while measuring).
    pub sessions: usize,
    /// Server RSS before, KiB.
    pub rss_before_kb: u64,
    /// Server RSS with the sessions open, KiB.
    pub rss_after_kb: u64,
    /// `(after - before) / sessions`.
    pub kb_per_session: f64,
    /// Handshakes per second while opening them.
    pub opened_per_s: f64,
    /// Whether the server handed out session ids.
    pub server_has_sessions: bool,
}

/// Connections used to open the sessions of a memory run.
pub const SESSION_CONNECTIONS: usize = 16;

/// Opens `n` legacy sessions (initialize + initialized, no call) over
/// [`SESSION_CONNECTIONS`] keep-alive connections, leaves them open (idle),
/// and measures the server's RSS before and after. Few connections, so that
/// the figure is the sessions' memory and not that of a thousand sockets.
pub async fn open_sessions(
    target: &Arc<Target>,
    n: usize,
    pid: u32,
) -> anyhow::Result<(SessionsResult, Vec<Client>)> {
    settle().await;
    let before = procfs::rss_kb(pid).context("server RSS")?;
    let t = Instant::now();
    let conns = SESSION_CONNECTIONS.min(n);
    let mut handles = Vec::with_capacity(conns);
    for k in 0..conns {
        let share = n / conns + usize::from(k < n % conns);
        let target = target.clone();
        handles.push(tokio::spawn(async move {
            let mut c = Client::open(target, Era::Legacy).await?;
            let mut ids = usize::from(c.session_id().is_some());
            for _ in 1..share {
                ids += usize::from(c.open_another().await?.is_some());
            }
            anyhow::Ok((c, ids))
        }));
    }
    let mut clients = Vec::with_capacity(conns);
    let mut with_ids = 0;
    for h in handles {
        let (c, ids) = h
            .await
            .context("session task")?
            .context("opening sessions")?;
        clients.push(c);
        with_ids += ids;
    }
    let opened_per_s = n as f64 / t.elapsed().as_secs_f64();
    settle().await;
    let after = procfs::rss_kb(pid).context("server RSS")?;
    Ok((
        SessionsResult {
            sessions: n,
            rss_before_kb: before,
            rss_after_kb: after,
            kb_per_session: (after as f64 - before as f64) / n as f64,
            opened_per_s,
            server_has_sessions: with_ids == n,
        },
        clients,
    ))
}

/// Gives a server a moment to finish what it does after answering (freeing,
/// background tasks) before its RSS is read.
pub async fn settle() {
    tokio::time::sleep(Duration::from_millis(300)).await;
}

#[cfg(test)]
mod tests {
    use super::percentile;

    #[test]
    fn nearest_rank() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&v, 0.5), 50);
        assert_eq!(percentile(&v, 0.99), 99);
        assert_eq!(percentile(&v, 1.0), 100);
        assert_eq!(percentile(&[7], 0.99), 7);
        assert_eq!(percentile(&[], 0.5), 0);
    }
}
