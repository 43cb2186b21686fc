//! The task methods of protocol version 2025-11-25: `tasks/get`,
//! `tasks/result`, `tasks/list`, `tasks/cancel`.

use std::time::Duration;
use tessera_types::methods;

use serde_json::Value;
use tessera_runtime::{BoxFuture, HandlerResult, Request};
use tessera_types::tasks::TaskStatus;
use tessera_types::{ErrorObject, JsonObject, ProtocolVersion};

use super::extension::{task_id_param, unknown_task};
use super::hub::owner_of;
use super::store::{TaskChange, TaskRecord, Transition};
use super::wire;
use crate::server::{Server, ready};

/// The `_meta` key that ties a message to a task.
pub const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

impl<S: Send + Sync + 'static> Server<S> {
    pub(crate) fn handle_tasks_legacy(&self, r: Request) -> BoxFuture<'static, HandlerResult> {
        if r.context.version < ProtocolVersion::V2025_11_25 || !self.offers_tasks() {
            return ready(Err(ErrorObject::method_not_found(&r.method)));
        }
        let hub = self.tasks().clone();
        let owner = owner_of(&r);
        if r.method == methods::TASKS_LIST {
            let cursor = match tessera_types::decode_params::<
                tessera_types::pagination::PaginatedRequestParams,
            >(r.params.as_ref())
            {
                Ok(p) => p.cursor,
                Err(e) => {
                    return ready(Err(ErrorObject::invalid_params(format!(
                        "Invalid params: {e}"
                    ))));
                }
            };
            let limit = self.inner.settings.page_size;
            return Box::pin(async move {
                let page = hub.list(&owner, cursor.as_deref(), limit).await?;
                Ok(crate::server::to_object(
                    &tessera_types::tasks::legacy::ListTasksResult {
                        meta: None,
                        tasks: page.tasks.iter().map(wire::legacy_task_of).collect(),
                        next_cursor: page.next_cursor,
                    },
                ))
            });
        }
        let id = match task_id_param(&r) {
            Ok(id) => id,
            Err(e) => return ready(Err(e)),
        };
        Box::pin(async move {
            let Some(record) = hub.get(&owner, &id).await? else {
                return Err(unknown_task(&id));
            };
            match r.method.as_str() {
                methods::TASKS_GET => Ok(wire::legacy_task(&record)),
                methods::TASKS_CANCEL => {
                    let refuse = || {
                        ErrorObject::invalid_params(format!(
                            "Invalid params: task {id} is already {} and cannot be cancelled",
                            status_name(record.status)
                        ))
                    };
                    if record.status.is_terminal() {
                        return Err(refuse());
                    }
                    match hub.apply(&id, TaskChange::cancelled()).await? {
                        Transition::Applied(now) => {
                            if let Some(live) = hub.running(&id) {
                                live.cancel.cancel();
                            } else if let Some(bus) = hub.bus() {
                                super::relay::send_cancel(bus.as_ref(), &id).await;
                            }
                            Ok(wire::legacy_task(&now))
                        }
                        Transition::Terminal(_) => Err(refuse()),
                        Transition::NotFound => Err(unknown_task(&id)),
                    }
                }
                methods::TASKS_RESULT => {
                    let done = wait_terminal(&hub, &owner, record, &r).await?;
                    payload(done)
                }
                other => Err(ErrorObject::method_not_found(other)),
            }
        })
    }
}

/// Waits until the task is terminal (or gone, or the request is cancelled).
async fn wait_terminal(
    hub: &super::hub::TaskHub,
    owner: &str,
    mut record: TaskRecord,
    r: &Request,
) -> Result<TaskRecord, ErrorObject> {
    let id = record.task_id.clone();
    let mut changes = hub.watch();
    // The subscription is taken before the second read, so no change is missed.
    if let Some(now) = hub.get(owner, &id).await? {
        record = now;
    }
    let expires_in = record.ttl_ms.map(|t| {
        record
            .created_at_ms
            .saturating_add(t)
            .saturating_sub(hub.now_ms())
    });
    let expiry = tokio::time::sleep(Duration::from_millis(expires_in.unwrap_or(u64::MAX / 4)));
    tokio::pin!(expiry);
    while !record.status.is_terminal() {
        tokio::select! {
            _ = r.cancel.cancelled() => {
                return Err(ErrorObject::internal("Internal error: tasks/result was cancelled"));
            }
            _ = &mut expiry => return Err(unknown_task(&id)),
            change = changes.recv() => match change {
                Ok(c) if c.task_id == id => record = (*c).clone(),
                Ok(_) => {}
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                    match hub.get(owner, &id).await? {
                        Some(now) => record = now,
                        None => return Err(unknown_task(&id)),
                    }
                }
                Err(tokio::sync::broadcast::error::RecvError::Closed) => {
                    return Err(ErrorObject::internal("Internal error: the server is stopping"));
                }
            },
        }
    }
    Ok(record)
}

/// Ties a message's params or result to a task: `_meta`'s related-task
/// entry (2025-11-25), beside the other `_meta` entries.
pub(crate) fn relate_to_task(message: &mut JsonObject, task_id: &str) {
    let related = serde_json::to_value(tessera_types::tasks::legacy::RelatedTaskMetadata {
        task_id: task_id.to_owned(),
    })
    .unwrap_or_default();
    let meta = message
        .entry(META)
        .or_insert_with(|| Value::Object(JsonObject::new()));
    if let Value::Object(m) = meta {
        m.insert(RELATED_TASK.into(), related);
    }
}

/// What the original request would have returned, tied to its task.
fn payload(record: TaskRecord) -> Result<JsonObject, ErrorObject> {
    match (record.status, record.result, record.error) {
        (_, Some(mut result), _) => {
            relate_to_task(&mut result, &record.task_id);
            Ok(result)
        }
        (_, None, Some(error)) => Err(error),
        _ => Err(ErrorObject::internal(format!(
            "Internal error: task {} was cancelled before it produced a result",
            record.task_id
        ))
        .with_data({
            let mut data = JsonObject::new();
            relate_to_task(&mut data, &record.task_id);
            Value::Object(data)
        })),
    }
}

fn status_name(s: TaskStatus) -> &'static str {
    match s {
        TaskStatus::Working => "working",
        TaskStatus::InputRequired => "input_required",
        TaskStatus::Completed => "completed",
        TaskStatus::Failed => "failed",
        TaskStatus::Cancelled => "cancelled",
    }
}

/// The `_meta` member of results and error data.
const META: &str = "_meta";
