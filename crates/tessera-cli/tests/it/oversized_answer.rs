//! A stdio server whose answer exceeds the 16 MiB message size limit: the
//! CLI says so at once and exits 7 (the server broke the protocol), naming
//! the limit, instead of dropping the line and waiting for `--timeout`
//! (exit 6).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A stdio MCP server in POSIX sh: answers `initialize`, and answers
/// `tools/call` with a text of `$1` bytes, the result first and the id last
/// (as the TypeScript SDK writes its responses).
const SERVER: &str = r#"
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
  case "$line" in
    *'"method":"initialize"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"big","version":"1"}}}\n' "$id" ;;
    *'"method":"tools/call"'*)
      printf '{"result":{"content":[{"type":"text","text":"'
      head -c "$1" /dev/zero | tr '\0' x
      printf '"}]},"jsonrpc":"2.0","id":%s}\n' "$id" ;;
  esac
done
"#;

fn call(text_bytes: usize, timeout: u64) -> (std::process::Output, Duration) {
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_tessera"))
        .args(["call", "big", "--era", "legacy", "--timeout"])
        .arg(timeout.to_string())
        .args(["--", "sh", "-c", SERVER, "server"])
        .arg(text_bytes.to_string())
        .stdin(Stdio::null())
        .output()
        .expect("tessera runs");
    (out, started.elapsed())
}

#[test]
fn an_answer_over_the_limit_exits_7_naming_the_limit_not_6() {
    const LIMIT: usize = 16 * 1024 * 1024;
    // Just under the limit: answered.
    let (out, _) = call(LIMIT - 200, 60);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.stdout.len(), LIMIT - 200 + 1);

    // Over it: exit 7 at once, with the sizes and the limit named.
    let (out, took) = call(LIMIT + 1, 60);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(7), "{stderr}");
    assert!(
        stderr.contains("exceeds the message size limit of 16777216 bytes (16 MiB)"),
        "{stderr}"
    );
    assert!(stderr.contains("calling big"), "{stderr}");
    assert!(out.stdout.is_empty());
    // Not the timeout: well before the 60 s it would have waited.
    assert!(took < Duration::from_secs(30), "took {took:?}");
    eprintln!("an over-long answer was reported in {took:?}");
}
