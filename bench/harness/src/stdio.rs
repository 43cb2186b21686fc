//! The stdio client: starts a server as a child process, speaks
//! newline-delimited JSON-RPC on its stdin/stdout, and measures sequential
//! `tools/call echo` round trips and cold start (spawn → first `tools/list`
//! answer).

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context as _, anyhow, bail};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::client::LEGACY_VERSION;
use crate::load::{ECHO_TEXT, percentile};
use crate::procfs;

/// A server on stdio.
pub struct StdioPeer {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Lines<BufReader<ChildStdout>>,
    next_id: u64,
}

impl StdioPeer {
    /// Starts `cmd` (program and arguments); its stderr goes to `stderr_log`.
    pub fn spawn(cmd: &[String], stderr_log: &Path) -> anyhow::Result<Self> {
        let (prog, args) = cmd.split_first().context("empty command")?;
        let log = std::fs::File::create(stderr_log)
            .with_context(|| format!("creating {}", stderr_log.display()))?;
        let mut child = Command::new(prog)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log))
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("starting {}", cmd.join(" ")))?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        Ok(Self {
            child,
            stdin: Some(stdin),
            lines: BufReader::new(stdout).lines(),
            next_id: 1,
        })
    }

    /// The child's pid.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    async fn send(&mut self, line: &str) -> anyhow::Result<()> {
        let stdin = self.stdin.as_mut().context("stdin closed")?;
        stdin.write_all(line.as_bytes()).await?;
        stdin.write_all(b"\n").await?;
        stdin.flush().await?;
        Ok(())
    }

    /// Sends a request (`params` is JSON text) and waits for its response.
    pub async fn request(&mut self, method: &str, params: &str) -> anyhow::Result<Value> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#
        ))
        .await?;
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let line = tokio::time::timeout_at(deadline.into(), self.lines.next_line())
                .await
                .map_err(|_| anyhow!("{method}: no answer in 15 s"))??
                .ok_or_else(|| anyhow!("{method}: the server closed its stdout"))?;
            if line.trim().is_empty() {
                continue;
            }
            let v: Value = serde_json::from_str(&line)
                .with_context(|| format!("not JSON on stdout: {line}"))?;
            if v.get("method").is_some() {
                if let Some(req_id) = v.get("id") {
                    // A request from the server (e.g. ping): answer it empty.
                    let reply = serde_json::json!({"jsonrpc": "2.0", "id": req_id, "result": {}});
                    self.send(&reply.to_string()).await?;
                }
                continue;
            }
            if v.get("id").and_then(Value::as_u64) == Some(id) {
                return Ok(v);
            }
        }
    }

    /// `initialize` + `notifications/initialized`.
    pub async fn handshake(&mut self) -> anyhow::Result<()> {
        self.initialize().await?;
        self.initialized().await
    }

    /// `initialize`, up to its answer.
    async fn initialize(&mut self) -> anyhow::Result<()> {
        let params = format!(
            r#"{{"protocolVersion":"{LEGACY_VERSION}","capabilities":{{}},"clientInfo":{{"name":"mcp-bench","version":"0.0.0"}}}}"#
        );
        let v = self.request("initialize", &params).await?;
        if v.get("result")
            .and_then(|r| r.get("protocolVersion"))
            .is_none()
        {
            bail!("initialize failed: {v}");
        }
        Ok(())
    }

    /// `notifications/initialized`.
    async fn initialized(&mut self) -> anyhow::Result<()> {
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await
    }

    /// `tools/list`; fails unless it lists `echo`.
    pub async fn list_tools(&mut self) -> anyhow::Result<()> {
        let v = self.request("tools/list", "{}").await?;
        let has_echo = v
            .get("result")
            .and_then(|r| r.get("tools"))
            .and_then(Value::as_array)
            .is_some_and(|t| {
                t.iter()
                    .any(|t| t.get("name").and_then(Value::as_str) == Some("echo"))
            });
        if !has_echo {
            bail!("tools/list has no echo: {v}");
        }
        Ok(())
    }

    /// `tools/call echo`; fails unless the text comes back.
    pub async fn call_echo(&mut self, params: &str) -> anyhow::Result<()> {
        let v = self.request("tools/call", params).await?;
        let text = v
            .get("result")
            .filter(|r| r.get("isError").and_then(Value::as_bool) != Some(true))
            .and_then(|r| r.get("content"))
            .and_then(|c| c.get(0))
            .and_then(|c| c.get("text"))
            .and_then(Value::as_str);
        if text != Some(ECHO_TEXT) {
            bail!("tools/call: {v}");
        }
        Ok(())
    }

    /// Closes stdin and waits up to 60 s for the server to exit (a server
    /// under valgrind writes its profile on the way out), then kills it.
    pub async fn shutdown_patient(self) {
        self.shutdown_within(Duration::from_secs(60)).await;
    }

    /// Closes stdin and waits for the server to exit (kills it after 3 s).
    pub async fn shutdown(self) {
        self.shutdown_within(Duration::from_secs(3)).await;
    }

    /// Closes stdin and waits up to `patience` for the server to exit, then
    /// kills it.
    async fn shutdown_within(mut self, patience: Duration) {
        drop(self.stdin.take());
        if tokio::time::timeout(patience, self.child.wait())
            .await
            .is_err()
        {
            let _ = self.child.kill().await;
        }
    }
}

