//! Tasks: durable handles for long-running requests.
//!
//! Two incompatible designs exist, so this module has two sets of types:
//!
//! - the top level holds the **Tasks extension** (`io.modelcontextprotocol/tasks`)
//!   used with 2026-07-28: the server may answer `tools/call` with a
//!   [`CreateTaskResult`] (`resultType: "task"`); the client polls
//!   `tasks/get`, answers input with `tasks/update` and cancels with
//!   `tasks/cancel`; updates arrive as `notifications/tasks`;
//! - [`legacy`] holds the experimental tasks of **2025-11-25**
//!   (`ttl`/`pollInterval` instead of `ttlMs`/`pollIntervalMs`, a `task`
//!   member in request params, `tasks/result`, `tasks/list`,
//!   `notifications/tasks/status`).
//!
//! Both share [`TaskStatus`] and the parameters of `tasks/get` and
//! `tasks/cancel` ([`TaskIdParams`]).

use serde::{Deserialize, Serialize};

use crate::JsonObject;
use crate::jsonrpc::ErrorObject;
use crate::macros::{notifications, requests};
use crate::mrtr::{InputRequests, InputResponses};
use crate::result::{EmptyResult, ResultType};

/// The identifier of the Tasks extension, the key in `capabilities.extensions`.
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// The state of a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// In progress.
    Working,
    /// Waiting for input from the client.
    InputRequired,
    /// Finished with a result.
    Completed,
    /// Finished with a JSON-RPC error.
    Failed,
    /// Cancelled before it finished.
    Cancelled,
}

impl TaskStatus {
    /// Whether the task can no longer change.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }
}

/// The settings of the Tasks extension in `capabilities.extensions`: an
/// empty object (the schema allows no members).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TasksExtensionCapability {}

impl crate::extension::ExtensionSettings for TasksExtensionCapability {
    const ID: &'static str = TASKS_EXTENSION;
}

/// A task's state (Tasks extension `Task`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// The task's identifier.
    pub task_id: String,
    /// The status.
    pub status: TaskStatus,
    /// A human-readable description of the state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// ISO 8601 creation time.
    pub created_at: String,
    /// ISO 8601 time of the last update.
    pub last_updated_at: String,
    /// Lifetime in milliseconds from creation; `None` (JSON `null`, always
    /// written) means unlimited.
    pub ttl_ms: Option<u64>,
    /// Suggested polling interval in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval_ms: Option<u64>,
}

impl Task {
    /// A task with the given id, status and times, unlimited lifetime.
    pub fn new(
        task_id: impl Into<String>,
        status: TaskStatus,
        created_at: impl Into<String>,
        last_updated_at: impl Into<String>,
    ) -> Self {
        Task {
            task_id: task_id.into(),
            status,
            status_message: None,
            created_at: created_at.into(),
            last_updated_at: last_updated_at.into(),
            ttl_ms: None,
            poll_interval_ms: None,
        }
    }
}

/// A task with its status-specific members (Tasks extension
/// `DetailedTask`, the union of `WorkingTask`, `InputRequiredTask`,
/// `CompletedTask`, `FailedTask` and `CancelledTask`).
///
/// `input_requests` belongs to `input_required`, `result` to `completed`
/// and `error` to `failed`; the constructors set the right one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DetailedTask {
    /// The common task members.
    #[serde(flatten)]
    pub task: Task,
    /// Outstanding requests (status `input_required`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<InputRequests>,
    /// The final result of the original request (status `completed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<JsonObject>,
    /// The JSON-RPC error the request failed with (status `failed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorObject>,
}

impl DetailedTask {
    /// A task in a status without payload (`working`, `cancelled`).
    pub fn plain(task: Task) -> Self {
        DetailedTask {
            task,
            input_requests: None,
            result: None,
            error: None,
        }
    }

    /// A task waiting for input.
    pub fn input_required(mut task: Task, requests: InputRequests) -> Self {
        task.status = TaskStatus::InputRequired;
        DetailedTask {
            input_requests: Some(requests),
            ..DetailedTask::plain(task)
        }
    }

    /// A completed task with its result. The inline result is a complete
    /// 2026-07-28 result, so `resultType: "complete"` is added when the
    /// result has none (the base schema requires it on `CallToolResult`).
    pub fn completed(mut task: Task, mut result: JsonObject) -> Self {
        task.status = TaskStatus::Completed;
        if crate::probe::Probe::of_object(&result)
            .result_type
            .is_absent()
        {
            // `{"resultType": "complete"}`: always encoded.
            result
                .extend(crate::encode_params(&crate::EmptyResult::complete()).unwrap_or_default());
        }
        DetailedTask {
            result: Some(result),
            ..DetailedTask::plain(task)
        }
    }

