//! What the tests that start `tessera serve` or `tessera proxy` as a child
//! process share.
#![allow(dead_code)] // each test binary uses a part of it

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

pub use tessera_testkit::free_port;
pub use tessera_testkit::process::{
    Running, children_of, served_port, spawn_serving, spawn_serving_logged,
};

/// Starts `tessera proxy ARGS…` and returns it with the endpoint URL named on
/// its first stderr line; the rest of its stderr is drained in the background
/// (a full pipe would stall it).
pub fn start_proxy<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> (Running, String) {
    start_proxy_env::<S, &str>(args, &[])
}

/// [`start_proxy`] with extra environment variables.
pub fn start_proxy_env<S: AsRef<std::ffi::OsStr>, V: AsRef<std::ffi::OsStr>>(
    args: &[S],
    env: &[(&str, V)],
) -> (Running, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tessera"))
        .arg("proxy")
        .args(args)
        .envs(env.iter().map(|(k, v)| (*k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starts tessera proxy");
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr is piped"));
    let running = Running(child);
    // The line `tessera: proxying … at http://…`; an upstream's own notice
    // (with its URL) may come before it.
    let mut said = String::new();
    let url = loop {
        let mut line = String::new();
        if stderr.read_line(&mut line).expect("reads stderr") == 0 {
            panic!("tessera proxy ended without naming its endpoint:\n{said}");
        }
        if line.starts_with("tessera: proxying ") {
            let at = line.rsplit_once(" at ").map_or("", |(_, url)| url.trim());
            assert!(at.starts_with("http://"), "no URL in {line:?}");
            break at.to_owned();
        }
        said.push_str(&line);
    };
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    (running, url)
}

/// A running `tessera inspect`: the process, its `http://127.0.0.1:PORT`
/// base and its token (from the URL it prints as its first stdout line).
pub struct Inspector {
    /// The process, killed when dropped.
    pub process: Running,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// The launch's token.
    pub token: String,
    /// The whole first line.
    pub url: String,
}

/// Starts `tessera inspect ARGS…` and reads the URL it prints; panics
/// (after killing it) when no URL comes within `deadline`.
pub fn start_inspect(args: &[&str], deadline: Duration) -> Inspector {
    start_inspect_env(args, &[], deadline)
}

/// [`start_inspect`] with extra environment variables.
pub fn start_inspect_env(args: &[&str], env: &[(&str, &str)], deadline: Duration) -> Inspector {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tessera"))
        .arg("inspect")
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the tessera binary starts");
    let stdout = child.stdout.take().expect("stdout is piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(stdout).lines();
        let first = lines.next().and_then(Result::ok);
        let _ = tx.send(first);
        // Keep reading so that the process never blocks on a full pipe.
        for _ in lines {}
    });
    let process = Running(child);
    let url = match rx.recv_timeout(deadline) {
        Ok(Some(line)) => line,
        other => panic!("tessera inspect printed no URL: {other:?}"),
    };
    let (base, token) = url
        .split_once("/?token=")
        .unwrap_or_else(|| panic!("not the inspector's URL: {url:?}"));
    Inspector {
        base: base.to_string(),
        token: token.to_string(),
        url: url.clone(),
        process,
    }
}

/// `tessera serve --http` on a free port behind `asrv` (the test
/// authorization server, which must be running on the caller's runtime),
/// requiring the `mcp` scope: the process and its endpoint URL.
pub async fn serve_behind(
    asrv: &tessera_auth::testing::TestAuthorizationServer,
) -> (Running, String) {
    let issuer = asrv.issuer();
    let (server, port) = tokio::task::spawn_blocking(move || {
        let mut serve = Command::new(env!("CARGO_BIN_EXE_tessera"));
        serve.args([
            "serve",
            "--http",
            "127.0.0.1:0",
            "--auth-issuer",
            &issuer,
            "--auth-scopes",
            "mcp",
        ]);
        spawn_serving(&mut serve, Duration::from_secs(30))
    })
    .await
    .unwrap();
    (Running(server), format!("http://127.0.0.1:{port}/mcp"))
}

/// Serves `factory` (a server, a proxy) over Streamable HTTP on a free
/// loopback port in this process until `stop` fires; its endpoint URL.
pub async fn serve_loopback<F: tessera_http::ServiceFactory>(
    factory: F,
    stop: &tokio_util::sync::CancellationToken,
) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("binds");
    let addr = listener.local_addr().expect("address");
    let mcp = tessera_http::McpHttp::builder(factory)
        .bind_address(addr)
        .build();
    let stop = stop.clone();
    tokio::spawn(async move {
        let _ = tessera_http::serve(listener, mcp, stop.cancelled_owned()).await;
    });
    format!("http://{addr}/mcp")
}

/// A stdio upstream the test can kill and keep down: a shell wrapper that
/// records the server's PID (exec keeps it) and fails at once while a
/// `down` file exists, so that the test decides when it may come back.
pub struct Killable {
    dir: std::path::PathBuf,
    pid_file: std::path::PathBuf,
    down_file: std::path::PathBuf,
    /// The command to give the proxy (`sh -c …`).
    pub command: tessera::runtime::ChildCommand,
}

impl Killable {
    /// A wrapper running `exec ARGS` (shell words, quoted as needed) in a
    /// folder of its own named after `tag`.
    pub fn new(tag: &str, args: &str) -> Killable {
        let dir = std::env::temp_dir().join(format!("tessera-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let pid_file = dir.join("upstream.pid");
        let down_file = dir.join("down");
        let script = format!(
            "[ -e '{}' ] && exit 1; echo $$ > '{}'; exec {args}",
            down_file.display(),
            pid_file.display(),
        );
        let mut command = tessera::runtime::ChildCommand::new("sh", ["-c", script.as_str()]);
        command.inherit_stderr = false;
        command.shutdown_grace = Duration::from_millis(300);
        Killable {
            dir,
            pid_file,
            down_file,
            command,
        }
    }

    /// Kills the running server (SIGKILL) and keeps it from starting again.
    pub fn kill_and_hold(&self) {
        std::fs::write(&self.down_file, b"").expect("down file");
        let pid = std::fs::read_to_string(&self.pid_file).expect("pid file");
        let killed = Command::new("kill")
            .args(["-KILL", pid.trim()])
            .status()
            .expect("runs kill");
        assert!(killed.success(), "kill {pid}");
    }

    /// Lets the server start again.
    pub fn release(&self) {
        std::fs::remove_file(&self.down_file).expect("removes the down file");
    }
}

impl Drop for Killable {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
