//! `mcp-bench run`: every server, every mode, every concurrency level, one
//! after another, interleaved over rounds (odd rounds in table order, even
//! rounds reversed) so that drift of the machine hits everything alike.

use std::collections::BTreeMap;
use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::client::Target;
use crate::load::{self, PointSpec};
use crate::procfs;
use crate::results::{Failure, HttpPoint, HttpRun, MemoryRun, Results, StdioRun};
use crate::servers::{Impl, Mode, Paths, RunningServer, free_addr, pinned};
use crate::stdio;

/// What to run.
#[derive(Debug, Clone)]
pub struct Plan {
    /// `--smoke`.
    pub smoke: bool,
    /// Rounds.
    pub rounds: usize,
    /// Measured window per load point.
    pub duration: Duration,
    /// Warm-up per load point.
    pub warmup: Duration,
    /// Concurrency levels.
    pub concurrency: Vec<usize>,
    /// Sessions for the memory runs.
    pub sessions: usize,
    /// Servers.
    pub servers: Vec<Impl>,
    /// HTTP modes.
    pub modes: Vec<Mode>,
    /// Run the memory runs.
    pub memory: bool,
    /// Run the stdio runs.
    pub stdio: bool,
    /// Window of one stdio run.
    pub stdio_duration: Duration,
    /// Cold starts per server per round.
    pub cold_starts: usize,
    /// Core for the servers (None: no pinning).
    pub server_core: Option<usize>,
    /// Where the programs are.
    pub paths: Paths,
    /// Server logs go here.
    pub log_dir: PathBuf,
    /// Why Tessera cannot be measured over HTTP, if it cannot.
    pub tessera_http_unavailable: Option<String>,
    /// Why Tessera cannot be measured at all, if it cannot.
    pub tessera_unavailable: Option<String>,
}

impl Plan {
    fn http_configs(&self) -> Vec<(Impl, Mode)> {
        let probe = "127.0.0.1:1".parse().expect("an address");
        let mut v = Vec::new();
        for &mode in &self.modes {
            for &imp in &self.servers {
                if self.paths.http_cmd(imp, mode, probe).is_some() && self.http_ok(imp) {
                    v.push((imp, mode));
                }
            }
        }
        v
    }

    fn http_ok(&self, imp: Impl) -> bool {
        imp != Impl::Tessera
            || (self.tessera_unavailable.is_none() && self.tessera_http_unavailable.is_none())
    }

    fn memory_servers(&self) -> Vec<Impl> {
        if !self.memory {
            return Vec::new();
        }
        self.servers
            .iter()
            .copied()
            .filter(|&i| self.http_ok(i))
            .collect()
    }

    fn stdio_servers(&self) -> Vec<Impl> {
        if !self.stdio {
            return Vec::new();
        }
        self.servers
            .iter()
            .copied()
            .filter(|&i| self.paths.stdio_cmd(i).is_some())
            .filter(|&i| i != Impl::Tessera || self.tessera_unavailable.is_none())
            .collect()
    }
}

struct Ui {
    pb: ProgressBar,
}

impl Ui {
    fn new(total: u64, hidden: bool) -> Self {
        let pb = if hidden || !std::io::stderr().is_terminal() {
            ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden())
        } else {
            let pb = ProgressBar::new(total);
            pb.set_style(
                ProgressStyle::with_template(
                    "{elapsed_precise} [{bar:32.cyan/blue}] {pos}/{len} {msg}",
                )
                .expect("a valid template")
                .progress_chars("=> "),
            );
            pb
        };
        Self { pb }
    }

    fn log(&self, msg: impl AsRef<str>) {
        if self.pb.is_hidden() {
            eprintln!("{}", msg.as_ref());
        } else {
            self.pb.println(msg.as_ref());
        }
    }
}

