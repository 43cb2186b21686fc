//! `mcp-bench soak`: a long run against `tessera serve --http` that must
//! leave the server flat. 1,000 legacy sessions (spread over a pool of
//! keep-alive connections) and 2026-07-28 clients make a steady mix of
//! `tools/call`, `tools/list` and notifications; other workers open and drop
//! streams (the legacy standalone GET stream of a session, 2026-07-28
//! `subscriptions/listen`). Every 10 s the server's RSS and open file
//! descriptors are sampled. It passes when nothing failed and the mean RSS
//! and descriptor count of the last minute are within 5% of those of the
//! first minute after the warm-up.
//!
//! The warm-up is measured, not guessed: the server allocates part of a
//! session's memory lazily (its two channels, driver to router and back,
//! each take a second block of [`ROUND`] slots when the session's message
//! [`ROUND`] + 1 crosses the first block's end, and reuse those two blocks
//! from then on). The warm-up therefore ends at the first sample at which
//! every legacy session has done [`WARM_ACTIONS`] actions (and not before
//! [`MIN_WARMUP`]); the report says when that was.

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use bytes::Bytes;
use http::{Method, Request, StatusCode};
use http_body_util::{BodyExt as _, Full};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use crate::client::{Client, Era, LEGACY_VERSION, MODERN_VERSION, Target};
use crate::procfs;
use crate::servers::{RunningServer, free_addr};

/// What the soak does and for how long.
pub struct SoakConfig {
    /// The tessera binary.
    pub tessera: PathBuf,
    /// Total minutes (at least 3 for a verdict: one warm-up, two compared).
    pub minutes: f64,
    /// Legacy sessions kept open.
    pub sessions: usize,
    /// Keep-alive connections the legacy sessions share.
    pub connections: usize,
    /// 2026-07-28 clients.
    pub modern_clients: usize,
    /// Workers that open and drop streams.
    pub stream_workers: usize,
    /// Pause between two actions of one worker.
    pub pace: Duration,
    /// Where the report goes.
    pub out_dir: PathBuf,
    /// Where the server's stderr goes.
    pub log_dir: PathBuf,
}

/// The slots of one block of a tokio mpsc channel.
const ROUND: u64 = 32;
/// Actions every legacy session must have done before the warm-up ends:
/// two rounds, so that both of its channels have filled their first block
/// and wrapped around into the reused second one.
const WARM_ACTIONS: u64 = 2 * ROUND;
/// The shortest warm-up, whatever the sessions did.
const MIN_WARMUP: Duration = Duration::from_secs(60);
/// How often the server is sampled.
const EVERY: Duration = Duration::from_secs(10);
/// The tolerance between the first and the last minute.
const TOLERANCE: f64 = 0.05;

struct Counters {
    calls: AtomicU64,
    lists: AtomicU64,
    notifications: AtomicU64,
    streams: AtomicU64,
    errors: AtomicU64,
    /// Actions done on each legacy session (index: the session's place in
    /// the list of all sessions).
    per_session: Vec<AtomicU64>,
    first_errors: std::sync::Mutex<Vec<String>>,
}

