//! Hot reload of `tessera proxy --config`: new rules apply on SIGHUP to a
//! session already open, a broken file (seen as it changes) is reported
//! with the field at fault and the running rules stay, and a reload that
//! adds an upstream connects it (an open session sees its tools and calls
//! them), one that removes an upstream closes it, and a broken file keeps
//! the upstreams running. A reload that would put a server shown without
//! prefix beside another is refused; going to two prefixed servers works.

#![cfg(unix)]

use crate::common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;

use serde_json::{Value, json};
use tessera::client::Client;
use tessera::types::ProtocolVersion;
use tessera_http::HttpClientTransport;
use tessera_http::http::{HeaderMap, HeaderValue};
use tessera_testkit::{BOUND, bounded};

const TESSERA: &str = env!("CARGO_BIN_EXE_tessera");
const KEY: &str = "alice-reload-key-0123456789";

fn config(servers: &[&str], rules: Value) -> String {
    let up = json!({"command": TESSERA, "args": ["serve", "--stdio"]});
    let servers: serde_json::Map<String, Value> = servers
        .iter()
        .map(|s| (s.to_string(), up.clone()))
        .collect();
    json!({"mcpServers": servers, "gateway": {
        "apiKeys": [{"keyEnv": "GW_RELOAD_KEY", "principal": {"sub": "alice"}}],
        "rules": rules
    }})
    .to_string()
}

/// Replaces `file` whole (a rename), so the proxy never reads it half written.
fn replace(file: &std::path::Path, text: String) {
    let tmp = file.with_extension("tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, file).unwrap();
}

/// Starts `tessera proxy --http` on `file` (with the API key in its
/// environment); returns the process, its stderr lines and its URL.
fn start_proxy(file: &std::path::Path) -> (common::Running, mpsc::Receiver<String>, String) {
    let mut child = Command::new(TESSERA)
        .args(["proxy", "--http", "127.0.0.1:0", "--config"])
        .arg(file)
        .env("GW_RELOAD_KEY", KEY)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let proxy = common::Running(child);
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for l in BufReader::new(stderr).lines() {
            let Ok(l) = l else { break };
            if tx.send(l).is_err() {
                break;
            }
        }
    });
    let first = lines.recv_timeout(BOUND).expect("the proxy starts");
    let url = first
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no URL in {first:?}"))
        .to_owned();
    (proxy, lines, url)
}

/// Waits for a stderr line of the proxy holding `want` (skipping others).
fn line_with(lines: &mpsc::Receiver<String>, want: &str) -> String {
    let deadline = std::time::Instant::now() + BOUND;
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match lines.recv_timeout(left) {
            Ok(l) if l.contains(want) => return l,
            Ok(_) => continue,
            Err(e) => panic!("no stderr line with {want:?}: {e}"),
        }
    }
}

