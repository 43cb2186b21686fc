//! `tessera proxy` under the attack of issue 32 item 2: many legacy
//! sessions from one address, each subscribing to a resource (which needs
//! an upstream session of its own, a process in front of a stdio server).
//! The processes stay under `--max-upstream-processes`, the sessions beyond
//! it are refused with an error naming the limit (and keep working over the
//! shared connection), and a session's process stops when the session is
//! deleted or idles out.

#![cfg(target_os = "linux")]

use crate::common;

use common::{children_of, start_proxy};
use serde_json::{Value, json};
use std::time::Duration;

const TESSERA: &str = env!("CARGO_BIN_EXE_tessera");
const LEGACY: &str = "2025-11-25";
const BOUND: Duration = Duration::from_secs(30);
const WATCHED: &str = "test://watched-resource";

/// A client speaking raw Streamable HTTP (no GET stream, no reconnection:
/// what an attacker sends).
struct Raw {
    http: reqwest::Client,
    url: String,
}

impl Raw {
    fn new(url: &str) -> Raw {
        Raw {
            http: reqwest::Client::builder().timeout(BOUND).build().unwrap(),
            url: url.to_owned(),
        }
    }

    fn post(&self, sid: Option<&str>, body: &Value) -> reqwest::RequestBuilder {
        let mut b = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.to_string());
        if let Some(sid) = sid {
            b = b
                .header("mcp-session-id", sid)
                .header("mcp-protocol-version", LEGACY);
        }
        b
    }

    /// Opens a session: `initialize`, then `notifications/initialized`.
    async fn open(&self) -> String {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "proxy-limits", "version": "1"}
        }});
        let r = self.post(None, &init).send().await.unwrap();
        assert_eq!(r.status(), 200, "initialize");
        let sid = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
        let v = response_of(r).await;
        assert_eq!(v["result"]["protocolVersion"], LEGACY, "{v}");
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let r = self.post(Some(&sid), &note).send().await.unwrap();
        assert_eq!(r.status(), 202);
        sid
    }

    /// One request in session `sid`: its response, or the HTTP status that
    /// refused it.
    async fn request(&self, sid: &str, method: &str, params: Value) -> Result<Value, u16> {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let r = self.post(Some(sid), &body).send().await.unwrap();
        if r.status() != 200 {
            return Err(r.status().as_u16());
        }
        Ok(response_of(r).await)
    }

    async fn delete(&self, sid: &str) {
        let r = self
            .http
            .delete(&self.url)
            .header("mcp-session-id", sid)
            .header("mcp-protocol-version", LEGACY)
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success(), "DELETE: {}", r.status());
    }
}

/// The JSON-RPC response in a JSON body or an SSE stream.
async fn response_of(r: reqwest::Response) -> Value {
    let sse = r.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/event-stream");
    let text = r.text().await.unwrap();
    if !sse {
        return serde_json::from_str(&text).unwrap();
    }
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .find(|m| m.get("id").is_some() && m.get("method").is_none())
        .unwrap_or_else(|| panic!("no response in {text:?}"))
}

