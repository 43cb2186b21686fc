//! The servers under test: how each one is started in each mode, and a
//! started server process.

use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use serde::{Deserialize, Serialize};
use tokio::process::{Child, Command};

use crate::client::Era;

/// One implementation under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Impl {
    /// `tessera serve`.
    Tessera,
    /// bench/servers/rmcp-echo.
    Rmcp,
    /// bench/servers/ts (official TypeScript SDK).
    Ts,
    /// bench/servers/py (official Python SDK).
    Py,
    /// bench/servers/floor (hyper + serde_json).
    Floor,
}

impl Impl {
    /// Every implementation, in table order.
    pub const ALL: [Impl; 5] = [Impl::Tessera, Impl::Rmcp, Impl::Ts, Impl::Py, Impl::Floor];

    /// Short name used on the command line and in JSON.
    pub fn key(self) -> &'static str {
        match self {
            Impl::Tessera => "tessera",
            Impl::Rmcp => "rmcp",
            Impl::Ts => "ts",
            Impl::Py => "py",
            Impl::Floor => "floor",
        }
    }

    /// Column title.
    pub fn title(self) -> &'static str {
        match self {
            Impl::Tessera => "Tessera",
            Impl::Rmcp => "rmcp",
            Impl::Ts => "TS SDK",
            Impl::Py => "Python SDK",
            Impl::Floor => "floor",
        }
    }

    /// Parses a short name.
    pub fn parse(s: &str) -> anyhow::Result<Self> {
        Impl::ALL
            .into_iter()
            .find(|i| i.key() == s)
            .with_context(|| format!("unknown server {s}; one of tessera, rmcp, ts, py, floor"))
    }
}

/// One way of serving Streamable HTTP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Legacy era, stateful: sessions, SSE responses.
    LegacySse,
    /// Legacy era, stateless: no sessions, JSON responses.
    LegacyJson,
    /// 2026-07-28: no session, `_meta` on every request.
    Modern,
}

impl Mode {
    /// Every mode, in table order.
    pub const ALL: [Mode; 3] = [Mode::LegacySse, Mode::LegacyJson, Mode::Modern];

    /// Short name.
    pub fn key(self) -> &'static str {
        match self {
            Mode::LegacySse => "legacy-sse",
            Mode::LegacyJson => "legacy-json",
            Mode::Modern => "modern",
        }
    }

    /// What it is, for the report.
    pub fn describe(self) -> &'static str {
        match self {
            Mode::LegacySse => {
                "legacy era (2025-11-25), stateful: initialize, Mcp-Session-Id, SSE responses"
            }
            Mode::LegacyJson => {
                "legacy era (2025-11-25), stateless: initialize, no session, JSON responses"
            }
            Mode::Modern => {
                "2026-07-28: no initialize, no session, `_meta` + Mcp-Method/Mcp-Name on every request"
            }
        }
    }

    /// The client's era.
    pub fn era(self) -> Era {
        match self {
            Mode::Modern => Era::Modern,
            _ => Era::Legacy,
        }
    }

    /// Parses a short name.
    pub fn parse(s: &str) -> anyhow::Result<Self> {
        Mode::ALL
            .into_iter()
            .find(|m| m.key() == s)
            .with_context(|| format!("unknown mode {s}; one of legacy-sse, legacy-json, modern"))
    }
}

/// Where the programs are.
#[derive(Debug, Clone)]
pub struct Paths {
    /// The `tessera` binary (None: not built).
    pub tessera: Option<PathBuf>,
    /// bench's rmcp-echo binary.
    pub rmcp: PathBuf,
    /// bench's floor binary.
    pub floor: PathBuf,
    /// node.
    pub node: PathBuf,
    /// bench/servers/ts/server.mjs.
    pub ts_server: PathBuf,
    /// The venv's python.
    pub python: PathBuf,
    /// bench/servers/py/server.py.
    pub py_server: PathBuf,
    /// `tessera serve` has `--sse-response` (then the stateful mode uses it,
    /// so that every server answers that mode with SSE).
    pub sse_flag: bool,
    /// `tessera serve` has `--max-sessions-per-client`: the memory run opens
    /// 1,000 sessions from one address, past the default per-client cap of 256,
    /// so the stateful mode raises it to the global cap.
    pub per_client_flag: bool,
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

impl Paths {
    /// The command that serves `imp` over Streamable HTTP in `mode` on
    /// `addr`, or None when `imp` does not have that mode.
    pub fn http_cmd(&self, imp: Impl, mode: Mode, addr: SocketAddr) -> Option<Vec<String>> {
        let a = addr.to_string();
        let port = addr.port().to_string();
        let v = |xs: &[&str]| xs.iter().map(|x| (*x).to_owned()).collect::<Vec<_>>();
        Some(match (imp, mode) {
            (Impl::Tessera, Mode::LegacySse) => {
                let mut c = v(&[&s(self.tessera.as_ref()?), "serve", "--http", &a]);
                if self.sse_flag {
                    c.push("--sse-response".into());
                }
                if self.per_client_flag {
                    c.extend(["--max-sessions-per-client".into(), "1024".into()]);
                }
                c
            }
            (Impl::Tessera, Mode::LegacyJson | Mode::Modern) => v(&[
                &s(self.tessera.as_ref()?),
                "serve",
                "--http",
                &a,
                "--stateless",
                "--json-response",
            ]),
            (Impl::Rmcp, Mode::LegacySse) => v(&[&s(&self.rmcp), "--http", &a, "--stateful"]),
            (Impl::Rmcp, Mode::LegacyJson | Mode::Modern) => {
                v(&[&s(&self.rmcp), "--http", &a, "--stateless"])
            }
            (Impl::Ts, Mode::LegacySse) => v(&[
                &s(&self.node),
                &s(&self.ts_server),
                "--port",
                &port,
                "--stateful",
            ]),
            (Impl::Ts, Mode::LegacyJson) => v(&[
                &s(&self.node),
                &s(&self.ts_server),
                "--port",
                &port,
                "--stateless",
            ]),
            // The TypeScript SDK 1.x does not speak 2026-07-28.
            (Impl::Ts, Mode::Modern) => return None,
            (Impl::Py, Mode::LegacySse) => v(&[
                &s(&self.python),
                &s(&self.py_server),
                "--port",
                &port,
                "--stateful",
            ]),
            (Impl::Py, Mode::LegacyJson | Mode::Modern) => v(&[
                &s(&self.python),
                &s(&self.py_server),
                "--port",
                &port,
                "--stateless",
            ]),
            (Impl::Floor, Mode::LegacySse) => {
                v(&[&s(&self.floor), "--http", &a, "--sse", "--sessions"])
            }
            (Impl::Floor, Mode::LegacyJson | Mode::Modern) => v(&[&s(&self.floor), "--http", &a]),
        })
    }

