//! Caps on tasks (issue 32 item 8): one client made 10,000 tasks in 16 s,
//! 2,000 600-second tasks from one session were accepted, and 100 tasks
//! with 1 MiB results grew the store by 100 MB. Running and stored tasks
//! are capped per owner and in all, results are bounded, and each refusal
//! names its limit. Handlers wait on a gate; time only moves on tokio's
//! paused clock.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tessera_runtime::testing::LineSession;
use tessera_server::task::{MemoryTaskStore, TaskSettings, limit};
use tessera_server::{Args, Server, State, tool};
use tessera_testkit::pair::serve_raw;
use tessera_types::tool::TaskSupport;
use tokio::io::{DuplexStream, ReadHalf, WriteHalf};
use tokio::sync::Semaphore;

struct Gate(Semaphore);

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Size {
    /// How many bytes of text to answer with.
    bytes: usize,
}

async fn gated(State(g): State<Gate>, Args(a): Args<Size>) -> String {
    g.0.acquire().await.expect("gate open").forget();
    "x".repeat(a.bytes)
}

fn server(settings: TaskSettings) -> Server<Gate> {
    Server::with_state(Gate(Semaphore::new(0)))
        .task_settings(settings)
        .tool(
            tool("gated")
                .task_support(TaskSupport::Optional)
                .handler(gated),
        )
        .build()
        .unwrap()
}

/// A 2025-11-25 session over an in-memory pipe.
struct Session(LineSession<ReadHalf<DuplexStream>, WriteHalf<DuplexStream>>);

impl Session {
    async fn open(server: &Server<Gate>) -> Session {
        let (read, write) = serve_raw(server, 1 << 22);
        Session(LineSession::legacy(read, write, "2025-11-25").await)
    }

    async fn call(&mut self, method: &str, params: Value) -> Value {
        self.0.call(method, params).await
    }

    /// Starts `gated` as a task (ttl `ttl_ms`); the answer as it came.
    async fn task(&mut self, bytes: usize, ttl_ms: u64) -> Value {
        self.call(
            "tools/call",
            json!({"name": "gated", "arguments": {"bytes": bytes}, "task": {"ttl": ttl_ms}}),
        )
        .await
    }

    /// Waits for task `id` to reach a terminal status; returns it.
    async fn finished(&mut self, id: &str) -> Value {
        loop {
            let r = self.call("tasks/get", json!({"taskId": id})).await;
            let status = r["result"]["status"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            if ["completed", "failed", "cancelled"].contains(&status.as_str()) {
                return r;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

fn task_id(r: &Value) -> String {
    r["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {r}"))
        .to_owned()
}

fn refusal(r: &Value) -> String {
    assert_eq!(r["error"]["code"], -32600, "{r}");
    r["error"]["message"].as_str().unwrap().to_owned()
}

#[tokio::test(start_paused = true)]
async fn running_tasks_are_capped_per_client_and_in_all() {
    let s = server(TaskSettings {
        store: Arc::new(MemoryTaskStore::new()),
        max_running_per_owner: 3,
        max_running: 5,
        ..TaskSettings::default()
    });
    let mut a = Session::open(&s).await;
    for _ in 0..3 {
        task_id(&a.task(1, 600_000).await);
    }
    // The fourth of one session: refused, naming the limit.
    let why = refusal(&a.task(1, 600_000).await);
    assert!(why.contains("this client has 3 running"), "{why}");
    assert!(why.contains("max_running_per_owner"), "{why}");
    // Another client still gets in, up to the server's cap.
    let mut b = Session::open(&s).await;
    task_id(&b.task(1, 600_000).await);
    task_id(&b.task(1, 600_000).await);
    let why = refusal(&b.task(1, 600_000).await);
    assert!(why.contains("the server has 5 running"), "{why}");
    // The counts: five running, each refusal under its cap.
    let stats = s.task_stats();
    assert_eq!(stats.running, 5);
    let refused = |cap: &str| stats.refused.iter().find(|(n, _)| *n == cap).unwrap().1;
    assert_eq!(refused(limit::MAX_RUNNING_TASKS_PER_OWNER), 1);
    assert_eq!(refused(limit::MAX_RUNNING_TASKS), 1);
    assert_eq!(refused(limit::MAX_STORED_TASKS), 0);
    // One finishes: room again.
    s.state().0.add_permits(1);
    let mut c = Session::open(&s).await;
    let mut made = None;
    for _ in 0..100 {
        let r = c.task(1, 600_000).await;
        if r.get("result").is_some() {
            made = Some(task_id(&r));
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(made.is_some(), "a slot freed when a task finished");
}

#[tokio::test(start_paused = true)]
async fn stored_tasks_are_capped_until_they_expire() {
    let s = server(TaskSettings {
        store: Arc::new(MemoryTaskStore::new()),
        max_stored_per_owner: 2,
        max_stored: 3,
        sweep_every: Duration::from_secs(1),
        ..TaskSettings::default()
    });
    s.state().0.add_permits(100);
    let mut a = Session::open(&s).await;
    for _ in 0..2 {
        let id = task_id(&a.task(1, 5_000).await);
        a.finished(&id).await;
    }
    // Finished tasks are kept until their lifetime ends, and count.
    let why = refusal(&a.task(1, 5_000).await);
    assert!(why.contains("this client has 2 stored"), "{why}");
    let mut b = Session::open(&s).await;
    let id = task_id(&b.task(1, 5_000).await);
    b.finished(&id).await;
    let why = refusal(&b.task(1, 5_000).await);
    assert!(why.contains("the server has 3 stored"), "{why}");
    let stats = s.task_stats();
    let count = |of: &[(&str, u64)], name: &str| of.iter().find(|(n, _)| *n == name).unwrap().1;
    assert_eq!(count(&stats.refused, limit::MAX_STORED_TASKS_PER_OWNER), 1);
    assert_eq!(count(&stats.refused, limit::MAX_STORED_TASKS), 1);
    // Three tasks entered `working` and then `completed`; none runs now.
    assert_eq!(count(&stats.entered, "working"), 3);
    assert_eq!(count(&stats.entered, "completed"), 3);
    assert_eq!(count(&stats.entered, "failed"), 0);
    assert_eq!(stats.running, 0);
    // Once they expire there is room again.
    tokio::time::advance(Duration::from_secs(6)).await;
    task_id(&a.task(1, 5_000).await);
}

#[tokio::test(start_paused = true)]
async fn a_result_over_the_limit_fails_its_task() {
    let s = server(TaskSettings {
        store: Arc::new(MemoryTaskStore::new()),
        max_result_bytes: 4096,
        ..TaskSettings::default()
    });
    s.state().0.add_permits(2);
    let mut a = Session::open(&s).await;
    let big = task_id(&a.task(1 << 20, 60_000).await);
    let r = a.finished(&big).await;
    assert_eq!(r["result"]["status"], "failed", "{r}");
    let r = a.call("tasks/result", json!({"taskId": big})).await;
    let msg = r["error"]["message"].as_str().unwrap_or_default();
    assert!(
        msg.contains("the limit is 4096") && msg.contains("max_result_bytes"),
        "{r}"
    );
    // A result within the limit is kept as it is.
    let small = task_id(&a.task(100, 60_000).await);
    a.finished(&small).await;
    let r = a.call("tasks/result", json!({"taskId": small})).await;
    assert_eq!(r["result"]["content"][0]["text"], "x".repeat(100), "{r}");
}