impl Counters {
    fn new(sessions: usize) -> Self {
        Counters {
            calls: AtomicU64::new(0),
            lists: AtomicU64::new(0),
            notifications: AtomicU64::new(0),
            streams: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            per_session: (0..sessions).map(|_| AtomicU64::new(0)).collect(),
            first_errors: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// The actions done by the legacy session that did the fewest.
    fn slowest_session(&self) -> u64 {
        self.per_session
            .iter()
            .map(|n| n.load(Ordering::Relaxed))
            .min()
            .unwrap_or(0)
    }

    fn record(&self, r: anyhow::Result<()>, ok: &AtomicU64) {
        match r {
            Ok(()) => {
                ok.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => {
                self.errors.fetch_add(1, Ordering::Relaxed);
                let mut first = self.first_errors.lock().unwrap_or_else(|p| p.into_inner());
                if first.len() < 10 {
                    first.push(format!("{e:#}"));
                }
            }
        }
    }

    fn total(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
            + self.lists.load(Ordering::Relaxed)
            + self.notifications.load(Ordering::Relaxed)
            + self.streams.load(Ordering::Relaxed)
    }
}

/// One sample of the server.
struct Sample {
    at: Duration,
    rss_kb: u64,
    fds: usize,
    done: u64,
    errors: u64,
    /// The fewest actions any legacy session had done.
    slowest: u64,
}

/// Runs the soak; returns whether it passed (the report says why).
pub async fn run(cfg: SoakConfig) -> anyhow::Result<bool> {
    let addr = free_addr()?;
    std::fs::create_dir_all(&cfg.log_dir)?;
    let log = cfg.log_dir.join("soak-tessera.log");
    let mut cmd: Vec<String> = vec![
        cfg.tessera.display().to_string(),
        "serve".into(),
        "--http".into(),
    ];
    cmd.push(addr.to_string());
    let cap = (cfg.sessions + cfg.sessions / 4 + 64).to_string();
    cmd.extend([
        "--max-sessions".into(),
        cap.clone(),
        "--max-sessions-per-client".into(),
        cap,
    ]);
    let server = RunningServer::start(&cmd, addr, &log).await?;
    let pid = server.pid;
    let target = Arc::new(Target::new(addr, "/mcp"));
    let counters = Arc::new(Counters::new(cfg.sessions));

    eprintln!(
        "soak: opening {} legacy sessions over {} connections",
        cfg.sessions, cfg.connections
    );
    let mut pools = Vec::new();
    for c in 0..cfg.connections {
        let mut client = Client::open(target.clone(), Era::Legacy)
            .await
            .context("opening a legacy session")?;
        let mut ids = vec![
            client
                .session_id()
                .context("the server gave no session id")?
                .to_owned(),
        ];
        let share =
            cfg.sessions / cfg.connections + usize::from(c < cfg.sessions % cfg.connections);
        while ids.len() < share {
            let id = client
                .open_another()
                .await?
                .context("the server gave no session id")?;
            ids.push(id);
        }
        pools.push((client, ids));
    }
    let all_sessions: Arc<Vec<String>> =
        Arc::new(pools.iter().flat_map(|(_, ids)| ids.clone()).collect());

    let started = Instant::now();
    let end = started + Duration::from_secs_f64(cfg.minutes * 60.0);
    let mut workers = tokio::task::JoinSet::new();
    let mut first = 0;
    for (client, ids) in pools {
        let n = ids.len();
        workers.spawn(legacy_worker(
            client,
            ids,
            first,
            counters.clone(),
            cfg.pace,
            end,
        ));
        first += n;
    }
    for _ in 0..cfg.modern_clients {
        let client = Client::open(target.clone(), Era::Modern).await?;
        workers.spawn(modern_worker(client, counters.clone(), cfg.pace, end));
    }
    for w in 0..cfg.stream_workers {
        let step = cfg.stream_workers;
        workers.spawn(stream_worker(
            w,
            step,
            target.clone(),
            all_sessions.clone(),
            counters.clone(),
            cfg.pace * 5,
            end,
        ));
    }

    let mut samples = Vec::new();
    let mut next = started;
    while next <= end {
        tokio::time::sleep_until(next.into()).await;
        let s = Sample {
            at: started.elapsed(),
            rss_kb: procfs::rss_kb(pid).context("the server is gone")?,
            fds: open_fds(pid)?,
            done: counters.total(),
            errors: counters.errors.load(Ordering::Relaxed),
            slowest: counters.slowest_session(),
        };
        eprintln!(
            "soak: {:>5.0} s  rss {:>7.1} MB  fds {:>5}  requests {:>9}  errors {}  slowest session {}",
            s.at.as_secs_f64(),
            s.rss_kb as f64 / 1024.0,
            s.fds,
            s.done,
            s.errors,
            s.slowest
        );
        samples.push(s);
        next += EVERY;
    }
    while workers.join_next().await.is_some() {}
    server.stop().await;

    let verdict = judge(&samples, counters.errors.load(Ordering::Relaxed));
    let report = render(&cfg, &samples, &counters, &verdict);
    std::fs::create_dir_all(&cfg.out_dir)?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let stamp = crate::report::utc(now).replace(':', "-");
    let path = cfg.out_dir.join(format!("soak-{stamp}.md"));
    std::fs::write(&path, &report).with_context(|| format!("writing {}", path.display()))?;
    println!("{report}");
    eprintln!("soak: report written to {}", path.display());
    Ok(verdict.passed)
}

/// Serves `ids` round-robin on one connection; `first` is the place of
/// `ids[0]` in the list of all sessions.
async fn legacy_worker(
    mut client: Client,
    ids: Vec<String>,
    first: usize,
    c: Arc<Counters>,
    pace: Duration,
    end: Instant,
) {
    let mut n = 0usize;
    while Instant::now() < end {
        let k = n % ids.len();
        if let Err(e) = client.switch_session(&ids[k]) {
            c.record(Err(e), &c.calls);
            return;
        }
        // Each session goes through the whole mix, and the sessions of one
        // connection are at different places in it.
        act(&mut client, n / ids.len() + k, &c).await;
        c.per_session[first + k].fetch_add(1, Ordering::Relaxed);
        n += 1;
        tokio::time::sleep(pace).await;
    }
}

async fn modern_worker(mut client: Client, c: Arc<Counters>, pace: Duration, end: Instant) {
    let mut n = 0usize;
    while Instant::now() < end {
        act(&mut client, n, &c).await;
        n += 1;
        tokio::time::sleep(pace).await;
    }
}

/// The n-th action of a worker: mostly calls, some lists and notifications.
async fn act(client: &mut Client, n: usize, c: &Counters) {
    match n % 10 {
        3 => c.record(client.list_tools().await, &c.lists),
        7 => c.record(client.notify().await, &c.notifications),
        _ => {
            let text = format!("soak {n}");
            let json = format!("\"{text}\"");
            c.record(client.call_echo(&text, &json).await, &c.calls);
        }
    }
}

/// Opens and drops streams: a legacy session's standalone GET stream or a
/// 2026-07-28 `subscriptions/listen`. Worker `w` takes the turns `w`,
/// `w + step`, … so that no two workers open a stream on one session at once.
async fn stream_worker(
    w: usize,
    step: usize,
    target: Arc<Target>,
    sessions: Arc<Vec<String>>,
    c: Arc<Counters>,
    pace: Duration,
    end: Instant,
) {
    let mut n = w;
    while Instant::now() < end {
        let r = if n.is_multiple_of(2) {
            let id = &sessions[(n / 2 * 7919) % sessions.len()];
            get_stream(target.addr, &target.path, id).await
        } else {
            listen_stream(target.addr, &target.path, n).await
        };
        c.record(r, &c.streams);
        n += step;
        tokio::time::sleep(pace).await;
    }
}

/// Sends `req` on a new connection, expects 200 and `text/event-stream`,
/// reads until `until` appears (or 1 s passes, for a stream with nothing to
/// say yet), then drops the stream.
async fn stream(
    addr: SocketAddr,
    req: Request<Full<Bytes>>,
    until: Option<&str>,
) -> anyhow::Result<()> {
    let tcp = TcpStream::connect(addr).await?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp)).await?;
    let conn = tokio::spawn(conn);
    let resp = tokio::time::timeout(Duration::from_secs(15), sender.send_request(req))
        .await
        .context("no stream within 15 s")??;
    if resp.status() != StatusCode::OK {
        let status = resp.status();
        let body = resp
            .into_body()
            .collect()
            .await
            .map(|b| b.to_bytes())
            .unwrap_or_default();
        bail!(
            "stream: HTTP {status}: {}",
            String::from_utf8_lossy(&body[..body.len().min(200)])
        );
    }
    let mut body = resp.into_body();
    let mut seen = String::new();
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        while let Some(Ok(frame)) = body.frame().await {
            if let Ok(d) = frame.into_data() {
                seen.push_str(&String::from_utf8_lossy(&d));
            }
            if until.is_some_and(|u| seen.contains(u)) {
                break;
            }
        }
    })
    .await;
    if let Some(u) = until
        && !seen.contains(u)
    {
        bail!("stream: no {u} within 1 s: {seen:?}");
    }
    drop(body);
    conn.abort();
    Ok(())
}