/// Runs the plan; every failure is recorded, none stops the run.
pub async fn run(plan: &Plan, results: &mut Results) {
    let http = plan.http_configs();
    let mem = plan.memory_servers();
    let std_servers = plan.stdio_servers();
    let per_round = (http.len() * plan.concurrency.len() + mem.len() + std_servers.len()) as u64;
    let ui = Ui::new(per_round * plan.rounds as u64, plan.smoke);

    if let Some(why) = &plan.tessera_unavailable {
        results.skipped.push(format!("Tessera (everything): {why}"));
        ui.log(format!("SKIP tessera: {why}"));
    } else if let Some(why) = &plan.tessera_http_unavailable {
        results.skipped.push(format!("Tessera over HTTP: {why}"));
        ui.log(format!("SKIP tessera over HTTP: {why}"));
    }
    for &mode in &plan.modes {
        for &imp in &plan.servers {
            let probe = "127.0.0.1:1".parse().expect("an address");
            if plan.paths.http_cmd(imp, mode, probe).is_none()
                && (imp != Impl::Tessera || plan.http_ok(imp))
            {
                results.skipped.push(format!(
                    "{} in mode {}: not supported by that SDK",
                    imp.title(),
                    mode.key()
                ));
            }
        }
    }

    for round in 1..=plan.rounds {
        let reverse = round % 2 == 0;
        for (imp, mode) in in_order(http.clone(), reverse) {
            http_run(plan, &ui, results, imp, mode, round).await;
        }
        for imp in in_order(mem.clone(), reverse) {
            ui.pb.set_message(format!(
                "round {round}: {} memory, {} sessions",
                imp.key(),
                plan.sessions
            ));
            memory_run(plan, &ui, results, imp, round).await;
            ui.pb.inc(1);
        }
        for imp in in_order(std_servers.clone(), reverse) {
            ui.pb
                .set_message(format!("round {round}: {} stdio", imp.key()));
            stdio_run(plan, &ui, results, imp, round).await;
            ui.pb.inc(1);
        }
    }
    ui.pb.finish_and_clear();
}

fn in_order<T>(mut v: Vec<T>, reverse: bool) -> Vec<T> {
    if reverse {
        v.reverse();
    }
    v
}

