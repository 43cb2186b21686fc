//! Tasks on the server, both designs: 2025-11-25 task-augmented calls and
//! the 2026-07-28 Tasks extension. Handlers wait on explicit gates; time
//! only moves on tokio's paused clock.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tessera_server::task::{MemoryTaskStore, TaskSettings, TaskStart};
use tessera_server::{Args, RequestContext, Server, State, tool};
use tessera_testkit::pair::serve_raw;
use tessera_types::ElicitRequestParams;
use tessera_types::tool::TaskSupport;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::Semaphore;

/// Permits the `gated` tool waits for: the test decides when it finishes.
struct Gate(Semaphore);

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Label {
    label: String,
}

async fn gated(State(g): State<Gate>, Args(a): Args<Label>) -> String {
    // Each permit lets one call through, once.
    g.0.acquire().await.expect("gate open").forget();
    format!("done {}", a.label)
}

fn form(message: &str, prop: &str) -> ElicitRequestParams {
    serde_json::from_value(json!({
        "message": message,
        "requestedSchema": {"type": "object", "properties": {prop: {"type": "string"}}, "required": [prop]}
    }))
    .unwrap()
}

fn field(r: &tessera_types::ElicitResult, prop: &str) -> String {
    serde_json::to_value(r).unwrap()["content"][prop]
        .as_str()
        .unwrap_or("?")
        .to_owned()
}

async fn two_names(ctx: RequestContext) -> Result<String, String> {
    let (a, b) = tokio::join!(
        ctx.elicit_with(form("A?", "name")),
        ctx.elicit_with(form("B?", "name"))
    );
    let (a, b) = (a.map_err(|e| e.to_string())?, b.map_err(|e| e.to_string())?);
    Ok(format!("{} and {}", field(&a, "name"), field(&b, "name")))
}

async fn ask_then_work(State(g): State<Gate>, ctx: RequestContext) -> Result<String, String> {
    let r = ctx
        .elicit_as("user_name", form("Name?", "name"))
        .await
        .map_err(|e| e.to_string())?;
    g.0.acquire().await.map_err(|e| e.to_string())?.forget();
    Ok(format!("Hello, {}", field(&r, "name")))
}

async fn plain() -> &'static str {
    "plain"
}

async fn task_aware(ctx: RequestContext) -> String {
    format!("task={}", ctx.task_id().unwrap_or("none"))
}

fn server_with(settings: TaskSettings) -> (Server<Gate>, Arc<Server<Gate>>) {
    let s = Server::with_state(Gate(Semaphore::new(0)))
        .page_size(2)
        .task_settings(settings)
        .tool(
            tool("gated")
                .task_support(TaskSupport::Optional)
                .handler(gated),
        )
        .tool(
            tool("must_task")
                .task_support(TaskSupport::Required)
                .handler(gated),
        )
        .tool(tool("plain").handler(plain))
        .tool(
            tool("two_names")
                .task_support(TaskSupport::Optional)
                .handler(two_names),
        )
        .tool(
            tool("ask_then_work")
                .task_support(TaskSupport::Required)
                .task_start(TaskStart::AfterInput)
                .handler(ask_then_work),
        )
        .tool(
            tool("task_aware")
                .task_support(TaskSupport::Optional)
                .handler(task_aware),
        )
        .build()
        .unwrap();
    (s.clone(), Arc::new(s))
}

fn server() -> Server<Gate> {
    server_with(TaskSettings::default()).0
}

fn open_gate(s: &Server<Gate>, n: usize) {
    s.state().0.add_permits(n);
}

/// A raw line peer over an in-memory pipe, keeping notifications aside.
struct Wire {
    write: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    read: BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>,
    notes: Vec<Value>,
    next: i64,
}

impl Wire {
    fn start(server: Server<Gate>) -> Wire {
        let (read, write) = serve_raw(&server, 1 << 20);
        Wire {
            write,
            read: BufReader::new(read),
            notes: Vec::new(),
            next: 100,
        }
    }

    async fn send(&mut self, v: Value) {
        let mut line = serde_json::to_vec(&v).unwrap();
        line.push(b'\n');
        self.write.write_all(&line).await.unwrap();
    }

