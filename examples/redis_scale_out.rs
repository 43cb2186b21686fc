//! Two instances of one MCP server sharing their state through Redis, so that
//! any instance serves any request of a session.
//!
//! Each instance connects to the same Redis with the same key prefix and
//! makes one `install` call on its server builder (tasks, the multi
//! round-trip key ring) and one on its HTTP builder (sessions, resumable
//! streams, and the bus that carries notifications between instances).
//!
//! A load balancer would spread one client's requests over the instances;
//! here the program plays the balancer by hand, over plain HTTP: it opens a
//! session on instance A, carries on at instance B with the same
//! `Mcp-Session-Id`, and watches a notification caused on B arrive on A.
//!
//! `cargo run -p tessera-examples --example redis_scale_out -- redis://127.0.0.1:6379`
//! (or set `TESSERA_REDIS_URL`). Its keys start with `redis-example:`.

use std::time::Duration;

use serde_json::{Value, json};
use tessera::redis::Redis;
use tessera::server::{Server, resource, tool};
use tessera_http::McpHttp;

type Error = Box<dyn std::error::Error>;

/// Starts instance `name` on a free loopback port and returns its MCP URL.
async fn instance(redis_url: &str, name: &'static str) -> Result<String, Error> {
    let redis = Redis::options(redis_url)
        .prefix("redis-example:") // every instance of one endpoint shares it
        .instance_id(name)
        .connect()
        .await?;
    let server = Server::builder()
        .name_version("redis-example", "1.0.0")
        .resource(resource("note://board", "Board").handler(|| async { "the board" }))
        .tool(tool("whoami").handler(move || async move { format!("served by instance {name}") }))
        // Tells every subscriber of note://board, on every instance, that it changed.
        .tool(tool("touch_board").handler(|server: Server| async move {
            server.notify_resource_updated("note://board");
            "announced"
        }));
    let server = redis.install(server).build()?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let mcp = redis
        .install(McpHttp::builder(server).bind_address(addr))
        .build();
    tokio::spawn(tessera_http::serve(listener, mcp, std::future::pending()));
    Ok(format!("http://{addr}/mcp"))
}

/// POSTs one JSON-RPC message; returns the `Mcp-Session-Id` the server set
/// (on `initialize`) and the answer (a JSON body or one SSE `data:` line).
async fn post(
    http: &reqwest::Client,
    url: &str,
    session: Option<&str>,
    message: Value,
) -> Result<(Option<String>, Value), Error> {
    let mut request = http
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .json(&message);
    if let Some(id) = session {
        request = request.header("mcp-session-id", id);
    }
    let response = request.send().await?.error_for_status()?;
    let header = response.headers().get("mcp-session-id");
    let session = header.and_then(|v| v.to_str().ok()).map(str::to_owned);
    let body = response.text().await?;
    let answer = body
        .lines()
        .map(|line| line.strip_prefix("data:").unwrap_or(line))
        .find_map(|line| {
            serde_json::from_str::<Value>(line)
                .ok()
                .filter(|m| m.get("id").is_some())
        })
        .unwrap_or(Value::Null);
    Ok((session, answer))
}

fn call(id: u32, tool: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": {}}})
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let redis_url = std::env::args()
        .nth(1)
        .or_else(|| std::env::var("TESSERA_REDIS_URL").ok())
        .ok_or("usage: redis_scale_out REDIS_URL (or set TESSERA_REDIS_URL)")?;
    let (a, b) = (
        instance(&redis_url, "a").await?,
        instance(&redis_url, "b").await?,
    );
    println!("instance a: {a}\ninstance b: {b}");
    let http = reqwest::Client::new();

    // 1. Open a legacy (2025-11-25) session on A. The session id is the
    //    only thing the client keeps; the session's state is in Redis.
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "redis-example-client", "version": "1.0.0"}}});
    let (sid, _) = post(&http, &a, None, init).await?;
    let sid = sid.ok_or("no Mcp-Session-Id")?;
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    post(&http, &a, Some(&sid), initialized).await?;
    println!("session opened on instance a");

    // 2. Carry on at B: B has never seen this session and loads it from Redis.
    for (url, id) in [(&a, 2), (&b, 3)] {
        let (_, answer) = post(&http, url, Some(&sid), call(id, "whoami")).await?;
        println!("whoami: {}", answer["result"]["content"][0]["text"]);
    }

    // 3. Subscribe to note://board on A and open the session's notification
    //    stream (GET) there; then a tool call served by B changes the board.
    let sub = json!({"jsonrpc": "2.0", "id": 4, "method": "resources/subscribe",
        "params": {"uri": "note://board"}});
    post(&http, &a, Some(&sid), sub).await?;
    let mut stream = http
        .get(&a)
        .header("accept", "text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .header("mcp-session-id", &sid)
        .send()
        .await?
        .error_for_status()?;
    post(&http, &b, Some(&sid), call(5, "touch_board")).await?;
    // The update crosses from B to A over the Redis bus.
    let mut seen = String::new();
    while !seen.contains("notifications/resources/updated") {
        let chunk = tokio::time::timeout(Duration::from_secs(10), stream.chunk()).await?;
        let chunk = chunk?.ok_or("the stream ended")?;
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    println!("instance a's stream got notifications/resources/updated (note://board), caused on b");
    Ok(())
}
