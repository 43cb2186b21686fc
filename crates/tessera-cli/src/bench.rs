//! `tessera bench TOOL [ARGS_JSON] -c CONCURRENCY -d SECONDS TARGET`: calls
//! one tool as fast as the server answers, from CONCURRENCY workers sharing
//! one connection, for SECONDS (or until --requests calls were made), then
//! prints req/s, p50/p90/p99/max latency and the errors by kind. Only
//! loopback targets (a stdio command, or a URL on localhost/127.0.0.1/::1)
//! unless --allow-remote is given.

use std::collections::BTreeMap;
use std::io::IsTerminal as _;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tessera::types::methods;

use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;
use serde_json::Value;
use tessera::client::{CallOptions, ClientError};
use tessera::types::JsonObject;

use crate::connect::ClientOptions;
use crate::exit::{Exit, Failure};
use crate::output;

/// The `--json` summary of a run.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Summary<'a> {
    tool: &'a str,
    target: &'a str,
    concurrency: usize,
    duration_secs: f64,
    requests: u64,
    ok: u64,
    errors: &'a BTreeMap<String, u64>,
    req_per_sec: f64,
    latency_ms: Latencies,
}

/// Latency percentiles, the maximum and the mean, in milliseconds (`null`
/// when nothing was measured).
#[derive(Serialize)]
struct Latencies {
    p50: Option<f64>,
    p90: Option<f64>,
    p99: Option<f64>,
    max: Option<f64>,
    mean: Option<f64>,
}

/// The longest run allowed.
const MAX_SECONDS: f64 = 3600.0;
/// The most workers allowed.
const MAX_CONCURRENCY: usize = 1024;
/// The most requests one run makes (bounds the memory of the latencies).
const MAX_REQUESTS: u64 = 10_000_000;

/// `tessera bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// The tool, then optionally its JSON arguments, then the server's
    /// http(s) URL (or `-- COMMAND ARGS...` or --server NAME).
    #[arg(value_name = "TOOL [ARGS_JSON] [URL]", required = true, num_args = 1..=3)]
    positional: Vec<String>,
    /// Requests in flight at once (1 to 1024).
    #[arg(short = 'c', long, value_name = "N", default_value_t = 1)]
    concurrency: usize,
    /// How long to run, in seconds (at most 3600).
    #[arg(short = 'd', long, value_name = "SECONDS", default_value_t = 5.0)]
    duration: f64,
    /// Stop after this many requests, even before the duration is over.
    #[arg(short = 'n', long, value_name = "N")]
    requests: Option<u64>,
    /// Allow a target that is not on this machine (by default only a stdio
    /// command or a loopback URL is load-tested).
    #[arg(long)]
    allow_remote: bool,
    #[command(flatten)]
    opts: ClientOptions,
}

/// What one request came to.
enum Outcome {
    Ok,
    Error(String),
}

fn error_kind(e: &ClientError) -> String {
    if e.is_timeout() {
        return "timeout".into();
    }
    if e.is_closed() {
        return "connection closed".into();
    }
    match e.remote() {
        Some(r) if tessera_http::TransportFailure::of(r).is_some() => {
            format!(
                "transport: {}",
                r.message.chars().take(80).collect::<String>()
            )
        }
        Some(r) => format!("server error {}", r.code),
        None => format!("client: {e}").chars().take(100).collect(),
    }
}

/// Latency percentiles over sorted microsecond samples.
pub fn percentile(sorted: &[u32], p: f64) -> Option<u32> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

/// The summary of a run.
#[derive(Debug)]
pub struct Report {
    /// Requests made.
    pub requests: u64,
    /// Requests that succeeded.
    pub ok: u64,
    /// Errors by kind.
    pub errors: BTreeMap<String, u64>,
    /// Wall time of the run.
    pub elapsed: Duration,
    /// Latencies of every request, in microseconds, sorted.
    pub latencies_us: Vec<u32>,
}