async fn get_stream(addr: SocketAddr, path: &str, session: &str) -> anyhow::Result<()> {
    let req = Request::builder()
        .method(Method::GET)
        .uri(path)
        .header("host", addr.to_string())
        .header("accept", "text/event-stream")
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", LEGACY_VERSION)
        .body(Full::new(Bytes::new()))?;
    stream(addr, req, None).await
}

async fn listen_stream(addr: SocketAddr, path: &str, n: usize) -> anyhow::Result<()> {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{n},"method":"subscriptions/listen","params":{{"notifications":{{"toolsListChanged":true}},"_meta":{{"io.modelcontextprotocol/protocolVersion":"{MODERN_VERSION}","io.modelcontextprotocol/clientCapabilities":{{}},"io.modelcontextprotocol/clientInfo":{{"name":"mcp-bench","version":"0.0.0"}}}}}}}}"#
    );
    let req = Request::builder()
        .method(Method::POST)
        .uri(path)
        .header("host", addr.to_string())
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", MODERN_VERSION)
        .header("mcp-method", "subscriptions/listen")
        .body(Full::new(Bytes::from(body)))?;
    stream(addr, req, Some("notifications/subscriptions/acknowledged")).await
}

fn open_fds(pid: u32) -> anyhow::Result<usize> {
    Ok(std::fs::read_dir(format!("/proc/{pid}/fd"))?.count())
}

