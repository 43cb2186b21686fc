//! The load panel's runs: `tessera bench` on one tool from the page. A run
//! opens its own connection to the same server (so that its thousands of
//! messages stay out of the protocol journal), calls the tool from
//! `concurrency` workers until the time is up, and records a `load` event
//! every half second (requests, rate, latency percentiles of that interval,
//! errors) and a `loadDone` event with the summary `tessera bench --json`
//! prints.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tessera::client::{CallOptions, ChildCommand, Client, ConnectMode};
use tessera::types::{CallToolRequestParams, JsonObject, methods};

use super::journal::Journal;
use super::problem::Problem;
use crate::bench::{Report, percentile};
use crate::output::is_tool_error;

/// A `loadDone` event: a run's summary, or why it ended without one.
#[derive(Serialize)]
struct LoadDone {
    #[serde(skip_serializing_if = "Option::is_none")]
    connection: Option<u64>,
    run: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    summary: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

/// A `load` event: one interval of a run.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LoadTick<'a, E> {
    connection: u64,
    run: u64,
    t: f64,
    requests: usize,
    req_per_sec: f64,
    p50_ms: Option<f64>,
    p95_ms: Option<f64>,
    max_ms: Option<f64>,
    errors: &'a E,
}
use crate::http_opts::HttpOptions;
use crate::target::Target;

/// The most workers of one run.
pub const MAX_CONCURRENCY: usize = 32;
/// The longest run.
pub const MAX_SECONDS: f64 = 60.0;
/// The most runs at once (in the whole inspector).
pub const MAX_RUNS: usize = 2;
/// How often a run reports.
const TICK: Duration = Duration::from_millis(500);

/// `POST …/load`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoadSpec {
    /// The tool.
    pub name: String,
    /// Its arguments.
    #[serde(default)]
    pub arguments: Option<JsonObject>,
    /// Workers calling at once (default 4).
    #[serde(default)]
    pub concurrency: Option<usize>,
    /// How long, in seconds (default 5).
    #[serde(default)]
    pub seconds: Option<f64>,
}

/// The runs in progress. Cheap to clone.
#[derive(Clone, Default)]
pub struct Runs {
    inner: Arc<Mutex<HashMap<u64, tokio::task::AbortHandle>>>,
    next: Arc<AtomicU64>,
}

/// What a run connects to, as its connection was opened.
#[derive(Debug, Clone)]
pub struct Origin {
    /// The server.
    pub target: Target,
    /// The era and version.
    pub mode: ConnectMode,
    /// The command line's HTTP options.
    pub http: HttpOptions,
}

impl Runs {
    fn runs(&self) -> std::sync::MutexGuard<'_, HashMap<u64, tokio::task::AbortHandle>> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Starts a run on connection `conn` (opened from `origin`); returns
    /// its id at once.
    pub fn start(
        &self,
        conn: u64,
        origin: Origin,
        spec: LoadSpec,
        journal: Journal,
    ) -> Result<u64, Problem> {
        let concurrency = spec.concurrency.unwrap_or(4);
        if concurrency == 0 || concurrency > MAX_CONCURRENCY {
            return Err(Problem::bad_request(format!(
                "concurrency {concurrency}: from 1 to {MAX_CONCURRENCY}"
            )));
        }
        let seconds = spec.seconds.unwrap_or(5.0);
        if !(seconds.is_finite() && seconds > 0.0 && seconds <= MAX_SECONDS) {
            return Err(Problem::bad_request(format!(
                "seconds {seconds}: above 0 and at most {MAX_SECONDS}"
            )));
        }
        let mut runs = self.runs();
        if runs.len() >= MAX_RUNS {
            return Err(Problem::limit(format!(
                "{MAX_RUNS} load runs are already going: stop one first"
            )));
        }
        let run = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let me = self.clone();
        let task = tokio::spawn(async move {
            let end = match drive(conn, run, origin, &spec, concurrency, seconds, &journal).await {
                Ok(summary) => LoadDone {
                    connection: Some(conn),
                    run,
                    summary: Some(summary),
                    error: None,
                },
                Err(why) => LoadDone {
                    connection: Some(conn),
                    run,
                    summary: None,
                    error: Some(why),
                },
            };
            me.runs().remove(&run);
            journal.record("loadDone", end);
        });
        runs.insert(run, task.abort_handle());
        Ok(run)
    }

    /// Stops run `run`; false when no such run goes on.
    pub fn stop(&self, run: u64, journal: &Journal) -> bool {
        match self.runs().remove(&run) {
            Some(h) => {
                h.abort();
                journal.record(
                    "loadDone",
                    LoadDone {
                        connection: None,
                        run,
                        summary: None,
                        error: Some("stopped".into()),
                    },
                );
                true
            }
            None => false,
        }
    }
}

/// A client of its own for the run, untapped.
async fn open(origin: &Origin) -> Result<Client, String> {
    let builder = Client::builder("tessera-inspect-load", env!("CARGO_PKG_VERSION"))
        .mode(origin.mode)
        .request_timeout(Some(Duration::from_secs(30)));
    match &origin.target {
        Target::Command { program, args, env } => {
            let mut command = ChildCommand::new(program.clone(), args.clone());
            command.env = env.clone();
            builder
                .connect_child(&command)
                .await
                .map_err(|e| format!("connecting: {e}"))
        }
        Target::Url { url, headers } => {
            let mut http = origin.http.clone();
            http.headers.extend(headers.iter().cloned());
            let t = http.transport(url).map_err(|e| format!("{e:?}"))?;
            let t = http
                .authorizer(url)
                .map_err(|e| format!("{e:?}"))?
                .install(t);
            builder
                .connect_transport(t)
                .await
                .map_err(|e| format!("connecting: {e}"))
        }
    }
}

