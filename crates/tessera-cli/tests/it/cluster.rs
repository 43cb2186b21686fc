//! Three `tessera serve --http --redis` instances sharing one Redis (a
//! private redis-server), alone and behind HAProxy round-robin without
//! stickiness: a 2026-07-28 multi round-trip request goes on from instance
//! to instance, a task created on one is read and finished on the others,
//! and the restart of one instance fails only its own running tasks.

use crate::common;

use std::net::SocketAddr;
use std::process::Command;

use std::time::{Duration, Instant};
use tessera_testkit::Running;

use serde_json::{Value, json};
use tessera_redis::testing::{Haproxy, RedisServer};

const DEADLINE: Duration = Duration::from_secs(30);

/// A `tessera serve` child process; killed when dropped.
struct Instance {
    _child: Running,
    port: u16,
}

impl Instance {
    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    fn addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.port))
    }
}

/// Starts the instance `id` on `port` (0: a port of its choosing) and
/// waits (bounded) until it listens. The id is given: with port 0 the
/// server would choose a random one, and a restart must keep it.
async fn start(redis: &str, port: u16, id: &str) -> Instance {
    let (child, port) = common::spawn_serving(
        Command::new(env!("CARGO_BIN_EXE_tessera"))
            .args(["serve", "--http", &format!("127.0.0.1:{port}")])
            .args(["--redis", redis, "--redis-prefix", "cluster-test:"])
            .args(["--instance-id", id])
            // The balancer's Host (127.0.0.1 on its own port).
            .args(["--allow-host", "127.0.0.1", "--allow-host", "localhost"]),
        DEADLINE,
    );
    Instance {
        _child: Running(child),
        port,
    }
}

/// One 2026-07-28 request from the client `cluster-test` to `url`; returns
/// the JSON-RPC response.
async fn rpc(url: &str, method: &str, name: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "elicitation": {},
            "extensions": {"io.modelcontextprotocol/tasks": {}}
        },
        "io.modelcontextprotocol/clientInfo": {"name": "cluster-test", "version": "1"}
    });
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let r = reqwest::Client::new()
        .post(url)
        .timeout(Duration::from_secs(10))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method)
        .header("mcp-name", name)
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let text = r.text().await.unwrap();
    if let Ok(v) = serde_json::from_str::<Value>(&text) {
        return v;
    }
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .find(|m| m.get("id").is_some())
        .unwrap_or_else(|| panic!("no response in {text}"))
}

const MULTI_ROUND: &str = "test_input_required_result_multi_round";

/// The three rounds of the two-question tool, each sent to the next URL.
async fn multi_round(urls: [&str; 3]) -> Value {
    let call = |extra: Value| {
        let mut p = json!({"name": MULTI_ROUND, "arguments": {}});
        if let (Value::Object(p), Value::Object(e)) = (&mut p, extra) {
            p.extend(e);
        }
        p
    };
    let r1 = rpc(urls[0], "tools/call", MULTI_ROUND, call(json!({}))).await;
    assert_eq!(r1["result"]["resultType"], "input_required", "{r1}");
    let r2 = rpc(
        urls[1],
        "tools/call",
        MULTI_ROUND,
        call(json!({
            "requestState": r1["result"]["requestState"],
            "inputResponses": {"step1": {"action": "accept", "content": {"name": "Ada"}}}
        })),
    )
    .await;
    assert_eq!(r2["result"]["resultType"], "input_required", "{r2}");
    rpc(
        urls[2],
        "tools/call",
        MULTI_ROUND,
        call(json!({
            "requestState": r2["result"]["requestState"],
            "inputResponses": {"step2": {"action": "accept", "content": {"color": "green"}}}
        })),
    )
    .await
}

async fn sleep_task(url: &str, ms: u64) -> String {
    let r = rpc(
        url,
        "tools/call",
        "sleep",
        json!({"name": "sleep", "arguments": {"ms": ms}}),
    )
    .await;
    assert_eq!(r["result"]["resultType"], "task", "{r}");
    r["result"]["taskId"].as_str().unwrap().to_owned()
}

