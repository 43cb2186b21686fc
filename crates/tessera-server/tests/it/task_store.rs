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

/// Issue 32 item 14: a deleted, replaced or corrupted SQLite file went
/// unnoticed until the restart that lost the tasks; `check` names each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_replaced_or_corrupted_sqlite_file_is_noticed() {
    use tessera_server::task::{TaskRecord, TaskStore};
    let dir = std::env::temp_dir().join(format!(
        "tessera-task-check-{}-{}",
        std::process::id(),
        tessera_server::task::new_task_id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let remove = |p: &std::path::Path| {
        for suffix in ["", "-wal", "-shm"] {
            let mut f = p.as_os_str().to_owned();
            f.push(suffix);
            let _ = std::fs::remove_file(f);
        }
    };

    // Deleted.
    let deleted = dir.join("deleted.db");
    let s = SqliteTaskStore::open(&deleted).unwrap();
    s.check().await.expect("a new file is sound");
    remove(&deleted);
    let e = s.check().await.unwrap_err().to_string();
    assert!(e.contains("was deleted"), "{e}");

    // Replaced by another file.
    let replaced = dir.join("replaced.db");
    let s = SqliteTaskStore::open(&replaced).unwrap();
    let other = dir.join("other");
    std::fs::write(&other, b"not a database").unwrap();
    std::fs::rename(&other, &replaced).unwrap();
    let e = s.check().await.unwrap_err().to_string();
    assert!(e.contains("was replaced"), "{e}");

    // Corrupted: the pages after the schema overwritten while closed.
    let corrupted = dir.join("corrupted.db");
    {
        let s = SqliteTaskStore::open(&corrupted).unwrap();
        for i in 0..50 {
            let r = TaskRecord::working(format!("t{i}"), "alice", "tools/call", 5, None, None);
            s.create(r).await.unwrap();
        }
    }
    let mut bytes = std::fs::read(&corrupted).unwrap();
    assert!(bytes.len() > 4096, "more than the schema page");
    for b in &mut bytes[4096..] {
        *b = 0x5a;
    }
    std::fs::write(&corrupted, &bytes).unwrap();
    let s = SqliteTaskStore::open(&corrupted).unwrap();
    let e = s.check().await.unwrap_err().to_string();
    assert!(e.contains("corrupted") || e.contains("unreadable"), "{e}");
    drop(s);
    std::fs::remove_dir_all(&dir).unwrap();
}
