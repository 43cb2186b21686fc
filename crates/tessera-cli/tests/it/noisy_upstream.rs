//! A stdio server that writes thousands of lines of junk to stdout before it
//! reads its stdin (a server logging to stdout): the client answers the
//! first few with parse errors, then stops answering, says so on stderr, and
//! the call goes through. Before, every junk line was answered; once the
//! server's stdin pipe was full the client blocked writing, stopped reading,
//! the server blocked on its stdout, and the call never returned.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Prints `$1` junk lines, then answers `initialize`, `tools/call` and,
/// unless `$2` is `silent`, `tools/list` (which `tessera proxy` asks at start);
/// other requests get "method not found".
const SERVER: &str = r#"
i=0
while [ "$i" -lt "$1" ]; do echo "junk line $i, not JSON-RPC at all"; i=$((i+1)); done
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
  [ -n "$id" ] || continue
  case "$line" in
    *'"method":"initialize"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"noisy","version":"1"}}}\n' "$id" ;;
    *'"method":"tools/call"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"answered"}]}}\n' "$id" ;;
    *'"method":"tools/list"'*)
      [ "$2" = silent ] || printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"hello","inputSchema":{"type":"object"}}]}}\n' "$id" ;;
    *'"method":'*)
      printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}\n' "$id" ;;
  esac
done
"#;

#[test]
fn a_server_flooding_junk_cannot_deadlock_the_client() {
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_tessera"))
        .args(["call", "hello", "--era", "legacy", "--timeout", "30"])
        .args(["--", "sh", "-c", SERVER, "noisy", "5000"])
        .stdin(Stdio::null())
        .output()
        .expect("tessera runs");
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "after {took:?}: {stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "answered\n");
    // Said once on stderr, with how many junk frames it took.
    assert_eq!(
        stderr.matches("no longer answering them").count(),
        1,
        "{stderr}"
    );
    assert!(stderr.contains("the peer sent 65 frames"), "{stderr}");
    assert!(took < Duration::from_secs(20), "{took:?}");
    eprintln!("5,000 junk lines, then the call answered after {took:?}");
}

/// Starts `tessera proxy` in front of the script with `junk` lines and
/// `mode`, plus `extra` options; returns it and its URL once it listens
/// (within a minute, a bound for a loaded machine).
fn proxy_in_front(junk: &str, mode: &str, extra: &[&str]) -> (std::process::Child, String) {
    use std::io::BufRead as _;
    let mut proxy = Command::new(env!("CARGO_BIN_EXE_tessera"))
        .args(["proxy", "--http", "127.0.0.1:0", "--probe-timeout", "1"])
        .args(extra)
        .args(["--", "sh", "-c", SERVER, "noisy", junk, mode])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tessera proxy starts");
    let stderr = std::io::BufReader::new(proxy.stderr.take().expect("piped"));
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut tx = Some(tx);
        // Read to the end, so that the proxy never blocks on a full pipe.
        for line in stderr.lines() {
            let Ok(line) = line else { break };
            if line.starts_with("tessera: proxying ") {
                if let Some(tx) = tx.take() {
                    let url = line.rsplit_once(" at ").map(|(_, u)| u.trim().to_owned());
                    let _ = tx.send(url);
                }
            }
        }
    });
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(Some(url)) => (proxy, url),
        other => {
            let _ = proxy.kill();
            let _ = proxy.wait();
            panic!("tessera proxy never started listening: {other:?}");
        }
    }
}

/// Calls `hello` through the proxy at `url` and stops the proxy.
fn call_through(mut proxy: std::process::Child, url: &str) {
    let out = Command::new(env!("CARGO_BIN_EXE_tessera"))
        .args(["call", "hello", url, "--era", "legacy", "--timeout", "30"])
        .stdin(Stdio::null())
        .output()
        .expect("tessera runs");
    let _ = proxy.kill();
    let _ = proxy.wait();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "answered\n");
}

/// The proxy side of the same attack: `tessera proxy` in front of a stdio
/// server that writes 1,000 junk lines first listens, and a call through it
/// is answered by the upstream.
#[test]
fn a_proxy_in_front_of_a_junk_flooding_server_listens_and_forwards() {
    let (proxy, url) = proxy_in_front("1000", "answers", &[]);
    call_through(proxy, &url);
}

/// An upstream that never answers the proxy's `tools/list` at start delays
/// the start by no more than the request timeout (`--timeout`); the proxy
/// then serves without the list.
#[test]
fn an_upstream_silent_on_tools_list_delays_the_start_by_the_timeout_only() {
    let (proxy, url) = proxy_in_front("10", "silent", &["--timeout", "2"]);
    call_through(proxy, &url);
}
