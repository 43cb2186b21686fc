//! Tool calls as tasks, in both designs.
//!
//! - **2025-11-25**: [`Client::call_tool_as_task`] adds `task: {ttl}` to the
//!   call; the server answers `{task}`; the payload comes from `tasks/result`.
//! - **2026-07-28** (extension `io.modelcontextprotocol/tasks`, declared with
//!   [`ClientBuilder::tasks`](crate::ClientBuilder::tasks)): the same call
//!   declares the extension; the server answers either the result itself or
//!   `resultType: "task"`; `tasks/get` inlines the result, and the task's
//!   `inputRequests` are answered through the client's elicitation and
//!   sampling handlers with `tasks/update`.
//!
//! Either way the caller gets a [`ToolCallOutcome`]: a finished result, or a
//! [`TaskHandle`] to poll ([`TaskHandle::status`]), await
//! ([`TaskHandle::wait`], honouring the server's `pollInterval` with backoff)
//! or cancel ([`TaskHandle::cancel`]).
//!
//! **Progress**: [`Client::call_tool_as_task`] takes [`TaskOptions`] with
//! [`CallOptions`] whose [`on_progress`](CallOptions::on_progress) callback
//! sees every `notifications/progress` of the call. In 2025-11-25 the call's
//! progress token stays valid for the task's whole life, so the callback
//! keeps receiving the task's progress after the call is answered, until the
//! task ends, [`TaskHandle::wait`] returns (having delivered all that arrived
//! before the result) or the last handle is dropped. The 2026-07-28
//! extension has no progress for tasks: the callback sees the progress sent
//! while the call is in flight (before the server makes it a task), and
//! [`TaskHandle::wait`]'s `on_change` reports the task's status messages.
//!
//! ```no_run
//! # async fn run(client: tessera_client::Client) -> Result<(), tessera_client::ClientError> {
//! use std::time::Duration;
//! use tessera_client::{CallOptions, TaskOptions, ToolCallOutcome};
//!
//! let options = CallOptions::new()
//!     .on_progress(|p| eprintln!("{}/{:?} {}", p.progress, p.total, p.message.unwrap_or_default()));
//! let options = TaskOptions::default()
//!     .ttl(Duration::from_secs(60))
//!     .call_options(options);
//! match client.call_tool_as_task("render", (), options).await? {
//!     ToolCallOutcome::Done(result) => println!("{result:?}"),
//!     ToolCallOutcome::Task(task) => {
//!         let result = task.wait(|state| eprintln!("{:?}", state.status)).await?;
//!         println!("{result:?}");
//!     }
//! }
//! # Ok(()) }
//! ```

use std::sync::Arc;
use std::time::Duration;
use tessera_types::methods;

use serde_json::Value;
use tessera_proto::CallError;
use tessera_runtime::PeerError;
use tessera_types::pagination::PaginatedRequestParams;
use tessera_types::tasks::TaskStatus;
use tessera_types::{
    CallToolRequestParams, CallToolResult, Era, ErrorObject, JsonObject, ResultType, TaskIdParams,
};

use crate::client::Client;
use crate::error::ClientError;
use crate::input::to_object;
use crate::options::CallOptions;
use crate::task_progress::{ProgressFeed, fresh_token};

/// The answer to [`Client::call_tool_as_task`].
#[derive(Debug)]
pub enum ToolCallOutcome {
    /// The server answered at once.
    Done(CallToolResult),
    /// The server made the call a task.
    Task(TaskHandle),
}

/// How to call a tool as a task ([`Client::call_tool_as_task`]).
#[derive(Clone, Default)]
pub struct TaskOptions {
    /// How long the server should keep the task, in milliseconds
    /// (2025-11-25: the `task.ttl` the client asks for; 2026-07-28 servers
    /// decide themselves).
    pub ttl: Option<u64>,
    /// Progress callback, timeout, `_meta` and log level of the call.
    pub call: CallOptions,
}

impl std::fmt::Debug for TaskOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskOptions")
            .field("ttl", &self.ttl)
            .finish_non_exhaustive()
    }
}

impl TaskOptions {
    /// Asks the server to keep the task for `ttl`.
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = Some(u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX));
        self
    }

    /// The call's options (a progress callback among them).
    pub fn call_options(mut self, call: CallOptions) -> Self {
        self.call = call;
        self
    }
}

