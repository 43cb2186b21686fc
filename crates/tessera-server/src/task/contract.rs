//! The contract every [`TaskStore`] must meet, written once and run against
//! each implementation (the in-memory and SQLite stores here; a networked
//! store in another crate calls [`run`] from its own tests).
//!
//! The checks panic on the first broken rule, like any test assertion.
//! Each check uses its own owners and ids, so one store value can serve all.

use serde_json::json;
use tessera_types::methods;
use tessera_types::tasks::TaskStatus;
use tessera_types::{ErrorObject, JsonObject};

use super::store::{TaskChange, TaskRecord, TaskStore, TaskStoreError, Transition};

/// Runs every check against stores made by `make` (called once per check).
pub async fn run<S, F>(make: F)
where
    S: TaskStore,
    F: Fn() -> S,
{
    create_then_get(&make()).await;
    duplicate_create(&make()).await;
    transitions_stop_at_terminal(&make()).await;
    racing_transitions(std::sync::Arc::new(make())).await;
    ttl_expiry(&make()).await;
    listing(&make()).await;
    fail_unfinished(&make()).await;
    counting(&make()).await;
}

fn obj(v: serde_json::Value) -> JsonObject {
    match v {
        serde_json::Value::Object(o) => o,
        _ => JsonObject::new(),
    }
}

const T0: u64 = 1_700_000_000_000;

/// A created task is readable at once by its owner, and by no one else.
pub async fn create_then_get<S: TaskStore>(store: &S) {
    let rec = TaskRecord::working(
        "cg-1",
        "alice",
        methods::TOOLS_CALL,
        T0,
        Some(60_000),
        Some(500),
    );
    store.create(rec.clone()).await.expect("create");
    let got = store.get("alice", "cg-1", T0).await.expect("get");
    assert_eq!(got, Some(rec), "the owner reads the task as created");
    assert_eq!(store.get("bob", "cg-1", T0).await.expect("get"), None);
    assert_eq!(store.get("alice", "cg-none", T0).await.expect("get"), None);
}

/// A second task with the same id is refused and the first is untouched.
pub async fn duplicate_create<S: TaskStore>(store: &S) {
    let rec = TaskRecord::working("dup-1", "alice", methods::TOOLS_CALL, T0, None, None);
    store.create(rec.clone()).await.expect("create");
    let again = TaskRecord::working("dup-1", "mallory", methods::TOOLS_CALL, T0 + 1, None, None);
    match store.create(again).await {
        Err(TaskStoreError::Duplicate(id)) => assert_eq!(id, "dup-1"),
        other => panic!("duplicate create must fail with Duplicate, got {other:?}"),
    }
    assert_eq!(
        store.get("alice", "dup-1", T0).await.expect("get"),
        Some(rec)
    );
    assert_eq!(store.get("mallory", "dup-1", T0).await.expect("get"), None);
}

/// Statuses move freely until terminal, then never again; payloads round-trip.
pub async fn transitions_stop_at_terminal<S: TaskStore>(store: &S) {
    let rec = TaskRecord::working("tr-1", "alice", methods::TOOLS_CALL, T0, None, None);
    store.create(rec).await.expect("create");
    let asks = obj(
        json!({"input-1": {"method": methods::ELICITATION_CREATE, "params": {"message": "?"}}}),
    );
    match store
        .update("tr-1", TaskChange::input_required(asks.clone()), T0 + 10)
        .await
        .expect("update")
    {
        Transition::Applied(r) => {
            assert_eq!(r.status, TaskStatus::InputRequired);
            assert_eq!(r.input_requests, Some(asks.clone()));
            assert_eq!(r.updated_at_ms, T0 + 10);
        }
        other => panic!("expected Applied, got {other:?}"),
    }
    let got = store
        .get("alice", "tr-1", T0 + 11)
        .await
        .expect("get")
        .expect("task");
    assert_eq!(got.input_requests, Some(asks));
    assert!(matches!(
        store.update("tr-1", TaskChange::working(None), T0 + 20).await.expect("update"),
        Transition::Applied(ref r) if r.status == TaskStatus::Working && r.input_requests.is_none()
    ));
    let result = obj(json!({"content": [{"type": "text", "text": "done"}], "isError": false}));
    assert!(matches!(
        store.update("tr-1", TaskChange::completed(result.clone()), T0 + 30).await.expect("update"),
        Transition::Applied(ref r) if r.status == TaskStatus::Completed
    ));
    let late = TaskChange::failed(ErrorObject::internal("late"), None);
    match store.update("tr-1", late, T0 + 40).await.expect("update") {
        Transition::Terminal(r) => {
            assert_eq!(r.status, TaskStatus::Completed);
            assert_eq!(r.result, Some(result.clone()));
            assert_eq!(r.updated_at_ms, T0 + 30);
        }
        other => panic!("a terminal task must not change, got {other:?}"),
    }
    assert!(matches!(
        store
            .update("tr-1", TaskChange::cancelled(), T0 + 50)
            .await
            .expect("update"),
        Transition::Terminal(_)
    ));
    let got = store
        .get("alice", "tr-1", T0 + 60)
        .await
        .expect("get")
        .expect("task");
    assert_eq!(got.result, Some(result));
    assert_eq!(got.error, None);
    assert!(matches!(
        store
            .update("tr-none", TaskChange::cancelled(), T0)
            .await
            .expect("update"),
        Transition::NotFound
    ));
    // A failed task keeps its error.
    store
        .create(TaskRecord::working(
            "tr-2",
            "alice",
            methods::TOOLS_CALL,
            T0,
            None,
            None,
        ))
        .await
        .expect("create");
    let err = ErrorObject::invalid_params("bad").with_data(json!({"field": "x"}));
    store
        .update("tr-2", TaskChange::failed(err.clone(), None), T0 + 1)
        .await
        .expect("update");
    let got = store
        .get("alice", "tr-2", T0 + 2)
        .await
        .expect("get")
        .expect("task");
    assert_eq!(got.status, TaskStatus::Failed);
    assert_eq!(got.error, Some(err));
    assert_eq!(got.status_message.as_deref(), Some("bad"));
}

