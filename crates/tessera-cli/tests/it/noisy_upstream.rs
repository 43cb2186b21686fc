//! A stdio server that writes thousands of lines of junk to stdout before it
//! reads its stdin (a server logging to stdout): the client answers the
//! first few with parse errors, then stops answering, says so on stderr, and
//! the call goes through. Before, every junk line was answered; once the
//! server's stdin pipe was full the client blocked writing, stopped reading,
//! the server blocked on its stdout, and the call never returned.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Prints `$1` junk lines, then answers `initialize` and `tools/call`.
const SERVER: &str = r#"
i=0
while [ "$i" -lt "$1" ]; do echo "junk line $i, not JSON-RPC at all"; i=$((i+1)); done
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
  case "$line" in
    *'"method":"initialize"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"noisy","version":"1"}}}\n' "$id" ;;
    *'"method":"tools/call"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"answered"}]}}\n' "$id" ;;
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