/// Waits (up to [`BOUND`]) until the proxy `pid` has `n` child processes;
/// a process that stops is observed in /proc, so this looks again every
/// 20 ms until the bound.
async fn children_settle(pid: u32, n: usize) -> Vec<u32> {
    let deadline = tokio::time::Instant::now() + BOUND;
    loop {
        let now = children_of(pid);
        if now.len() == n {
            return now;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the proxy still has {} child processes, not {n}: {now:?}",
            now.len()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The attack with the default limits, scaled down: 40 sessions from one
/// address each subscribe. Before the cap every one of them started a
/// process (300 sessions: 257 processes, 5.7 GB); now 16 do (the default
/// `--max-upstream-processes`), the other 24 are refused with an error that
/// names the limit, and a refused session still calls tools over the
/// shared connection. Deleting the subscribed sessions stops their
/// processes, which frees the places.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribing_sessions_are_held_to_the_process_cap() {
    let (proxy, url) = tokio::task::spawn_blocking(|| {
        start_proxy(&["--http", "127.0.0.1:0", "--", TESSERA, "serve", "--stdio"])
    })
    .await
    .unwrap();
    let pid = proxy.0.id();
    let raw = Raw::new(&url);
    let shared = children_settle(pid, 1).await;

    let mut subscribed = Vec::new();
    let mut refused = Vec::new();
    for _ in 0..40 {
        let sid = raw.open().await;
        let v = raw
            .request(&sid, "resources/subscribe", json!({"uri": WATCHED}))
            .await
            .expect("an HTTP 200");
        if v.get("result").is_some() {
            subscribed.push(sid);
        } else {
            let message = v["error"]["message"].as_str().unwrap_or_default();
            assert!(message.contains("--max-upstream-processes"), "{v}");
            assert_eq!(v["error"]["data"]["max"], 16, "{v}");
            refused.push(sid);
        }
    }
    assert_eq!(subscribed.len(), 16, "the default cap");
    assert_eq!(refused.len(), 24);
    let children = children_of(pid);
    assert_eq!(
        children.len(),
        17,
        "16 session processes and the shared one"
    );

    // A refused session goes on over the shared connection.
    let v = raw
        .request(
            &refused[0],
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "still here"}}),
        )
        .await
        .expect("an HTTP 200");
    assert_eq!(v["result"]["content"][0]["text"], "still here", "{v}");

    // Deleting the subscribed sessions stops their processes; the shared one stays.
    for sid in &subscribed {
        raw.delete(sid).await;
    }
    assert_eq!(children_settle(pid, 1).await, shared);
    // And the places are free again.
    let v = raw
        .request(&refused[1], "resources/subscribe", json!({"uri": WATCHED}))
        .await
        .expect("an HTTP 200");
    assert!(v.get("result").is_some(), "{v}");
    assert_eq!(children_of(pid).len(), 2);
}

/// A session that holds a process and goes quiet is ended after
/// `--session-idle-timeout`, and its process with it; with
/// `--max-sessions-per-client` a client's oldest idle session is ended (and
/// its process stopped) to make room for its next one, so one address never
/// holds more processes than sessions it may keep.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_and_evicted_sessions_give_their_processes_back() {
    let (proxy, url) = tokio::task::spawn_blocking(|| {
        start_proxy(&[
            "--http",
            "127.0.0.1:0",
            "--session-idle-timeout",
            "1",
            "--max-sessions-per-client",
            "3",
            "--max-upstream-processes",
            "8",
            "--",
            TESSERA,
            "serve",
            "--stdio",
        ])
    })
    .await
    .unwrap();
    let pid = proxy.0.id();
    let raw = Raw::new(&url);
    children_settle(pid, 1).await;

    // Ten sessions in turn: each evicts the oldest idle one beyond three.
    for i in 0..10 {
        let sid = raw.open().await;
        let v = raw
            .request(&sid, "resources/subscribe", json!({"uri": WATCHED}))
            .await
            .expect("an HTTP 200");
        assert!(v.get("result").is_some(), "session {i}: {v}");
        let n = children_of(pid).len();
        assert!(n <= 1 + 4, "session {i}: {n} child processes");
    }
    // Then nobody speaks: every session idles out and its process stops.
    children_settle(pid, 1).await;
}

/// The session flags are refused without --http, and the process cap must
/// be at least one.
#[test]
fn the_limits_are_checked() {
    for args in [
        &["--stdio", "--max-sessions", "4", "--", "true"][..],
        &["--stdio", "--max-requests-per-client", "4", "--", "true"][..],
        &[
            "--http",
            "127.0.0.1:0",
            "--max-upstream-processes",
            "0",
            "--",
            "true",
        ][..],
    ] {
        let out = std::process::Command::new(TESSERA)
            .arg("proxy")
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}