impl Report {
    /// Requests per second.
    pub fn rate(&self) -> f64 {
        self.requests as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// The `--json` document.
    pub fn to_json(&self, tool: &str, target: &str, concurrency: usize) -> Value {
        let ms = |p: f64| percentile(&self.latencies_us, p).map(|us| us as f64 / 1000.0);
        let mean = if self.latencies_us.is_empty() {
            None
        } else {
            Some(
                self.latencies_us.iter().map(|&u| u as f64).sum::<f64>()
                    / self.latencies_us.len() as f64
                    / 1000.0,
            )
        };
        let summary = Summary {
            tool,
            target,
            concurrency,
            duration_secs: self.elapsed.as_secs_f64(),
            requests: self.requests,
            ok: self.ok,
            errors: &self.errors,
            req_per_sec: self.rate(),
            latency_ms: Latencies {
                p50: ms(50.0),
                p90: ms(90.0),
                p99: ms(99.0),
                max: ms(100.0),
                mean,
            },
        };
        // Through a `Value`: the document's members in name order.
        serde_json::to_value(summary).unwrap_or(Value::Null)
    }

    /// The readable summary.
    pub fn to_text(&self, tool: &str, target: &str, concurrency: usize) -> String {
        let ms = |p: f64| {
            percentile(&self.latencies_us, p)
                .map(|us| format!("{:.3} ms", us as f64 / 1000.0))
                .unwrap_or_else(|| "-".into())
        };
        let failed: u64 = self.errors.values().sum();
        let mut s = format!(
            "tessera bench: {tool} on {target}, concurrency {concurrency}, {:.1} s\n\
             requests:   {} ({} ok, {failed} errors)\n\
             throughput: {:.1} req/s\n\
             latency:    p50 {}  p90 {}  p99 {}  max {}\n",
            self.elapsed.as_secs_f64(),
            self.requests,
            self.ok,
            self.rate(),
            ms(50.0),
            ms(90.0),
            ms(99.0),
            ms(100.0),
        );
        for (kind, n) in &self.errors {
            s.push_str(&format!("errors:     {n} {kind}\n"));
        }
        s
    }
}

/// Runs `tessera bench`.
pub async fn run(a: BenchArgs) -> Result<ExitCode, Failure> {
    if !(1..=MAX_CONCURRENCY).contains(&a.concurrency) {
        return Err(Failure::Usage(format!(
            "-c {}: give a concurrency from 1 to {MAX_CONCURRENCY}",
            a.concurrency
        )));
    }
    if !(a.duration.is_finite() && a.duration > 0.0 && a.duration <= MAX_SECONDS) {
        return Err(Failure::Usage(format!(
            "-d {}: give a duration above 0 and at most {MAX_SECONDS} seconds",
            a.duration
        )));
    }
    let limit = match a.requests {
        Some(0) => return Err(Failure::Usage("-n 0: give at least one request".into())),
        Some(n) if n > MAX_REQUESTS => {
            return Err(Failure::Usage(format!("-n {n}: at most {MAX_REQUESTS}")));
        }
        Some(n) => n,
        None => MAX_REQUESTS,
    };
    let mut opts = a.opts;
    // Nobody is there to answer questions during a load test.
    opts.no_input = true;
    let mut words = a.positional;
    let target = opts.target.resolve(&mut words, 1)?;
    if !a.allow_remote && !target.is_loopback() {
        return Err(Failure::Usage(format!(
            "{} is not on this machine; give --allow-remote to load-test it anyway",
            target.describe()
        )));
    }
    let mut words = words.into_iter();
    let tool = words
        .next()
        .ok_or_else(|| Failure::Usage("missing the tool name".into()))?;
    let params =
        crate::verbs::params_object(&crate::verbs::call::params(&tool, words.next().as_deref())?);
    crate::verbs::no_more(words)?;
    let s = opts.connect_to(target).await?;
    let mut call = CallOptions::new();
    call = if opts.timeout.is_zero() {
        call.no_timeout()
    } else {
        call.timeout(opts.timeout).max_timeout(opts.timeout)
    };
    let duration = Duration::from_secs_f64(a.duration);
    let report = load(&s.client, &params, &call, a.concurrency, duration, limit).await;
    let shown = s.target.clone();
    s.close().await;
    if opts.json {
        output::json(&report.to_json(&tool, &shown, a.concurrency));
    } else {
        crate::peer_text::print(&report.to_text(&tool, &shown, a.concurrency));
    }
    Ok(if report.errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        Exit::BenchErrors.into()
    })
}