    /// The command that serves `imp` on stdio, or None.
    pub fn stdio_cmd(&self, imp: Impl) -> Option<Vec<String>> {
        let v = |xs: &[String]| xs.to_vec();
        Some(match imp {
            Impl::Tessera => v(&[s(self.tessera.as_ref()?), "serve".into(), "--stdio".into()]),
            Impl::Rmcp => v(&[s(&self.rmcp), "--stdio".into()]),
            Impl::Ts => v(&[s(&self.node), s(&self.ts_server), "--stdio".into()]),
            Impl::Py => v(&[s(&self.python), s(&self.py_server), "--stdio".into()]),
            Impl::Floor => return None,
        })
    }
}

/// Prefixes `cmd` with `taskset -c CORE` when pinning.
pub fn pinned(cmd: Vec<String>, core: Option<usize>) -> Vec<String> {
    match core {
        Some(c) => {
            let mut v = vec!["taskset".to_owned(), "-c".to_owned(), c.to_string()];
            v.extend(cmd);
            v
        }
        None => cmd,
    }
}

/// A free port on 127.0.0.1 (bound then released; the server binds it next).
pub fn free_addr() -> anyhow::Result<SocketAddr> {
    let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
    Ok(l.local_addr()?)
}

/// A server process listening on HTTP.
pub struct RunningServer {
    child: Child,
    /// Its pid (the server itself: `taskset` execs it).
    pub pid: u32,
    /// Its stderr.
    pub log: PathBuf,
}

impl RunningServer {
    /// Starts `cmd` and waits until `addr` accepts connections.
    pub async fn start(cmd: &[String], addr: SocketAddr, log: &Path) -> anyhow::Result<Self> {
        let (prog, args) = cmd.split_first().context("empty command")?;
        let err =
            std::fs::File::create(log).with_context(|| format!("creating {}", log.display()))?;
        let mut child = Command::new(prog)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(err))
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("starting {}", cmd.join(" ")))?;
        let pid = child.id().context("no pid")?;
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(status) = child.try_wait()? {
                bail!(
                    "`{}` exited ({status}) before listening; its stderr:\n{}",
                    cmd.join(" "),
                    tail(log)
                );
            }
            if tokio::net::TcpStream::connect(addr).await.is_ok() {
                break;
            }
            if Instant::now() > deadline {
                let _ = child.kill().await;
                bail!(
                    "`{}` did not listen on {addr} within 60 s; its stderr:\n{}",
                    cmd.join(" "),
                    tail(log)
                );
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Ok(Self {
            child,
            pid,
            log: log.to_owned(),
        })
    }

    /// Whether it is still running.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// SIGTERM, then SIGKILL after 3 s.
    pub async fn stop(mut self) {
        // SAFETY: kill(2) on our own child's pid; no memory is involved.
        unsafe {
            libc::kill(self.pid as libc::pid_t, libc::SIGTERM);
        }
        if tokio::time::timeout(Duration::from_secs(3), self.child.wait())
            .await
            .is_err()
        {
            let _ = self.child.kill().await;
        }
    }
}

/// The last lines of a log file.
pub fn tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let from = lines.len().saturating_sub(20);
    lines[from..].join("\n")
}

/// The text of `tessera serve --help` (the harness looks for `--http`:
/// until Tessera's HTTP server lands, Tessera is skipped over HTTP).
pub fn tessera_help(tessera: &Path) -> Result<String, String> {
    let out = std::process::Command::new(tessera)
        .args(["serve", "--help"])
        .output()
        .map_err(|e| format!("cannot run {}: {e}", tessera.display()))?;
    Ok(String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr))
}
