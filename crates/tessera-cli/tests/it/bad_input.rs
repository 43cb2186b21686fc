//! `tessera serve --stdio` fed thousands of bad lines: each one that deserves
//! an answer gets the right error, none crashes the server, and the next
//! valid request is answered.

use std::io::{BufRead, BufReader, Write};
use std::process::{ChildStdin, ChildStdout, Command, Stdio};

use tessera_testkit::Running;

use serde_json::{Value, json};

/// A small deterministic generator (xorshift), so a failure can be replayed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n)
            .map(|_| (self.next() & 0xff) as u8)
            .filter(|b| *b != b'\n' && *b != b'\r')
            .collect()
    }
}

struct Server {
    _child: Running,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Server {
    fn start() -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tessera"))
            .args(["serve", "--stdio"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start tessera");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Server {
            _child: Running(child),
            stdin,
            stdout,
        }
    }

    fn send(&mut self, line: &[u8]) {
        self.stdin.write_all(line).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }

    fn recv(&mut self) -> Value {
        let mut line = String::new();
        let n = self.stdout.read_line(&mut line).unwrap();
        assert!(n > 0, "the server closed its output");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON from server: {e}: {line}"))
    }
}

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

/// One bad line and what the answer must be: `Some((code, id))` for an error,
/// `None` for an `isError` tool result.
fn case(rng: &mut Rng, i: i64) -> (Vec<u8>, Option<(i64, Value)>) {
    let valid = json!({"jsonrpc": "2.0", "id": i, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "x"}, "_meta": meta()}})
    .to_string();
    match rng.below(10) {
        // Random bytes (often not UTF-8).
        0 => {
            let n = 1 + rng.below(200) as usize;
            let mut b = rng.bytes(n);
            b.insert(0, b'#');
            (b, Some((-32700, Value::Null)))
        }
        // A valid request cut short.
        1 => {
            let cut = 1 + rng.below(valid.len() as u64 - 2) as usize;
            (valid.as_bytes()[..cut].to_vec(), Some((-32700, Value::Null)))
        }
        // Deeply nested arrays, closed or not.
        2 => {
            let depth = 200 + rng.below(5000) as usize;
            let mut s = "[".repeat(depth);
            if rng.below(2) == 0 {
                s.push_str(&"]".repeat(depth));
            }
            (s.into_bytes(), Some((-32700, Value::Null)))
        }
        // JSON that is not an object.
        3 => {
            let v = ["1", "\"s\"", "null", "true", "3.5"][rng.below(5) as usize];
            (v.into(), Some((-32600, Value::Null)))
        }
        // A method of the wrong type.
        4 => (
            json!({"jsonrpc": "2.0", "id": i, "method": 5}).to_string().into_bytes(),
            Some((-32600, json!(i))),
        ),
        // Params that are not an object.
        5 => (
            json!({"jsonrpc": "2.0", "id": i, "method": "tools/list", "params": [1, 2]})
                .to_string()
                .into_bytes(),
            Some((-32600, json!(i))),
        ),
        // An id of the wrong type.
        6 => {
            let id = [json!(null), json!(1.5), json!({}), json!([1]), json!(true)][rng.below(5) as usize].clone();
            (
                json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}).to_string().into_bytes(),
                Some((-32600, Value::Null)),
            )
        }
        // An unknown method.
        7 => (
            json!({"jsonrpc": "2.0", "id": i, "method": format!("nope/{i}"), "params": {"_meta": meta()}})
                .to_string()
                .into_bytes(),
            Some((-32601, json!(i))),
        ),
        // Arguments of the wrong type: a tool result with isError.
        8 => (
            json!({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                "params": {"name": "add", "arguments": {"a": "one", "b": [2]}, "_meta": meta()}})
            .to_string()
            .into_bytes(),
            None,
        ),
        // A modern request without client capabilities.
        _ => (
            json!({"jsonrpc": "2.0", "id": i, "method": "tools/list",
                "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}})
            .to_string()
            .into_bytes(),
            Some((-32602, json!(i))),
        ),
    }
}

