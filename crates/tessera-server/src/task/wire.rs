//! A stored task in the wire shapes of both designs.

use serde::Serialize;
use tessera_types::JsonObject;
use tessera_types::tasks::{self, DetailedTask, TaskStatus, legacy};

use super::iso_time;
use super::store::TaskRecord;

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

/// A task's typed shape and the input requests it waits on, kept as they
/// were sent (`inputRequests`, 2026-07-28, while it is `input_required`),
/// written after the other members.
#[derive(Debug, Serialize)]
pub(crate) struct WithInputs<T> {
    /// The typed shape.
    #[serde(flatten)]
    pub shape: T,
    /// `inputRequests`, as sent.
    #[serde(rename = "inputRequests", skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<JsonObject>,
}

impl<T> WithInputs<T> {
    /// `shape`, with the input requests `r` waits on.
    fn of(r: &TaskRecord, shape: T) -> Self {
        let input_requests = (r.status == TaskStatus::InputRequired)
            .then(|| r.input_requests.clone().unwrap_or_default());
        WithInputs {
            shape,
            input_requests,
        }
    }
}

/// `tasks/get` (2026-07-28): the detailed task, `resultType: "complete"`.
pub(crate) fn get_result(r: &TaskRecord) -> WithInputs<tasks::GetTaskResult> {
    WithInputs::of(r, tasks::GetTaskResult::new(detailed(r)))
}

/// `notifications/tasks` params (2026-07-28): what `tasks/get` would say,
/// tied to the subscription `meta` names.
pub(crate) fn notification(
    r: &TaskRecord,
    meta: JsonObject,
) -> WithInputs<tasks::TaskStatusNotificationParams> {
    let params = tasks::TaskStatusNotificationParams {
        meta: Some(meta),
        task: detailed(r),
    };
    WithInputs::of(r, params)
}

/// `CreateTaskResult` (2026-07-28): flat, `resultType: "task"`.
pub(crate) fn create_result(r: &TaskRecord) -> tasks::CreateTaskResult {
    tasks::CreateTaskResult::new(task(r))
}

/// `tasks/get` and `tasks/cancel` (2025-11-25): the task's members.
pub(crate) fn legacy_get_result(r: &TaskRecord) -> legacy::LegacyGetTaskResult {
    legacy::LegacyGetTaskResult {
        meta: None,
        task: legacy_task_of(r),
    }
}

/// `notifications/tasks/status` params (2025-11-25): the task's members.
pub(crate) fn legacy_notification(r: &TaskRecord) -> legacy::LegacyTaskStatusNotificationParams {
    legacy::LegacyTaskStatusNotificationParams {
        meta: None,
        task: legacy_task_of(r),
    }
}

/// The 2025-11-25 `Task` of a record.
pub(crate) fn legacy_task_of(r: &TaskRecord) -> legacy::LegacyTask {
    legacy::LegacyTask {
        task_id: r.task_id.clone(),
        status: r.status,
        status_message: r.status_message.clone(),
        created_at: iso_time(r.created_at_ms),
        last_updated_at: iso_time(r.updated_at_ms),
        ttl: r.ttl_ms,
        poll_interval: r.poll_interval_ms,
    }
}

/// `CreateTaskResult` (2025-11-25): `{task}`.
pub(crate) fn legacy_create_result(r: &TaskRecord) -> legacy::LegacyCreateTaskResult {
    legacy::LegacyCreateTaskResult {
        meta: None,
        task: legacy_task_of(r),
    }
}
