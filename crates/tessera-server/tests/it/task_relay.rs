//! Two servers sharing one task store and one bus (as instances behind a
//! load balancer share Redis): a task running on one is answered, watched
//! and cancelled through the other.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tessera_runtime::LocalBus;
use tessera_server::task::{MemoryTaskStore, TaskSettings};
use tessera_server::{RequestContext, Server, tool};
use tessera_testkit::pair::serve_raw;
use tessera_types::tool::TaskSupport;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::Notify;

/// Signals when the handler of a cancelled task is dropped.
struct Dropped(Arc<Notify>);

impl Drop for Dropped {
    fn drop(&mut self) {
        self.0.notify_one();
    }
}

fn build(store: Arc<MemoryTaskStore>, bus: Arc<LocalBus>, dropped: Arc<Notify>) -> Server {
    let ask =
        tool("ask")
            .task_support(TaskSupport::Required)
            .handler(|ctx: RequestContext| async move {
                let form: tessera_types::ElicitRequestParams = serde_json::from_value(json!({
                "message": "Name?",
                "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}
            }))
            .map_err(|e| e.to_string())?;
                let a = ctx
                    .elicit_as("name", form)
                    .await
                    .map_err(|e| e.to_string())?;
                let v = serde_json::to_value(&a).map_err(|e| e.to_string())?;
                Ok::<_, String>(format!(
                    "hello {}",
                    v["content"]["name"].as_str().unwrap_or("?")
                ))
            });
    let forever = tool("forever")
        .task_support(TaskSupport::Required)
        .handler(move || {
            let guard = Dropped(dropped.clone());
            async move {
                let _guard = guard;
                std::future::pending::<String>().await
            }
        });
    Server::builder()
        .task_settings(TaskSettings {
            store,
            bus: Some(bus),
            ..TaskSettings::default()
        })
        .tool(ask)
        .tool(forever)
        .build()
        .unwrap()
}

struct Wire {
    write: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    read: BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>,
    next: i64,
}

impl Wire {
    fn start(server: Server) -> Wire {
        let (read, write) = serve_raw(&server, 1 << 20);
        Wire {
            write,
            read: BufReader::new(read),
            next: 0,
        }
    }

    /// One 2026-07-28 request declaring the Tasks extension; its response.
    async fn call(&mut self, method: &str, mut params: Value) -> Value {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {
                "elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}
            },
            "io.modelcontextprotocol/clientInfo": {"name": "relay-test", "version": "1"}
        });
        self.next += 1;
        let msg = json!({"jsonrpc": "2.0", "id": self.next, "method": method, "params": params});
        let mut line = serde_json::to_vec(&msg).unwrap();
        line.push(b'\n');
        self.write.write_all(&line).await.unwrap();
        loop {
            let mut text = String::new();
            tokio::time::timeout(Duration::from_secs(10), self.read.read_line(&mut text))
                .await
                .expect("an answer in time")
                .unwrap();
            let m: Value = serde_json::from_str(&text).unwrap();
            if m.get("id") == Some(&json!(self.next)) {
                return m;
            }
        }
    }

    /// Polls `tasks/get` until the status is `want` (bounded).
    async fn until(&mut self, id: &str, want: &str) -> Value {
        let mut last = Value::Null;
        for _ in 0..400 {
            let r = self.call("tasks/get", json!({"taskId": id})).await;
            if r["result"]["status"] == want {
                return r["result"].clone();
            }
            last = r;
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        panic!("task {id} never reached {want}: {last}");
    }
}

/// Two servers on one store and one bus, both started (the in-memory
/// store's restart recovery is not per instance, so it runs before any task).
async fn pair() -> (Wire, Wire, Arc<Notify>) {
    let store = Arc::new(MemoryTaskStore::new());
    let bus = Arc::new(LocalBus::default());
    let dropped = Arc::new(Notify::new());
    let a = build(store.clone(), bus.clone(), dropped.clone());
    let b = build(store, bus, dropped.clone());
    a.recover_tasks().await.unwrap();
    b.recover_tasks().await.unwrap();
    (Wire::start(a), Wire::start(b), dropped)
}

#[tokio::test]
async fn input_for_a_task_on_one_server_answered_through_the_other() {
    let (mut a, mut b, _) = pair().await;
    let r = a
        .call("tools/call", json!({"name": "ask", "arguments": {}}))
        .await;
    assert_eq!(r["result"]["resultType"], "task", "{r}");
    let id = r["result"]["taskId"].as_str().unwrap().to_owned();
    let t = b.until(&id, "input_required").await;
    assert!(t["inputRequests"].get("name").is_some(), "{t}");
    let u = b
        .call(
            "tasks/update",
            json!({"taskId": id, "inputResponses": {"name": {"action": "accept", "content": {"name": "Ada"}}}}),
        )
        .await;
    assert!(u.get("result").is_some(), "{u}");
    // Acknowledged only once the running server has recorded the answer:
    // a read right after it no longer lists the question.
    let t = b.call("tasks/get", json!({"taskId": id})).await;
    assert!(
        t["result"]["inputRequests"].get("name").is_none(),
        "answered question still listed: {t}"
    );
    let done = b.until(&id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "hello Ada", "{done}");
}

#[tokio::test]
async fn a_task_on_one_server_cancelled_through_the_other_stops_its_handler() {
    let (mut a, mut b, dropped) = pair().await;
    let r = a
        .call("tools/call", json!({"name": "forever", "arguments": {}}))
        .await;
    let id = r["result"]["taskId"].as_str().unwrap().to_owned();
    let stopped = dropped.notified();
    tokio::pin!(stopped);
    stopped.as_mut().enable();
    let c = b.call("tasks/cancel", json!({"taskId": id})).await;
    assert!(c.get("result").is_some(), "{c}");
    tokio::time::timeout(Duration::from_secs(10), stopped)
        .await
        .expect("the handler on the other server is dropped");
    assert_eq!(a.until(&id, "cancelled").await["status"], "cancelled");
}
