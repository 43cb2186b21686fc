//! What the tests that start `tessera serve` as a child process share.
#![allow(dead_code)] // each test binary uses a part of it

use std::process::Child;
use std::time::{Duration, Instant};

/// A free loopback port (bound, read, released).
pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// Waits until something accepts connections on `127.0.0.1:port`, at most `deadline`; panics
/// when `child` exits first or the deadline passes.
pub async fn wait_listening(child: &mut Child, port: u16, deadline: Duration) {
    let until = Instant::now() + deadline;
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            panic!("tessera serve exited early ({st})");
        }
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return;
        }
        assert!(Instant::now() < until, "tessera serve not ready");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