/// A task's state as `tasks/get` reports it (both designs).
#[derive(Debug, Clone, PartialEq)]
pub struct TaskState {
    /// The task id.
    pub task_id: String,
    /// The status.
    pub status: TaskStatus,
    /// The server's description of the state.
    pub status_message: Option<String>,
    /// The suggested polling interval.
    pub poll_interval: Option<Duration>,
    /// Everything the server sent (`result`, `error`, `inputRequests`, times…).
    pub raw: JsonObject,
}

impl TaskState {
    fn from_raw(raw: JsonObject) -> Result<Self, ClientError> {
        let head: TaskHead =
            tessera_types::decode_object_params(Some(&raw)).map_err(|e| ClientError::Protocol {
                method: methods::TASKS_GET.into(),
                reason: format!("not a task: {e}"),
            })?;
        Ok(TaskState {
            task_id: head.task_id,
            status: head.status,
            status_message: head.status_message,
            poll_interval: head
                .poll_interval_ms
                .or(head.poll_interval)
                .map(Duration::from_millis),
            raw,
        })
    }
}

/// The members of a task (either era's shape) that the client reads; the
/// rest stays in [`TaskState::raw`].
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct TaskHead {
    task_id: String,
    status: TaskStatus,
    #[serde(default)]
    status_message: Option<String>,
    /// The 2026-07-28 extension's interval.
    #[serde(default)]
    poll_interval_ms: Option<u64>,
    /// The 2025-11-25 interval.
    #[serde(default)]
    poll_interval: Option<u64>,
}

/// A `tools/call` answer that may have created a task (2025-11-25).
#[derive(serde::Deserialize)]
struct CreatedTask {
    #[serde(default)]
    task: Option<JsonObject>,
}

/// A `tasks/list` page (2025-11-25), each task read by [`TaskState`].
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct TaskPage {
    #[serde(default)]
    tasks: Vec<JsonObject>,
    #[serde(default)]
    next_cursor: Option<String>,
}

/// The params of `tasks/update` answering a task's input requests.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct TaskAnswers<'a, R: serde::Serialize> {
    task_id: &'a str,
    input_responses: &'a R,
}

/// What a terminal 2026-07-28 task carries.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct TaskOutcome {
    #[serde(default)]
    result: Option<JsonObject>,
    #[serde(default)]
    error: Option<ErrorObject>,
    #[serde(default)]
    input_requests: Option<JsonObject>,
}

impl TaskState {
    fn outcome(&self) -> Result<TaskOutcome, ClientError> {
        tessera_types::decode_object_params(Some(&self.raw)).map_err(|e| ClientError::Protocol {
            method: methods::TASKS_GET.into(),
            reason: format!("malformed task: {e}"),
        })
    }
}

/// A task on the server: poll it, wait for it, cancel it. Cheap to clone.
#[derive(Debug, Clone)]
pub struct TaskHandle {
    client: Client,
    task_id: String,
    poll_interval: Option<Duration>,
    progress: Option<Arc<ProgressFeed>>,
}

/// A `tools/call` result read into its type.
fn call_result(raw: JsonObject) -> Result<CallToolResult, ClientError> {
    serde_json::from_value(Value::Object(raw)).map_err(|source| ClientError::Decode {
        method: methods::TOOLS_CALL.to_owned(),
        source,
    })
}

fn remote(e: ErrorObject) -> ClientError {
    ClientError::Request(PeerError::Call(CallError::Remote(e)))
}

/// Polling bounds: the server's interval, or 500 ms, backing off ×1.5 up to 5 s
/// while nothing changes.
const DEFAULT_POLL: Duration = Duration::from_millis(500);
const MAX_POLL: Duration = Duration::from_secs(5);

