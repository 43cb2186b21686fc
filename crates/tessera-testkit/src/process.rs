//! Child processes owned by a test: killed and reaped when dropped, and
//! servers started as children whose listening port is read from what they
//! print once bound.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// Starts `cmd`, a `tessera serve --http 127.0.0.1:PORT …` (PORT may be 0),
/// and returns it with the port it listens on, read from the address it
/// prints on stderr once bound. Its stderr is drained in the background from
/// then on. Panics, after killing it, when it exits or names no address
/// within `deadline`.
///
/// Binding port 0 leaves no window between choosing a port and binding it,
/// where another test could take the port (as with [`crate::free_port`]).
pub fn spawn_serving(cmd: &mut Command, deadline: Duration) -> (Child, u16) {
    let (child, port, _) = spawn_serving_logged(cmd, deadline);
    (child, port)
}

/// Like [`spawn_serving`], and also returns the lines the server writes on
/// stderr after the address.
pub fn spawn_serving_logged(
    cmd: &mut Command,
    deadline: Duration,
) -> (Child, u16, std::sync::mpsc::Receiver<String>) {
    let (lines_tx, lines) = std::sync::mpsc::channel();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the tessera binary starts");
    let stderr = child.stderr.take().expect("stderr is piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut said = Vec::new();
        let mut tx = Some(tx);
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if tx.is_none() {
                let _ = lines_tx.send(line);
            } else if let Some(port) = served_port(&line) {
                if let Some(tx) = tx.take() {
                    let _ = tx.send(Ok(port));
                }
            } else {
                said.push(line);
            }
        }
        if let Some(tx) = tx {
            let _ = tx.send(Err(said.join("\n")));
        }
    });
    match rx.recv_timeout(deadline) {
        Ok(Ok(port)) => (child, port, lines),
        other => {
            let _ = child.kill();
            let _ = child.wait();
            panic!("tessera serve did not start listening: {other:?}");
        }
    }
}

/// The port of `tessera serve`'s "serving MCP … at http://127.0.0.1:PORT/…" line.
pub fn served_port(line: &str) -> Option<u16> {
    if !line.contains("serving MCP") {
        return None;
    }
    let rest = line.split("http://127.0.0.1:").nth(1)?;
    rest.split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

/// A child process, killed when dropped.
pub struct Running(
    /// The process.
    pub Child,
);

impl std::ops::Deref for Running {
    type Target = Child;
    fn deref(&self) -> &Child {
        &self.0
    }
}

impl std::ops::DerefMut for Running {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.0
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The processes whose parent is `pid` (read from `/proc/*/stat`).
pub fn children_of(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("reads /proc").flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid ...`: the name may hold spaces, so read after its `)`.
        let after = stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or("");
        let mut fields = after.split_whitespace();
        let (state, ppid) = (fields.next(), fields.next());
        if ppid == Some(pid.to_string().as_str()) && state != Some("Z") {
            out.push(child);
        }
    }
    out
}
