//! The task store contract against a real Redis, and what only a shared
//! store must do: several instances, each failing only its own unfinished
//! tasks after a restart.

use std::sync::atomic::{AtomicUsize, Ordering};

use tessera_redis::Redis;
use tessera_redis::testing::RedisServer;
use tessera_server::task::{TaskChange, TaskRecord, TaskStore, contract};
use tessera_types::tasks::TaskStatus;

/// Every key matching `pattern` with its TTL in ms (-1: none), read on a
/// connection of the test's own.
pub async fn key_ttls(server: &RedisServer, pattern: &str) -> Vec<(String, i64)> {
    use tessera_redis::redis::{self, AsyncCommands};
    let client = redis::Client::open(server.url()).unwrap();
    let mut c = client.get_multiplexed_async_connection().await.unwrap();
    let keys: Vec<String> = c.keys(pattern).await.unwrap();
    let mut out = Vec::new();
    for k in keys {
        let ttl: i64 = c.pttl(&k).await.unwrap();
        out.push((k, ttl));
    }
    out
}

async fn connect(server: &RedisServer, prefix: &str, instance: &str) -> Redis {
    Redis::options(server.url())
        .prefix(prefix)
        .instance_id(instance)
        .connect()
        .await
        .expect("connect to the test redis-server")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_store_meets_the_contract() {
    let server = RedisServer::start().expect("start redis-server");
    // Each check gets a store of its own: a fresh prefix, one connection.
    let base = connect(&server, "unused:", "contract").await;
    let n = AtomicUsize::new(0);
    let url = server.url();
    let stores: Vec<Redis> = {
        let mut v = Vec::new();
        for i in 0..8 {
            v.push(
                Redis::options(url.clone())
                    .prefix(format!("contract{i}:"))
                    .instance_id("a")
                    .connect()
                    .await
                    .expect("connect"),
            );
        }
        v
    };
    contract::run(|| stores[n.fetch_add(1, Ordering::Relaxed)].task_store()).await;
    assert_eq!(n.load(Ordering::Relaxed), 8, "one store per check");
    base.ping().await.expect("still up");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fail_unfinished_is_scoped_to_the_restarted_instance() {
    let server = RedisServer::start().expect("start redis-server");
    let a = connect(&server, "shared:", "instance-a").await.task_store();
    let b = connect(&server, "shared:", "instance-b").await.task_store();
    let t0 = 1_000;
    a.create(TaskRecord::working(
        "ta",
        "alice",
        "tools/call",
        t0,
        Some(60_000),
        None,
    ))
    .await
    .unwrap();
    b.create(TaskRecord::working(
        "tb",
        "alice",
        "tools/call",
        t0,
        Some(60_000),
        None,
    ))
    .await
    .unwrap();
    // Each instance sees the other's tasks.
    assert!(a.get("alice", "tb", t0).await.unwrap().is_some());
    assert!(b.get("alice", "ta", t0).await.unwrap().is_some());
    // Instance A restarts (same id, new connection): only "ta" fails.
    let a2 = connect(&server, "shared:", "instance-a").await.task_store();
    assert_eq!(a2.fail_unfinished("restarted", t0 + 1).await.unwrap(), 1);
    let ta = a2.get("alice", "ta", t0 + 2).await.unwrap().unwrap();
    assert_eq!(ta.status, TaskStatus::Failed);
    let tb = a2.get("alice", "tb", t0 + 2).await.unwrap().unwrap();
    assert_eq!(tb.status, TaskStatus::Working, "B's task goes on");
    // B's task finishes from another instance; B's restart then fails nothing.
    a2.update("tb", TaskChange::completed(serde_json::Map::new()), t0 + 3)
        .await
        .unwrap();
    assert_eq!(b.fail_unfinished("restarted", t0 + 4).await.unwrap(), 0);
    // A second restart of A finds nothing left to fail.
    assert_eq!(a2.fail_unfinished("restarted", t0 + 5).await.unwrap(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_key_has_a_ttl() {
    let server = RedisServer::start().expect("start redis-server");
    let redis = connect(&server, "ttl:", "i").await;
    let store = redis.task_store();
    store
        .create(TaskRecord::working(
            "k1",
            "alice",
            "tools/call",
            5,
            Some(30_000),
            None,
        ))
        .await
        .unwrap();
    store
        .create(TaskRecord::working(
            "k2",
            "bob",
            "tools/call",
            5,
            None,
            None,
        ))
        .await
        .unwrap();
    let keys = key_ttls(&server, "ttl:*").await;
    assert!(keys.len() >= 6, "task, owner and index keys: {keys:?}");
    for (k, ttl) in keys {
        assert!(ttl > 0, "{k} has no TTL ({ttl})");
    }
}

/// Unfinished tasks are counted in Redis for the caps on running tasks,
/// whichever instance runs them: a task stops counting when it finishes
/// (on any instance), when its instance restarts and fails it, and when it
/// is swept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn running_tasks_are_counted_across_instances() {
    let server = RedisServer::start().expect("start redis-server");
    let a = connect(&server, "run:", "instance-a").await.task_store();
    let b = connect(&server, "run:", "instance-b").await.task_store();
    let t0 = 1_000;
    let working = |id: &str, owner: &str, ttl: u64| {
        TaskRecord::working(id, owner, "tools/call", t0, Some(ttl), None)
    };
    a.create(working("a1", "alice", 60_000)).await.unwrap();
    a.create(working("a2", "alice", 60_000)).await.unwrap();
    b.create(working("b1", "alice", 60_000)).await.unwrap();
    b.create(working("b2", "bob", 1_000)).await.unwrap();
    let c = b.count("alice", t0).await.unwrap();
    assert_eq!((c.running_of_owner, c.running), (Some(3), Some(4)), "{c:?}");
    // b1 finishes, updated from instance a.
    a.update("b1", TaskChange::completed(serde_json::Map::new()), t0 + 1)
        .await
        .unwrap();
    let c = a.count("alice", t0 + 1).await.unwrap();
    assert_eq!((c.running_of_owner, c.running), (Some(2), Some(3)), "{c:?}");
    // A restarts: its two are failed and stop counting.
    assert_eq!(a.fail_unfinished("restarted", t0 + 2).await.unwrap(), 2);
    let c = b.count("alice", t0 + 2).await.unwrap();
    assert_eq!((c.running_of_owner, c.running), (Some(0), Some(1)), "{c:?}");
    // Bob's task outlives its lifetime unfinished: the sweep drops it.
    b.sweep(t0 + 5_000).await.unwrap();
    let c = b.count("bob", t0 + 5_000).await.unwrap();
    assert_eq!((c.running_of_owner, c.running), (Some(0), Some(0)), "{c:?}");
}
