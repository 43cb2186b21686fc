//! A private `redis-server` for tests (feature `testing`).
//!
//! [`RedisServer::start`] runs the `redis-server` of the Debian package of
//! that name (or the program named by `TESSERA_REDIS_SERVER`) on a free
//! loopback port, with persistence off and its own temporary directory,
//! waits until it answers `PING`, and stops it (by its pid) when dropped.
//! Nothing assumes a Redis that is already running.

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

/// Whether something on `port` answers `PING` with `+PONG`.
fn answers_ping(port: u16) -> bool {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let Ok(mut s) = TcpStream::connect_timeout(&addr, Duration::from_millis(200)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_millis(500)));
    if s.write_all(b"PING\r\n").is_err() {
        return false;
    }
    let mut buf = [0u8; 7];
    s.read_exact(&mut buf).is_ok() && &buf == b"+PONG\r\n"
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
            if answers_ping(port) {
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
