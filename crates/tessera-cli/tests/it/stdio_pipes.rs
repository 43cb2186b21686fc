//! `tessera serve --stdio` on real pipes (how a client starts it): round
//! trips, and end of input, after which a request still in progress is
//! answered before the server exits.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

fn call(id: i64, name: &str, arguments: Value) -> Vec<u8> {
    let mut line = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": name, "arguments": arguments, "_meta": meta()}})
    .to_string()
    .into_bytes();
    line.push(b'\n');
    line
}

#[test]
fn round_trips_then_eof_with_a_request_in_progress() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tessera"))
        .args(["serve", "--stdio"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start tessera");
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut recv = || {
        let mut line = String::new();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "output closed");
        serde_json::from_str::<Value>(&line).unwrap()
    };

    // Sequential round trips, each answered (and flushed) before the next is sent.
    for i in 0..200 {
        let text = format!("hello {i}");
        stdin
            .write_all(&call(i, "echo", json!({ "text": text })))
            .unwrap();
        stdin.flush().unwrap();
        let r = recv();
        assert_eq!(r["id"], i, "{r}");
        assert_eq!(r["result"]["content"][0]["text"], text, "{r}");
    }

    // Several requests in one write: all answered.
    let mut batch = Vec::new();
    for i in 1000..1010 {
        batch.extend(call(i, "echo", json!({ "text": "b" })));
    }
    stdin.write_all(&batch).unwrap();
    let mut ids: Vec<i64> = (0..10).map(|_| recv()["id"].as_i64().unwrap()).collect();
    ids.sort_unstable();
    assert_eq!(ids, (1000..1010).collect::<Vec<_>>());

    // A slow request (about 1 s), then end of input: it is still answered,
    // then stdout closes and the server exits cleanly.
    stdin
        .write_all(&call(7, "test_reconnection", json!({})))
        .unwrap();
    drop(stdin);
    let started = Instant::now();
    let r = recv();
    assert_eq!(r["id"], 7, "{r}");
    assert_eq!(
        r["result"]["content"][0]["text"], "Reconnection test completed",
        "{r}"
    );
    let mut rest = Vec::new();
    stdout.read_to_end(&mut rest).unwrap();
    assert!(rest.is_empty(), "nothing after the last answer: {rest:?}");
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn eof_right_away_ends_the_server() {
    // Input already closed before the server starts reading (`printf … | tessera`).
    let mut child = Command::new(env!("CARGO_BIN_EXE_tessera"))
        .args(["serve", "--stdio"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start tessera");
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(&call(1, "echo", json!({"text": "once"})))
        .unwrap();
    drop(stdin);
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    let r: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(r["result"]["content"][0]["text"], "once", "{r}");
    assert!(child.wait().unwrap().success());
}

/// The switch to blocking pipes (`tessera_runtime::STDIO_PIPES_ENV`).
#[cfg(target_os = "linux")]
const PIPES_ENV: &str = "TESSERA_STDIO_PIPES";

/// Whether an open file is in non-blocking mode, from /proc (`O_NONBLOCK`
/// is octal 4000 in the `flags:` line).
#[cfg(target_os = "linux")]
fn nonblocking(fd: &impl std::os::fd::AsRawFd) -> bool {
    let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{}", fd.as_raw_fd())).unwrap();
    let flags = info
        .lines()
        .find_map(|l| l.strip_prefix("flags:"))
        .expect("a flags line")
        .trim();
    u32::from_str_radix(flags, 8).unwrap() & 0o4000 != 0
}

#[cfg(target_os = "linux")]
#[test]
fn pipes_are_polled_unless_the_environment_asks_for_blocking_ones() {
    // The mode belongs to the open pipe, which this process holds too: what
    // the server did to its stdin shows here.
    for (setting, polled) in [(None, true), (Some("blocking"), false)] {
        // A pipe of which this process keeps a copy of the read end: `cat`'s
        // stdout, fed through its stdin (`std::io::pipe` needs Rust 1.87,
        // above the workspace's rust-version).
        let mut relay = Command::new("cat")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start cat");
        let mut write = relay.stdin.take().unwrap();
        let read = std::os::fd::OwnedFd::from(relay.stdout.take().unwrap());
        let kept = read.try_clone().unwrap();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_tessera"));
        cmd.args(["serve", "--stdio"])
            .stdin(Stdio::from(read))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .env_remove(PIPES_ENV);
        if let Some(v) = setting {
            cmd.env(PIPES_ENV, v);
        }
        let mut child = cmd.spawn().expect("start tessera");
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        write
            .write_all(&call(1, "echo", json!({"text": "hi"})))
            .unwrap();
        let mut line = String::new();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "output closed");
        let r: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(r["result"]["content"][0]["text"], "hi", "{r}");
        assert_eq!(nonblocking(&kept), polled, "{setting:?}");
        drop(write);
        assert!(child.wait().unwrap().success());
        assert!(relay.wait().unwrap().success());
    }
}