async fn tools(c: &Client) -> Vec<String> {
    let mut t: Vec<String> = bounded("tools/list", c.list_tools())
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    t.sort();
    t
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rules_reload_on_sighup_and_a_broken_file_keeps_them() {
    let dir = std::env::temp_dir().join(format!("tessera-gw-reload-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("gateway.json");
    let only_echo = json!([{"when": {"sub": "alice"}, "tools": "echo", "effect": "allow"}]);
    std::fs::write(&file, config(&["alpha"], only_echo)).unwrap();

    let (proxy, lines, url) = start_proxy(&file);

    let mut h = HeaderMap::new();
    h.insert("x-api-key", HeaderValue::from_static(KEY));
    let alice = bounded(
        "connecting",
        Client::builder("reload-test", "1.0")
            .protocol_version(ProtocolVersion::V2025_11_25)
            .connect_transport(HttpClientTransport::with_headers(&url, h).unwrap()),
    )
    .await
    .unwrap();
    let before = bounded("alpha connected", async {
        loop {
            let t = tools(&alice).await;
            if !t.is_empty() {
                break t;
            }
            tokio::task::yield_now().await;
        }
    })
    .await;
    assert_eq!(before, ["alpha__echo"]);

    // New rules, then SIGHUP: the open session sees them.
    let all_but_tests = json!([
        {"tools": "test_*", "effect": "deny"},
        {"when": {"sub": "alice"}, "effect": "allow"}
    ]);
    replace(&file, config(&["alpha"], all_but_tests));
    let pid = proxy.0.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-HUP", &pid])
            .status()
            .unwrap()
            .success()
    );
    line_with(&lines, "reloaded (");
    let after = tools(&alice).await;
    assert!(
        after.len() > 1 && after.contains(&"alpha__echo".to_owned()),
        "{after:?}"
    );
    assert!(
        !after.iter().any(|t| t.starts_with("alpha__test_")),
        "{after:?}"
    );

    // A broken file is refused as it changes, and the rules stay.
    replace(
        &file,
        config(&["alpha"], json!([{"tools": "*", "effect": "maybe"}])),
    );
    let refused = line_with(&lines, "not reloaded");
    assert!(refused.contains("gateway.rules[0].effect"), "{refused}");
    assert!(
        refused.contains("the running configuration stays"),
        "{refused}"
    );
    assert_eq!(tools(&alice).await, after);

    // A new upstream is connected, and the open session sees its tools.
    replace(
        &file,
        config(
            &["alpha", "beta"],
            json!([{"when": {"sub": "alice"}, "effect": "allow"}]),
        ),
    );
    let said = line_with(&lines, "upstreams added");
    assert!(said.contains("upstreams added: beta"), "{said}");
    let both = bounded("beta's tools", async {
        loop {
            let t = tools(&alice).await;
            if t.iter().any(|n| n.starts_with("beta__")) {
                break t;
            }
            tokio::task::yield_now().await;
        }
    })
    .await;
    assert!(both.contains(&"alpha__echo".to_owned()), "{both:?}");
    assert!(both.contains(&"beta__echo".to_owned()), "{both:?}");
    // The session goes on through it.
    let r = bounded(
        "beta__add",
        alice.call_tool("beta__add", json!({"a": 2, "b": 40})),
    )
    .await
    .unwrap();
    assert_eq!(r.content[0].as_text(), Some("42"));

    // A broken file now keeps both.
    replace(&file, "{\"mcpServers\": {\"beta\": {}}}".to_owned());
    let refused = line_with(&lines, "not reloaded");
    assert!(refused.contains("server \"beta\""), "{refused}");
    assert_eq!(tools(&alice).await, both);

    // An upstream taken out of the file is closed, and its tools go.
    replace(
        &file,
        config(
            &["beta"],
            json!([{"when": {"sub": "alice"}, "effect": "allow"}]),
        ),
    );
    let said = line_with(&lines, "removed:");
    assert!(said.contains("removed: alpha"), "{said}");
    let left = tools(&alice).await;
    assert!(!left.is_empty(), "{left:?}");
    assert!(left.iter().all(|n| n.starts_with("beta__")), "{left:?}");
    alice.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// A file of the servers `servers` (each `tessera serve --stdio`), those
/// in `unprefixed` with `"prefix": false`.
fn servers_file(servers: &[&str], unprefixed: &[&str]) -> String {
    let servers: serde_json::Map<String, Value> = servers
        .iter()
        .map(|s| {
            let mut up = json!({"command": TESSERA, "args": ["serve", "--stdio"]});
            if unprefixed.contains(s) {
                up["prefix"] = json!(false);
            }
            (s.to_string(), up)
        })
        .collect();
    json!({ "mcpServers": servers }).to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_that_puts_an_unprefixed_server_beside_another_is_refused() {
    let dir = std::env::temp_dir().join(format!("tessera-gw-prefix-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("gateway.json");
    std::fs::write(&file, servers_file(&["alpha"], &["alpha"])).unwrap();

    let (_proxy, lines, url) = start_proxy(&file);
    let c = bounded(
        "connecting",
        Client::builder("prefix-reload-test", "1.0")
            .protocol_version(ProtocolVersion::V2025_11_25)
            .connect_transport(HttpClientTransport::new(&url).unwrap()),
    )
    .await
    .unwrap();
    let alone = bounded("alpha connected", async {
        loop {
            let t = tools(&c).await;
            if !t.is_empty() {
                break t;
            }
            tokio::task::yield_now().await;
        }
    })
    .await;
    // Its own names, no prefix.
    assert!(alone.contains(&"echo".to_owned()), "{alone:?}");
    assert!(!alone.iter().any(|t| t.contains("__")), "{alone:?}");

    // Beside another server it would be refused: the reload is, whole.
    replace(&file, servers_file(&["alpha", "beta"], &["alpha"]));
    let refused = line_with(&lines, "not reloaded");
    assert!(
        refused.contains("server \"alpha\": prefix: false is allowed only for the only server"),
        "{refused}"
    );
    assert!(
        refused.contains("the running configuration stays"),
        "{refused}"
    );
    assert_eq!(tools(&c).await, alone);

    // Both prefixed: one step from one unprefixed server to two.
    replace(&file, servers_file(&["alpha", "beta"], &[]));
    let said = line_with(&lines, "reloaded (");
    assert!(said.contains("upstreams added: beta"), "{said}");
    assert!(said.contains("reconnected: alpha"), "{said}");
    let both = bounded("both servers' tools", async {
        loop {
            let t = tools(&c).await;
            if t.iter().any(|n| n.starts_with("alpha__"))
                && t.iter().any(|n| n.starts_with("beta__"))
            {
                break t;
            }
            tokio::task::yield_now().await;
        }
    })
    .await;
    assert!(both.iter().all(|n| n.contains("__")), "{both:?}");
    c.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}
