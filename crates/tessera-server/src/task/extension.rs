//! The methods of the 2026-07-28 Tasks extension (`io.modelcontextprotocol/tasks`):
//! `tasks/get`, `tasks/update`, `tasks/cancel`.
//!
//! They live in the server directly; once the server has a public extension
//! API (extension-registered methods and `capabilities.extensions`), this
//! module is what registers there: the three methods below, the
//! `capabilities.extensions` entry, and the `tools/call` hook in
//! [`call`](super::call).

use serde_json::Value;
use tessera_runtime::{BoxFuture, HandlerResult, Request};
use tessera_types::methods;
use tessera_types::{ErrorObject, JsonObject};

use super::call::{declares_extension, extension_required};
use super::hub::owner_of;
use super::store::{TaskChange, Transition};
use super::wire;
use crate::server::{Server, ready};

/// The `taskId` of a task method's params.
pub(crate) fn task_id_param(r: &Request) -> Result<String, ErrorObject> {
    match r.params.as_ref().and_then(|p| p.get("taskId")) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(_) => Err(ErrorObject::invalid_params(
            "Invalid params: taskId must be a string",
        )),
        None => Err(ErrorObject::invalid_params(
            "Invalid params: missing field `taskId`",
        )),
    }
}

/// The error for a task that does not exist for this requestor.
pub(crate) fn unknown_task(id: &str) -> ErrorObject {
    ErrorObject::invalid_params(format!("Invalid params: unknown task {id}"))
}

impl<S: Send + Sync + 'static> Server<S> {
    pub(crate) fn handle_tasks_extension(&self, r: Request) -> BoxFuture<'static, HandlerResult> {
        if matches!(
            r.method.as_str(),
            methods::TASKS_RESULT | methods::TASKS_LIST
        ) {
            // Removed by the extension: the result is inlined on tasks/get.
            return ready(Err(ErrorObject::method_not_found(&r.method)));
        }
        if !declares_extension(&r) {
            return ready(Err(extension_required(&r.method)));
        }
        let id = match task_id_param(&r) {
            Ok(id) => id,
            Err(e) => return ready(Err(e)),
        };
        let hub = self.tasks().clone();
        let owner = owner_of(&r);
        Box::pin(async move {
            let Some(record) = hub.get(&owner, &id).await? else {
                return Err(unknown_task(&id));
            };
            match r.method.as_str() {
                methods::TASKS_GET => Ok(wire::get_result(&record)),
                methods::TASKS_UPDATE => {
                    let responses = match r.params.as_ref().and_then(|p| p.get("inputResponses")) {
                        Some(Value::Object(o)) => o.clone(),
                        _ => {
                            return Err(ErrorObject::invalid_params(
                                "Invalid params: inputResponses must be an object",
                            ));
                        }
                    };
                    if let Some(live) = hub.running(&id) {
                        if live.input.answer(&responses) > 0 {
                            hub.publish_input(&id, &live).await?;
                        }
                    } else if let Some(bus) = hub.bus() {
                        // Another instance runs it.
                        super::relay::send_answer(bus.as_ref(), &id, &responses).await;
                    }
                    Ok(JsonObject::new())
                }
                _ => {
                    // tasks/cancel: acknowledged for a terminal task too.
                    if !record.status.is_terminal() {
                        if let Transition::Applied(_) =
                            hub.apply(&id, TaskChange::cancelled()).await?
                        {
                            if let Some(live) = hub.running(&id) {
                                live.cancel.cancel();
                            } else if let Some(bus) = hub.bus() {
                                super::relay::send_cancel(bus.as_ref(), &id).await;
                            }
                        }
                    }
                    Ok(JsonObject::new())
                }
            }
        })
    }
}
