//! `tools/call` as a task: deciding whether a call becomes one, creating it
//! durably, and running the handler in the background.

use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use tessera_runtime::{BoxFuture, Request};
use tessera_types::tasks::TASKS_EXTENSION;
use tessera_types::tool::TaskSupport;
use tessera_types::{Era, ErrorCode, ErrorObject, JsonObject, ProtocolVersion};
use tokio_util::sync::CancellationToken;

use super::hub::{LiveTask, TaskHub, owner_of};
use super::live::{TaskInput, TaskLink};
use super::wire;
use crate::mrtr::InputState;
use crate::tool::ToolOutput;

/// When a 2026-07-28 call to a task-capable tool becomes a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TaskStart {
    /// The task is created before the handler runs; every question the
    /// handler asks goes through the task (`input_required`, `tasks/update`).
    #[default]
    Immediately,
    /// The handler first runs as a plain request: questions it asks before
    /// it first waits on anything else are multi round-trip rounds
    /// (`InputRequiredResult`); when it then waits on other work, the call
    /// becomes a task. An `optional` tool that finishes without waiting
    /// answers inline; a `required` one always answers with a task.
    AfterInput,
}

/// How one `tools/call` is served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TaskPlan {
    /// A plain call.
    Inline,
    /// A 2026-07-28 task, the server's decision.
    Extension { start: TaskStart, required: bool },
    /// A 2025-11-25 task-augmented call with the client's `ttl`.
    Legacy { ttl: Option<u64> },
}

/// Whether the request declares the tasks extension (2026-07-28).
pub(crate) fn declares_extension(r: &Request) -> bool {
    r.context.peer_capabilities.has_extension(TASKS_EXTENSION)
}

/// The `-32021` error naming the tasks extension.
pub(crate) fn extension_required(what: &str) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!("Missing required client capability: {what} needs the {TASKS_EXTENSION} extension"),
    )
    .with_data(required_extension())
}

/// `{"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}}`.
fn required_extension() -> serde_json::Value {
    #[derive(serde::Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Required {
        required_capabilities: tessera_types::ClientCapabilities,
    }
    let mut extensions = tessera_types::CapabilityMap::new();
    extensions.insert(TASKS_EXTENSION.into(), tessera_types::JsonObject::new());
    let required_capabilities = tessera_types::ClientCapabilities {
        extensions: Some(extensions),
        ..Default::default()
    };
    serde_json::to_value(Required {
        required_capabilities,
    })
    .unwrap_or_default()
}

/// Decides how a call to a tool with `support` is served.
pub(crate) fn plan(
    r: &Request,
    tool: &str,
    support: TaskSupport,
    start: TaskStart,
    server_has_tasks: impl FnOnce() -> bool,
) -> Result<TaskPlan, ErrorObject> {
    let not_found = |why: String| {
        ErrorObject::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("Method not found: {why}"),
        )
    };
    if r.context.era == Era::Modern {
        // A 2025-11-25 `task` member is tolerated and ignored here.
        return Ok(match (support, declares_extension(r)) {
            (TaskSupport::Forbidden, _) => TaskPlan::Inline,
            (TaskSupport::Optional, false) => TaskPlan::Inline,
            (TaskSupport::Required, false) => {
                return Err(extension_required(&format!("tool {tool}")));
            }
            (s, true) => TaskPlan::Extension {
                start,
                required: s == TaskSupport::Required,
            },
        });
    }
    let asked = r
        .params
        .as_ref()
        .filter(|p| p.may_have("task"))
        .and_then(|p| p.decode::<Asked>().ok())
        .and_then(|a| a.task);
    // Whether tasks exist here is asked only when it decides (it walks the tools).
    let Some(t) = asked else {
        return match support {
            TaskSupport::Required => Err(must_be_task(tool)),
            _ => Ok(TaskPlan::Inline),
        };
    };
    let tasks_era = r.context.version >= ProtocolVersion::V2025_11_25 && server_has_tasks();
    match (support, tasks_era) {
        (TaskSupport::Required, false) => Err(must_be_task(tool)),
        (TaskSupport::Forbidden, true) => Err(not_found(format!(
            "tool {tool} cannot be called as a task (execution.taskSupport is \"forbidden\")"
        ))),
        (_, true) => Ok(TaskPlan::Legacy { ttl: t.ttl }),
        (_, false) => Ok(TaskPlan::Inline),
    }
}

/// The refusal of a call without a task to a tool that needs one.
fn must_be_task(tool: &str) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!(
            "Method not found: tool {tool} must be called as a task (execution.taskSupport is \"required\")"
        ),
    )
}

/// What the task path of a call needs.
pub(crate) struct TaskCall {
    pub hub: Arc<TaskHub>,
    pub link: Arc<TaskLink>,
    pub cancel: CancellationToken,
    pub input: Arc<TaskInput>,
    pub owner: String,
    pub plan: TaskPlan,
    pub notify: Option<tessera_runtime::Peer>,
}