    /// A failed task with its error.
    pub fn failed(mut task: Task, error: ErrorObject) -> Self {
        task.status = TaskStatus::Failed;
        DetailedTask {
            error: Some(error),
            ..DetailedTask::plain(task)
        }
    }
}

/// The answer to a request the server turned into a task
/// (`resultType: "task"`; Tasks extension).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateTaskResult {
    /// Reserved metadata (`_meta`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// Always `task`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// The new task.
    #[serde(flatten)]
    pub task: Task,
}

impl CreateTaskResult {
    /// A result handing out `task`.
    pub fn new(task: Task) -> Self {
        CreateTaskResult {
            meta: None,
            result_type: Some(ResultType::Task),
            task,
        }
    }
}

/// Parameters naming a task: `tasks/get` and `tasks/cancel` (both designs),
/// `tasks/result` (2025-11-25).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskIdParams {
    /// Reserved metadata (`_meta`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// The task.
    pub task_id: String,
}

impl TaskIdParams {
    /// Parameters naming `task_id`.
    pub fn new(task_id: impl Into<String>) -> Self {
        TaskIdParams {
            meta: None,
            task_id: task_id.into(),
        }
    }
}

/// Result of `tasks/get` (Tasks extension): the detailed task with
/// `resultType: "complete"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetTaskResult {
    /// Reserved metadata (`_meta`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// Always `complete`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// The task.
    #[serde(flatten)]
    pub task: DetailedTask,
}

impl GetTaskResult {
    /// A result reporting `task`.
    pub fn new(task: DetailedTask) -> Self {
        GetTaskResult {
            meta: None,
            result_type: Some(ResultType::Complete),
            task,
        }
    }
}

/// Parameters of `tasks/update` (Tasks extension).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateTaskRequestParams {
    /// Reserved metadata (`_meta`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// The task.
    pub task_id: String,
    /// Responses to outstanding `inputRequests` of the task.
    pub input_responses: InputResponses,
}

/// Result of `tasks/update` (Tasks extension): an empty acknowledgement
/// with `resultType: "complete"`.
pub type UpdateTaskResult = EmptyResult;

/// Result of `tasks/cancel` (Tasks extension): an empty acknowledgement
/// with `resultType: "complete"`.
pub type CancelTaskResult = EmptyResult;

/// Parameters of `notifications/tasks` (Tasks extension): the full
/// detailed task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskStatusNotificationParams {
    /// Reserved metadata (`_meta`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// The task.
    #[serde(flatten)]
    pub task: DetailedTask,
}

/// Read the same way as the 2025-11-25 notification's params
/// ([`legacy::LegacyTaskStatusNotificationParams`]), whatever the nesting.
impl TaskStatusNotificationParams {
    /// The task's identifier.
    pub fn task_id(&self) -> &str {
        &self.task.task.task_id
    }

    /// The task's status.
    pub fn status(&self) -> TaskStatus {
        self.task.task.status
    }

    /// The human-readable description of the state, if any.
    pub fn status_message(&self) -> Option<&str> {
        self.task.task.status_message.as_deref()
    }
}

crate::result::impl_result_fields!(CreateTaskResult, GetTaskResult);

requests! {
    /// `tasks/get` (Tasks extension).
    GetTaskRequest: crate::methods::TASKS_GET, TaskIdParams => GetTaskResult;
    /// `tasks/update` (Tasks extension).
    UpdateTaskRequest: crate::methods::TASKS_UPDATE, UpdateTaskRequestParams => UpdateTaskResult;
    /// `tasks/cancel` (Tasks extension).
    CancelTaskRequest: crate::methods::TASKS_CANCEL, TaskIdParams => CancelTaskResult;
}

notifications! {
    /// `notifications/tasks` (Tasks extension).
    TaskStatusNotification: crate::methods::NOTIFICATIONS_TASKS, TaskStatusNotificationParams;
}

pub mod legacy {
    //! The experimental tasks of protocol version 2025-11-25.
    //!
    //! A requestor asks for a task by adding `task` ([`TaskMetadata`]) to
    //! the params of `tools/call`, `sampling/createMessage` or
    //! `elicitation/create`; the receiver answers with a
    //! [`LegacyCreateTaskResult`]; the payload is fetched with `tasks/result`.
    //!
    //! Where the Tasks extension (the parent module) has a definition of the
    //! same schema name and a different shape, the type here is named
    //! `Legacy…` (`Task` is [`LegacyTask`], `TaskStatusNotificationParams`
    //! is [`LegacyTaskStatusNotificationParams`], …), so that a name, in code
    //! and in compiler messages, means one shape.

    use serde::{Deserialize, Serialize};

