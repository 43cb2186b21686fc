//! Legacy sessions and streams across three `tessera serve --http --redis`
//! processes sharing one private redis-server, behind HAProxy round-robin
//! without stickiness:
//!
//! - failover: a stream cut by `kill -9` of the instance running its tool is
//!   resumed through the balancer with `Last-Event-ID`, and every event the
//!   killed instance sent arrives exactly once, in order;
//! - restart: every instance is stopped and started again; an open session
//!   goes on (with its resource subscription) and a finished task keeps its
//!   result;
//! - fan-out: a resource update caused by a tool call on one instance reaches
//!   a `subscriptions/listen` stream on another and a legacy session's GET
//!   stream on a third, each exactly once.
//!
//! Waits are on the streams and on the processes (polled with a deadline),
//! never on a clock.

use crate::common;

use std::net::SocketAddr;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tessera_redis::redis;
use tessera_redis::testing::{Haproxy, RedisServer};

/// The bound on every wait.
const DEADLINE: Duration = Duration::from_secs(30);
const PREFIX: &str = "sessions-test:";
const LEGACY: &str = "2025-11-25";
const MODERN: &str = "2026-07-28";
const WATCHED: &str = "test://watched-resource";
const STATIC: &str = "test://static-text";

/// A `tessera serve` child process; killed when dropped.
struct Instance {
    child: Option<Child>,
    port: u16,
    id: String,
}

impl Drop for Instance {
    fn drop(&mut self) {
        self.kill();
    }
}

impl Instance {
    /// Starts the instance `id` on `port` (0: a port of its choosing) and
    /// waits (bounded) until it listens. The id is given: with port 0 the
    /// server would choose a random one, and a restart must keep it.
    async fn start(redis: &str, port: u16, id: &str) -> Instance {
        let (child, port) = common::spawn_serving(
            Command::new(env!("CARGO_BIN_EXE_tessera"))
                .args(["serve", "--http", &format!("127.0.0.1:{port}")])
                .args(["--redis", redis, "--redis-prefix", PREFIX])
                .args(["--instance-id", id])
                .args(["--allow-host", "127.0.0.1", "--allow-host", "localhost"]),
            DEADLINE,
        );
        Instance {
            child: Some(child),
            port,
            id: id.to_owned(),
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    fn addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.port))
    }

    /// `kill -9`: no shutdown at all.
    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// SIGTERM, then waits (bounded) for the graceful exit.
    async fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let sent = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(sent.success());
        let until = Instant::now() + DEADLINE;
        loop {
            if let Some(st) = child.try_wait().unwrap() {
                assert!(st.success(), "tessera serve stopped with {st}");
                return;
            }
            if Instant::now() > until {
                let _ = child.kill();
                let _ = child.wait();
                panic!("tessera serve did not stop on SIGTERM");
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// Redis, three instances and the balancer (dropped in that reverse order).
struct Cluster {
    balancer: Haproxy,
    nodes: Vec<Instance>,
    redis: RedisServer,
}

impl Cluster {
    async fn start() -> Cluster {
        let redis = RedisServer::start().expect("start redis-server");
        let mut nodes = Vec::new();
        for i in 0..3 {
            nodes.push(Instance::start(&redis.url(), 0, &format!("node-{i}")).await);
        }
        let addrs: Vec<SocketAddr> = nodes.iter().map(Instance::addr).collect();
        let balancer = Haproxy::start(&addrs).expect("start haproxy");
        Cluster {
            balancer,
            nodes,
            redis,
        }
    }

    fn lb(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.balancer.port())
    }

    fn node(&self, n: usize) -> String {
        self.nodes[n].url()
    }

    async fn redis(&self) -> redis::aio::MultiplexedConnection {
        redis::Client::open(self.redis.url())
            .unwrap()
            .get_multiplexed_async_connection()
            .await
            .expect("connect to the test's redis-server")
    }
}

/// One SSE event: its id and its data as JSON (`None`: no data, such as a
/// priming event).
struct Event {
    id: Option<String>,
    data: Option<Value>,
}

/// Reads the events of one SSE response.
struct Sse {
    response: reqwest::Response,
    buf: Vec<u8>,
}

impl Sse {
    fn new(response: reqwest::Response) -> Sse {
        assert_eq!(response.status(), 200, "an SSE stream");
        let ct = response.headers()["content-type"].to_str().unwrap();
        assert!(ct.starts_with("text/event-stream"), "{ct}");
        Sse {
            response,
            buf: Vec::new(),
        }
    }

    /// The next event, or `None` when the stream ends (or the connection is
    /// cut). Panics when nothing comes within the deadline.
    async fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(end) = self.buf.windows(2).position(|w| w == b"\n\n") {
                let block: Vec<u8> = self.buf.drain(..end + 2).collect();
                let text = String::from_utf8(block).expect("UTF-8 events");
                let mut id = None;
                let mut data: Option<String> = None;
                for line in text.lines() {
                    if let Some(v) = line.strip_prefix("id:") {
                        id = Some(v.trim().to_owned());
                    } else if let Some(v) = line.strip_prefix("data:") {
                        let v = v.strip_prefix(' ').unwrap_or(v);
                        match &mut data {
                            Some(d) => {
                                d.push('\n');
                                d.push_str(v);
                            }
                            None => data = Some(v.to_owned()),
                        }
                    }
                }
                if id.is_none() && data.is_none() {
                    continue; // a comment or a retry field alone
                }
                let data = data
                    .filter(|d| !d.is_empty())
                    .map(|d| serde_json::from_str(&d).expect("JSON data"));
                return Some(Event { id, data });
            }
            match tokio::time::timeout(DEADLINE, self.response.chunk()).await {
                Ok(Ok(Some(chunk))) => self.buf.extend(chunk.iter().filter(|b| **b != b'\r')),
                Ok(Ok(None) | Err(_)) => return None,
                Err(_) => panic!("no SSE event within {DEADLINE:?}"),
            }
        }
    }

    /// The next event carrying a message.
    async fn next_message(&mut self) -> Option<Value> {
        loop {
            if let Some(m) = self.next().await?.data {
                return Some(m);
            }
        }
    }
}