struct Verdict {
    passed: bool,
    /// When the warm-up ended (every session had done [`WARM_ACTIONS`]).
    warmup: Option<Duration>,
    /// (first minute after warm-up, last minute) mean RSS in KB.
    rss: Option<(f64, f64)>,
    /// The same for open descriptors.
    fds: Option<(f64, f64)>,
    why: String,
}

/// The first sample at which every legacy session had done
/// [`WARM_ACTIONS`], and not before [`MIN_WARMUP`].
fn warmup_end(samples: &[Sample]) -> Option<Duration> {
    samples
        .iter()
        .find(|s| s.at >= MIN_WARMUP && s.slowest >= WARM_ACTIONS)
        .map(|s| s.at)
}

fn judge(samples: &[Sample], errors: u64) -> Verdict {
    let fail = |warmup, why: String| Verdict {
        passed: false,
        warmup,
        rss: None,
        fds: None,
        why,
    };
    let Some(last) = samples.last() else {
        return fail(None, "no samples".into());
    };
    let Some(warmup) = warmup_end(samples) else {
        return fail(
            None,
            format!(
                "the warm-up never ended: the slowest session did {} actions of {WARM_ACTIONS}; run longer",
                last.slowest
            ),
        );
    };
    let minute = Duration::from_secs(60);
    let first_window: Vec<&Sample> = samples
        .iter()
        .filter(|s| s.at >= warmup && s.at < warmup + minute)
        .collect();
    let last_window: Vec<&Sample> = samples.iter().filter(|s| s.at + minute > last.at).collect();
    if last.at < warmup + minute * 2 - EVERY || first_window.is_empty() {
        return fail(
            Some(warmup),
            format!(
                "too short for a verdict: the warm-up ended at {} s, and two minutes must follow it",
                warmup.as_secs()
            ),
        );
    }
    let mean =
        |w: &[&Sample], f: fn(&Sample) -> f64| w.iter().map(|s| f(s)).sum::<f64>() / w.len() as f64;
    let rss = (
        mean(&first_window, |s| s.rss_kb as f64),
        mean(&last_window, |s| s.rss_kb as f64),
    );
    let fds = (
        mean(&first_window, |s| s.fds as f64),
        mean(&last_window, |s| s.fds as f64),
    );
    let drift = |(a, b): (f64, f64)| if a > 0.0 { (b - a) / a } else { 0.0 };
    let mut why = Vec::new();
    if errors > 0 {
        why.push(format!("{errors} errors"));
    }
    if drift(rss).abs() > TOLERANCE {
        why.push(format!("RSS moved {:+.1}%", drift(rss) * 100.0));
    }
    if drift(fds).abs() > TOLERANCE {
        why.push(format!(
            "open descriptors moved {:+.1}%",
            drift(fds) * 100.0
        ));
    }
    Verdict {
        passed: why.is_empty(),
        warmup: Some(warmup),
        rss: Some(rss),
        fds: Some(fds),
        why: if why.is_empty() {
            format!(
                "RSS {:+.1}%, descriptors {:+.1}%, 0 errors",
                drift(rss) * 100.0,
                drift(fds) * 100.0
            )
        } else {
            why.join("; ")
        },
    }
}

