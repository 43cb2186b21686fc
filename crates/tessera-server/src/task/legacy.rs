//! The task methods of protocol version 2025-11-25: `tasks/get`,
//! `tasks/result`, `tasks/list`, `tasks/cancel`.

use std::time::Duration;
use tessera_types::methods;

use serde::Serialize;
use serde_json::Value;
use tessera_runtime::{BoxFuture, ReplyResult, Request};
use tessera_types::tasks::{TaskStatus, legacy};
use tessera_types::{ErrorObject, JsonObject, ProtocolVersion};

use super::extension::{task_id_param, unknown_task};
use super::hub::owner_of;
use super::store::{TaskChange, TaskRecord, Transition};
use super::wire;
use crate::server::{Server, done, typed_reply};

/// The `_meta` key that ties a message to a task.
pub const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

impl<S: Send + Sync + 'static> Server<S> {
    /// Serves a 2025-11-25 task method, with its typed result written
    /// straight to JSON text.
    pub(crate) fn handle_tasks_legacy(&self, r: Request) -> BoxFuture<'static, ReplyResult> {
        if r.context.version < ProtocolVersion::V2025_11_25 || !self.offers_tasks() {
            return done(Err(ErrorObject::method_not_found(&r.method)));
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
                    return done(Err(ErrorObject::invalid_params(format!(
                        "Invalid params: {e}"
                    ))));
                }
            };
            let limit = self.inner.settings.page_size;
            return Box::pin(async move {
                let page = hub.list(&owner, cursor.as_deref(), limit).await?;
                // Legacy only: nothing is added to the result.
                Ok(typed_reply(
                    &legacy::ListTasksResult {
                        meta: None,
                        tasks: page.tasks.iter().map(wire::legacy_task_of).collect(),
                        next_cursor: page.next_cursor,
                    },
                    None,
                ))
            });
        }
        let id = match task_id_param(&r) {
            Ok(id) => id,
            Err(e) => return done(Err(e)),
        };
        Box::pin(async move {
            let Some(record) = hub.get(&owner, &id).await? else {
                return Err(unknown_task(&id));
            };
            match r.method.as_str() {
                methods::TASKS_GET => Ok(typed_reply(&wire::legacy_get_result(&record), None)),
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
                            Ok(typed_reply(&wire::legacy_get_result(&now), None))
                        }
                        Transition::Terminal(_) => Err(refuse()),
                        Transition::NotFound => Err(unknown_task(&id)),
                    }
                }
                methods::TASKS_RESULT => {
                    let done = wait_terminal(&hub, &owner, record, &r).await?;
                    payload(done).map(|p| typed_reply(&p, None))
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
    let meta = match message.remove(META) {
        Some(Value::Object(m)) => m,
        _ => JsonObject::new(),
    };
    message.insert(META.into(), Value::Object(related_meta(meta, task_id)));
}

/// `meta` with the related-task entry naming `task_id`.
fn related_meta(mut meta: JsonObject, task_id: &str) -> JsonObject {
    let related = legacy::RelatedTaskMetadata {
        task_id: task_id.to_owned(),
    };
    // A struct of one string: always serialises.
    meta.insert(
        RELATED_TASK.into(),
        serde_json::to_value(related).unwrap_or_default(),
    );
    meta
}

/// The data of the error that answers `tasks/result` for a task cancelled
/// before it produced a result: `_meta` naming the task.
#[derive(Serialize)]
struct RelatedData {
    #[serde(rename = "_meta")]
    meta: JsonObject,
}

/// What the original request would have returned, tied to its task.
fn payload(record: TaskRecord) -> Result<legacy::GetTaskPayloadResult, ErrorObject> {
    match (record.status, record.result, record.error) {
        (_, Some(mut result), _) => {
            let meta = match result.remove(META) {
                Some(Value::Object(m)) => m,
                _ => JsonObject::new(),
            };
            Ok(legacy::GetTaskPayloadResult {
                meta: Some(related_meta(meta, &record.task_id)),
                payload: result,
            })
        }
        (_, None, Some(error)) => Err(error),
        _ => {
            let data = RelatedData {
                meta: related_meta(JsonObject::new(), &record.task_id),
            };
            Err(ErrorObject::internal(format!(
                "Internal error: task {} was cancelled before it produced a result",
                record.task_id
            ))
            .with_data(serde_json::to_value(data).unwrap_or_default()))
        }
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