/// Of many concurrent transitions out of `working`, exactly one wins.
pub async fn racing_transitions<S: TaskStore>(store: std::sync::Arc<S>) {
    for round in 0..5u64 {
        let id = format!("race-{round}");
        store
            .create(TaskRecord::working(
                &id,
                "alice",
                methods::TOOLS_CALL,
                T0,
                None,
                None,
            ))
            .await
            .expect("create");
        let mut joins = Vec::new();
        for k in 0..8u64 {
            let store = store.clone();
            let id = id.clone();
            joins.push(tokio::spawn(async move {
                let change = match k % 3 {
                    0 => TaskChange::cancelled(),
                    1 => TaskChange::completed(obj(json!({"content": [], "k": k}))),
                    _ => TaskChange::failed(ErrorObject::internal(format!("k{k}")), None),
                };
                store.update(&id, change, T0 + k).await.expect("update")
            }));
        }
        let mut applied = Vec::new();
        let mut terminal = 0;
        for j in joins {
            match j.await.expect("join") {
                Transition::Applied(r) => applied.push(r),
                Transition::Terminal(_) => terminal += 1,
                Transition::NotFound => panic!("the task exists"),
            }
        }
        assert_eq!(applied.len(), 1, "exactly one terminal transition wins");
        assert_eq!(terminal, 7);
        let now = store
            .get("alice", &id, T0 + 100)
            .await
            .expect("get")
            .expect("task");
        assert_eq!(
            now.status, applied[0].status,
            "the winner is what is stored"
        );
        assert_eq!(now.result, applied[0].result);
    }
}

/// A task is kept until `created + ttl`, gone after, and swept.
pub async fn ttl_expiry<S: TaskStore>(store: &S) {
    store
        .create(TaskRecord::working(
            "ttl-1",
            "alice",
            methods::TOOLS_CALL,
            T0,
            Some(1_000),
            None,
        ))
        .await
        .expect("create");
    store
        .create(TaskRecord::working(
            "ttl-forever",
            "alice",
            methods::TOOLS_CALL,
            T0,
            None,
            None,
        ))
        .await
        .expect("create");
    store
        .update(
            "ttl-1",
            TaskChange::completed(obj(json!({"content": []}))),
            T0 + 10,
        )
        .await
        .expect("update");
    assert!(
        store
            .get("alice", "ttl-1", T0 + 999)
            .await
            .expect("get")
            .is_some()
    );
    assert_eq!(
        store.get("alice", "ttl-1", T0 + 1_000).await.expect("get"),
        None
    );
    assert!(matches!(
        store
            .update("ttl-1", TaskChange::cancelled(), T0 + 1_000)
            .await
            .expect("update"),
        Transition::NotFound
    ));
    let page = store
        .list("alice", None, 10, T0 + 1_000)
        .await
        .expect("list");
    assert!(page.tasks.iter().all(|t| t.task_id != "ttl-1"));
    assert_eq!(store.sweep(T0 + 999).await.expect("sweep"), 0);
    assert_eq!(store.sweep(T0 + 1_000).await.expect("sweep"), 1);
    assert_eq!(store.sweep(T0 + 2_000).await.expect("sweep"), 0);
    let far = T0 + 10 * 365 * 24 * 3_600_000;
    assert!(
        store
            .get("alice", "ttl-forever", far)
            .await
            .expect("get")
            .is_some()
    );
    // The id of a swept task is free again.
    store
        .create(TaskRecord::working(
            "ttl-1",
            "alice",
            methods::TOOLS_CALL,
            T0 + 3_000,
            None,
            None,
        ))
        .await
        .expect("create after sweep");
}