impl Client {
    /// Calls a tool as a task: asks for one (2025-11-25, kept for
    /// [`TaskOptions::ttl`]) or lets the server decide (2026-07-28; the client must declare
    /// the extension, see [`ClientBuilder::tasks`](crate::ClientBuilder::tasks)).
    /// The arguments are any value that serializes to a JSON object (or to
    /// `null` for none); anything else is refused with
    /// [`ClientError::InvalidArguments`] before anything is sent. Multi
    /// round-trip input before the task exists is answered through the
    /// client's handlers. A progress callback in [`TaskOptions::call`] sees the call's progress and, for a 2025-11-25 task,
    /// the task's progress until it ends (see the [module](crate::task)
    /// documentation).
    pub async fn call_tool_as_task(
        &self,
        name: &str,
        arguments: impl serde::Serialize,
        options: TaskOptions,
    ) -> Result<ToolCallOutcome, ClientError> {
        let arguments = crate::mrtr::tool_arguments(name, arguments)?;
        let TaskOptions { ttl, call } = options;
        let options = &call;
        let mut params = CallToolRequestParams {
            arguments: Some(arguments.unwrap_or_default()),
            ..CallToolRequestParams::new(name)
        };
        if self.era() == Era::Legacy {
            params.task = Some(tessera_types::tasks::legacy::TaskMetadata { ttl });
            // The task's progress outlives the call: the client names the
            // token itself and follows it on its events, subscribed before
            // the call goes out.
            let mut call_options = options.clone();
            let feed = call_options.progress.take().map(|callback| {
                let token = fresh_token();
                params.meta = Some(
                    tessera_types::encode_params(&tessera_types::RequestMeta {
                        progress_token: Some(token.clone()),
                        ..Default::default()
                    })
                    .unwrap_or_default(),
                );
                Arc::new(ProgressFeed::start(self.events(), token, callback))
            });
            let raw = self
                .request_raw_with(methods::TOOLS_CALL, Some(to_object(&params)), &call_options)
                .await?;
            let created: Option<CreatedTask> = tessera_types::decode_object_params(Some(&raw))
                .ok()
                .and_then(|c: CreatedTask| c.task.is_some().then_some(c));
            return Ok(match created.and_then(|c| c.task) {
                Some(task) => {
                    let mut handle = self.handle(TaskState::from_raw(task)?);
                    if let Some(f) = &feed {
                        f.set_task(&handle.task_id);
                    }
                    handle.progress = feed;
                    ToolCallOutcome::Task(handle)
                }
                _ => {
                    if let Some(f) = feed {
                        f.finish().await;
                    }
                    ToolCallOutcome::Done(call_result(raw)?)
                }
            });
        }
        let raw: JsonObject = self
            .call_rounds(methods::TOOLS_CALL, to_object(&params), options)
            .await?;
        if ResultType::of(&raw) == ResultType::Task {
            return Ok(ToolCallOutcome::Task(
                self.handle(TaskState::from_raw(raw)?),
            ));
        }
        Ok(ToolCallOutcome::Done(call_result(raw)?))
    }

    fn handle(&self, state: TaskState) -> TaskHandle {
        TaskHandle {
            client: self.clone(),
            task_id: state.task_id,
            poll_interval: state.poll_interval,
            progress: None,
        }
    }

    /// A handle on task `task_id` (created earlier, perhaps by another process).
    pub fn task(&self, task_id: impl Into<String>) -> TaskHandle {
        TaskHandle {
            client: self.clone(),
            task_id: task_id.into(),
            poll_interval: None,
            progress: None,
        }
    }

    /// One page of this client's tasks (2025-11-25 `tasks/list`). The
    /// 2026-07-28 extension has no listing: in that era this fails with
    /// [`ClientError::Unsupported`] without asking the server.
    pub async fn list_tasks(
        &self,
        cursor: Option<&str>,
    ) -> Result<(Vec<TaskState>, Option<String>), ClientError> {
        if self.era() == Era::Modern {
            return Err(ClientError::Unsupported(format!(
                "{} at protocol version {} (the tasks extension has no listing)",
                methods::TASKS_LIST,
                self.protocol_version()
            )));
        }
        let p = match cursor {
            Some(c) => PaginatedRequestParams::after(c),
            None => PaginatedRequestParams::default(),
        };
        let raw = self
            .request_raw(methods::TASKS_LIST, Some(to_object(&p)))
            .await?;
        let page: TaskPage =
            tessera_types::decode_object_params(Some(&raw)).map_err(|e| ClientError::Protocol {
                method: methods::TASKS_LIST.into(),
                reason: format!("malformed page: {e}"),
            })?;
        let tasks = page
            .tasks
            .into_iter()
            .map(TaskState::from_raw)
            .collect::<Result<Vec<_>, _>>()?;
        Ok((tasks, page.next_cursor))
    }
}

impl TaskHandle {
    /// The task id.
    pub fn id(&self) -> &str {
        &self.task_id
    }

    fn id_params(&self) -> JsonObject {
        to_object(&TaskIdParams::new(self.task_id.clone()))
    }

    /// The task's current state (`tasks/get`).
    pub async fn status(&self) -> Result<TaskState, ClientError> {
        let raw = self
            .client
            .request_raw(methods::TASKS_GET, Some(self.id_params()))
            .await?;
        TaskState::from_raw(raw)
    }

