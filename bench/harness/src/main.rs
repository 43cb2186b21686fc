//! `mcp-bench`: the Tessera benchmark harness.
//!
//! ```text
//! mcp-bench run [--smoke] [--rounds N] [--duration S] ...   every server, mode, level; writes the report
//! mcp-bench load --url http://127.0.0.1:PORT/mcp ...        one load point against a running server
//! mcp-bench sessions --url ... --pid PID --count N          memory per session of a running server
//! mcp-bench stdio -- COMMAND ARGS...                        stdio round trips + cold start of one server
//! mcp-bench soak --tessera BIN [--minutes N]                RSS and fds of tessera serve --http under mixed load
//! mcp-bench report RESULTS.json                             re-render a report
//! ```
//! `bench/run.sh` builds everything and calls `mcp-bench run` pinned to core 1.

mod client;
mod load;
mod procfs;
mod report;
mod results;
mod run;
mod servers;
mod soak;
mod sse;
mod stdio;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::Context as _;
use clap::{Parser, Subcommand};

use crate::client::{Era, Target};
use crate::results::Results;
use crate::servers::{Impl, Mode, Paths};

#[derive(Parser)]
#[command(version, about = "Tessera benchmark harness (see bench/README.md)")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run the whole benchmark and write bench/results/<date>.{md,json}.
    Run(Box<RunArgs>),
    /// One load point against a running server; prints JSON.
    Load(LoadArgs),
    /// Open N legacy sessions on a running server and report its RSS growth.
    Sessions(SessionsArgs),
    /// Stdio round trips and cold start of one server command; prints JSON.
    Stdio(StdioArgs),
    /// A long mixed run against `tessera serve --http`: RSS and open file
    /// descriptors must stay flat, with no errors (bench/soak.sh).
    Soak(SoakArgs),
    /// Render the Markdown report of a results JSON file.
    Report {
        /// A results .json written by `run`.
        file: PathBuf,
    },
}

#[derive(clap::Args)]
struct RunArgs {
    /// Short mode: 1 round, ~1 s per point, concurrency 1 and 4, 50 sessions.
    #[arg(long)]
    smoke: bool,
    /// Rounds (every server × mode once per round, order reversed every other round).
    #[arg(long)]
    rounds: Option<usize>,
    /// Measured seconds per load point.
    #[arg(long)]
    duration: Option<f64>,
    /// Warm-up seconds per load point.
    #[arg(long)]
    warmup: Option<f64>,
    /// Concurrency levels, comma-separated.
    #[arg(long, value_delimiter = ',')]
    concurrency: Option<Vec<usize>>,
    /// Sessions opened by the memory runs.
    #[arg(long)]
    sessions: Option<usize>,
    /// Servers, comma-separated: tessera, rmcp, ts, py, floor.
    #[arg(long, value_delimiter = ',')]
    servers: Option<Vec<String>>,
    /// HTTP modes, comma-separated: legacy-sse, legacy-json, modern.
    #[arg(long, value_delimiter = ',')]
    modes: Option<Vec<String>>,
    /// Skip the memory runs.
    #[arg(long)]
    no_memory: bool,
    /// Skip the stdio runs.
    #[arg(long)]
    no_stdio: bool,
    /// Skip HTTP load (memory and stdio only).
    #[arg(long)]
    no_http: bool,
    /// Measured seconds per stdio run (default: --duration).
    #[arg(long)]
    stdio_duration: Option<f64>,
    /// Cold starts per server per round.
    #[arg(long)]
    cold_starts: Option<usize>,
    /// Pin servers to this core (`taskset -c`).
    #[arg(long, default_value_t = 0)]
    server_core: usize,
    /// The core the harness itself runs on (recorded; run.sh pins it).
    #[arg(long)]
    client_core: Option<usize>,
    /// Do not pin the servers.
    #[arg(long)]
    no_pin: bool,
    /// The bench directory (for Cargo.lock and default paths).
    #[arg(long, default_value = "bench")]
    bench_dir: PathBuf,
    /// Where to write <date>.md and <date>.json (default: BENCH_DIR/results).
    #[arg(long)]
    out_dir: Option<PathBuf>,
    /// Where server logs go (default: BENCH_DIR/target/logs).
    #[arg(long)]
    log_dir: Option<PathBuf>,
    /// The tessera binary (omit or missing: Tessera is skipped).
    #[arg(long)]
    tessera: Option<PathBuf>,
    /// The rmcp-echo binary.
    #[arg(long)]
    rmcp: Option<PathBuf>,
    /// The floor binary.
    #[arg(long)]
    floor: Option<PathBuf>,
    /// node.
    #[arg(long, default_value = "node")]
    node: PathBuf,
    /// The venv's python (default: BENCH_DIR/servers/py/.venv/bin/python).
    #[arg(long)]
    python: Option<PathBuf>,
    /// Extra name=version pairs for the report (e.g. tessera git revision).
    #[arg(long = "version-note", value_name = "NAME=VERSION")]
    version_notes: Vec<String>,
}