impl TaskCall {
    /// Prepares the task side of a call (before the handler's context is built).
    pub fn new(hub: Arc<TaskHub>, r: &Request, plan: TaskPlan) -> Self {
        let input = Arc::new(TaskInput::default());
        TaskCall {
            link: Arc::new(TaskLink::new(hub.clone(), input.clone())),
            hub,
            cancel: CancellationToken::new(),
            input,
            owner: owner_of(r),
            plan,
            notify: (r.context.era == Era::Legacy).then(|| r.peer.clone()),
        }
    }

    /// Serves the call: creates the task (now, or after the synchronous
    /// input rounds) and answers with its handle, a typed `CreateTaskResult`
    /// made into `T` (written straight to JSON text for a [`Reply`]). An
    /// answer given inline is the handler's tree.
    ///
    /// [`Reply`]: tessera_proto::Reply
    pub async fn run<S: Send + Sync + 'static, T: ToolOutput>(
        self,
        server: crate::Server<S>,
        r: &Request,
        principal: Option<String>,
        mrtr: Arc<InputState>,
        handler: BoxFuture<'static, Result<JsonObject, ErrorObject>>,
    ) -> Result<T, ErrorObject> {
        match self.plan {
            TaskPlan::Inline => handler.await.map(T::from),
            TaskPlan::Legacy { ttl } => {
                let ttl = self.hub.ttl_for(ttl);
                let record = self.start(&r.method, ttl, handler, true).await?;
                Ok(T::from_result(
                    &wire::legacy_create_result(&record),
                    r.context.result_shape.as_ref(),
                ))
            }
            TaskPlan::Extension {
                start: TaskStart::Immediately,
                ..
            } => {
                let ttl = self.hub.ttl_for(None);
                let record = self.start(&r.method, ttl, handler, false).await?;
                Ok(T::from_result(
                    &wire::create_result(&record),
                    r.context.result_shape.as_ref(),
                ))
            }
            TaskPlan::Extension {
                start: TaskStart::AfterInput,
                required,
            } => {
                let mut handler = handler;
                let first = std::future::poll_fn(|cx| Poll::Ready(handler.as_mut().poll(cx))).await;
                let ttl = self.hub.ttl_for(None);
                match first {
                    Poll::Ready(out) if !required => out.map(T::from),
                    Poll::Ready(out) => {
                        let record = self
                            .start(&r.method, ttl, Box::pin(async move { out }), false)
                            .await?;
                        Ok(T::from_result(
                            &wire::create_result(&record),
                            r.context.result_shape.as_ref(),
                        ))
                    }
                    Poll::Pending => {
                        let unanswered = mrtr.take_unanswered();
                        if !unanswered.missing_capabilities.is_empty()
                            || !unanswered.requests.is_empty()
                        {
                            return server
                                .input_required_result(
                                    &r.method,
                                    r.params.as_ref(),
                                    principal,
                                    &mrtr,
                                    unanswered,
                                )
                                .map(T::from);
                        }
                        let record = self.start(&r.method, ttl, handler, false).await?;
                        Ok(T::from_result(
                            &wire::create_result(&record),
                            r.context.result_shape.as_ref(),
                        ))
                    }
                }
            }
        }
    }

    /// Creates the task and runs `handler` as it.
    async fn start(
        &self,
        method: &str,
        ttl_ms: u64,
        handler: BoxFuture<'static, Result<JsonObject, ErrorObject>>,
        legacy: bool,
    ) -> Result<super::TaskRecord, ErrorObject> {
        let (record, live) = self
            .hub
            .create(
                &self.owner,
                method,
                ttl_ms,
                self.notify.clone(),
                self.cancel.clone(),
                self.input.clone(),
            )
            .await?;
        self.link.detach(&record.task_id);
        spawn_runner(
            self.hub.clone(),
            record.task_id.clone(),
            live,
            handler,
            legacy,
            Duration::from_millis(ttl_ms),
        );
        Ok(record)
    }
}

/// Runs a task's handler in the background until it finishes, the task is
/// cancelled or its lifetime ends, keeping the store up to date.
fn spawn_runner(
    hub: Arc<TaskHub>,
    task_id: String,
    live: Arc<LiveTask>,
    mut handler: BoxFuture<'static, Result<JsonObject, ErrorObject>>,
    legacy: bool,
    ttl: Duration,
) {
    tokio::spawn(async move {
        let expiry = tokio::time::sleep(ttl);
        tokio::pin!(expiry);
        loop {
            tokio::select! {
                biased;
                _ = live.cancel.cancelled() => break,
                out = &mut handler => {
                    hub.finish(&task_id, out, legacy).await;
                    break;
                }
                _ = live.input.changed.notified() => {
                    if let Err(e) = hub.publish_input(&task_id, &live).await {
                        tracing::warn!(task = %task_id, error = %e.message, "could not record a task's questions");
                    }
                }
                _ = &mut expiry => {
                    tracing::debug!(task = %task_id, "task lifetime over while running; stopped");
                    break;
                }
            }
        }
        hub.forget(&task_id);
    });
}

/// The `task` member of `tools/call` params (2025-11-25), when present and
/// not `null`.
#[derive(serde::Deserialize)]
struct Asked {
    #[serde(default)]
    task: Option<tessera_types::tasks::legacy::TaskMetadata>,
}
