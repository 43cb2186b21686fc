//! The caps on running tasks hold across instances: two servers sharing a
//! Redis task store, each serving its own client, refuse a task once the
//! tasks running on both reach `max_running` (issue 32: running-task caps
//! were per process). Handlers wait on a gate that the test opens.

use std::sync::Arc;

use serde_json::{Value, json};
use tessera_redis::Redis;
use tessera_redis::testing::RedisServer;
use tessera_runtime::testing::LineSession;
use tessera_server::task::TaskSettings;
use tessera_server::{RawArgs, Server, State, tool};
use tessera_testkit::pair::serve_raw;
use tessera_types::tool::TaskSupport;
use tokio::io::{DuplexStream, ReadHalf, WriteHalf};
use tokio::sync::Semaphore;

struct Gate(Semaphore);

async fn gated(State(g): State<Gate>, RawArgs(_): RawArgs) -> String {
    g.0.acquire().await.expect("gate open").forget();
    "done".into()
}

async fn server(redis: &Redis) -> Server<Gate> {
    Server::with_state(Gate(Semaphore::new(0)))
        .task_settings(TaskSettings {
            store: Arc::new(redis.task_store()),
            max_running: 3,
            ..TaskSettings::default()
        })
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
        let (read, write) = serve_raw(server, 1 << 20);
        Session(LineSession::legacy(read, write, "2025-11-25").await)
    }

    async fn call(&mut self, method: &str, params: Value) -> Value {
        self.0.call(method, params).await
    }

    async fn task(&mut self) -> Value {
        self.call(
            "tools/call",
            json!({"name": "gated", "arguments": {}, "task": {"ttl": 600_000}}),
        )
        .await
    }

    /// Waits for task `id` to finish (each poll waits for its answer).
    async fn finished(&mut self, id: &str) {
        for _ in 0..1000 {
            let r = self.call("tasks/get", json!({"taskId": id})).await;
            if r["result"]["status"] == "completed" {
                return;
            }
            tokio::task::yield_now().await;
        }
        panic!("task {id} did not finish");
    }
}

fn task_id(r: &Value) -> String {
    r["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {r}"))
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn running_tasks_are_capped_across_instances() {
    let redis_server = RedisServer::start().expect("start redis-server");
    let connect = |id: &'static str| {
        Redis::options(redis_server.url())
            .prefix("task-caps:")
            .instance_id(id)
            .connect()
    };
    let (ra, rb) = (connect("a").await.unwrap(), connect("b").await.unwrap());
    let (a, b) = (server(&ra).await, server(&rb).await);
    let mut on_a = Session::open(&a).await;
    let mut on_b = Session::open(&b).await;
    let first = task_id(&on_a.task().await);
    let second = task_id(&on_a.task().await);
    task_id(&on_b.task().await);
    // Three run, on two instances: the fourth is refused on either.
    for s in [&mut on_a, &mut on_b] {
        let r = s.task().await;
        assert_eq!(r["error"]["code"], -32600, "{r}");
        let why = r["error"]["message"].as_str().unwrap();
        assert!(why.contains("the server has 3 running"), "{why}");
        assert!(why.contains("max_running"), "{why}");
    }
    // a's two finish: b may start two more, not three.
    a.state().0.add_permits(2);
    on_a.finished(&first).await;
    on_a.finished(&second).await;
    task_id(&on_b.task().await);
    task_id(&on_b.task().await);
    let r = on_b.task().await;
    assert_eq!(r["error"]["code"], -32600, "{r}");
}