#[derive(clap::Args)]
struct LoadArgs {
    /// The MCP endpoint, e.g. http://127.0.0.1:8001/mcp.
    #[arg(long)]
    url: String,
    /// legacy or modern.
    #[arg(long, default_value = "legacy")]
    era: String,
    /// Clients calling at once.
    #[arg(long, default_value_t = 1)]
    concurrency: usize,
    /// Measured seconds.
    #[arg(long, default_value_t = 5.0)]
    duration: f64,
    /// Warm-up seconds.
    #[arg(long, default_value_t = 1.0)]
    warmup: f64,
    /// Stop after this many calls instead (no warm-up; for profiling).
    #[arg(long)]
    requests: Option<u64>,
    /// The server's pid, for its CPU time.
    #[arg(long)]
    pid: Option<u32>,
    /// Another process whose CPU time over the window is reported beside
    /// the server's (`others_cpu_us_per_req`); may be repeated.
    #[arg(long = "also-pid")]
    also_pid: Vec<u32>,
}

#[derive(clap::Args)]
struct SessionsArgs {
    /// The MCP endpoint.
    #[arg(long)]
    url: String,
    /// The server's pid.
    #[arg(long)]
    pid: u32,
    /// Sessions to open.
    #[arg(long, default_value_t = 1000)]
    count: usize,
}

#[derive(clap::Args)]
struct StdioArgs {
    /// Measured seconds.
    #[arg(long, default_value_t = 5.0)]
    duration: f64,
    /// Cold starts to time.
    #[arg(long, default_value_t = 3)]
    cold_starts: usize,
    /// Exactly N round trips after the handshake (no warm-up, no window,
    /// no `tools/list`), then close stdin and wait for the server to exit:
    /// a fixed amount of work for `valgrind --tool=callgrind` on the server.
    /// 0 is the handshake alone.
    #[arg(long, value_name = "N")]
    requests: Option<u64>,
    /// The server command.
    #[arg(last = true, required = true)]
    command: Vec<String>,
}

#[derive(clap::Args)]
struct SoakArgs {
    /// The tessera binary.
    #[arg(long)]
    tessera: PathBuf,
    /// Minutes to run (at least 3 for a verdict).
    #[arg(long, default_value_t = 10.0)]
    minutes: f64,
    /// Legacy sessions kept open.
    #[arg(long, default_value_t = 1000)]
    sessions: usize,
    /// Keep-alive connections the legacy sessions share (one worker each).
    #[arg(long, default_value_t = 50)]
    connections: usize,
    /// 2026-07-28 clients (one worker each).
    #[arg(long, default_value_t = 10)]
    modern_clients: usize,
    /// Workers opening and dropping streams.
    #[arg(long, default_value_t = 4)]
    stream_workers: usize,
    /// Milliseconds between two actions of one worker.
    #[arg(long, default_value_t = 100)]
    pace_ms: u64,
    /// The bench directory.
    #[arg(long, default_value = "bench")]
    bench_dir: PathBuf,
    /// Where the report goes (default: BENCH_DIR/results).
    #[arg(long)]
    out_dir: Option<PathBuf>,
}