/// One interval's samples, shared by the workers.
#[derive(Default)]
struct Interval {
    latencies_us: Vec<u32>,
    errors: BTreeMap<String, u64>,
}

/// The most samples an interval keeps (the count goes on past it).
const MAX_SAMPLES: usize = 200_000;

async fn drive(
    conn: u64,
    run: u64,
    origin: Origin,
    spec: &LoadSpec,
    concurrency: usize,
    seconds: f64,
    journal: &Journal,
) -> Result<Value, String> {
    let client = open(&origin).await?;
    let mut call = CallToolRequestParams::new(spec.name.clone());
    call.arguments = Some(spec.arguments.clone().unwrap_or_default());
    let params = match serde_json::to_value(&call) {
        Ok(Value::Object(o)) => o,
        _ => JsonObject::new(),
    };
    let duration = Duration::from_secs_f64(seconds);
    let started = Instant::now();
    let deadline = tokio::time::Instant::from_std(started + duration);
    let interval = Arc::new(Mutex::new(Interval::default()));
    let total = Arc::new(Mutex::new(Report {
        requests: 0,
        ok: 0,
        errors: BTreeMap::new(),
        elapsed: Duration::ZERO,
        latencies_us: Vec::new(),
    }));
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..concurrency {
        let (client, params) = (client.clone(), params.clone());
        let (interval, total) = (interval.clone(), total.clone());
        workers.spawn(async move {
            let call = CallOptions::new();
            loop {
                let t0 = Instant::now();
                let r = tokio::time::timeout_at(
                    deadline,
                    client.request_raw_with(methods::TOOLS_CALL, Some(params.clone()), &call),
                )
                .await;
                let Ok(r) = r else { break };
                let us = t0.elapsed().as_micros().min(u128::from(u32::MAX)) as u32;
                let error = match r {
                    Ok(res) if is_tool_error(&res) => Some("tool error (isError)".to_owned()),
                    Ok(_) => None,
                    Err(e) => Some(e.to_string().chars().take(100).collect()),
                };
                let closed = error.as_deref() == Some("connection closed");
                {
                    let mut i = interval
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    if i.latencies_us.len() < MAX_SAMPLES {
                        i.latencies_us.push(us);
                    }
                    if let Some(e) = &error {
                        *i.errors.entry(e.clone()).or_default() += 1;
                    }
                }
                {
                    let mut t = total
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    t.requests += 1;
                    if t.latencies_us.len() < MAX_SAMPLES {
                        t.latencies_us.push(us);
                    }
                    match error {
                        None => t.ok += 1,
                        Some(e) => *t.errors.entry(e).or_default() += 1,
                    }
                }
                if closed {
                    break;
                }
            }
        });
    }
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + TICK, TICK);
    loop {
        tokio::select! {
            _ = tick.tick() => {
                let mut taken = std::mem::take(
                    &mut *interval.lock().unwrap_or_else(std::sync::PoisonError::into_inner),
                );
                taken.latencies_us.sort_unstable();
                let ms = |p: f64| percentile(&taken.latencies_us, p).map(|us| f64::from(us) / 1000.0);
                let n = taken.latencies_us.len();
                journal.record("load", LoadTick {
                    connection: conn,
                    run,
                    t: started.elapsed().as_secs_f64(),
                    requests: n,
                    req_per_sec: n as f64 / TICK.as_secs_f64(),
                    p50_ms: ms(50.0),
                    p95_ms: ms(95.0),
                    max_ms: ms(100.0),
                    errors: &taken.errors,
                });
            }
            joined = workers.join_next() => {
                if joined.is_none() {
                    break;
                }
            }
        }
    }
    client.close().await;
    let mut report = std::mem::replace(
        &mut *total
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
        Report {
            requests: 0,
            ok: 0,
            errors: BTreeMap::new(),
            elapsed: Duration::ZERO,
            latencies_us: Vec::new(),
        },
    );
    report.elapsed = started.elapsed().min(duration);
    report.latencies_us.sort_unstable();
    Ok(report.to_json(&spec.name, &origin.target.describe(), concurrency))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events_keep_their_shape() {
        let done = LoadDone {
            connection: None,
            run: 2,
            summary: None,
            error: Some("stopped".into()),
        };
        assert_eq!(
            serde_json::to_value(done).unwrap(),
            json!({"run": 2, "error": "stopped"})
        );
        let done = LoadDone {
            connection: Some(1),
            run: 2,
            summary: Some(json!({"ok": 1})),
            error: None,
        };
        assert_eq!(
            serde_json::to_value(done).unwrap(),
            json!({"connection": 1, "run": 2, "summary": {"ok": 1}})
        );
        let errors: BTreeMap<String, u64> = [("e".to_owned(), 1)].into();
        let tick = LoadTick {
            connection: 1,
            run: 2,
            t: 0.5,
            requests: 3,
            req_per_sec: 6.0,
            p50_ms: Some(1.0),
            p95_ms: None,
            max_ms: Some(2.0),
            errors: &errors,
        };
        assert_eq!(
            serde_json::to_value(tick).unwrap(),
            json!({"connection": 1, "run": 2, "t": 0.5, "requests": 3, "reqPerSec": 6.0,
                   "p50Ms": 1.0, "p95Ms": null, "maxMs": 2.0, "errors": {"e": 1}})
        );
    }
}