/// A client speaking 2025-11-25 (sessions) and 2026-07-28 (stateless).
struct Client {
    http: reqwest::Client,
}

impl Client {
    fn new() -> Client {
        Client {
            http: reqwest::Client::builder()
                .timeout(DEADLINE)
                .build()
                .unwrap(),
        }
    }

    fn post(&self, url: &str, sid: Option<&str>, body: &Value) -> reqwest::RequestBuilder {
        let mut b = self
            .http
            .post(url)
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

    /// Opens a session at `url`: `initialize`, then `notifications/initialized`.
    async fn open(&self, url: &str) -> String {
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "cluster-sessions", "version": "1"}
        }});
        let r = self.post(url, None, &init).send().await.unwrap();
        assert_eq!(r.status(), 200);
        let sid = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
        let v = response_of(r).await;
        assert_eq!(v["result"]["protocolVersion"], LEGACY, "{v}");
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let r = self.post(url, Some(&sid), &note).send().await.unwrap();
        assert_eq!(r.status(), 202);
        sid
    }

    /// One request in session `sid`; returns its response.
    async fn request(&self, url: &str, sid: &str, id: u64, method: &str, params: Value) -> Value {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let r = self.post(url, Some(sid), &body).send().await.unwrap();
        assert_eq!(r.status(), 200, "{method} in session {sid}");
        response_of(r).await
    }

    /// The session's GET stream at `url`, resumed after `last` if given.
    async fn get(&self, url: &str, sid: &str, last: Option<&str>) -> Sse {
        let mut b = self
            .http
            .get(url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", sid)
            .header("mcp-protocol-version", LEGACY);
        if let Some(last) = last {
            b = b.header("last-event-id", last);
        }
        // The stream stays open (each read is bounded by `Sse`).
        let r = b.timeout(Duration::from_secs(3600)).send().await.unwrap();
        Sse::new(r)
    }

    /// A 2026-07-28 request (no session); returns the response.
    fn modern(
        &self,
        url: &str,
        method: &str,
        name: Option<&str>,
        mut params: Value,
    ) -> reqwest::RequestBuilder {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {
                "extensions": {"io.modelcontextprotocol/tasks": {}}
            },
            "io.modelcontextprotocol/clientInfo": {"name": "cluster-sessions", "version": "1"}
        });
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let mut b = self
            .http
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", MODERN)
            .header("mcp-method", method)
            .body(body.to_string());
        if let Some(name) = name {
            b = b.header("mcp-name", name);
        }
        b
    }

    async fn modern_call(
        &self,
        url: &str,
        method: &str,
        name: Option<&str>,
        params: Value,
    ) -> Value {
        let r = self.modern(url, method, name, params).send().await.unwrap();
        assert_eq!(r.status(), 200, "{method}");
        response_of(r).await
    }
}