/// Listing is per owner, oldest first, in pages linked by cursors.
pub async fn listing<S: TaskStore>(store: &S) {
    for i in 0..5u64 {
        store
            .create(TaskRecord::working(
                format!("ls-a{i}"),
                "owner-a",
                methods::TOOLS_CALL,
                T0 + i,
                None,
                None,
            ))
            .await
            .expect("create");
    }
    // Two tasks created in the same millisecond are ordered by id.
    store
        .create(TaskRecord::working(
            "ls-a4b",
            "owner-a",
            methods::TOOLS_CALL,
            T0 + 4,
            None,
            None,
        ))
        .await
        .expect("create");
    for i in 0..2u64 {
        store
            .create(TaskRecord::working(
                format!("ls-b{i}"),
                "owner-b",
                methods::TOOLS_CALL,
                T0 + i,
                None,
                None,
            ))
            .await
            .expect("create");
    }
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..10 {
        let page = store
            .list("owner-a", cursor.as_deref(), 2, T0 + 10)
            .await
            .expect("list");
        assert!(page.tasks.len() <= 2);
        seen.extend(page.tasks.iter().map(|t| t.task_id.clone()));
        assert!(page.tasks.iter().all(|t| t.owner == "owner-a"));
        match page.next_cursor {
            Some(c) => cursor = Some(c),
            None => break,
        }
    }
    assert_eq!(
        seen,
        ["ls-a0", "ls-a1", "ls-a2", "ls-a3", "ls-a4", "ls-a4b"]
    );
    let b = store
        .list("owner-b", None, 10, T0 + 10)
        .await
        .expect("list");
    assert_eq!(b.tasks.len(), 2);
    assert_eq!(b.next_cursor, None);
    assert!(
        store
            .list("nobody", None, 10, T0)
            .await
            .expect("list")
            .tasks
            .is_empty()
    );
    assert!(matches!(
        store.list("owner-a", Some("not a cursor!"), 2, T0).await,
        Err(TaskStoreError::InvalidCursor)
    ));
}

/// After a restart, unfinished tasks are failed with the given message;
/// finished ones keep their result.
pub async fn fail_unfinished<S: TaskStore>(store: &S) {
    for id in ["fu-working", "fu-input", "fu-done"] {
        store
            .create(TaskRecord::working(
                id,
                "alice",
                methods::TOOLS_CALL,
                T0,
                None,
                None,
            ))
            .await
            .expect("create");
    }
    store
        .update(
            "fu-input",
            TaskChange::input_required(obj(json!({"k": {"method": methods::ROOTS_LIST}}))),
            T0 + 1,
        )
        .await
        .expect("update");
    let result = obj(json!({"content": [{"type": "text", "text": "kept"}]}));
    store
        .update("fu-done", TaskChange::completed(result.clone()), T0 + 1)
        .await
        .expect("update");
    let n = store
        .fail_unfinished("the server restarted", T0 + 5)
        .await
        .expect("fail_unfinished");
    assert_eq!(n, 2);
    for id in ["fu-working", "fu-input"] {
        let r = store
            .get("alice", id, T0 + 6)
            .await
            .expect("get")
            .expect("task");
        assert_eq!(r.status, TaskStatus::Failed);
        assert_eq!(r.status_message.as_deref(), Some("the server restarted"));
        assert!(r.error.is_some(), "a failed task carries its error");
        assert_eq!(r.input_requests, None);
    }
    let done = store
        .get("alice", "fu-done", T0 + 6)
        .await
        .expect("get")
        .expect("task");
    assert_eq!(done.status, TaskStatus::Completed);
    assert_eq!(done.result, Some(result));
}

/// [`TaskStore::count`]: an owner's unexpired tasks and all of them; an
/// expired task stops counting at the latest once swept.
pub async fn counting<S: TaskStore>(store: &S) {
    let before = store.count("counter", T0).await.expect("count");
    assert_eq!(before.owner, 0, "a new owner has no tasks");
    for i in 0..3 {
        let rec = TaskRecord::working(
            format!("cnt-{i}"),
            "counter",
            methods::TOOLS_CALL,
            T0,
            Some(1_000),
            None,
        );
        store.create(rec).await.expect("create");
    }
    let other = TaskRecord::working(
        "cnt-other",
        "counted-neighbour",
        methods::TOOLS_CALL,
        T0,
        Some(1_000),
        None,
    );
    store.create(other).await.expect("create");
    let c = store.count("counter", T0).await.expect("count");
    assert_eq!(c.owner, 3, "the owner's tasks only");
    assert!(c.total >= before.total + 4, "{c:?} after {before:?}");
    store.sweep(T0 + 2_000).await.expect("sweep");
    let c = store.count("counter", T0 + 2_000).await.expect("count");
    assert_eq!(c.owner, 0, "expired and swept tasks do not count");
}
