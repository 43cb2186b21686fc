//! A stored task in the wire shapes of both designs.

use tessera_types::JsonObject;
use tessera_types::tasks::{self, DetailedTask, TaskStatus, legacy};

use super::iso_time;
use super::store::TaskRecord;
use crate::server::to_object;

/// The 2026-07-28 `Task` members.
pub(crate) fn task(r: &TaskRecord) -> tasks::Task {
    tasks::Task {
        task_id: r.task_id.clone(),
        status: r.status,
        status_message: r.status_message.clone(),
        created_at: iso_time(r.created_at_ms),
        last_updated_at: iso_time(r.updated_at_ms),
        ttl_ms: r.ttl_ms,
        poll_interval_ms: r.poll_interval_ms,
    }
}

/// The 2026-07-28 `DetailedTask`: the payload of the current status only.
pub(crate) fn detailed(r: &TaskRecord) -> DetailedTask {
    let t = task(r);
    match r.status {
        // inputRequests are added raw by `get_result` (they are kept as sent).
        TaskStatus::InputRequired => DetailedTask::plain(t),
        TaskStatus::Completed => DetailedTask::completed(t, r.result.clone().unwrap_or_default()),
        TaskStatus::Failed => match &r.error {
            Some(e) => DetailedTask::failed(t, e.clone()),
            // A 2025-11-25 task failed by an isError result has no JSON-RPC
            // error; it never reaches the 2026 wire with one missing, but
            // stay well-formed.
            None => DetailedTask::failed(
                t,
                tessera_types::ErrorObject::internal(
                    r.status_message.clone().unwrap_or_else(|| "failed".into()),
                ),
            ),
        },
        TaskStatus::Working | TaskStatus::Cancelled => DetailedTask::plain(t),
    }
}

/// `tasks/get` (2026-07-28): the detailed task, `resultType: "complete"`.
pub(crate) fn get_result(r: &TaskRecord) -> JsonObject {
    let mut o = to_object(&tasks::GetTaskResult::new(detailed(r)));
    add_input_requests(r, &mut o);
    o
}

/// `notifications/tasks` params (2026-07-28): what `tasks/get` would say.
pub(crate) fn notification(r: &TaskRecord) -> JsonObject {
    let mut o = to_object(&detailed(r));
    add_input_requests(r, &mut o);
    o
}

fn add_input_requests(r: &TaskRecord, o: &mut JsonObject) {
    if r.status == TaskStatus::InputRequired {
        o.insert(
            "inputRequests".into(),
            serde_json::Value::Object(r.input_requests.clone().unwrap_or_default()),
        );
    }
}

/// `CreateTaskResult` (2026-07-28): flat, `resultType: "task"`.
pub(crate) fn create_result(r: &TaskRecord) -> JsonObject {
    to_object(&tasks::CreateTaskResult::new(task(r)))
}

/// The 2025-11-25 `Task` members.
pub(crate) fn legacy_task(r: &TaskRecord) -> JsonObject {
    to_object(&legacy::LegacyTask {
        task_id: r.task_id.clone(),
        status: r.status,
        status_message: r.status_message.clone(),
        created_at: iso_time(r.created_at_ms),
        last_updated_at: iso_time(r.updated_at_ms),
        ttl: r.ttl_ms,
        poll_interval: r.poll_interval_ms,
    })
}

/// `CreateTaskResult` (2025-11-25): `{task}`.
pub(crate) fn legacy_create_result(r: &TaskRecord) -> JsonObject {
    let mut o = JsonObject::new();
    o.insert("task".into(), serde_json::Value::Object(legacy_task(r)));
    o
}