    /// Cancels the task (`tasks/cancel`).
    pub async fn cancel(&self) -> Result<(), ClientError> {
        self.client
            .request_raw(methods::TASKS_CANCEL, Some(self.id_params()))
            .await
            .map(|_| ())
    }

    /// The final result of a terminal task: the tool result, or the
    /// JSON-RPC error the call ended with.
    pub async fn result(&self) -> Result<JsonObject, ClientError> {
        if self.client.era() == Era::Legacy {
            // 2025-11-25: tasks/result waits for the end and returns the payload.
            return self
                .client
                .request_raw(methods::TASKS_RESULT, Some(self.id_params()))
                .await;
        }
        let s = self.status().await?;
        terminal_payload(&s).unwrap_or_else(|| {
            Err(ClientError::Protocol {
                method: methods::TASKS_GET.into(),
                reason: format!("task {} is still {:?}", self.task_id, s.status),
            })
        })
    }

    /// Waits until the task ends and returns its result, polling at the
    /// server's interval (backing off while nothing changes) and calling
    /// `on_change` with each new state. A 2026-07-28 task waiting for input
    /// is answered through the client's handlers (`tasks/update`); a
    /// 2025-11-25 one through `tasks/result`, whose server requests the
    /// handlers answer.
    ///
    /// The task's progress (a 2025-11-25 task created with a progress
    /// callback) that arrived before the result has been delivered when
    /// this returns.
    pub async fn wait(
        &self,
        on_change: impl FnMut(&TaskState),
    ) -> Result<CallToolResult, ClientError> {
        call_result(self.wait_raw(on_change).await?)
    }

    /// [`wait`](TaskHandle::wait), with the result as the server sent it
    /// (every member kept, for tools that show it whole).
    pub async fn wait_raw(
        &self,
        on_change: impl FnMut(&TaskState),
    ) -> Result<JsonObject, ClientError> {
        let out = self.wait_inner(on_change).await;
        if let Some(f) = &self.progress {
            f.finish().await;
        }
        out
    }

    async fn wait_inner(
        &self,
        mut on_change: impl FnMut(&TaskState),
    ) -> Result<JsonObject, ClientError> {
        let mut last: Option<(TaskStatus, Option<String>)> = None;
        let mut delay = self.poll_interval.unwrap_or(DEFAULT_POLL);
        loop {
            let s = self.status().await?;
            let key = (s.status, s.status_message.clone());
            if last.as_ref() != Some(&key) {
                on_change(&s);
                last = Some(key);
                delay = s
                    .poll_interval
                    .or(self.poll_interval)
                    .unwrap_or(DEFAULT_POLL);
            } else {
                delay = (delay.mul_f64(1.5)).min(MAX_POLL);
            }
            if let Some(out) = terminal_payload(&s) {
                return match (self.client.era(), s.status) {
                    (Era::Legacy, TaskStatus::Completed | TaskStatus::Failed) => {
                        self.result().await
                    }
                    _ => out,
                };
            }
            if s.status == TaskStatus::InputRequired {
                if self.client.era() == Era::Legacy {
                    return self.result().await;
                }
                if let Some(requests) = s.outcome()?.input_requests {
                    let responses = self.client.fulfil_raw(&requests).await?;
                    let update = TaskAnswers {
                        task_id: &self.task_id,
                        input_responses: &responses,
                    };
                    self.client
                        .request_raw(methods::TASKS_UPDATE, Some(to_object(&update)))
                        .await?;
                    continue;
                }
            }
            tokio::time::sleep(delay).await;
        }
    }
}

/// The outcome carried by a terminal 2026-07-28 state, if it is terminal.
fn terminal_payload(s: &TaskState) -> Option<Result<JsonObject, ClientError>> {
    match s.status {
        TaskStatus::Completed => Some(s.outcome().map(|o| o.result.unwrap_or_default())),
        TaskStatus::Failed => Some(Err(match s.outcome() {
            Ok(TaskOutcome { error: Some(e), .. }) => remote(e),
            Ok(_) => remote(ErrorObject::internal(
                s.status_message
                    .clone()
                    .unwrap_or_else(|| "the task failed".into()),
            )),
            Err(e) => e,
        })),
        TaskStatus::Cancelled => Some(Err(remote(ErrorObject::internal(format!(
            "task {} was cancelled",
            s.task_id
        ))))),
        TaskStatus::Working | TaskStatus::InputRequired => None,
    }
}