    async fn line(&mut self) -> Value {
        let mut line = String::new();
        tokio::time::timeout(Duration::from_secs(30), self.read.read_line(&mut line))
            .await
            .expect("a message in time")
            .unwrap();
        serde_json::from_str(&line).unwrap()
    }

    /// The response to request `id`; notifications are kept, requests from
    /// the server are answered by `answer`.
    async fn response(&mut self, id: i64) -> Value {
        loop {
            let m = self.line().await;
            if m.get("id") == Some(&json!(id)) && m.get("method").is_none() {
                return m;
            }
            if m.get("method").is_some() && m.get("id").is_none() {
                self.notes.push(m);
                continue;
            }
            panic!("unexpected message {m}");
        }
    }

    async fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        self.response(id).await
    }

    async fn legacy(server: Server<Gate>) -> Wire {
        let mut w = Wire::start(server);
        let r = w
            .call(
                "initialize",
                json!({"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
                       "clientInfo": {"name": "t", "version": "1"}}),
            )
            .await;
        assert_eq!(r["result"]["protocolVersion"], "2025-11-25", "{r}");
        w.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        w
    }
}

/// An empty acknowledgement: `resultType: "complete"` and no task members.
fn assert_ack(r: &Value) {
    assert_eq!(r["result"]["resultType"], "complete", "{r}");
    for k in ["taskId", "status", "result", "error", "inputRequests"] {
        assert!(r["result"].get(k).is_none(), "{k} in an ack: {r}");
    }
}

fn meta(ext: bool, client: &str) -> Value {
    let mut caps = json!({"elicitation": {}});
    if ext {
        caps["extensions"] = json!({"io.modelcontextprotocol/tasks": {}});
    }
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": caps,
        "io.modelcontextprotocol/clientInfo": {"name": client, "version": "1"}
    })
}

fn modern(mut params: Value, ext: bool) -> Value {
    params["_meta"] = meta(ext, "alpha");
    params
}

