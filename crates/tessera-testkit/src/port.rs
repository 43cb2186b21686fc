//! Free loopback ports.
//!
//! Prefer binding port 0 and reading the port back (as `tessera serve --http
//! 127.0.0.1:0` does, see [`crate::process::spawn_serving`]): a port chosen
//! here is free when chosen, and another process may take it before the test
//! binds it.

use std::net::{Ipv4Addr, TcpListener};

/// A loopback port that was free a moment ago (bound, read, released).
pub fn free_port() -> u16 {
    let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("binds a loopback port");
    l.local_addr()
        .expect("a bound listener has an address")
        .port()
}
