//! One rate limit held by three `tessera proxy --config … --redis` instances
//! on one private redis-server, behind HAProxy round-robin (issue 28): the
//! limit's requests pass through whichever instance, the next one is
//! refused by every instance with HTTP 429, `Retry-After` and the JSON-RPC
//! error carrying `retryAfterMs`, and another principal is not counted
//! against it.

#![cfg(unix)]

use crate::common;

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::{Value, json};
use tessera_redis::testing::{Haproxy, RedisServer};

const TESSERA: &str = env!("CARGO_BIN_EXE_tessera");
const BOUND: Duration = Duration::from_secs(60);
const LIMIT: usize = 6;
const KEYS: [(&str, &str); 2] = [
    ("GW_SHARED_ALICE", "alice-shared-key-0123456789"),
    ("GW_SHARED_BOB", "bob-shared-key-0123456789ab"),
];

async fn bounded<T>(what: &str, f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(BOUND, f)
        .await
        .unwrap_or_else(|_| panic!("{what} did not finish within {BOUND:?}"))
}

/// One stateless 2026-07-28 `tools/call` of `echo` on alpha with API key
/// `key`: the HTTP status, the `Retry-After` header and the JSON-RPC
/// response.
async fn call(url: &str, key: &str) -> (u16, Option<String>, Value) {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "alpha__echo",
        "arguments": {"text": "hi"},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "shared-limit-test", "version": "1"}
        }
    }});
    let r = bounded(
        "a call",
        reqwest::Client::new()
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", "alpha__echo")
            .header("x-api-key", key)
            .body(body.to_string())
            .send(),
    )
    .await
    .unwrap();
    let status = r.status().as_u16();
    let retry = r
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_owned());
    let text = r.text().await.unwrap();
    let v = serde_json::from_str::<Value>(&text).unwrap_or_else(|_| {
        text.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .find(|m| m.get("id").is_some())
            .unwrap_or_else(|| panic!("no response in {text}"))
    });
    (status, retry, v)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_instances_on_one_redis_hold_one_limit() {
    let redis = RedisServer::start().expect("starts redis-server");
    let dir = std::env::temp_dir().join(format!("tessera-gw-shared-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("gateway.json");
    let doc = json!({
        "mcpServers": {"alpha": {"command": TESSERA, "args": ["serve", "--stdio"]}},
        "gateway": {
            "apiKeys": [
                {"keyEnv": KEYS[0].0, "principal": {"sub": "alice"}},
                {"keyEnv": KEYS[1].0, "principal": {"sub": "bob"}}
            ],
            "rateLimits": [{"name": "pace", "requests": LIMIT, "perSeconds": 3600}]
        }
    });
    std::fs::write(&file, doc.to_string()).unwrap();
    let path = file.to_str().unwrap().to_owned();
    let redis_url = redis.url();
    let instances = tokio::task::spawn_blocking(move || {
        (0..3)
            .map(|_| {
                common::start_proxy_env(
                    &[
                        "--http",
                        "127.0.0.1:0",
                        "--config",
                        &path,
                        "--redis",
                        &redis_url,
                        "--redis-prefix",
                        "gw-shared-test:",
                        // The balancer's Host (127.0.0.1 on its own port).
                        "--allow-host",
                        "127.0.0.1",
                    ],
                    &KEYS,
                )
            })
            .collect::<Vec<_>>()
    })
    .await
    .unwrap();
    let urls: Vec<String> = instances.iter().map(|(_, u)| u.clone()).collect();
    // Every instance has its upstream before the first call.
    let http = reqwest::Client::new();
    for u in &urls {
        let readyz = u.replace("/mcp", "/readyz");
        bounded("an instance ready", async {
            while !http
                .get(&readyz)
                .send()
                .await
                .is_ok_and(|r| r.status() == 200)
            {
                tokio::task::yield_now().await;
            }
        })
        .await;
    }
    let backends: Vec<SocketAddr> = urls
        .iter()
        .map(|u| {
            u.trim_start_matches("http://")
                .trim_end_matches("/mcp")
                .parse()
                .unwrap()
        })
        .collect();
    let balancer = Haproxy::start(&backends).expect("starts haproxy");
    let front = format!("http://127.0.0.1:{}/mcp", balancer.port());

    // The limit's requests pass, spread over the three instances.
    for n in 0..LIMIT {
        let (status, _, v) = call(&front, KEYS[0].1).await;
        assert_eq!(status, 200, "call {n}: {v}");
        assert!(v["result"]["content"].is_array(), "call {n}: {v}");
    }
    // The next is refused through the balancer and by each instance alone
    // (each has seen only a third of the calls itself).
    for url in std::iter::once(&front).chain(&urls) {
        let (status, retry, v) = call(url, KEYS[0].1).await;
        assert_eq!(status, 429, "{url}: {v}");
        let data = &v["error"]["data"];
        assert_eq!(data["limit"], "rateLimits[0] \"pace\"", "{v}");
        let ms = data["retryAfterMs"].as_u64().expect("retryAfterMs");
        // One token per 600 s.
        assert!(ms > 590_000 && ms <= 600_000, "{ms}");
        let secs: u64 = retry.expect("Retry-After").parse().unwrap();
        assert_eq!(secs, ms.div_ceil(1000));
    }
    // Bob has a bucket of his own.
    let (status, _, v) = call(&front, KEYS[1].1).await;
    assert_eq!(status, 200, "{v}");
    drop(balancer);
    drop(instances);
    let _ = std::fs::remove_dir_all(&dir);
}
