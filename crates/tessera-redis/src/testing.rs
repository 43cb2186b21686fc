//! Private services for tests (feature `testing`): `redis-server` and HAProxy.
//!
//! [`RedisServer::start`] runs the `redis-server` of the Debian package of
//! that name (or the program named by `TESSERA_REDIS_SERVER`) on a free
//! loopback port, with persistence off and its own temporary directory,
//! waits until it answers `PING`, and stops it (by its pid) when dropped.
//! [`Haproxy::start`] runs `haproxy` (Debian package `haproxy`, or the
//! program named by `TESSERA_HAPROXY`) in front of given backends,
//! round-robin per request and without stickiness. Nothing assumes a
//! service that is already running.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long a started server has to answer `PING`.
const READY_WITHIN: Duration = Duration::from_secs(15);

/// A `redis-server` process owned by a test.
#[derive(Debug)]
pub struct RedisServer {
    child: Option<Child>,
    port: u16,
    dir: PathBuf,
}

/// The program to run.
fn program() -> String {
    std::env::var("TESSERA_REDIS_SERVER").unwrap_or_else(|_| "redis-server".to_owned())
}

/// A port that was free a moment ago.
fn free_port() -> std::io::Result<u16> {
    let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
    Ok(l.local_addr()?.port())
}

/// Whether what listens on 127.0.0.1:`port` answers `request` with text
/// containing `expected` (read for at most 500 ms and 4 KiB).
fn answers(port: u16, request: &[u8], expected: &str) -> bool {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let Ok(mut s) = TcpStream::connect_timeout(&addr, Duration::from_millis(200)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_millis(500)));
    if s.write_all(request).is_err() {
        return false;
    }
    let mut answer = Vec::new();
    let mut buf = [0u8; 1024];
    while answer.len() < 4096 {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return false,
            Ok(n) => answer.extend_from_slice(&buf[..n]),
        }
        if String::from_utf8_lossy(&answer).contains(expected) {
            return true;
        }
    }
    false
}

/// Whether the redis-server on `port` is the one working in `dir` (and not
/// another one that took the port first).
fn is_ours(port: u16, dir: &std::path::Path) -> bool {
    // The server reports its working directory, with symbolic links resolved.
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    answers(port, b"CONFIG GET dir\r\n", &dir.to_string_lossy())
}