/// The figures of one stdio run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StdioResult {
    /// Round trips completed in the window.
    pub requests: u64,
    /// Failed round trips (the run stops at the first one).
    pub errors: u64,
    /// The window, in seconds.
    pub seconds: f64,
    /// Round trips per second.
    pub rps: f64,
    /// Latency, microseconds.
    pub p50_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// Server CPU microseconds per round trip.
    pub cpu_us_per_req: Option<f64>,
    /// Server RSS at the end, KiB.
    pub rss_kb: Option<u64>,
    /// The error that stopped the run, if any.
    pub first_error: Option<String>,
}

/// Sequential `tools/call echo` round trips for `duration` after `warmup`.
pub async fn run(
    cmd: &[String],
    warmup: Duration,
    duration: Duration,
    log: &Path,
) -> anyhow::Result<StdioResult> {
    let mut peer = StdioPeer::spawn(cmd, log)?;
    peer.handshake().await.context("handshake")?;
    peer.list_tools().await?;
    let params = format!(
        r#"{{"name":"echo","arguments":{{"text":{}}}}}"#,
        serde_json::to_string(ECHO_TEXT)?
    );
    let pid = peer.pid();
    let end_warmup = Instant::now() + warmup;
    while Instant::now() < end_warmup {
        peer.call_echo(&params).await.context("warm-up call")?;
    }
    let c0 = pid.and_then(procfs::cpu_seconds);
    let w0 = Instant::now();
    let end = w0 + duration;
    let (lat, first_error) =
        round_trips(&mut peer, &params, 1 << 16, |_| Instant::now() < end).await;
    let seconds = w0.elapsed().as_secs_f64();
    let cpu_seconds = match (c0, pid.and_then(procfs::cpu_seconds)) {
        (Some(a), Some(b)) => Some(b - a),
        _ => None,
    };
    let rss_kb = pid.and_then(procfs::rss_kb);
    peer.shutdown().await;
    Ok(summary(lat, first_error, seconds, cpu_seconds, rss_kb))
}

/// Sequential `tools/call echo` round trips while `more(done)` holds (`done`
/// counts the round trips so far), stopping at the first failed call: each
/// round trip's latency in nanoseconds, and the error that stopped them.
async fn round_trips(
    peer: &mut StdioPeer,
    params: &str,
    capacity: usize,
    mut more: impl FnMut(u64) -> bool,
) -> (Vec<u64>, Option<String>) {
    let mut lat = Vec::with_capacity(capacity);
    while more(lat.len() as u64) {
        let t = Instant::now();
        match peer.call_echo(params).await {
            Ok(()) => lat.push((Instant::now() - t).as_nanos() as u64),
            Err(e) => return (lat, Some(format!("{e:#}"))),
        }
    }
    (lat, None)
}