/// The JSON-RPC response in a JSON body or an SSE stream.
async fn response_of(r: reqwest::Response) -> Value {
    let json = r.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("application/json");
    if json {
        return r.json().await.unwrap();
    }
    let mut sse = Sse::new(r);
    while let Some(m) = sse.next_message().await {
        if m.get("id").is_some() && m.get("method").is_none() {
            return m;
        }
    }
    panic!("the stream ended without a response");
}

/// Calls the tool that announces an update of `uri` (2026-07-28, at `url`).
async fn touch(c: &Client, url: &str, uri: &str) {
    let name = "test_trigger_resource_update";
    let r = c
        .modern_call(
            url,
            "tools/call",
            Some(name),
            json!({"name": name, "arguments": {"uri": uri}}),
        )
        .await;
    assert_eq!(r["result"]["isError"], json!(null), "{r}");
}

/// A task as `tasks/get` reads it at `url`.
async fn task_of(c: &Client, url: &str, id: &str) -> Value {
    c.modern_call(url, "tasks/get", Some(id), json!({"taskId": id}))
        .await["result"]
        .clone()
}

/// The progress number of a `notifications/progress` message.
fn progress_of(m: &Value) -> Option<u64> {
    (m["method"] == "notifications/progress")
        .then(|| m["params"]["progress"].as_f64())
        .flatten()
        .map(|p| p as u64)
}

/// The progress numbers stored in the Redis Stream `key`, oldest first.
async fn stored_numbers(conn: &mut redis::aio::MultiplexedConnection, key: &str) -> Vec<u64> {
    let entries: Vec<(String, Vec<String>)> = redis::cmd("XRANGE")
        .arg(key)
        .arg("-")
        .arg("+")
        .query_async(conn)
        .await
        .unwrap();
    entries
        .iter()
        .filter_map(|(_, fields)| fields.get(1))
        .filter_map(|d| serde_json::from_str::<Value>(d).ok())
        .filter_map(|m| progress_of(&m))
        .collect()
}

/// Waits until the Redis Stream `key` holds the progress notification
/// numbered `n` or a later one: blocks on the stream itself (`XREAD BLOCK`,
/// woken by each entry appended), never on a clock, and panics when nothing
/// gets there within the deadline.
async fn wait_stored(conn: &mut redis::aio::MultiplexedConnection, key: &str, n: u64) {
    type Entries = Vec<(String, Vec<String>)>;
    let until = Instant::now() + DEADLINE;
    let mut after = "0-0".to_owned();
    loop {
        let left = until.saturating_duration_since(Instant::now());
        assert!(!left.is_zero(), "instance 1 stopped counting before {n}");
        let read: Option<Vec<(String, Entries)>> = redis::cmd("XREAD")
            .arg("BLOCK")
            .arg(left.as_millis().max(1) as u64)
            .arg("STREAMS")
            .arg(key)
            .arg(&after)
            .query_async(conn)
            .await
            .unwrap();
        for (_, entries) in read.unwrap_or_default() {
            for (id, fields) in entries {
                let newest = fields
                    .get(1)
                    .and_then(|d| serde_json::from_str::<Value>(d).ok())
                    .and_then(|m| progress_of(&m));
                if newest.is_some_and(|p| p >= n) {
                    return;
                }
                after = id;
            }
        }
    }
}

/// What a client received of a stream of numbered progress notifications.
#[derive(Default)]
struct Tally {
    numbers: Vec<u64>,
    last_id: Option<String>,
    response: bool,
}