impl RedisServer {
    /// Starts a server on a free loopback port and waits until it answers.
    pub fn start() -> Result<RedisServer, String> {
        static N: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "tessera-redis-{}-{}-{:08x}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed),
            rand::random::<u32>()
        ));
        std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
        let mut server = RedisServer {
            child: None,
            port: 0,
            dir,
        };
        let mut last = String::new();
        // Another process may take the port between our probe and the
        // server's bind: try a few.
        for _ in 0..5 {
            let port = free_port().map_err(|e| format!("finding a free port: {e}"))?;
            match server.spawn_on(port) {
                Ok(()) => return Ok(server),
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    /// Starts the server process on `port` and waits for `PING`.
    fn spawn_on(&mut self, port: u16) -> Result<(), String> {
        let log = self.dir.join("redis.log");
        let mut child = Command::new(program())
            .args(["--port", &port.to_string()])
            .args(["--bind", "127.0.0.1"])
            .args(["--save", ""])
            .args(["--appendonly", "no"])
            .args(["--daemonize", "no"])
            .arg("--dir")
            .arg(&self.dir)
            .arg("--logfile")
            .arg(&log)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| {
                format!(
                    "cannot run {}: {e} (install the Debian package redis-server, \
                     or set TESSERA_REDIS_SERVER)",
                    program()
                )
            })?;
        let deadline = Instant::now() + READY_WITHIN;
        loop {
            if let Ok(Some(status)) = child.try_wait() {
                let text = std::fs::read_to_string(&log).unwrap_or_default();
                return Err(format!(
                    "redis-server on port {port} exited ({status}): {}",
                    text.lines().last().unwrap_or("")
                ));
            }
            if is_ours(port, &self.dir) {
                self.child = Some(child);
                self.port = port;
                return Ok(());
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "redis-server on port {port} did not answer within {READY_WITHIN:?}"
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Its URL: `redis://127.0.0.1:PORT/0`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    /// The process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Kills the server (as a crash would: no shutdown) and waits for it.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts a new server on the same port (after [`RedisServer::kill`]);
    /// the data is gone, as persistence is off.
    pub fn restart(&mut self) -> Result<(), String> {
        self.kill();
        let port = self.port;
        // The old socket may linger for a moment: retry within the deadline.
        let deadline = Instant::now() + READY_WITHIN;
        loop {
            match self.spawn_on(port) {
                Ok(()) => return Ok(()),
                Err(e) if Instant::now() > deadline => return Err(e),
                Err(_) => std::thread::sleep(Duration::from_millis(50)),
            }
        }
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// An HAProxy process balancing HTTP requests over backends round-robin
/// (each request on its own, no stickiness), stopped when dropped.
#[derive(Debug)]
pub struct Haproxy {
    child: Option<Child>,
    port: u16,
    dir: PathBuf,
}

impl Haproxy {
    /// Starts HAProxy on a free loopback port in front of `backends` and
    /// waits until it accepts connections. Backends are health-checked
    /// every 500 ms; a request to a dead one is dispatched to another.
    pub fn start(backends: &[SocketAddr]) -> Result<Haproxy, String> {
        static N: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "tessera-haproxy-{}-{}-{:08x}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed),
            rand::random::<u32>()
        ));
        std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
        let mut proxy = Haproxy {
            child: None,
            port: 0,
            dir,
        };
        let mut last = String::new();
        for _ in 0..5 {
            let port = free_port().map_err(|e| format!("finding a free port: {e}"))?;
            match proxy.spawn_on(port, backends) {
                Ok(()) => return Ok(proxy),
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    fn spawn_on(&mut self, port: u16, backends: &[SocketAddr]) -> Result<(), String> {
        let cfg = self.dir.join("haproxy.cfg");
        let probe = format!("{:016x}", rand::random::<u64>());
        std::fs::write(&cfg, haproxy_config(port, backends, &probe))
            .map_err(|e| format!("writing {}: {e}", cfg.display()))?;
        let program = std::env::var("TESSERA_HAPROXY").unwrap_or_else(|_| "haproxy".to_owned());
        let log = std::fs::File::create(self.dir.join("haproxy.log"))
            .map_err(|e| format!("creating the HAProxy log: {e}"))?;
        let mut child = Command::new(&program)
            .arg("-db")
            .arg("-f")
            .arg(&cfg)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|e| {
                format!("cannot run {program}: {e} (install the Debian package haproxy, or set TESSERA_HAPROXY)")
            })?;
        let deadline = Instant::now() + READY_WITHIN;
        let request = format!("GET {PROBE_PATH} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
        loop {
            if let Ok(Some(status)) = child.try_wait() {
                let text =
                    std::fs::read_to_string(self.dir.join("haproxy.log")).unwrap_or_default();
                return Err(format!("haproxy on port {port} exited ({status}): {text}"));
            }
            if answers(port, request.as_bytes(), &probe) {
                self.child = Some(child);
                self.port = port;
                return Ok(());
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "haproxy on port {port} did not listen within {READY_WITHIN:?}"
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }
}

impl Drop for Haproxy {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The path at which the test HAProxy answers with its own probe token.
const PROBE_PATH: &str = "/.tessera-haproxy-probe";

/// An HAProxy configuration: HTTP mode, round-robin per request, long
/// tunnels for SSE streams, health checks and redispatch. `GET` of
/// [`PROBE_PATH`] is answered by HAProxy itself with `probe`, which tells
/// this HAProxy from anything else that may listen on the port.
pub fn haproxy_config(port: u16, backends: &[SocketAddr], probe: &str) -> String {
    let mut cfg = format!(
        "global
    maxconn 4096

defaults
    mode http
    timeout connect 2s
    timeout client 120s
    timeout server 120s
    timeout tunnel 1h
    retries 2
    option redispatch

frontend mcp
    bind 127.0.0.1:{port}
    http-request return status 200 content-type text/plain string {probe} if {{ path {PROBE_PATH} }}
    default_backend tessera

backend tessera
    balance roundrobin
"
    );
    for (i, b) in backends.iter().enumerate() {
        cfg.push_str(&format!(
            "    server s{} {b} check inter 500ms fall 2 rise 1\n",
            i + 1
        ));
    }
    cfg
}