/// Runs the workers and gathers their results.
async fn load(
    client: &tessera::client::Client,
    params: &JsonObject,
    call: &CallOptions,
    concurrency: usize,
    duration: Duration,
    limit: u64,
) -> Report {
    let started = Instant::now();
    let deadline = tokio::time::Instant::from_std(started + duration);
    let issued = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicU64::new(0));
    let bar = progress(duration);
    let ticker = {
        let (bar, done) = (bar.clone(), done.clone());
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_millis(250));
            let mut n = 0u64;
            loop {
                tick.tick().await;
                let elapsed = started.elapsed();
                let count = done.load(Ordering::Relaxed);
                match &bar {
                    Some(b) => {
                        b.set_position(elapsed.as_millis() as u64);
                        b.set_message(format!("{count} requests"));
                    }
                    None => {
                        n += 1;
                        if n % 4 == 0 {
                            eprintln!("bench: {:.0} s, {count} requests", elapsed.as_secs_f64());
                        }
                    }
                }
            }
        })
    };
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..concurrency {
        let (client, params, call) = (client.clone(), params.clone(), call.clone());
        let (issued, done) = (issued.clone(), done.clone());
        workers.spawn(async move {
            let mut lat = Vec::new();
            let mut outcomes: BTreeMap<String, u64> = BTreeMap::new();
            let mut ok = 0u64;
            loop {
                if issued.fetch_add(1, Ordering::Relaxed) >= limit {
                    break;
                }
                let t0 = Instant::now();
                let r = tokio::time::timeout_at(
                    deadline,
                    client.request_raw_with(methods::TOOLS_CALL, Some(params.clone()), &call),
                )
                .await;
                let Ok(r) = r else {
                    // The run is over; an unfinished request is not counted.
                    break;
                };
                let us = t0.elapsed().as_micros().min(u32::MAX as u128) as u32;
                let outcome = match r {
                    Ok(res) if crate::output::is_tool_error(&res) => {
                        Outcome::Error("tool error (isError)".into())
                    }
                    Ok(_) => Outcome::Ok,
                    Err(e) => Outcome::Error(error_kind(&e)),
                };
                lat.push(us);
                done.fetch_add(1, Ordering::Relaxed);
                match outcome {
                    Outcome::Ok => ok += 1,
                    Outcome::Error(kind) => {
                        let closed = kind == "connection closed";
                        *outcomes.entry(kind).or_default() += 1;
                        if closed {
                            break;
                        }
                    }
                }
            }
            (lat, outcomes, ok)
        });
    }
    let mut report = Report {
        requests: 0,
        ok: 0,
        errors: BTreeMap::new(),
        elapsed: Duration::ZERO,
        latencies_us: Vec::new(),
    };
    while let Some(r) = workers.join_next().await {
        if let Ok((lat, errors, ok)) = r {
            report.requests += lat.len() as u64;
            report.latencies_us.extend(lat);
            report.ok += ok;
            for (k, n) in errors {
                *report.errors.entry(k).or_default() += n;
            }
        }
    }
    report.elapsed = started.elapsed().min(duration.max(started.elapsed()));
    ticker.abort();
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    report.latencies_us.sort_unstable();
    report
}

fn progress(duration: Duration) -> Option<ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let b = ProgressBar::with_draw_target(
        Some(duration.as_millis() as u64),
        ProgressDrawTarget::stderr(),
    );
    b.set_style(
        ProgressStyle::with_template("{spinner} [{bar:30}] {elapsed} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    Some(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles() {
        let v: Vec<u32> = (1..=100).collect();
        assert_eq!(percentile(&v, 50.0), Some(50));
        assert_eq!(percentile(&v, 90.0), Some(90));
        assert_eq!(percentile(&v, 99.0), Some(99));
        assert_eq!(percentile(&v, 100.0), Some(100));
        assert_eq!(percentile(&[7], 50.0), Some(7));
        assert_eq!(percentile(&[], 50.0), None);
    }

    #[test]
    fn report_text_and_json() {
        let r = Report {
            requests: 4,
            ok: 3,
            errors: BTreeMap::from([("server error -32602".to_owned(), 1)]),
            elapsed: Duration::from_secs(2),
            latencies_us: vec![1000, 2000, 3000, 4000],
        };
        let j = r.to_json("echo", "x", 2);
        assert_eq!(j["reqPerSec"], 2.0);
        assert_eq!(j["latencyMs"]["p50"], 2.0);
        assert_eq!(j["latencyMs"]["max"], 4.0);
        assert_eq!(j["errors"]["server error -32602"], 1);
        let t = r.to_text("echo", "x", 2);
        assert!(t.contains("requests:   4 (3 ok, 1 errors)"), "{t}");
        assert!(t.contains("errors:     1 server error -32602"), "{t}");
    }
}