impl Tally {
    fn take(&mut self, e: Event) {
        if let Some(id) = e.id {
            self.last_id = Some(id);
        }
        let Some(m) = e.data else { return };
        if let Some(n) = progress_of(&m) {
            self.numbers.push(n);
        } else if m.get("id").is_some() {
            self.response = true;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_cut_by_kill_9_resumes_through_the_balancer_exactly_once() {
    const TOTAL: u64 = 1_000;
    const CUT_AFTER: usize = 400;
    // Well within the 256 events a stream keeps in Redis: the wait below
    // wakes on the entry that gets there, and at 2 ms an event the kill has
    // about 300 ms before the client's resume point is trimmed away.
    const LAG: u64 = 100;
    let mut cluster = Cluster::start().await;
    let c = Client::new();
    let lb = cluster.lb();
    let sid = c.open(&lb).await;

    // Instance 1 runs the tool; its events go to Redis as they are sent.
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "count", "arguments": {"to": TOTAL, "intervalMs": 2},
        "_meta": {"progressToken": "count"}}});
    let r = c
        .post(&cluster.node(0), Some(&sid), &call)
        .send()
        .await
        .unwrap();
    let mut sse = Sse::new(r);
    let mut tally = Tally::default();
    while tally.numbers.len() < CUT_AFTER {
        let e = sse.next().await.expect("the stream goes on until the kill");
        tally.take(e);
    }
    // The client falls behind: it reads nothing more until instance 1 has
    // stored (and sent) LAG events it has not read. Then instance 1 dies,
    // and the connection with what was in flight is gone with it.
    let stream = tally.last_id.clone().expect("events have ids");
    let stream = stream.split('-').next().unwrap().to_owned();
    let key = format!("{PREFIX}ev:{sid}:{stream}");
    let mut conn = cluster.redis().await;
    wait_stored(&mut conn, &key, CUT_AFTER as u64 + LAG).await;
    cluster.nodes[0].kill();
    drop(sse);
    let before = tally.numbers.len();
    let last = tally.last_id.clone().expect("events have ids");

    // The client comes back through the balancer (instance 1 is gone).
    let mut resumed = c.get(&lb, &sid, Some(&last)).await;
    while let Some(e) = resumed.next().await {
        tally.take(e);
    }
    assert!(
        !tally.response,
        "the instance running the call died before answering"
    );

    // What instance 1 sent: the events of that stream it stored in Redis.
    let stored = stored_numbers(&mut conn, &key).await;
    let sent = *stored.last().expect("the stream is stored");
    assert!(
        stored.windows(2).all(|w| w[1] == w[0] + 1),
        "stored events are consecutive"
    );

