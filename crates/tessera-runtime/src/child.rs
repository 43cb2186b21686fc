//! A child process spoken to over its stdin and stdout: the client side of
//! the stdio transport.

use std::ffi::OsString;
use std::process::Stdio;
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};

/// How to start a server process.
#[derive(Debug, Clone)]
pub struct ChildCommand {
    /// The program.
    pub program: OsString,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Extra environment variables.
    pub env: Vec<(OsString, OsString)>,
    /// Whether the child's stderr is passed through to ours (otherwise discarded).
    pub inherit_stderr: bool,
    /// How long to wait, at each step of shutdown, before escalating.
    pub shutdown_grace: Duration,
}

impl ChildCommand {
    /// A command with arguments.
    pub fn new<I, A>(program: impl Into<OsString>, args: I) -> Self
    where
        I: IntoIterator<Item = A>,
        A: Into<OsString>,
    {
        ChildCommand {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            env: Vec::new(),
            inherit_stderr: true,
            shutdown_grace: Duration::from_secs(2),
        }
    }
}

/// A running child process. Shut it down with [`ChildProcess::shutdown`]; if it
/// is dropped instead, it is shut down in the background (and killed outright
/// when no tokio runtime is left to do that), so no orphan remains.
#[derive(Debug)]
pub struct ChildProcess {
    child: Option<Child>,
    grace: Duration,
}

/// The pipes of a started child.
#[derive(Debug)]
pub struct ChildPipes {
    /// Write MCP messages here.
    pub stdin: ChildStdin,
    /// Read MCP messages from here.
    pub stdout: ChildStdout,
}

impl ChildProcess {
    /// Starts the process in its own process group, with piped stdin and stdout.
    pub fn spawn(cmd: &ChildCommand) -> std::io::Result<(ChildProcess, ChildPipes)> {
        let stderr = if cmd.inherit_stderr {
            Stdio::inherit()
        } else {
            Stdio::null()
        };
        let (process, pipes, _) = ChildProcess::start(cmd, stderr)?;
        Ok((process, pipes))
    }

    /// Starts the process as [`ChildProcess::spawn`] does, with its stderr
    /// piped too and handed back (whatever `cmd.inherit_stderr` says), for a
    /// caller that shows it. Read it to its end: a child whose stderr pipe
    /// is full blocks.
    pub fn spawn_with_stderr(
        cmd: &ChildCommand,
    ) -> std::io::Result<(ChildProcess, ChildPipes, ChildStderr)> {
        let (process, pipes, stderr) = ChildProcess::start(cmd, Stdio::piped())?;
        let stderr = stderr.ok_or_else(|| std::io::Error::other("no stderr pipe"))?;
        Ok((process, pipes, stderr))
    }

    fn start(
        cmd: &ChildCommand,
        stderr: Stdio,
    ) -> std::io::Result<(ChildProcess, ChildPipes, Option<ChildStderr>)> {
        let mut c = Command::new(&cmd.program);
        c.args(&cmd.args)
            .envs(cmd.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .kill_on_drop(true)
            .process_group(0);
        let mut child = c.spawn()?;
        let stdin = child
            .stdin
            .take()
            .ok_or_else(|| std::io::Error::other("no stdin pipe"))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| std::io::Error::other("no stdout pipe"))?;
        let stderr = child.stderr.take();
        Ok((
            ChildProcess {
                child: Some(child),
                grace: cmd.shutdown_grace,
            },
            ChildPipes { stdin, stdout },
            stderr,
        ))
    }

    /// The process id, while it runs.
    pub fn id(&self) -> Option<u32> {
        self.child.as_ref().and_then(Child::id)
    }

    /// Shuts the child down the way the stdio transport asks: its stdin must
    /// already be closed (drop the writer first); wait for it to exit, then
    /// SIGTERM its process group, then SIGKILL. Returns its exit status.
    pub async fn shutdown(mut self) -> std::io::Result<std::process::ExitStatus> {
        let child = self
            .child
            .take()
            .ok_or_else(|| std::io::Error::other("already shut down"))?;
        shutdown(child, self.grace).await
    }
}

async fn shutdown(mut child: Child, grace: Duration) -> std::io::Result<std::process::ExitStatus> {
    if let Ok(r) = tokio::time::timeout(grace, child.wait()).await {
        return r;
    }
    if let Some(pid) = child.id().and_then(|p| i32::try_from(p).ok()) {
        let _ = killpg(Pid::from_raw(pid), Signal::SIGTERM);
    }
    if let Ok(r) = tokio::time::timeout(grace, child.wait()).await {
        return r;
    }
    if let Some(pid) = child.id().and_then(|p| i32::try_from(p).ok()) {
        let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
    }
    child.kill().await?;
    child.wait().await
}

impl Drop for ChildProcess {
    fn drop(&mut self) {
        let Some(child) = self.child.take() else {
            return;
        };
        let grace = self.grace;
        match tokio::runtime::Handle::try_current() {
            Ok(h) => {
                h.spawn(async move {
                    let _ = shutdown(child, grace).await;
                });
            }
            // No runtime: `kill_on_drop` kills it as `child` drops here.
            Err(_) => drop(child),
        }
    }
}
