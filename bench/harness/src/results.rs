//! What a run records (written as JSON, read back by `mcp-bench report`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::load::{PointResult, SessionsResult};
use crate::servers::{Impl, Mode};
use crate::stdio::StdioResult;

/// Everything one run measured.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Results {
    /// How the run was made.
    pub meta: Meta,
    /// One record per load point per round.
    pub http: Vec<HttpPoint>,
    /// One record per server process of the load runs.
    pub http_runs: Vec<HttpRun>,
    /// One record per memory run.
    pub memory: Vec<MemoryRun>,
    /// One record per stdio run.
    pub stdio: Vec<StdioRun>,
    /// What failed (a non-empty list makes the command exit 1).
    pub failures: Vec<Failure>,
    /// What was not measured, and why.
    pub skipped: Vec<String>,
}

/// How the run was made.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Meta {
    /// UTC time of the start, `YYYY-MM-DDTHH:MM:SSZ`.
    pub started: String,
    /// `--smoke`.
    pub smoke: bool,
    /// Rounds.
    pub rounds: usize,
    /// Measured seconds per load point.
    pub duration_s: f64,
    /// Warm-up seconds per load point.
    pub warmup_s: f64,
    /// Concurrency levels.
    pub concurrency: Vec<usize>,
    /// Sessions opened by the memory runs.
    pub sessions: usize,
    /// Measured seconds per stdio run.
    pub stdio_duration_s: f64,
    /// Cold starts per server per round.
    pub cold_starts: usize,
    /// The servers' core, or None when not pinned.
    pub server_core: Option<usize>,
    /// The harness's (load generator's) core, or None.
    pub client_core: Option<usize>,
    /// CPU, cores, kernel.
    pub machine: String,
    /// /proc/loadavg when the run started and when it ended (other work on
    /// the machine makes figures noisy; this shows how busy it was).
    #[serde(default)]
    pub loadavg: Vec<String>,
    /// Name → version of everything compared (and the tools that ran it).
    pub versions: BTreeMap<String, String>,
    /// "server/mode" → the command line used.
    pub commands: BTreeMap<String, String>,
}

/// One load point of one round.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HttpPoint {
    /// Server.
    pub server: Impl,
    /// Mode.
    pub mode: Mode,
    /// Round (1-based).
    pub round: usize,
    /// The figures.
    pub result: PointResult,
}

/// One server process of a load run (all concurrency levels of one mode).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HttpRun {
    /// Server.
    pub server: Impl,
    /// Mode.
    pub mode: Mode,
    /// Round.
    pub round: usize,
    /// RSS after start, before any request, KiB.
    pub idle_rss_kb: Option<u64>,
    /// RSS after the last load point, KiB.
    pub after_load_rss_kb: Option<u64>,
}

/// One memory run: a fresh stateful server, idle, then with N sessions.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MemoryRun {
    /// Server.
    pub server: Impl,
    /// Round.
    pub round: usize,
    /// The figures (`rss_before_kb` is the idle RSS).
    pub result: SessionsResult,
}

/// One stdio run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StdioRun {
    /// Server.
    pub server: Impl,
    /// Round.
    pub round: usize,
    /// Round trips.
    pub result: StdioResult,
    /// Cold starts, milliseconds each.
    pub cold_start_ms: Vec<f64>,
    /// A variant of the server's stdio set-up, when not its default (for
    /// Tessera, `blocking-pipes`: `TESSERA_STDIO_PIPES=blocking`).
    #[serde(default)]
    pub variant: Option<String>,
}

/// Something that did not work.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Failure {
    /// What was being measured.
    pub what: String,
    /// Why it failed.
    pub error: String,
}
