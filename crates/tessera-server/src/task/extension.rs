//! The 2026-07-28 Tasks extension (`io.modelcontextprotocol/tasks`) as a
//! [`ServerExtension`]: [`TasksExtension`] declares the extension and serves
//! `tasks/get`, `tasks/update` and `tasks/cancel` for 2026-07-28 requests.
//! The decision to answer a `tools/call` with a task stays with the tools
//! (it depends on each tool's task support; see [`call`](super::call)).

use std::sync::{Arc, OnceLock};

use serde_json::Value;
use tessera_runtime::{BoxFuture, HandlerResult, Request};
use tessera_types::tasks::TASKS_EXTENSION;
use tessera_types::{Era, ErrorObject, JsonObject, ServerCapabilities, methods};

use super::call::{declares_extension, extension_required};
use super::hub::{TaskHub, owner_of};
use super::store::{TaskChange, Transition};
use super::wire;
use crate::extension::{ExtensionHost, ExtensionRequest, ServerExtension};

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

/// The Tasks extension of 2026-07-28 (`io.modelcontextprotocol/tasks`,
/// SEP-2663), served on the public [`ServerExtension`] API.
///
/// Every [`Server`](crate::Server) registers one when it is built (unless
/// the application registered it itself), so a server whose tools can run as
/// tasks declares the extension and answers its methods with no setup:
///
/// - the extension is declared under `capabilities.extensions` when some
///   tool can run as a task (when the server also declares the 2025-11-25
///   `tasks` capability), and not otherwise;
/// - it serves `tasks/get` (the result or error inlined once the task is
///   terminal), `tasks/update` (answers to a task's input requests) and
///   `tasks/cancel` for 2026-07-28 requests that declare the extension
///   (`-32021` otherwise); 2025-11-25 requests of the same names are served
///   by the core, and `tasks/result` and `tasks/list`, which the extension
///   removes, are `-32601` in 2026-07-28.
///
/// ```
/// use tessera_server::{Server, ServerExtension, task::TasksExtension, tool};
/// use tessera_server::task::TaskSupport;
///
/// let server = Server::builder()
///     .tool(tool("slow").task_support(TaskSupport::Optional).handler(|| async { "done" }))
///     .build()
///     .unwrap();
/// assert!(server.capabilities().has_extension(TasksExtension::default().id()));
/// ```
#[derive(Default)]
pub struct TasksExtension {
    host: OnceLock<ExtensionHost>,
}

impl std::fmt::Debug for TasksExtension {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TasksExtension")
            .field("attached", &self.host.get().is_some())
            .finish()
    }
}

impl TasksExtension {
    /// The task hub of the server the extension is attached to.
    fn hub(&self) -> Option<Arc<TaskHub>> {
        self.host.get()?.task_hub()
    }
}

impl ServerExtension for TasksExtension {
    fn id(&self) -> &str {
        TASKS_EXTENSION
    }

    fn declare(&self, capabilities: &mut ServerCapabilities) {
        // Offered only when some tool can run as a task (the tools then
        // declared the 2025-11-25 `tasks` capability as well).
        if capabilities.tasks.is_some() {
            return;
        }
        if let Some(map) = capabilities.extensions.as_mut() {
            map.remove(TASKS_EXTENSION);
            if map.is_empty() {
                capabilities.extensions = None;
            }
        }
    }

    fn methods(&self) -> Vec<String> {
        vec![
            methods::TASKS_GET.into(),
            methods::TASKS_UPDATE.into(),
            methods::TASKS_CANCEL.into(),
        ]
    }

    fn serves(&self, era: Era) -> bool {
        era == Era::Modern
    }

    fn handle_request(&self, request: ExtensionRequest) -> BoxFuture<'static, HandlerResult> {
        let Some(hub) = self.hub() else {
            let method = request.request.method.clone();
            return Box::pin(async move {
                Err(ErrorObject::internal(format!(
                    "Internal error: {method}: the tasks extension is not attached to a server"
                )))
            });
        };
        handle(hub, request.request)
    }

    fn attach(&self, host: ExtensionHost) {
        let _ = self.host.set(host);
    }
}

fn ready(r: HandlerResult) -> BoxFuture<'static, HandlerResult> {
    Box::pin(std::future::ready(r))
}

/// `tasks/get`, `tasks/update` or `tasks/cancel` of a 2026-07-28 request.
fn handle(hub: Arc<TaskHub>, r: Request) -> BoxFuture<'static, HandlerResult> {
    if !declares_extension(&r) {
        return ready(Err(extension_required(&r.method)));
    }
    let id = match task_id_param(&r) {
        Ok(id) => id,
        Err(e) => return ready(Err(e)),
    };
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
                    if let Transition::Applied(_) = hub.apply(&id, TaskChange::cancelled()).await? {
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
