//! The 2026-07-28 Tasks extension (`io.modelcontextprotocol/tasks`) as a
//! [`ServerExtension`]: [`TasksExtension`] declares the extension and serves
//! `tasks/get`, `tasks/update` and `tasks/cancel` for 2026-07-28 requests.
//! The decision to answer a `tools/call` with a task stays with the tools
//! (it depends on each tool's task support; see [`call`](super::call)).

use std::sync::{Arc, OnceLock};

use serde::Deserialize;
use tessera_runtime::Request;
use tessera_types::tasks::TASKS_EXTENSION;
use tessera_types::{
    EmptyResult, Era, ErrorObject, JsonObject, ServerCapabilities, TaskIdParams, methods,
};

use super::call::{declares_extension, extension_required};
use super::hub::{TaskHub, owner_of};
use super::store::{TaskChange, TaskRecord, Transition};
use super::wire;
use crate::extension::{ExtensionHost, ExtensionRequest, ExtensionRoutes, ServerExtension};

/// The `taskId` of a task method's params.
pub(crate) fn task_id_param(r: &Request) -> Result<String, ErrorObject> {
    tessera_types::decode_params::<tessera_types::tasks::TaskIdParams>(r.params.as_ref())
        .map(|p| p.task_id)
        .map_err(|e| ErrorObject::invalid_params(format!("Invalid params: {e}")))
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
    host: Arc<OnceLock<ExtensionHost>>,
}

impl std::fmt::Debug for TasksExtension {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TasksExtension")
            .field("attached", &self.host.get().is_some())
            .finish()
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

    fn routes(&self, routes: &mut ExtensionRoutes) {
        // 2025-11-25 requests of the same names are served by the core.
        let host = self.host.clone();
        routes.method_in(
            Era::Modern,
            methods::TASKS_GET,
            move |r, p: TaskIdParams| {
                let hub = attached(&host, &r);
                async move { get(hub?, r, p).await }
            },
        );
        let host = self.host.clone();
        routes.method_in(
            Era::Modern,
            methods::TASKS_UPDATE,
            move |r, p: UpdateParams| {
                let hub = attached(&host, &r);
                async move { update(hub?, r, p).await }
            },
        );
        let host = self.host.clone();
        routes.method_in(
            Era::Modern,
            methods::TASKS_CANCEL,
            move |r, p: TaskIdParams| {
                let hub = attached(&host, &r);
                async move { cancel(hub?, r, p).await }
            },
        );
    }

    fn attach(&self, host: ExtensionHost) {
        let _ = self.host.set(host);
    }
}

/// The hub of the server the extension is attached to, for a request that
/// declares the extension.
fn attached(
    host: &Arc<OnceLock<ExtensionHost>>,
    r: &ExtensionRequest,
) -> Result<Arc<TaskHub>, ErrorObject> {
    if !declares_extension(r.request()) {
        return Err(extension_required(r.method()));
    }
    host.get().and_then(ExtensionHost::task_hub).ok_or_else(|| {
        ErrorObject::internal(format!(
            "Internal error: {}: the tasks extension is not attached to a server",
            r.method()
        ))
    })
}

/// The params of `tasks/update`, with the answers kept as sent.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct UpdateParams {
    task_id: String,
    input_responses: JsonObject,
}

/// The task `id` of this requestor.
async fn record(hub: &TaskHub, r: &ExtensionRequest, id: &str) -> Result<TaskRecord, ErrorObject> {
    hub.get(&owner_of(r.request()), id)
        .await?
        .ok_or_else(|| unknown_task(id))
}

/// `tasks/get`: the detailed task, with its outcome once it is terminal.
async fn get(
    hub: Arc<TaskHub>,
    r: ExtensionRequest,
    p: TaskIdParams,
) -> Result<wire::WithInputs<tessera_types::tasks::GetTaskResult>, ErrorObject> {
    Ok(wire::get_result(&record(&hub, &r, &p.task_id).await?))
}

/// `tasks/update`: answers to the task's input requests, delivered where it
/// runs.
async fn update(
    hub: Arc<TaskHub>,
    r: ExtensionRequest,
    p: UpdateParams,
) -> Result<EmptyResult, ErrorObject> {
    let id = p.task_id;
    record(&hub, &r, &id).await?;
    if let Some(live) = hub.running(&id) {
        if live.input.answer(&p.input_responses) > 0 {
            hub.publish_input(&id, &live).await?;
        }
    } else if let Some(bus) = hub.bus() {
        // Another instance runs it.
        super::relay::send_answer(bus.as_ref(), &id, &p.input_responses).await;
    }
    Ok(EmptyResult::default())
}

/// `tasks/cancel`: acknowledged for a terminal task too.
async fn cancel(
    hub: Arc<TaskHub>,
    r: ExtensionRequest,
    p: TaskIdParams,
) -> Result<EmptyResult, ErrorObject> {
    let id = p.task_id;
    let record = record(&hub, &r, &id).await?;
    if !record.status.is_terminal() {
        if let Transition::Applied(_) = hub.apply(&id, TaskChange::cancelled()).await? {
            if let Some(live) = hub.running(&id) {
                live.cancel.cancel();
            } else if let Some(bus) = hub.bus() {
                super::relay::send_cancel(bus.as_ref(), &id).await;
            }
        }
    }
    Ok(EmptyResult::default())
}
