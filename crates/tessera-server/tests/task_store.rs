//! The task store contract, run against every store.

use tessera_server::task::{MemoryTaskStore, SqliteTaskStore, contract};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_store_meets_the_contract() {
    contract::run(MemoryTaskStore::new).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_memory_store_meets_the_contract() {
    contract::run(|| SqliteTaskStore::open_in_memory().expect("open")).await;
}

/// A file store: the contract, then a reopen that still finds the tasks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_file_store_meets_the_contract_and_persists() {
    use tessera_server::task::{TaskRecord, TaskStore};
    let dir = std::env::temp_dir().join(format!(
        "tessera-task-store-{}-{}",
        std::process::id(),
        tessera_server::task::new_task_id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let n = std::sync::atomic::AtomicUsize::new(0);
    contract::run(|| {
        let i = n.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        SqliteTaskStore::open(dir.join(format!("c{i}.db"))).expect("open")
    })
    .await;
    let path = dir.join("reopen.db");
    {
        let s = SqliteTaskStore::open(&path).unwrap();
        s.create(TaskRecord::working(
            "p1",
            "alice",
            "tools/call",
            5,
            None,
            Some(100),
        ))
        .await
        .unwrap();
    }
    let s = SqliteTaskStore::open(&path).unwrap();
    let r = s
        .get("alice", "p1", 6)
        .await
        .unwrap()
        .expect("kept across reopen");
    assert_eq!(r.poll_interval_ms, Some(100));
    drop(s);
    std::fs::remove_dir_all(&dir).unwrap();
}