async fn http_run(
    plan: &Plan,
    ui: &Ui,
    results: &mut Results,
    imp: Impl,
    mode: Mode,
    round: usize,
) {
    let what = format!("{}/{} round {round}", imp.key(), mode.key());
    let fail = |results: &mut Results, error: String| {
        ui.log(format!("FAIL {what}: {error}"));
        results.failures.push(Failure {
            what: what.clone(),
            error,
        });
    };
    let addr = match free_addr() {
        Ok(a) => a,
        Err(e) => return fail(results, format!("{e:#}")),
    };
    let cmd = plan.paths.http_cmd(imp, mode, addr).expect("configured");
    results
        .meta
        .commands
        .entry(format!("{}/{}", imp.key(), mode.key()))
        .or_insert_with(|| {
            cmd.join(" ")
                .replace(&addr.to_string(), "127.0.0.1:PORT")
                .replace(&format!("--port {}", addr.port()), "--port PORT")
        });
    let log = plan
        .log_dir
        .join(format!("{}-{}-r{round}.log", imp.key(), mode.key()));
    let mut server = match RunningServer::start(&pinned(cmd, plan.server_core), addr, &log).await {
        Ok(s) => s,
        Err(e) => {
            ui.pb.inc(plan.concurrency.len() as u64);
            return fail(results, format!("{e:#}"));
        }
    };
    load::settle().await;
    let idle = procfs::rss_kb(server.pid);
    let target = Arc::new(Target::new(addr, "/mcp"));
    // A first conversation, as a client starts one: handshake (legacy) and
    // tools/list. If this fails, the load would only count errors.
    let check = async {
        let mut c = crate::client::Client::open(target.clone(), mode.era()).await?;
        c.list_tools().await?;
        c.close().await;
        anyhow::Ok(())
    };
    if let Err(e) = check.await {
        ui.pb.inc(plan.concurrency.len() as u64);
        fail(
            results,
            format!(
                "first tools/list: {e:#}; server stderr:\n{}",
                crate::servers::tail(&server.log)
            ),
        );
        server.stop().await;
        return;
    }
    for &c in &plan.concurrency {
        let label = format!("round {round}: {} {} c={c}", imp.key(), mode.key());
        ui.pb.set_message(label.clone());
        let spec = PointSpec {
            target: target.clone(),
            era: mode.era(),
            concurrency: c,
            warmup: plan.warmup,
            duration: plan.duration,
            pid: Some(server.pid),
            others: Vec::new(),
            max_requests: None,
        };
        match load::run_point(&spec, Some(&ui.pb), &label).await {
            Ok(r) => {
                if r.requests == 0 || r.errors > 0 {
                    fail(
                        results,
                        format!(
                            "c={c}: {} ok, {} errors; first error: {}",
                            r.requests,
                            r.errors,
                            r.first_error.as_deref().unwrap_or("-")
                        ),
                    );
                }
                ui.log(format!(
                    "{:<8} {:<11} c={:<3} {:>9.0} req/s  p50 {:>8.3} ms  p99 {:>8.3} ms  cpu {:>7.1} µs/req  {}{}",
                    imp.key(),
                    mode.key(),
                    c,
                    r.rps,
                    r.p50_us / 1000.0,
                    r.p99_us / 1000.0,
                    r.cpu_us_per_req.unwrap_or(f64::NAN),
                    r.body,
                    if r.errors > 0 { format!("  {} errors", r.errors) } else { String::new() }
                ));
                results.http.push(HttpPoint {
                    server: imp,
                    mode,
                    round,
                    result: r,
                });
            }
            Err(e) => fail(results, format!("c={c}: {e:#}")),
        }
        ui.pb.inc(1);
        if !server.alive() {
            fail(
                results,
                format!(
                    "the server exited; its stderr:\n{}",
                    crate::servers::tail(&server.log)
                ),
            );
            break;
        }
    }
    load::settle().await;
    let after = procfs::rss_kb(server.pid);
    results.http_runs.push(HttpRun {
        server: imp,
        mode,
        round,
        idle_rss_kb: idle,
        after_load_rss_kb: after,
    });
    server.stop().await;
}

async fn memory_run(plan: &Plan, ui: &Ui, results: &mut Results, imp: Impl, round: usize) {
    let what = format!("{}/memory round {round}", imp.key());
    let mut fail = |error: String| {
        ui.log(format!("FAIL {what}: {error}"));
        results.failures.push(Failure {
            what: what.clone(),
            error,
        });
    };
    let addr = match free_addr() {
        Ok(a) => a,
        Err(e) => return fail(format!("{e:#}")),
    };
    let cmd = plan
        .paths
        .http_cmd(imp, Mode::LegacySse, addr)
        .expect("configured");
    let log = plan
        .log_dir
        .join(format!("{}-memory-r{round}.log", imp.key()));
    let server = match RunningServer::start(&pinned(cmd, plan.server_core), addr, &log).await {
        Ok(s) => s,
        Err(e) => return fail(format!("{e:#}")),
    };
    let target = Arc::new(Target::new(addr, "/mcp"));
    match load::open_sessions(&target, plan.sessions, server.pid).await {
        Ok((r, clients)) => {
            ui.log(format!(
                "{:<8} memory      idle {:>7.1} MB  with {} sessions {:>7.1} MB  {:>6.1} KB/session  {:>6.0} opens/s",
                imp.key(),
                r.rss_before_kb as f64 / 1024.0,
                r.sessions,
                r.rss_after_kb as f64 / 1024.0,
                r.kb_per_session,
                r.opened_per_s
            ));
            if !r.server_has_sessions && imp != Impl::Floor {
                fail("the server gave no Mcp-Session-Id in stateful mode".into());
            }
            results.memory.push(MemoryRun {
                server: imp,
                round,
                result: r,
            });
            drop(clients);
        }
        Err(e) => fail(format!("{e:#}")),
    }
    server.stop().await;
}