async fn cmd_soak(a: SoakArgs) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(a.sessions > 0 && a.connections > 0, "nothing to run");
    let cfg = soak::SoakConfig {
        tessera: a.tessera,
        minutes: a.minutes,
        sessions: a.sessions,
        connections: a.connections.min(a.sessions),
        modern_clients: a.modern_clients,
        stream_workers: a.stream_workers,
        pace: Duration::from_millis(a.pace_ms),
        out_dir: a.out_dir.unwrap_or_else(|| a.bench_dir.join("results")),
        log_dir: a.bench_dir.join("target/logs"),
    };
    Ok(if soak::run(cfg).await? {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let r = match cli.cmd {
        Cmd::Run(a) => cmd_run(*a).await,
        Cmd::Load(a) => cmd_load(a).await,
        Cmd::Sessions(a) => cmd_sessions(a).await,
        Cmd::Stdio(a) => cmd_stdio(a).await,
        Cmd::Soak(a) => cmd_soak(a).await,
        Cmd::Report { file } => cmd_report(&file),
    };
    match r {
        Ok(code) => code,
        Err(e) => {
            eprintln!("mcp-bench: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s.max(0.0))
}

async fn cmd_run(a: RunArgs) -> anyhow::Result<ExitCode> {
    let smoke = a.smoke;
    let rounds = a.rounds.unwrap_or(if smoke { 1 } else { 3 });
    let duration = a.duration.unwrap_or(if smoke { 1.0 } else { 5.0 });
    let warmup = a.warmup.unwrap_or(if smoke { 0.3 } else { 1.0 });
    let concurrency = a
        .concurrency
        .unwrap_or_else(|| if smoke { vec![1, 4] } else { vec![1, 16, 64] });
    let sessions = a.sessions.unwrap_or(if smoke { 50 } else { 1000 });
    let stdio_duration = a.stdio_duration.unwrap_or(duration);
    let cold_starts = a.cold_starts.unwrap_or(if smoke { 2 } else { 5 });
    let servers = match &a.servers {
        Some(v) => v
            .iter()
            .map(|s| Impl::parse(s))
            .collect::<anyhow::Result<Vec<_>>>()?,
        None => Impl::ALL.to_vec(),
    };
    let modes = if a.no_http {
        Vec::new()
    } else {
        match &a.modes {
            Some(v) => v
                .iter()
                .map(|s| Mode::parse(s))
                .collect::<anyhow::Result<Vec<_>>>()?,
            None => Mode::ALL.to_vec(),
        }
    };
    anyhow::ensure!(
        rounds > 0 && !concurrency.is_empty() && sessions > 0,
        "nothing to run"
    );

    let bench = a.bench_dir.clone();
    let release = bench.join("target/release");
    let mut paths = Paths {
        tessera: a.tessera.clone(),
        rmcp: a.rmcp.clone().unwrap_or_else(|| release.join("rmcp-echo")),
        floor: a.floor.clone().unwrap_or_else(|| release.join("floor")),
        node: a.node.clone(),
        ts_server: bench.join("servers/ts/server.mjs"),
        python: a
            .python
            .clone()
            .unwrap_or_else(|| bench.join("servers/py/.venv/bin/python")),
        py_server: bench.join("servers/py/server.py"),
        sse_flag: false,
        per_client_flag: false,
    };
    for (name, p) in [
        ("rmcp-echo", &paths.rmcp),
        ("floor", &paths.floor),
        ("server.mjs", &paths.ts_server),
    ] {
        anyhow::ensure!(
            p.exists(),
            "{name} not found at {} (run bench/run.sh, which builds it)",
            p.display()
        );
    }
    let tessera_unavailable = match &paths.tessera {
        None => Some("no tessera binary given (bench/run.sh --no-tessera, or mcp-bench run without --tessera)".to_owned()),
        Some(t) if !t.exists() => Some(format!("{} does not exist", t.display())),
        Some(_) => None,
    };
    let tessera_http_unavailable = match (&paths.tessera, &tessera_unavailable) {
        (Some(t), None) => match servers::tessera_help(t) {
            Ok(help) => {
                paths.sse_flag = help.contains("--sse-response");
                paths.per_client_flag = help.contains("--max-sessions-per-client");
                (!help.contains("--http")).then(|| {
                    format!("`{} serve --help` has no --http (its Streamable HTTP server is not built yet)", t.display())
                })
            }
            Err(e) => Some(e),
        },
        _ => None,
    };
    if paths.tessera.is_some() && tessera_unavailable.is_some() {
        // Keep the Tessera columns empty rather than failing on a path.
        paths.tessera = None;
    }

    let log_dir = a
        .log_dir
        .clone()
        .unwrap_or_else(|| bench.join("target/logs"));
    std::fs::create_dir_all(&log_dir).with_context(|| format!("creating {}", log_dir.display()))?;
    let out_dir = a.out_dir.clone().unwrap_or_else(|| bench.join("results"));
    std::fs::create_dir_all(&out_dir).with_context(|| format!("creating {}", out_dir.display()))?;

    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let started = report::utc(now);
    let mut results = Results::default();
    let m = &mut results.meta;
    m.started = started.clone();
    m.smoke = smoke;
    m.rounds = rounds;
    m.duration_s = duration;
    m.warmup_s = warmup;
    m.concurrency = concurrency.clone();
    m.sessions = sessions;
    m.stdio_duration_s = stdio_duration;
    m.cold_starts = cold_starts;
    m.server_core = (!a.no_pin).then_some(a.server_core);
    m.client_core = a.client_core;
    m.machine = procfs::machine();
    m.loadavg.push(procfs::loadavg());
    run::versions(&paths, &bench, &mut m.versions);
    for note in &a.version_notes {
        if let Some((k, v)) = note.split_once('=') {
            m.versions.insert(k.to_owned(), v.to_owned());
        }
    }

    let plan = run::Plan {
        smoke,
        rounds,
        duration: secs(duration),
        warmup: secs(warmup),
        concurrency,
        sessions,
        servers,
        modes,
        memory: !a.no_memory,
        stdio: !a.no_stdio,
        stdio_duration: secs(stdio_duration),
        cold_starts,
        server_core: (!a.no_pin).then_some(a.server_core),
        paths,
        log_dir,
        tessera_http_unavailable,
        tessera_unavailable,
    };
    run::run(&plan, &mut results).await;
    results.meta.loadavg.push(procfs::loadavg());

    let md = report::markdown(&results);
    let stem = format!(
        "{}{}",
        started.replace(':', "-"),
        if smoke { "-smoke" } else { "" }
    );
    let md_path = out_dir.join(format!("{stem}.md"));
    let json_path = out_dir.join(format!("{stem}.json"));
    std::fs::write(&md_path, &md).with_context(|| format!("writing {}", md_path.display()))?;
    std::fs::write(
        &json_path,
        serde_json::to_string_pretty(&report::json(&results))?,
    )
    .with_context(|| format!("writing {}", json_path.display()))?;
    println!("{md}");
    eprintln!(
        "report: {}\n        {}",
        md_path.display(),
        json_path.display()
    );
    if results.failures.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!(
            "mcp-bench: {} failure(s); see the report's Failures section",
            results.failures.len()
        );
        Ok(ExitCode::from(1))
    }
}

async fn cmd_load(a: LoadArgs) -> anyhow::Result<ExitCode> {
    let era = match a.era.as_str() {
        "legacy" => Era::Legacy,
        "modern" => Era::Modern,
        other => anyhow::bail!("--era legacy|modern, not {other}"),
    };
    let spec = load::PointSpec {
        target: Arc::new(Target::parse(&a.url)?),
        era,
        concurrency: a.concurrency,
        warmup: secs(a.warmup),
        duration: secs(a.duration),
        pid: a.pid,
        others: a.also_pid,
        max_requests: a.requests,
    };
    let r = load::run_point(&spec, None, "").await?;
    println!("{}", serde_json::to_string_pretty(&r)?);
    Ok(if r.errors == 0 && r.requests > 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

async fn cmd_sessions(a: SessionsArgs) -> anyhow::Result<ExitCode> {
    let target = Arc::new(Target::parse(&a.url)?);
    let (r, clients) = load::open_sessions(&target, a.count, a.pid).await?;
    println!("{}", serde_json::to_string_pretty(&r)?);
    for c in clients {
        c.close().await;
    }
    Ok(ExitCode::SUCCESS)
}

async fn cmd_stdio(a: StdioArgs) -> anyhow::Result<ExitCode> {
    let log = std::env::temp_dir().join(format!("mcp-bench-stdio-{}.log", std::process::id()));
    let mut cold = Vec::new();
    let mut detail = Vec::new();
    for _ in 0..a.cold_starts {
        let c = stdio::cold_start_detail(&a.command, &log).await?;
        cold.push(c.tools_list_ms);
        detail.push(c);
    }
    let r = match a.requests {
        Some(n) => stdio::run_count(&a.command, n, &log).await?,
        None => stdio::run(&a.command, secs(0.3), secs(a.duration), &log).await?,
    };
    println!(
        "{}",
        serde_json::to_string_pretty(&serde_json::json!({
            "round_trips": r,
            "cold_start_ms": cold,
            "cold_starts": detail,
        }))?
    );
    Ok(if r.errors == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn cmd_report(file: &PathBuf) -> anyhow::Result<ExitCode> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let r: Results = serde_json::from_str(&text).context("not a results file")?;
    println!("{}", report::markdown(&r));
    Ok(ExitCode::SUCCESS)
}
