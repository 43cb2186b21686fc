//! The Tasks extension and the experimental tasks of 2025-11-25.

use super::*;

fn ext_task(status: TaskStatus) -> tasks::Task {
    tasks::Task {
        status_message: Some("working on it".into()),
        ttl_ms: Some(60_000),
        poll_interval_ms: Some(5_000),
        ..tasks::Task::new(
            "t-1",
            status,
            "2025-11-25T10:30:00Z",
            "2025-11-25T10:40:00Z",
        )
    }
}

#[test]
fn extension_tasks_validate() {
    let mut c = Ctx::new();
    let detailed = [
        (
            "WorkingTask",
            DetailedTask::plain(ext_task(TaskStatus::Working)),
        ),
        (
            "InputRequiredTask",
            DetailedTask::input_required(ext_task(TaskStatus::Working), input_requests()),
        ),
        (
            "CompletedTask",
            DetailedTask::completed(
                ext_task(TaskStatus::Working),
                obj(serde_json::to_value(CallToolResult::text("done")).unwrap()),
            ),
        ),
        (
            "FailedTask",
            DetailedTask::failed(
                ext_task(TaskStatus::Working),
                ErrorObject::internal("boom").with_data(json!({"x": 1})),
            ),
        ),
        (
            "CancelledTask",
            DetailedTask::plain(ext_task(TaskStatus::Cancelled)),
        ),
    ];
    for (def, task) in &detailed {
        c.valid(EXT, def, task);
        c.valid(EXT, "DetailedTask", task);
        c.valid(
            EXT,
            "GetTaskResult",
            &tasks::GetTaskResult::new(task.clone()),
        );
        c.notification::<tasks::TaskStatusNotification>(
            EXT,
            "TaskStatusNotification",
            &tasks::TaskStatusNotificationParams {
                meta: None,
                task: task.clone(),
            },
        );
    }
    // The inline result of a completed task is a complete 2026-07-28
    // CallToolResult, `resultType` included, even when built from one
    // without it.
    let mut bare = obj(serde_json::to_value(CallToolResult::text("done")).unwrap());
    bare.remove("resultType");
    let done = DetailedTask::completed(ext_task(TaskStatus::Working), bare);
    let inline = done.result.clone().unwrap();
    c.valid(&["2026-07-28"], "CallToolResult", &inline);
    // Status-specific members are required.
    c.invalid(
        EXT,
        "InputRequiredTask",
        &DetailedTask::plain(ext_task(TaskStatus::InputRequired)),
    );
    c.invalid(
        EXT,
        "DetailedTask",
        &DetailedTask::plain(ext_task(TaskStatus::Completed)),
    );
    let mut unlimited = ext_task(TaskStatus::Working);
    unlimited.ttl_ms = None;
    unlimited.poll_interval_ms = None;
    unlimited.status_message = None;
    for t in [ext_task(TaskStatus::Working), unlimited.clone()] {
        c.valid(EXT, "Task", &t);
        c.valid(EXT, "CreateTaskResult", &tasks::CreateTaskResult::new(t));
    }
    for s in [
        TaskStatus::Working,
        TaskStatus::InputRequired,
        TaskStatus::Completed,
        TaskStatus::Failed,
        TaskStatus::Cancelled,
    ] {
        c.valid(EXT, "TaskStatus", &s);
        c.valid(V2025_11_25, "TaskStatus", &s);
    }
    c.request::<tasks::GetTaskRequest>(EXT, "GetTaskRequest", &TaskIdParams::new("t-1"));
    c.request::<tasks::CancelTaskRequest>(EXT, "CancelTaskRequest", &TaskIdParams::new("t-1"));
    c.request::<tasks::UpdateTaskRequest>(
        EXT,
        "UpdateTaskRequest",
        &UpdateTaskRequestParams {
            meta: None,
            task_id: "t-1".into(),
            input_responses: input_responses(),
        },
    );
    c.valid(EXT, "UpdateTaskResult", &EmptyResult::complete());
    c.valid(EXT, "CancelTaskResult", &EmptyResult::complete());
    c.invalid(EXT, "CancelTaskResult", &EmptyResult::new());
    c.finish();
}

fn legacy_task(status: TaskStatus) -> tasks::legacy::LegacyTask {
    tasks::legacy::LegacyTask {
        task_id: "t-1".into(),
        status,
        status_message: Some("s".into()),
        created_at: "2025-11-25T10:30:00Z".into(),
        last_updated_at: "2025-11-25T10:40:00Z".into(),
        ttl: Some(60_000),
        poll_interval: Some(1_000),
    }
}

#[test]
fn legacy_tasks_validate() {
    use tasks::legacy::*;
    let mut c = Ctx::new();
    let mut unlimited = legacy_task(TaskStatus::Working);
    unlimited.ttl = None;
    for t in [legacy_task(TaskStatus::Completed), unlimited] {
        c.valid(V2025_11_25, "Task", &t);
        let created = LegacyCreateTaskResult {
            meta: Some(obj(json!({(meta::MODEL_IMMEDIATE_RESPONSE): "Started."}))),
            task: t.clone(),
        };
        c.valid(V2025_11_25, "CreateTaskResult", &created);
        let got = LegacyGetTaskResult {
            meta: None,
            task: t.clone(),
        };
        c.valid(V2025_11_25, "GetTaskResult", &got);
        c.valid(V2025_11_25, "CancelTaskResult", &got);
        c.notification::<LegacyTaskStatusNotification>(
            V2025_11_25,
            "TaskStatusNotification",
            &LegacyTaskStatusNotificationParams {
                meta: None,
                task: t,
            },
        );
    }
    c.valid(
        V2025_11_25,
        "ListTasksResult",
        &ListTasksResult {
            meta: None,
            tasks: vec![legacy_task(TaskStatus::Failed)],
            next_cursor: Some("n".into()),
        },
    );
    c.valid(
        V2025_11_25,
        "GetTaskPayloadResult",
        &GetTaskPayloadResult {
            meta: Some(obj(json!({(meta::RELATED_TASK): {"taskId": "t-1"}}))),
            payload: obj(serde_json::to_value(CallToolResult::text("x")).unwrap()),
        },
    );
    c.valid(
        V2025_11_25,
        "RelatedTaskMetadata",
        &RelatedTaskMetadata {
            task_id: "t-1".into(),
        },
    );
    c.valid(V2025_11_25, "TaskMetadata", &TaskMetadata { ttl: Some(1) });
    c.valid(
        V2025_11_25,
        "TaskAugmentedRequestParams",
        &TaskAugmentedRequestParams {
            meta: Some(meta_with_progress()),
            task: Some(TaskMetadata::default()),
        },
    );
    let id = TaskIdParams::new("t-1");
    c.request::<GetTaskRequest>(V2025_11_25, "GetTaskRequest", &id);
    c.request::<GetTaskPayloadRequest>(V2025_11_25, "GetTaskPayloadRequest", &id);
    c.request::<CancelTaskRequest>(V2025_11_25, "CancelTaskRequest", &id);
    c.request::<ListTasksRequest>(
        V2025_11_25,
        "ListTasksRequest",
        &PaginatedRequestParams::default(),
    );
    // The two designs are not interchangeable.
    c.invalid(V2025_11_25, "Task", &ext_task(TaskStatus::Working));
    c.invalid(EXT, "Task", &legacy_task(TaskStatus::Working));
    c.finish();
}