/// Tessera on stdio with its pipes left to tokio's blocking `Stdin`/`Stdout`
/// (`TESSERA_STDIO_PIPES=blocking`), beside the default polled pipes.
async fn blocking_pipes_run(plan: &Plan, ui: &Ui, results: &mut Results, round: usize) {
    let what = format!(
        "tessera/stdio ({}) round {round}",
        crate::report::BLOCKING_PIPES
    );
    let Some(base) = plan.paths.stdio_cmd(Impl::Tessera) else {
        return;
    };
    let mut cmd = vec!["env".to_owned(), "TESSERA_STDIO_PIPES=blocking".to_owned()];
    cmd.extend(base);
    results
        .meta
        .commands
        .entry(format!("tessera/stdio ({})", crate::report::BLOCKING_PIPES))
        .or_insert_with(|| cmd.join(" "));
    let cmd = pinned(cmd, plan.server_core);
    let log = plan
        .log_dir
        .join(format!("tessera-stdio-blocking-r{round}.log"));
    match stdio::run(
        &cmd,
        plan.warmup.min(Duration::from_millis(500)),
        plan.stdio_duration,
        &log,
    )
    .await
    {
        Ok(r) => {
            ui.log(format!(
                "{:<8} stdio (blocking pipes) {:>9.0} round trips/s  p50 {:>8.3} ms  cpu {:>7.1} µs/req",
                "tessera",
                r.rps,
                r.p50_us / 1000.0,
                r.cpu_us_per_req.unwrap_or(f64::NAN),
            ));
            if r.errors > 0 || r.requests == 0 {
                let error = format!(
                    "{} round trips, error: {}",
                    r.requests,
                    r.first_error.as_deref().unwrap_or("-")
                );
                ui.log(format!("FAIL {what}: {error}"));
                results.failures.push(Failure { what, error });
                return;
            }
            results.stdio.push(StdioRun {
                server: Impl::Tessera,
                round,
                result: r,
                cold_start_ms: Vec::new(),
                variant: Some(crate::report::BLOCKING_PIPES.to_owned()),
            });
        }
        Err(e) => {
            let error = format!("{e:#}; stderr:\n{}", crate::servers::tail(&log));
            ui.log(format!("FAIL {what}: {error}"));
            results.failures.push(Failure { what, error });
        }
    }
}

async fn stdio_run(plan: &Plan, ui: &Ui, results: &mut Results, imp: Impl, round: usize) {
    let what = format!("{}/stdio round {round}", imp.key());
    let cmd = plan.paths.stdio_cmd(imp).expect("configured");
    results
        .meta
        .commands
        .entry(format!("{}/stdio", imp.key()))
        .or_insert_with(|| cmd.join(" "));
    let cmd = pinned(cmd, plan.server_core);
    let log = plan
        .log_dir
        .join(format!("{}-stdio-r{round}.log", imp.key()));
    let mut cold = Vec::new();
    for _ in 0..plan.cold_starts {
        match stdio::cold_start(&cmd, &log).await {
            Ok(ms) => cold.push(ms),
            Err(e) => {
                let error = format!("cold start: {e:#}; stderr:\n{}", crate::servers::tail(&log));
                ui.log(format!("FAIL {what}: {error}"));
                results.failures.push(Failure {
                    what: what.clone(),
                    error,
                });
                return;
            }
        }
    }
    match stdio::run(
        &cmd,
        plan.warmup.min(Duration::from_millis(500)),
        plan.stdio_duration,
        &log,
    )
    .await
    {
        Ok(r) => {
            cold.sort_by(f64::total_cmp);
            ui.log(format!(
                "{:<8} stdio       {:>9.0} round trips/s  p50 {:>8.3} ms  p99 {:>8.3} ms  cpu {:>7.1} µs/req  cold start {:>7.1} ms",
                imp.key(),
                r.rps,
                r.p50_us / 1000.0,
                r.p99_us / 1000.0,
                r.cpu_us_per_req.unwrap_or(f64::NAN),
                cold.get(cold.len() / 2).copied().unwrap_or(f64::NAN)
            ));
            if r.errors > 0 || r.requests == 0 {
                let error = format!(
                    "{} round trips, error: {}",
                    r.requests,
                    r.first_error.as_deref().unwrap_or("-")
                );
                ui.log(format!("FAIL {what}: {error}"));
                results.failures.push(Failure {
                    what: what.clone(),
                    error,
                });
            }
            results.stdio.push(StdioRun {
                server: imp,
                round,
                result: r,
                cold_start_ms: cold,
                variant: None,
            });
        }
        Err(e) => {
            let error = format!("{e:#}; stderr:\n{}", crate::servers::tail(&log));
            ui.log(format!("FAIL {what}: {error}"));
            results.failures.push(Failure { what, error });
        }
    }
    if imp == Impl::Tessera {
        blocking_pipes_run(plan, ui, results, round).await;
    }
}