/// The result of a run: `lat` (nanoseconds, in any order) over `seconds`,
/// with the server's CPU seconds over the run when they were read.
fn summary(
    mut lat: Vec<u64>,
    first_error: Option<String>,
    seconds: f64,
    cpu_seconds: Option<f64>,
    rss_kb: Option<u64>,
) -> StdioResult {
    lat.sort_unstable();
    let n = lat.len() as u64;
    StdioResult {
        requests: n,
        errors: u64::from(first_error.is_some()),
        seconds,
        rps: if seconds > 0.0 {
            n as f64 / seconds
        } else {
            0.0
        },
        p50_us: percentile(&lat, 0.5) as f64 / 1000.0,
        p99_us: percentile(&lat, 0.99) as f64 / 1000.0,
        cpu_us_per_req: cpu_seconds.filter(|_| n > 0).map(|c| c * 1e6 / n as f64),
        rss_kb,
        first_error,
    }
}

/// Exactly `requests` sequential `tools/call echo` round trips after the
/// handshake (no `tools/list`, no warm-up), then stdin is closed and the
/// server's exit awaited: a fixed amount of work, for counting the server's
/// instructions (run it under `valgrind --tool=callgrind`). Zero round trips
/// is the handshake alone.
pub async fn run_count(cmd: &[String], requests: u64, log: &Path) -> anyhow::Result<StdioResult> {
    let mut peer = StdioPeer::spawn(cmd, log)?;
    peer.handshake().await.context("handshake")?;
    let params = format!(
        r#"{{"name":"echo","arguments":{{"text":{}}}}}"#,
        serde_json::to_string(ECHO_TEXT)?
    );
    let pid = peer.pid();
    let w0 = Instant::now();
    let capacity = usize::try_from(requests).unwrap_or(0).min(1 << 20);
    let (lat, first_error) =
        round_trips(&mut peer, &params, capacity, |done| done < requests).await;
    let seconds = w0.elapsed().as_secs_f64();
    let rss_kb = pid.and_then(procfs::rss_kb);
    peer.shutdown_patient().await;
    Ok(summary(lat, first_error, seconds, None, rss_kb))
}

/// Milliseconds from spawning `cmd` to the answer to its first `tools/list`
/// (after the handshake).
pub async fn cold_start(cmd: &[String], log: &Path) -> anyhow::Result<f64> {
    Ok(cold_start_detail(cmd, log).await?.tools_list_ms)
}

/// One cold start, in detail.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ColdStart {
    /// Spawn → the answer to `initialize`, milliseconds.
    pub initialize_ms: f64,
    /// Spawn → the answer to the first `tools/list` (after the handshake).
    pub tools_list_ms: f64,
    /// The server's `VmRSS` right after that answer, KiB.
    pub rss_kb: Option<u64>,
    /// Its `VmHWM` (peak RSS) then, KiB.
    pub hwm_kb: Option<u64>,
    /// Its threads then.
    pub threads: Option<u64>,
}

/// Spawns `cmd` and times the answers to `initialize` and to the first
/// `tools/list`, then reads the server's memory and threads.
pub async fn cold_start_detail(cmd: &[String], log: &Path) -> anyhow::Result<ColdStart> {
    let t = Instant::now();
    let mut peer = StdioPeer::spawn(cmd, log)?;
    peer.initialize().await.context("handshake")?;
    let initialize_ms = t.elapsed().as_secs_f64() * 1000.0;
    peer.initialized().await.context("handshake")?;
    peer.list_tools().await?;
    let tools_list_ms = t.elapsed().as_secs_f64() * 1000.0;
    let pid = peer.pid();
    let status = pid.and_then(procfs::status);
    peer.shutdown().await;
    Ok(ColdStart {
        initialize_ms,
        tools_list_ms,
        rss_kb: status.as_ref().and_then(|s| s.rss_kb),
        hwm_kb: status.as_ref().and_then(|s| s.hwm_kb),
        threads: status.as_ref().and_then(|s| s.threads),
    })
}