fn render(cfg: &SoakConfig, samples: &[Sample], c: &Counters, v: &Verdict) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Soak: tessera serve --http\n");
    let _ = writeln!(
        s,
        "{} min; {} legacy sessions over {} connections, {} 2026-07-28 clients, {} stream workers; \
         one action per worker every {} ms; machine: {}; load average at the end: {}.\n",
        cfg.minutes,
        cfg.sessions,
        cfg.connections,
        cfg.modern_clients,
        cfg.stream_workers,
        cfg.pace.as_millis(),
        procfs::machine(),
        procfs::loadavg(),
    );
    let _ = writeln!(
        s,
        "**{}**: {}.\n",
        if v.passed { "PASS" } else { "FAIL" },
        v.why
    );
    if let Some(w) = v.warmup {
        let _ = writeln!(
            s,
            "Warm-up: ended at {} s, the first sample at which every legacy session had done {WARM_ACTIONS} actions \
             (two blocks of its channels; at least {} s).\n",
            w.as_secs(),
            MIN_WARMUP.as_secs()
        );
    }
    if let (Some(r), Some(f)) = (v.rss, v.fds) {
        let _ = writeln!(
            s,
            "First minute after the warm-up: RSS {:.1} MB, {:.0} descriptors; last minute: RSS {:.1} MB, {:.0} descriptors.\n",
            r.0 / 1024.0,
            f.0,
            r.1 / 1024.0,
            f.1
        );
    }
    let _ = writeln!(
        s,
        "Requests: {} tools/call, {} tools/list, {} notifications, {} streams opened and dropped; {} errors.\n",
        c.calls.load(Ordering::Relaxed),
        c.lists.load(Ordering::Relaxed),
        c.notifications.load(Ordering::Relaxed),
        c.streams.load(Ordering::Relaxed),
        c.errors.load(Ordering::Relaxed)
    );
    let _ = writeln!(
        s,
        "| t (s) | RSS (MB) | open fds | requests done | errors | slowest session's actions |"
    );
    let _ = writeln!(s, "|---:|---:|---:|---:|---:|---:|");
    for x in samples {
        let _ = writeln!(
            s,
            "| {:.0} | {:.1} | {} | {} | {} | {} |",
            x.at.as_secs_f64(),
            x.rss_kb as f64 / 1024.0,
            x.fds,
            x.done,
            x.errors,
            x.slowest
        );
    }
    let first = c.first_errors.lock().unwrap_or_else(|p| p.into_inner());
    if !first.is_empty() {
        let _ = writeln!(s, "\nFirst errors:\n");
        for e in first.iter() {
            let _ = writeln!(s, "- {e}");
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(secs: u64, rss_kb: u64, slowest: u64) -> Sample {
        Sample {
            at: Duration::from_secs(secs),
            rss_kb,
            fds: 70,
            done: 0,
            errors: 0,
            slowest,
        }
    }

    #[test]
    fn the_warm_up_waits_for_the_slowest_session() {
        // Every session is past WARM_ACTIONS only at 150 s: the first compared
        // minute starts there, not at 60 s, so the step before it is not counted.
        let mut samples: Vec<Sample> = (0..=15).map(|i| sample(i * 10, 40_000, i * 4)).collect();
        samples.extend((16..=36).map(|i| sample(i * 10, 50_000, i * 4)));
        let v = judge(&samples, 0);
        assert_eq!(v.warmup, Some(Duration::from_secs(160)));
        assert!(v.passed, "{}", v.why);
    }

    #[test]
    fn no_verdict_before_every_session_is_warm() {
        let samples: Vec<Sample> = (0..=30).map(|i| sample(i * 10, 40_000, 10)).collect();
        let v = judge(&samples, 0);
        assert!(!v.passed);
        assert!(v.why.contains("never ended"), "{}", v.why);
    }

    #[test]
    fn growth_after_the_warm_up_fails() {
        let samples: Vec<Sample> = (0..=30)
            .map(|i| sample(i * 10, 40_000 + i * 1_000, 100))
            .collect();
        let v = judge(&samples, 0);
        assert_eq!(v.warmup, Some(MIN_WARMUP));
        assert!(!v.passed);
        assert!(v.why.contains("RSS moved"), "{}", v.why);
    }
}