/// Fills `versions` with what can be read from the programs themselves.
pub fn versions(paths: &Paths, bench_dir: &std::path::Path, out: &mut BTreeMap<String, String>) {
    let run = |prog: &std::path::Path, args: &[&str]| -> Option<String> {
        let o = std::process::Command::new(prog).args(args).output().ok()?;
        let s = String::from_utf8_lossy(&o.stdout).trim().to_owned();
        (!s.is_empty()).then_some(s)
    };
    if let Some(t) = &paths.tessera
        && let Some(v) = run(t, &["--version"])
    {
        out.insert("tessera".into(), v);
    }
    let lock = std::fs::read_to_string(bench_dir.join("Cargo.lock")).unwrap_or_default();
    for krate in ["rmcp", "hyper", "hyper-util", "serde_json", "tokio"] {
        if let Some(v) = lock_version(&lock, krate) {
            out.insert(format!("{krate} (crates.io, bench/Cargo.lock)"), v);
        }
    }
    if let Some(v) = run(&paths.node, &["--version"]) {
        out.insert("node".into(), v);
    }
    let sdk_pkg = paths
        .ts_server
        .parent()
        .map(|d| d.join("node_modules/@modelcontextprotocol/sdk/package.json"))
        .and_then(|p| std::fs::read_to_string(p).ok())
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|v| v.get("version").and_then(|v| v.as_str()).map(str::to_owned));
    if let Some(v) = sdk_pkg {
        out.insert("@modelcontextprotocol/sdk (npm)".into(), v);
    }
    let py = run(
        &paths.python,
        &[
            "-c",
            "import importlib.metadata as m, sys; print(m.version('mcp'), m.version('uvicorn'), m.version('starlette'), sys.version.split()[0])",
        ],
    );
    if let Some(v) = py {
        let parts: Vec<&str> = v.split_whitespace().collect();
        if let [mcp, uvicorn, starlette, python] = parts[..] {
            out.insert("mcp (PyPI)".into(), mcp.into());
            out.insert("uvicorn (PyPI)".into(), uvicorn.into());
            out.insert("starlette (PyPI)".into(), starlette.into());
            out.insert("python".into(), python.into());
        }
    }
    if let Some(v) = run(std::path::Path::new("rustc"), &["--version"]) {
        out.insert("rustc".into(), v);
    }
}

/// The version of `krate` in a Cargo.lock.
fn lock_version(lock: &str, krate: &str) -> Option<String> {
    let needle = format!("name = \"{krate}\"\nversion = \"");
    let i = lock.find(&needle)? + needle.len();
    let end = lock[i..].find('"')?;
    Some(lock[i..i + end].to_owned())
}