/// Polls `tasks/get` (2026-07-28) until the status is one of `want`; the
/// paused clock makes each pause instant and ordered after pending work.
async fn wait_modern(w: &mut Wire, id: &str, want: &[&str]) -> Value {
    for _ in 0..200 {
        let r = w
            .call("tasks/get", modern(json!({"taskId": id}), true))
            .await;
        if want.contains(&r["result"]["status"].as_str().unwrap_or("")) {
            return r["result"].clone();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("task {id} never reached {want:?}");
}

async fn wait_legacy(w: &mut Wire, id: &str, want: &[&str]) -> Value {
    for _ in 0..200 {
        let r = w.call("tasks/get", json!({"taskId": id})).await;
        if want.contains(&r["result"]["status"].as_str().unwrap_or("")) {
            return r["result"].clone();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("task {id} never reached {want:?}");
}

#[tokio::test(start_paused = true)]
async fn extension_task_lifecycle() {
    let s = server();
    let mut w = Wire::start(s.clone());
    let r = w
        .call(
            "tools/call",
            modern(json!({"name": "gated", "arguments": {"label": "x"}}), true),
        )
        .await;
    let c = &r["result"];
    assert_eq!(c["resultType"], "task", "{r}");
    assert_eq!(c["status"], "working");
    assert!(c.get("task").is_none() && c.get("requestState").is_none());
    assert!(c["ttlMs"].as_u64().unwrap() > 0);
    assert!(c["pollIntervalMs"].as_u64().unwrap() > 0);
    let id = c["taskId"].as_str().unwrap().to_owned();
    // Durable create: readable at once.
    let g = w
        .call("tasks/get", modern(json!({"taskId": id}), true))
        .await;
    assert_eq!(g["result"]["status"], "working", "{g}");
    assert_eq!(g["result"]["resultType"], "complete");
    assert!(g["result"].get("result").is_none());
    open_gate(&s, 1);
    let done = wait_modern(&mut w, &id, &["completed"]).await;
    assert_eq!(done["result"]["content"][0]["text"], "done x", "{done}");
    // The inline result is a complete 2026-07-28 CallToolResult: the base
    // schema requires `resultType` (ext-tasks 0.2.2 rejects it otherwise).
    assert_eq!(done["result"]["resultType"], "complete", "{done}");
    assert!(
        done["result"]["_meta"]
            .get("io.modelcontextprotocol/related-task")
            .is_none()
    );
    // Cancelling a finished task is acknowledged and changes nothing.
    let c = w
        .call("tasks/cancel", modern(json!({"taskId": id}), true))
        .await;
    assert_ack(&c);
    let again = wait_modern(&mut w, &id, &["completed"]).await;
    assert_eq!(again["status"], "completed");
    // Unknown ids are invalid params.
    let u = w
        .call("tasks/get", modern(json!({"taskId": "nope"}), true))
        .await;
    assert_eq!(u["error"]["code"], -32602, "{u}");
}

#[tokio::test(start_paused = true)]
async fn extension_gating() {
    let s = server();
    let mut w = Wire::start(s.clone());
    // No extension: an optional tool runs inline.
    open_gate(&s, 1);
    let r = w
        .call(
            "tools/call",
            modern(json!({"name": "gated", "arguments": {"label": "y"}}), false),
        )
        .await;
    assert_eq!(r["result"]["resultType"], "complete", "{r}");
    assert_eq!(r["result"]["content"][0]["text"], "done y");
    // A required tool cannot answer without a task.
    let r = w
        .call(
            "tools/call",
            modern(
                json!({"name": "must_task", "arguments": {"label": "z"}}),
                false,
            ),
        )
        .await;
    assert_eq!(r["error"]["code"], -32021, "{r}");
    assert!(
        r["error"]["data"]["requiredCapabilities"]["extensions"]
            .get("io.modelcontextprotocol/tasks")
            .is_some()
    );
    for m in ["tasks/get", "tasks/cancel"] {
        let r = w.call(m, modern(json!({"taskId": "t"}), false)).await;
        assert_eq!(r["error"]["code"], -32021, "{m}: {r}");
    }
    for m in ["tasks/result", "tasks/list"] {
        let r = w.call(m, modern(json!({"taskId": "t"}), true)).await;
        assert_eq!(r["error"]["code"], -32601, "{m}: {r}");
    }
    // A sync-only tool is never a task, with or without a legacy hint.
    let r = w
        .call(
            "tools/call",
            modern(json!({"name": "plain", "task": {"ttl": 1000}}), true),
        )
        .await;
    assert_eq!(r["result"]["content"][0]["text"], "plain", "{r}");
    // Discovery shows the extension, never the 2025-11-25 slot; tools carry no execution.
    let d = w
        .call("server/discover", json!({"_meta": meta(true, "alpha")}))
        .await;
    let caps = &d["result"]["capabilities"];
    assert!(
        caps["extensions"]
            .get("io.modelcontextprotocol/tasks")
            .is_some(),
        "{d}"
    );
    assert!(caps.get("tasks").is_none());
    let l = w.call("tools/list", modern(json!({}), true)).await;
    assert!(l["result"]["tools"][0].get("execution").is_none(), "{l}");
}

#[tokio::test(start_paused = true)]
async fn extension_input_and_partial_update() {
    let mut w = Wire::start(server());
    let r = w
        .call(
            "tools/call",
            modern(json!({"name": "two_names", "arguments": {}}), true),
        )
        .await;
    let id = r["result"]["taskId"].as_str().unwrap().to_owned();
    let t = wait_modern(&mut w, &id, &["input_required"]).await;
    let keys: Vec<String> = t["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(keys.len(), 2, "{t}");
    assert_eq!(t["inputRequests"][&keys[0]]["method"], "elicitation/create");
    // One answer (and one for a key never asked, which is ignored).
    let u = w
        .call(
            "tasks/update",
            modern(
                json!({"taskId": id, "inputResponses": {
                    keys[0].clone(): {"action": "accept", "content": {"name": "Ada"}},
                    "never-asked": {"action": "accept"}
                }}),
                true,
            ),
        )
        .await;
    assert_ack(&u);
    let t = w
        .call("tasks/get", modern(json!({"taskId": id}), true))
        .await;
    assert_eq!(t["result"]["status"], "input_required");
    let left: Vec<&String> = t["result"]["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(left, vec![&keys[1]], "only the unanswered key is left");
    w.call(
        "tasks/update",
        modern(
            json!({"taskId": id, "inputResponses": {keys[1].clone(): {"action": "accept", "content": {"name": "Lin"}}}}),
            true,
        ),
    )
    .await;
    let done = wait_modern(&mut w, &id, &["completed"]).await;
    assert_eq!(
        done["result"]["content"][0]["text"], "Ada and Lin",
        "{done}"
    );
    assert!(done.get("inputRequests").is_none());
}

#[tokio::test(start_paused = true)]
async fn multi_round_trip_then_task() {
    let s = server();
    let mut w = Wire::start(s.clone());
    let r1 = w
        .call(
            "tools/call",
            modern(json!({"name": "ask_then_work", "arguments": {}}), true),
        )
        .await;
    assert_eq!(r1["result"]["resultType"], "input_required", "{r1}");
    assert!(r1["result"].get("taskId").is_none());
    let state = r1["result"]["requestState"].clone();
    let r2 = w
        .call(
            "tools/call",
            modern(
                json!({"name": "ask_then_work", "arguments": {},
                       "inputResponses": {"user_name": {"action": "accept", "content": {"name": "Alice"}}},
                       "requestState": state}),
                true,
            ),
        )
        .await;
    assert_eq!(r2["result"]["resultType"], "task", "{r2}");
    assert!(r2["result"].get("requestState").is_none());
    let id = r2["result"]["taskId"].as_str().unwrap().to_owned();
    assert_eq!(
        wait_modern(&mut w, &id, &["working"]).await["status"],
        "working"
    );
    open_gate(&s, 1);
    let done = wait_modern(&mut w, &id, &["completed"]).await;
    assert_eq!(
        done["result"]["content"][0]["text"], "Hello, Alice",
        "{done}"
    );
}

#[tokio::test(start_paused = true)]
async fn cancellation_stops_the_handler_and_wins_races() {
    let s = server();
    let mut w = Wire::start(s.clone());
    let r = w
        .call(
            "tools/call",
            modern(json!({"name": "gated", "arguments": {"label": "c"}}), true),
        )
        .await;
    let id = r["result"]["taskId"].as_str().unwrap().to_owned();
    let c = w
        .call("tasks/cancel", modern(json!({"taskId": id}), true))
        .await;
    assert_ack(&c);
    assert_eq!(
        wait_modern(&mut w, &id, &["cancelled"]).await["status"],
        "cancelled"
    );
    // The handler was dropped: the permit it would take is still there after
    // opening the gate once, and the task stays cancelled.
    open_gate(&s, 1);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(s.state().0.available_permits(), 1);
    assert_eq!(
        wait_modern(&mut w, &id, &["cancelled"]).await["status"],
        "cancelled"
    );
    // Race: the handler is released and cancelled in the same instant; the
    // task ends in exactly one terminal state and keeps it.
    for round in 0..5 {
        let r = w
            .call(
                "tools/call",
                modern(
                    json!({"name": "gated", "arguments": {"label": format!("r{round}")}}),
                    true,
                ),
            )
            .await;
        let id = r["result"]["taskId"].as_str().unwrap().to_owned();
        s.state().0.add_permits(1);
        let c = w
            .call("tasks/cancel", modern(json!({"taskId": id}), true))
            .await;
        assert_eq!(c["result"]["resultType"], "complete");
        let first = wait_modern(&mut w, &id, &["completed", "cancelled"]).await;
        tokio::time::sleep(Duration::from_secs(1)).await;
        let later = wait_modern(&mut w, &id, &["completed", "cancelled"]).await;
        assert_eq!(
            first["status"], later["status"],
            "a terminal status never changes"
        );
        if first["status"] == "cancelled" {
            assert!(first.get("result").is_none());
        }
        // Drain a permit the cancelled handler did not take.
        while s.state().0.available_permits() > 0 {
            s.state().0.acquire().await.unwrap().forget();
        }
    }
}

#[tokio::test(start_paused = true)]
async fn legacy_task_augmented_call() {
    let s = server();
    let mut w = Wire::legacy(s.clone()).await;
    let l = w.call("tools/list", json!({})).await;
    let gated = l["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "gated")
        .cloned();
    let init_caps = {
        let mut v = Wire::start(s.clone());
        v.call("initialize", json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}))
            .await["result"]["capabilities"]
            .clone()
    };
    assert!(
        init_caps["tasks"]["requests"]["tools"]
            .get("call")
            .is_some(),
        "{init_caps}"
    );
    assert!(init_caps["tasks"].get("list").is_some() && init_caps["tasks"].get("cancel").is_some());
    // page size 2: gated is on the first page.
    assert_eq!(
        gated.expect("gated listed")["execution"]["taskSupport"],
        "optional"
    );
    // Required without task, forbidden with task: -32601.
    let r = w
        .call(
            "tools/call",
            json!({"name": "must_task", "arguments": {"label": "a"}}),
        )
        .await;
    assert_eq!(r["error"]["code"], -32601, "{r}");
    let r = w
        .call("tools/call", json!({"name": "plain", "task": {}}))
        .await;
    assert_eq!(r["error"]["code"], -32601, "{r}");
    // A task: created at once with the asked ttl.
    let r = w
        .call(
            "tools/call",
            json!({"name": "gated", "arguments": {"label": "L"}, "task": {"ttl": 60000},
                                   "_meta": {"progressToken": "p1"}}),
        )
        .await;
    let t = &r["result"]["task"];
    assert_eq!(t["status"], "working", "{r}");
    assert_eq!(t["ttl"], 60000);
    assert!(t.get("ttlMs").is_none());
    let id = t["taskId"].as_str().unwrap().to_owned();
    // tasks/result waits for the end.
    w.next += 1;
    let result_id = w.next;
    w.send(json!({"jsonrpc": "2.0", "id": result_id, "method": "tasks/result", "params": {"taskId": id}}))
        .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    open_gate(&s, 1);
    let res = w.response(result_id).await;
    assert_eq!(res["result"]["content"][0]["text"], "done L", "{res}");
    assert_eq!(
        res["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        id.as_str()
    );
    // The status change was announced.
    let statuses: Vec<&str> = w
        .notes
        .iter()
        .filter(|n| {
            n["method"] == "notifications/tasks/status" && n["params"]["taskId"] == id.as_str()
        })
        .map(|n| n["params"]["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses.last(), Some(&"completed"), "{:?}", w.notes);
    // A terminal task cannot be cancelled (2025-11-25).
    let c = w.call("tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(c["error"]["code"], -32602, "{c}");
    // A running one can; the answer is the task, now cancelled.
    let r = w
        .call(
            "tools/call",
            json!({"name": "gated", "arguments": {"label": "M"}, "task": {}}),
        )
        .await;
    let id2 = r["result"]["task"]["taskId"].as_str().unwrap().to_owned();
    let c = w.call("tasks/cancel", json!({"taskId": id2})).await;
    assert_eq!(c["result"]["status"], "cancelled", "{c}");
    assert_eq!(
        wait_legacy(&mut w, &id2, &["cancelled"]).await["status"],
        "cancelled"
    );
    // The handler knows its task.
    let r = w
        .call("tools/call", json!({"name": "task_aware", "task": {}}))
        .await;
    let id3 = r["result"]["task"]["taskId"].as_str().unwrap().to_owned();
    let res = w.call("tasks/result", json!({"taskId": id3})).await;
    assert_eq!(res["result"]["content"][0]["text"], format!("task={id3}"));
    // tasks/list pages (page size 2) over this session's three tasks.
    let mut seen = Vec::new();
    let mut cursor: Option<Value> = None;
    for _ in 0..5 {
        let p = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let page = w.call("tasks/list", p).await;
        for t in page["result"]["tasks"].as_array().unwrap() {
            seen.push(t["taskId"].as_str().unwrap().to_owned());
        }
        cursor = page["result"].get("nextCursor").cloned();
        if cursor.is_none() {
            break;
        }
    }
    seen.sort();
    let mut want = vec![id, id2, id3];
    want.sort();
    assert_eq!(seen, want);
}

#[tokio::test(start_paused = true)]
async fn tasks_are_isolated_between_sessions_and_clients() {
    let s = server();
    let mut a = Wire::legacy(s.clone()).await;
    let mut b = Wire::legacy(s.clone()).await;
    let r = a
        .call(
            "tools/call",
            json!({"name": "gated", "arguments": {"label": "A"}, "task": {}}),
        )
        .await;
    let id = r["result"]["task"]["taskId"].as_str().unwrap().to_owned();
    for m in ["tasks/get", "tasks/result", "tasks/cancel"] {
        let r = b.call(m, json!({"taskId": id})).await;
        assert_eq!(r["error"]["code"], -32602, "{m} from another session: {r}");
    }
    let l = b.call("tasks/list", json!({})).await;
    assert_eq!(l["result"]["tasks"], json!([]));
    assert_eq!(
        a.call("tasks/get", json!({"taskId": id})).await["result"]["status"],
        "working"
    );
    // 2026-07-28: another client is told the task does not exist.
    let mut m = Wire::start(s.clone());
    let r = m
        .call(
            "tools/call",
            modern(json!({"name": "gated", "arguments": {"label": "M"}}), true),
        )
        .await;
    let mid = r["result"]["taskId"].as_str().unwrap().to_owned();
    let mut other = json!({"taskId": mid});
    other["_meta"] = meta(true, "beta");
    let r = m.call("tasks/get", other.clone()).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let r = m.call("tasks/cancel", other).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(
        wait_modern(&mut m, &mid, &["working"]).await["status"],
        "working"
    );
    // Nor can a legacy session read it.
    let r = a.call("tasks/get", json!({"taskId": mid})).await;
    assert_eq!(r["error"]["code"], -32602);
}

#[tokio::test(start_paused = true)]
async fn results_are_kept_until_ttl_then_gone() {
    let settings = TaskSettings {
        store: Arc::new(MemoryTaskStore::new()),
        sweep_every: Duration::from_secs(1),
        ..TaskSettings::default()
    };
    let (s, _) = server_with(settings);
    let mut w = Wire::legacy(s.clone()).await;
    open_gate(&s, 1);
    let r = w
        .call(
            "tools/call",
            json!({"name": "gated", "arguments": {"label": "T"}, "task": {"ttl": 5000}}),
        )
        .await;
    let id = r["result"]["task"]["taskId"].as_str().unwrap().to_owned();
    let done = wait_legacy(&mut w, &id, &["completed"]).await;
    assert_eq!(done["ttl"], 5000);
    // Just before the end of its lifetime the result is there...
    tokio::time::sleep(Duration::from_millis(4000)).await;
    let res = w.call("tasks/result", json!({"taskId": id})).await;
    assert_eq!(res["result"]["content"][0]["text"], "done T", "{res}");
    // ...and after it, the task is gone everywhere.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    for m in ["tasks/get", "tasks/result", "tasks/cancel"] {
        let r = w.call(m, json!({"taskId": id})).await;
        assert_eq!(r["error"]["code"], -32602, "{m} after expiry: {r}");
    }
    assert_eq!(
        w.call("tasks/list", json!({})).await["result"]["tasks"],
        json!([])
    );
}

#[tokio::test(start_paused = true)]
async fn listen_streams_task_status_notifications() {
    let s = server();
    let mut w = Wire::start(s.clone());
    let r = w
        .call(
            "tools/call",
            modern(json!({"name": "gated", "arguments": {"label": "N"}}), true),
        )
        .await;
    let id = r["result"]["taskId"].as_str().unwrap().to_owned();
    // Without the extension, asking for task notifications is refused.
    let r = w
        .call(
            "subscriptions/listen",
            modern(json!({"notifications": {"taskIds": [id]}}), false),
        )
        .await;
    assert_eq!(r["error"]["code"], -32021, "{r}");
    w.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
                  "params": modern(json!({"notifications": {"taskIds": [id]}}), true)}),
    )
    .await;
    let ack = w.line().await;
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    assert_eq!(ack["params"]["notifications"]["taskIds"], json!([id]));
    open_gate(&s, 1);
    let n = w.line().await;
    assert_eq!(n["method"], "notifications/tasks", "{n}");
    assert_eq!(n["params"]["taskId"], id.as_str());
    assert_eq!(n["params"]["status"], "completed");
    assert_eq!(n["params"]["result"]["content"][0]["text"], "done N");
}

/// The members of a JSON object, sorted.
fn members(v: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = v
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    keys.sort_unstable();
    keys
}

/// A call that becomes a task is answered with its `CreateTaskResult`
/// written straight to JSON text (a layer that does not read it sees text),
/// in both designs, with the members each design names.
#[tokio::test(start_paused = true)]
async fn task_creation_results_leave_the_stack_as_text() {
    use std::sync::Mutex;
    use tessera_runtime::middleware::{Next, from_fn};
    use tessera_runtime::{Reply, Request};

    let kinds: Arc<Mutex<Vec<bool>>> = Arc::default();
    let seen = kinds.clone();
    let look = from_fn(move |request: Request, next: Next| {
        let seen = seen.clone();
        async move {
            let call = request.method == "tools/call";
            let reply = next.run(request).await?;
            if call {
                seen.lock().unwrap().push(matches!(reply, Reply::Raw(_)));
            }
            Ok(reply)
        }
    });
    let s = Server::with_state(Gate(Semaphore::new(0)))
        .layer(look)
        .tool(
            tool("gated")
                .task_support(TaskSupport::Optional)
                .handler(gated),
        )
        .tool(
            tool("ask_then_work")
                .task_support(TaskSupport::Required)
                .task_start(TaskStart::AfterInput)
                .handler(ask_then_work),
        )
        .build()
        .unwrap();

    // 2026-07-28, created before the handler runs: flat, `resultType: "task"`
    // (`_meta` is the engine's `serverInfo`).
    let mut w = Wire::start(s.clone());
    let r = w
        .call(
            "tools/call",
            modern(json!({"name": "gated", "arguments": {"label": "m"}}), true),
        )
        .await;
    let c = &r["result"];
    assert_eq!(
        members(c),
        [
            "_meta",
            "createdAt",
            "lastUpdatedAt",
            "pollIntervalMs",
            "resultType",
            "status",
            "taskId",
            "ttlMs"
        ],
        "{r}"
    );
    assert_eq!(c["resultType"], "task");
    assert_eq!(c["status"], "working");
    let id = c["taskId"].as_str().unwrap().to_owned();
    let got = w
        .call("tasks/get", modern(json!({"taskId": id}), true))
        .await;
    for k in ["createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"] {
        assert_eq!(got["result"][k], c[k], "{k}: {got}");
    }

    // 2026-07-28, created after an input round, once the handler waits.
    let r = w
        .call(
            "tools/call",
            modern(json!({"name": "ask_then_work", "arguments": {}}), true),
        )
        .await;
    assert_eq!(r["result"]["resultType"], "input_required", "{r}");
    let r = w
        .call(
            "tools/call",
            modern(
                json!({"name": "ask_then_work", "arguments": {},
                       "inputResponses": {"user_name": {"action": "accept", "content": {"name": "Al"}}},
                       "requestState": r["result"]["requestState"]}),
                true,
            ),
        )
        .await;
    assert_eq!(members(&r["result"]), members(c), "{r}");
    assert_eq!(r["result"]["resultType"], "task");

    // 2025-11-25, task-augmented: `{task}` with the asked ttl.
    let mut w = Wire::legacy(s.clone()).await;
    let r = w
        .call(
            "tools/call",
            json!({"name": "gated", "arguments": {"label": "l"}, "task": {"ttl": 60000}}),
        )
        .await;
    assert_eq!(members(&r["result"]), ["task"], "{r}");
    let t = &r["result"]["task"];
    assert_eq!(
        members(t),
        [
            "createdAt",
            "lastUpdatedAt",
            "pollInterval",
            "status",
            "taskId",
            "ttl"
        ],
        "{r}"
    );
    assert_eq!(
        (&t["status"], &t["ttl"]),
        (&json!("working"), &json!(60000))
    );
    // The input round's answer is built as a tree; the three tasks' are text.
    assert_eq!(*kinds.lock().unwrap(), vec![true, false, true, true]);
    open_gate(&s, 3);
}