    use super::{TaskIdParams, TaskStatus};
    use crate::JsonObject;
    use crate::macros::{notifications, requests};
    use crate::pagination::{Cursor, PaginatedRequestParams};

    /// Asks for a task-augmented request (the `task` member of params).
    #[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
    pub struct TaskMetadata {
        /// Requested lifetime in milliseconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub ttl: Option<u64>,
    }

    /// Links a message to a task, under `_meta["io.modelcontextprotocol/related-task"]`.
    #[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct RelatedTaskMetadata {
        /// The task.
        pub task_id: String,
    }

    /// The base of task-augmentable params (schema `TaskAugmentedRequestParams`).
    #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
    pub struct TaskAugmentedRequestParams {
        /// Reserved metadata (`_meta`).
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        pub meta: Option<JsonObject>,
        /// Asks for a task.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub task: Option<TaskMetadata>,
    }

    /// A task's state (2025-11-25 schema `Task`).
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct LegacyTask {
        /// The task's identifier.
        pub task_id: String,
        /// The status.
        pub status: TaskStatus,
        /// A human-readable description of the state.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub status_message: Option<String>,
        /// ISO 8601 creation time.
        pub created_at: String,
        /// ISO 8601 time of the last update.
        pub last_updated_at: String,
        /// Lifetime in milliseconds; `None` (JSON `null`, always written)
        /// means unlimited.
        pub ttl: Option<u64>,
        /// Suggested polling interval in milliseconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub poll_interval: Option<u64>,
    }

    /// The answer to a task-augmented request: `{task}`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct LegacyCreateTaskResult {
        /// Reserved metadata (`_meta`); may carry
        /// `io.modelcontextprotocol/model-immediate-response`.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        pub meta: Option<JsonObject>,
        /// The new task.
        pub task: LegacyTask,
    }

    /// Result of `tasks/get` and `tasks/cancel`: the task's members at top level.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct LegacyGetTaskResult {
        /// Reserved metadata (`_meta`).
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        pub meta: Option<JsonObject>,
        /// The task.
        #[serde(flatten)]
        pub task: LegacyTask,
    }

    /// Result of `tasks/cancel`: the task after cancellation.
    pub type LegacyCancelTaskResult = LegacyGetTaskResult;

    /// Result of `tasks/result`: the original request's result, whatever its
    /// shape.
    #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
    pub struct GetTaskPayloadResult {
        /// Reserved metadata (`_meta`).
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        pub meta: Option<JsonObject>,
        /// The result's members.
        #[serde(flatten)]
        pub payload: JsonObject,
    }

    /// Result of `tasks/list`.
    #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct ListTasksResult {
        /// Reserved metadata (`_meta`).
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        pub meta: Option<JsonObject>,
        /// The tasks on this page.
        pub tasks: Vec<LegacyTask>,
        /// The cursor of the next page.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub next_cursor: Option<Cursor>,
    }

    /// Parameters of `notifications/tasks/status`: the task's members.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct LegacyTaskStatusNotificationParams {
        /// Reserved metadata (`_meta`).
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        pub meta: Option<JsonObject>,
        /// The task.
        #[serde(flatten)]
        pub task: LegacyTask,
    }

    /// Read the same way as the Tasks extension's notification params
    /// ([`TaskStatusNotificationParams`](super::TaskStatusNotificationParams)).
    impl LegacyTaskStatusNotificationParams {
        /// The task's identifier.
        pub fn task_id(&self) -> &str {
            &self.task.task_id
        }

        /// The task's status.
        pub fn status(&self) -> TaskStatus {
            self.task.status
        }

        /// The human-readable description of the state, if any.
        pub fn status_message(&self) -> Option<&str> {
            self.task.status_message.as_deref()
        }
    }

    requests! {
        /// `tasks/get` (2025-11-25).
        LegacyGetTaskRequest: crate::methods::TASKS_GET, TaskIdParams => LegacyGetTaskResult;
        /// `tasks/result` (2025-11-25): waits for and returns the payload.
        GetTaskPayloadRequest: crate::methods::TASKS_RESULT, TaskIdParams => GetTaskPayloadResult;
        /// `tasks/cancel` (2025-11-25).
        LegacyCancelTaskRequest: crate::methods::TASKS_CANCEL, TaskIdParams => LegacyCancelTaskResult;
        /// `tasks/list` (2025-11-25).
        ListTasksRequest: crate::methods::TASKS_LIST, PaginatedRequestParams => ListTasksResult;
    }

    notifications! {
        /// `notifications/tasks/status` (2025-11-25).
        LegacyTaskStatusNotification: crate::methods::NOTIFICATIONS_TASKS_STATUS, LegacyTaskStatusNotificationParams;
    }
}