async fn task(url: &str, id: &str) -> Value {
    rpc(url, "tasks/get", id, json!({"taskId": id})).await["result"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn any_instance_serves_any_modern_request() {
    let redis = RedisServer::start().expect("start redis-server");
    let mut nodes = Vec::new();
    for i in 0..3 {
        nodes.push(start(&redis.url(), 0, &format!("node-{i}")).await);
    }
    let addrs: Vec<SocketAddr> = nodes.iter().map(Instance::addr).collect();
    let balancer = Haproxy::start(&addrs).expect("start haproxy");
    let lb = format!("http://127.0.0.1:{}/mcp", balancer.port());
    let urls: Vec<String> = nodes.iter().map(Instance::url).collect();

    // A multi round-trip request whose rounds go to three instances.
    let r = multi_round([&urls[0], &urls[1], &urls[2]]).await;
    assert_eq!(r["result"]["content"][0]["text"], "Ada likes green", "{r}");
    // The same through the balancer, several times over.
    for _ in 0..3 {
        let r = multi_round([&lb, &lb, &lb]).await;
        assert_eq!(r["result"]["content"][0]["text"], "Ada likes green", "{r}");
    }

    // A task created on one instance finishes there and is read on the others.
    let done = sleep_task(&urls[0], 10).await;
    let until = Instant::now() + DEADLINE;
    loop {
        let t = task(&urls[1], &done).await;
        if t["status"] == "completed" {
            assert_eq!(t["result"]["content"][0]["text"], "slept 10 ms", "{t}");
            break;
        }
        assert!(Instant::now() < until, "the task did not finish: {t}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(task(&lb, &done).await["status"], "completed");

    // Instance 0 is killed and comes back on the same address (same instance
    // id): its running task is failed, instance 1's goes on.
    let on_0 = sleep_task(&urls[0], 60_000).await;
    let on_1 = sleep_task(&urls[1], 60_000).await;
    assert_eq!(task(&urls[2], &on_0).await["status"], "working");
    let port0 = nodes[0].port;
    drop(nodes.remove(0));
    nodes.insert(0, start(&redis.url(), port0, "node-0").await);
    let t = task(&urls[2], &on_0).await;
    assert_eq!(t["status"], "failed", "{t}");
    assert!(
        t["statusMessage"]
            .as_str()
            .unwrap_or_default()
            .contains("restarted"),
        "{t}"
    );
    assert_eq!(task(&urls[2], &on_1).await["status"], "working");
    assert_eq!(task(&urls[0], &done).await["status"], "completed");
    // Cancel from a third instance.
    let c = rpc(&urls[2], "tasks/cancel", &on_1, json!({"taskId": on_1})).await;
    assert!(c.get("result").is_some(), "{c}");
    assert_eq!(task(&lb, &on_1).await["status"], "cancelled");
}

/// Redis goes away under a running instance: a 2026-07-28 request that needs
/// no shared state is answered as before, one that needs the task store gets
/// an error at once (no hang), and once a new redis-server listens on the
/// same port the instance uses it again without a restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stateless_requests_survive_a_redis_outage() {
    let mut redis = RedisServer::start().expect("start redis-server");
    let node = start(&redis.url(), 0, "node").await;
    let url = node.url();
    let echo = json!({"name": "echo", "arguments": {"text": "hi"}});
    assert_eq!(
        rpc(&url, "tools/call", "echo", echo.clone()).await["result"]["content"][0]["text"],
        "hi"
    );
    redis.kill();
    let r = rpc(&url, "tools/call", "echo", echo.clone()).await;
    assert_eq!(r["result"]["content"][0]["text"], "hi", "{r}");
    // The task store is down: an error within a few seconds, not a hang.
    let started = Instant::now();
    let r = rpc(
        &url,
        "tools/call",
        "sleep",
        json!({"name": "sleep", "arguments": {"ms": 10}}),
    )
    .await;
    assert!(r.get("error").is_some(), "{r}");
    let msg = r["error"]["message"].as_str().unwrap_or_default();
    assert!(msg.contains("unavailable"), "{r}");
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
    // Redis is back (empty: persistence is off): tasks work again.
    redis.restart().expect("restart redis-server");
    let until = Instant::now() + DEADLINE;
    loop {
        let r = rpc(
            &url,
            "tools/call",
            "sleep",
            json!({"name": "sleep", "arguments": {"ms": 10}}),
        )
        .await;
        if r["result"]["resultType"] == "task" {
            break;
        }
        assert!(
            Instant::now() < until,
            "the task store did not come back: {r}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
