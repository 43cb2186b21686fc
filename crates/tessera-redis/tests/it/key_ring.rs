//! The `requestState` key ring shared through Redis: rotation on explicit
//! clocks, and a multi round-trip request sealed by one server and resumed
//! by another.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};
use tessera_redis::testing::RedisServer;
use tessera_redis::{Redis, RedisKeyRing};
use tessera_server::mrtr::StateSealer;
use tessera_server::{RequestContext, Server, tool};
use tessera_testkit::pair::serve_raw;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

const HOUR: u64 = 3_600_000;
const T0: u64 = 1_800_000_000_000;

async fn instance(server: &RedisServer) -> Redis {
    Redis::options(server.url())
        .prefix("ring-test:")
        .request_state_ttl(Duration::from_secs(600))
        .key_rotation_period(Duration::from_secs(3600))
        .connect()
        .await
        .expect("connect")
}

#[tokio::test]
async fn rotation_keeps_states_valid_across_instances() {
    let server = RedisServer::start().expect("start redis-server");
    let (a, b) = (instance(&server).await, instance(&server).await);
    let ring_a = Arc::new(RedisKeyRing::detached(&a, "manual"));
    let ring_b = Arc::new(RedisKeyRing::detached(&b, "manual"));
    ring_a.refresh_at(T0).await.unwrap();
    ring_b.refresh_at(T0).await.unwrap();
    assert_eq!(ring_a.keys().len(), 1, "an empty ring gets one key");
    assert_eq!(ring_a.keys(), ring_b.keys(), "both instances share it");
    let first = ring_a.keys()[0];

    // Before the period ends, a new key is announced but does not seal yet.
    let lead = 3 * ring_a.refresh_interval().as_millis() as u64;
    ring_a.refresh_at(T0 + HOUR - lead).await.unwrap();
    ring_b.refresh_at(T0 + HOUR - lead).await.unwrap();
    let keys = ring_b.keys();
    assert_eq!(keys.len(), 2);
    assert_eq!(keys[0], first, "the old key still seals");
    let second = keys[1];
    assert_eq!(ring_a.keys(), keys);

    // Once it is due, the new key seals and the old one still opens.
    ring_a.refresh_at(T0 + HOUR).await.unwrap();
    ring_b.refresh_at(T0 + HOUR).await.unwrap();
    assert_eq!(&*ring_a.keys(), &[second, first]);
    let ttl = Duration::from_secs(600);
    let sealer_a = StateSealer::from_source(ring_a.clone(), ttl);
    let sealer_b = StateSealer::from_source(ring_b.clone(), ttl);
    let now = SystemTime::now();
    let state = sealer_a.seal("tools/call", "d", None, &Default::default(), now);
    assert!(sealer_b.open(&state, "tools/call", "d", None, now).is_ok());

    // The old key is dropped once every state it sealed has expired.
    let old_gone = T0 + HOUR + 600_000 + lead + ring_a.refresh_interval().as_millis() as u64;
    ring_b.refresh_at(old_gone - 1).await.unwrap();
    assert!(ring_b.keys().contains(&first));
    ring_b.refresh_at(old_gone).await.unwrap();
    assert_eq!(&*ring_b.keys(), &[second]);
    // Many refreshes within one period add nothing.
    for i in 0..5 {
        ring_a.refresh_at(old_gone + i).await.unwrap();
    }
    assert_eq!(&*ring_a.keys(), &[second]);
}

async fn two_questions(ctx: RequestContext) -> Result<String, String> {
    let ask = |prop: &str| -> tessera_types::ElicitRequestParams {
        serde_json::from_value(json!({
            "message": format!("{prop}?"),
            "requestedSchema": {"type": "object", "properties": {prop: {"type": "string"}}}
        }))
        .unwrap()
    };
    let a = ctx
        .elicit_as("name", ask("name"))
        .await
        .map_err(|e| e.to_string())?;
    let b = ctx
        .elicit_as("color", ask("color"))
        .await
        .map_err(|e| e.to_string())?;
    let get = |r: &tessera_types::ElicitResult, p: &str| {
        serde_json::to_value(r).unwrap()["content"][p]
            .as_str()
            .unwrap_or("?")
            .to_owned()
    };
    Ok(format!("{} likes {}", get(&a, "name"), get(&b, "color")))
}

/// One server instance on an in-memory pipe.
struct Wire {
    write: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    read: BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>,
}

impl Wire {
    async fn start(redis: &Redis) -> Wire {
        let server = redis
            .install(Server::builder().tool(tool("two_questions").handler(two_questions)))
            .build()
            .unwrap();
        let (read, write) = serve_raw(&server, 1 << 16);
        Wire {
            write,
            read: BufReader::new(read),
        }
    }

    async fn call(&mut self, id: i64, extra: Value) -> Value {
        let mut params = json!({
            "name": "two_questions",
            "arguments": {},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}
            }
        });
        if let (Value::Object(p), Value::Object(e)) = (&mut params, extra) {
            p.extend(e);
        }
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
        let mut line = serde_json::to_vec(&msg).unwrap();
        line.push(b'\n');
        self.write.write_all(&line).await.unwrap();
        let mut answer = String::new();
        tokio::time::timeout(Duration::from_secs(10), self.read.read_line(&mut answer))
            .await
            .expect("an answer in time")
            .unwrap();
        serde_json::from_str(&answer).unwrap()
    }
}

#[tokio::test]
async fn state_sealed_on_one_server_opens_on_another() {
    let server = RedisServer::start().expect("start redis-server");
    let (ra, rb) = (instance(&server).await, instance(&server).await);
    assert_eq!(ra.key_ring().keys(), rb.key_ring().keys());
    let (mut a, mut b) = (Wire::start(&ra).await, Wire::start(&rb).await);
    let r1 = a.call(1, json!({})).await;
    assert_eq!(r1["result"]["resultType"], "input_required", "{r1}");
    let state = r1["result"]["requestState"].clone();
    // Round 2 on the other server: it opens A's state and asks the next question.
    let r2 = b
        .call(
            2,
            json!({"requestState": state,
                   "inputResponses": {"name": {"action": "accept", "content": {"name": "Ada"}}}}),
        )
        .await;
    assert_eq!(r2["result"]["resultType"], "input_required", "{r2}");
    assert!(r2["result"]["inputRequests"].get("color").is_some(), "{r2}");
    // Round 3 back on A, with B's state.
    let r3 = a
        .call(
            3,
            json!({"requestState": r2["result"]["requestState"].clone(),
                   "inputResponses": {"color": {"action": "accept", "content": {"color": "green"}}}}),
        )
        .await;
    assert_eq!(
        r3["result"]["content"][0]["text"], "Ada likes green",
        "{r3}"
    );
    // A server with a ring of its own refuses the state.
    let other = Redis::options(server.url())
        .prefix("elsewhere:")
        .connect()
        .await
        .unwrap();
    let mut c = Wire::start(&other).await;
    let r4 = c
        .call(4, json!({"requestState": r2["result"]["requestState"].clone(),
                        "inputResponses": {"color": {"action": "accept", "content": {"color": "red"}}}}))
        .await;
    assert_eq!(r4["error"]["code"], -32602, "{r4}");
}