    let mut seen = std::collections::BTreeSet::new();
    let duplicated = tally.numbers.iter().filter(|n| !seen.insert(**n)).count();
    let lost = (1..=sent).filter(|n| !seen.contains(n)).count();
    let received = tally.numbers.len();
    println!(
        "failover: sent {sent} (of {TOTAL} before kill -9), received {received} \
         ({before} before the cut, {} after resuming through the balancer), \
         duplicated {duplicated}, lost {lost}",
        received - before
    );
    assert!(
        sent >= CUT_AFTER as u64 && sent < TOTAL,
        "cut mid-stream: {sent}"
    );
    assert_eq!((duplicated, lost), (0, 0));
    let expected: Vec<u64> = (1..=sent).collect();
    assert_eq!(tally.numbers, expected, "every event once, in order");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_and_finished_tasks_outlive_a_restart_of_every_instance() {
    let mut cluster = Cluster::start().await;
    let c = Client::new();
    let lb = cluster.lb();
    let sid = c.open(&lb).await;
    let r = c
        .request(&lb, &sid, 2, "resources/subscribe", json!({"uri": WATCHED}))
        .await;
    assert_eq!(r["result"], json!({}), "{r}");

    // A task that finishes before the restart.
    let r = c
        .modern_call(
            &lb,
            "tools/call",
            Some("sleep"),
            json!({"name": "sleep", "arguments": {"ms": 10}}),
        )
        .await;
    assert_eq!(r["result"]["resultType"], "task", "{r}");
    let task = r["result"]["taskId"].as_str().unwrap().to_owned();
    let until = Instant::now() + DEADLINE;
    while task_of(&c, &lb, &task).await["status"] != "completed" {
        assert!(Instant::now() < until, "the task did not finish");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // Every instance stops; all come back on their addresses.
    for node in &mut cluster.nodes {
        node.stop().await;
    }
    let redis_url = cluster.redis.url();
    for node in &mut cluster.nodes {
        *node = Instance::start(&redis_url, node.port, &node.id).await;
    }
    // The balancer notices them (health checks every 500 ms).
    let echo = json!({"name": "echo", "arguments": {"text": "still here"}});
    let until = Instant::now() + DEADLINE;
    let body = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": echo});
    let r = loop {
        let r = c.post(&lb, Some(&sid), &body).send().await.unwrap();
        if r.status() != 503 {
            break r;
        }
        assert!(Instant::now() < until, "the balancer has no instance back");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(r.status(), 200, "the session goes on after the restart");
    let r = response_of(r).await;
    assert_eq!(r["result"]["content"][0]["text"], "still here", "{r}");
    // On every instance.
    for n in 0..3 {
        let r = c
            .request(&cluster.node(n), &sid, 10 + n as u64, "ping", json!({}))
            .await;
        assert_eq!(r["result"], json!({}), "instance {n}: {r}");
    }

    // Its subscription too: an update announced anywhere reaches its stream.
    let mut stream = c.get(&cluster.node(1), &sid, None).await;
    touch(&c, &cluster.node(2), WATCHED).await;
    let m = stream.next_message().await.expect("the update");
    assert_eq!(m["method"], "notifications/resources/updated", "{m}");
    assert_eq!(m["params"]["uri"], WATCHED);

    // The finished task kept its result.
    let t = task_of(&c, &lb, &task).await;
    assert_eq!(t["status"], "completed", "{t}");
    assert_eq!(t["result"]["content"][0]["text"], "slept 10 ms", "{t}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_update_caused_on_one_instance_reaches_streams_on_the_others_once() {
    let cluster = Cluster::start().await;
    let c = Client::new();

    // A 2026-07-28 listener on instance 1.
    let listen = c
        .modern(
            &cluster.node(0),
            "subscriptions/listen",
            None,
            json!({"notifications": {"resourceSubscriptions": [WATCHED, STATIC]}}),
        )
        .timeout(Duration::from_secs(3600))
        .send()
        .await
        .unwrap();
    let mut listening = Sse::new(listen);
    let ack = listening.next_message().await.expect("acknowledged");
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );

    // A legacy session subscribed through instance 1, its stream on instance 3.
    let sid = c.open(&cluster.node(2)).await;
    for (i, uri) in [WATCHED, STATIC].into_iter().enumerate() {
        let r = c
            .request(
                &cluster.node(0),
                &sid,
                2 + i as u64,
                "resources/subscribe",
                json!({"uri": uri}),
            )
            .await;
        assert_eq!(r["result"], json!({}), "{r}");
    }
    let mut stream = c.get(&cluster.node(2), &sid, None).await;

    // Updates caused on instance 2: each stream hears each once, in order.
    let order = [STATIC, WATCHED, STATIC];
    for uri in order {
        touch(&c, &cluster.node(1), uri).await;
    }
    for (name, s) in [("listen", &mut listening), ("session", &mut stream)] {
        let mut heard = Vec::new();
        while heard.len() < order.len() {
            let m = s.next_message().await.expect("an update");
            assert_eq!(
                m["method"], "notifications/resources/updated",
                "{name}: {m}"
            );
            heard.push(m["params"]["uri"].as_str().unwrap().to_owned());
        }
        assert_eq!(heard, order, "{name}: each update exactly once, in order");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sessions_task_is_its_own_on_every_instance() {
    let cluster = Cluster::start().await;
    let c = Client::new();
    let sid = c.open(&cluster.node(0)).await;
    let other = c.open(&cluster.node(1)).await;

    // A 2025-11-25 task-augmented call on instance 1.
    let r = c
        .request(
            &cluster.node(0),
            &sid,
            2,
            "tools/call",
            json!({"name": "sleep", "arguments": {"ms": 60000}, "task": {"ttl": 120000}}),
        )
        .await;
    let task = r["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {r}"))
        .to_owned();

    // The session reads it on instance 2; another session does not see it.
    let r = c
        .request(
            &cluster.node(1),
            &sid,
            3,
            "tasks/get",
            json!({"taskId": task}),
        )
        .await;
    assert_eq!(r["result"]["status"], "working", "{r}");
    let r = c
        .request(
            &cluster.node(1),
            &other,
            2,
            "tasks/get",
            json!({"taskId": task}),
        )
        .await;
    assert!(
        r.get("error").is_some(),
        "another session reads the task: {r}"
    );
    let r = c
        .request(&cluster.node(1), &other, 3, "tasks/list", json!({}))
        .await;
    assert_eq!(r["result"]["tasks"], json!([]), "{r}");

    // And cancels it on instance 3.
    let r = c
        .request(
            &cluster.node(2),
            &sid,
            4,
            "tasks/cancel",
            json!({"taskId": task}),
        )
        .await;
    assert_eq!(r["result"]["status"], "cancelled", "{r}");
    let r = c
        .request(
            &cluster.node(0),
            &sid,
            5,
            "tasks/get",
            json!({"taskId": task}),
        )
        .await;
    assert_eq!(r["result"]["status"], "cancelled", "{r}");
}