#[test]
fn thousands_of_bad_lines_then_a_good_one() {
    let mut server = Server::start();
    let mut rng = Rng(0x5eed_1234_abcd_9876);
    for i in 1..=3000i64 {
        let (line, expect) = case(&mut rng, i);
        server.send(&line);
        let answer = server.recv();
        match expect {
            Some((code, id)) => {
                assert_eq!(
                    answer["error"]["code"],
                    json!(code),
                    "line {i}: {:?} got {answer}",
                    String::from_utf8_lossy(&line[..line.len().min(120)])
                );
                assert_eq!(answer["id"], id, "line {i}: {answer}");
            }
            None => {
                assert_eq!(answer["id"], json!(i));
                assert_eq!(
                    answer["result"]["isError"],
                    json!(true),
                    "line {i}: {answer}"
                );
            }
        }
        // Every so often, a valid request in between is answered normally.
        if i % 500 == 0 {
            server.send(
                json!({"jsonrpc": "2.0", "id": "ok", "method": "tools/call",
                    "params": {"name": "echo", "arguments": {"text": "still here"}, "_meta": meta()}})
                .to_string()
                .as_bytes(),
            );
            let r = server.recv();
            assert_eq!(r["result"]["content"][0]["text"], "still here", "{r}");
        }
    }
    // Notifications, good or bad, are never answered: the next answer is the ping's.
    server.send(br#"{"jsonrpc":"2.0","method":"notifications/whatever","params":{}}"#);
    server.send(
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":999}}"#,
    );
    server.send(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
    server.send(
        json!({"jsonrpc": "2.0", "id": "last", "method": "server/discover", "params": {"_meta": meta()}})
            .to_string()
            .as_bytes(),
    );
    let r = server.recv();
    assert_eq!(r["id"], "last");
    assert!(r["result"]["supportedVersions"].is_array(), "{r}");
}

#[test]
fn an_oversized_line_is_refused_and_the_server_goes_on() {
    let mut server = Server::start();
    // 20 MiB without a newline: over the 16 MiB default limit.
    let big = vec![b'x'; 20 * 1024 * 1024];
    server.send(&big);
    let r = server.recv();
    assert_eq!(r["error"]["code"], -32600, "{r}");
    server.send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "server/discover", "params": {"_meta": meta()}})
            .to_string()
            .as_bytes(),
    );
    assert_eq!(server.recv()["id"], 2);
}

#[test]
fn http_only_options_are_refused_with_stdio() {
    for flag in [
        "--stateless",
        "--allow-any-host",
        "--json-response",
        "--no-legacy-sse",
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_tessera"))
            .args(["serve", "--stdio", flag])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{flag}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(flag) && err.contains("--http"),
            "{flag}: {err}"
        );
    }
}

/// The opt-outs of the Host and Origin checks (issue 33 item 9) open with
/// DANGEROUS in `tessera serve --help`, say what they switch off, and name the
/// only setting they are meant for.
#[test]
fn the_host_and_origin_opt_outs_say_dangerous_in_help() {
    let out = Command::new(env!("CARGO_BIN_EXE_tessera"))
        .args(["serve", "--help"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for (flag, what) in [
        ("--allow-any-host", "DNS rebinding"),
        ("--allow-any-origin", "any web page"),
    ] {
        let at = text
            .find(&format!("      {flag}\n"))
            .unwrap_or_else(|| panic!("{flag} missing from serve --help:\n{text}"));
        let entry = &text[at + flag.len() + 7..];
        let entry = &entry[..entry.find("\n  -").unwrap_or(entry.len())];
        let entry = entry.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(entry.starts_with("DANGEROUS:"), "{flag}: {entry}");
        assert!(entry.contains(what), "{flag}: {entry}");
        assert!(entry.contains("reverse proxy"), "{flag}: {entry}");
    }
}
