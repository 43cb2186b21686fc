//! The client as a task receiver (2025-11-25): a server may send
//! `sampling/createMessage` and `elicitation/create` as tasks when the client
//! declares `tasks.requests.sampling.createMessage` /
//! `tasks.requests.elicitation.create` (see
//! [`ClientBuilder::receive_tasks`](crate::ClientBuilder::receive_tasks)).
//!
//! Such a request is answered at once with `{task}` (status `working`) while
//! the application's handler runs in the background; the server then polls
//! with `tasks/get`, waits with `tasks/result` (which returns exactly what
//! the request would have returned, tied to the task by the related-task
//! metadata), lists with `tasks/list` and cancels with `tasks/cancel` (the
//! handler is stopped). Tasks are kept until their `ttl` (at most an hour)
//! and at most [`MAX_TASKS`] at once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tessera_types::methods;

use rand::RngCore as _;
use serde_json::{Value, json};
use tessera_runtime::BoxFuture;
use tessera_types::tasks::TaskStatus;
use tessera_types::tasks::legacy::{CreateTaskResult, GetTaskResult, ListTasksResult, Task};
use tessera_types::{ErrorObject, JsonObject};
use tokio::sync::watch;
use tokio::time::Instant;

/// The `_meta` key tying a message to a task.
const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";
/// The most tasks kept at once (finished ones are dropped first).
pub const MAX_TASKS: usize = 256;
/// The lifetime of a task when the server asks for none, and the longest.
const DEFAULT_TTL: Duration = Duration::from_secs(600);
const MAX_TTL: Duration = Duration::from_secs(3600);
/// The polling interval suggested to the server.
const POLL_INTERVAL_MS: u64 = 250;

/// How a task ended: the request's result or its error.
type Outcome = Result<JsonObject, ErrorObject>;

struct Entry {
    task: Task,
    expires: Instant,
    outcome: watch::Sender<Option<Outcome>>,
    abort: Option<tokio::task::AbortHandle>,
}

/// The tasks this client runs for its server.
#[derive(Default)]
pub(crate) struct TaskReceiver {
    tasks: Mutex<HashMap<String, Entry>>,
}

impl std::fmt::Debug for TaskReceiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskReceiver")
            .field("tasks", &self.lock().len())
            .finish()
    }
}

/// The server-to-client methods of a task receiver.
pub(crate) const METHODS: [&str; 4] = [
    methods::TASKS_GET,
    methods::TASKS_RESULT,
    methods::TASKS_LIST,
    methods::TASKS_CANCEL,
];

fn now_iso() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    time::OffsetDateTime::from_unix_timestamp_nanos(i128::try_from(nanos).unwrap_or(0))
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_else(|| "1970-01-01T00:00:00Z".to_owned())
}

fn unknown(id: &str) -> ErrorObject {
    ErrorObject::invalid_params(format!(
        "Invalid params: no task {:?}",
        id.chars().take(64).collect::<String>()
    ))
}

fn task_id(params: Option<&JsonObject>) -> Result<String, ErrorObject> {
    params
        .and_then(|p| p.get("taskId"))
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| ErrorObject::invalid_params("Invalid params: taskId must be a string"))
}

fn object<T: serde::Serialize>(v: &T) -> JsonObject {
    match serde_json::to_value(v) {
        Ok(Value::Object(o)) => o,
        _ => JsonObject::new(),
    }
}

/// What a request's `task` member asks for: to be run as a task, kept for
/// `ttl_ms` milliseconds if given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TaskAsk {
    /// The requested `ttl`, in milliseconds.
    pub(crate) ttl_ms: Option<u64>,
}

/// Takes the `task` member out of `params`: `Some` when the request asks to
/// be run as a task.
pub(crate) fn take_task(params: &mut Option<JsonObject>) -> Result<Option<TaskAsk>, ErrorObject> {
    let Some(p) = params.as_mut() else {
        return Ok(None);
    };
    match p.remove("task") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(t)) => match t.get("ttl") {
            None | Some(Value::Null) => Ok(Some(TaskAsk { ttl_ms: None })),
            Some(v) => v
                .as_u64()
                .map(|ms| Some(TaskAsk { ttl_ms: Some(ms) }))
                .ok_or_else(|| {
                    ErrorObject::invalid_params(
                        "Invalid params: task.ttl must be a whole number of milliseconds",
                    )
                }),
        },
        Some(_) => Err(ErrorObject::invalid_params(
            "Invalid params: task must be an object",
        )),
    }
}

impl TaskReceiver {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.tasks
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Drops expired tasks (stopping their handlers).
    fn sweep(tasks: &mut HashMap<String, Entry>) {
        let now = Instant::now();
        tasks.retain(|_, e| {
            let keep = e.expires > now;
            if !keep {
                if let Some(a) = &e.abort {
                    a.abort();
                }
            }
            keep
        });
    }

    /// Starts `work` as a task and answers with `{task}` at once.
    pub fn create(
        self: &Arc<Self>,
        ttl_ms: Option<u64>,
        work: BoxFuture<'static, Outcome>,
    ) -> Result<JsonObject, ErrorObject> {
        let ttl = ttl_ms
            .map(Duration::from_millis)
            .unwrap_or(DEFAULT_TTL)
            .min(MAX_TTL);
        let mut bytes = [0u8; 16];
        rand::rng().fill_bytes(&mut bytes);
        let id: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let created = now_iso();
        let task = Task {
            task_id: id.clone(),
            status: TaskStatus::Working,
            status_message: None,
            created_at: created.clone(),
            last_updated_at: created,
            ttl: Some(u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX)),
            poll_interval: Some(POLL_INTERVAL_MS),
        };
        {
            let mut tasks = self.lock();
            Self::sweep(&mut tasks);
            if tasks.len() >= MAX_TASKS {
                // Make room by forgetting the oldest finished task.
                let oldest = tasks
                    .iter()
                    .filter(|(_, e)| e.task.status.is_terminal())
                    .min_by(|a, b| a.1.task.created_at.cmp(&b.1.task.created_at))
                    .map(|(k, _)| k.clone());
                match oldest {
                    Some(k) => {
                        tasks.remove(&k);
                    }
                    None => {
                        return Err(ErrorObject::internal(format!(
                            "Internal error: this client already runs {MAX_TASKS} tasks"
                        )));
                    }
                }
            }
            tasks.insert(
                id.clone(),
                Entry {
                    task: task.clone(),
                    expires: Instant::now() + ttl,
                    outcome: watch::channel(None).0,
                    abort: None,
                },
            );
        }
        let this = self.clone();
        let done_id = id.clone();
        let handle = tokio::spawn(async move {
            let out = work.await;
            this.finish(&done_id, out);
        });
        if let Some(e) = self.lock().get_mut(&id) {
            e.abort = Some(handle.abort_handle());
        }
        Ok(object(&CreateTaskResult { meta: None, task }))
    }

    /// Records how task `id` ended (unless it was cancelled first).
    fn finish(&self, id: &str, out: Outcome) {
        let mut tasks = self.lock();
        let Some(e) = tasks.get_mut(id) else {
            return;
        };
        if e.task.status.is_terminal() {
            return;
        }
        e.task.status = if out.is_ok() {
            TaskStatus::Completed
        } else {
            TaskStatus::Failed
        };
        if let Err(err) = &out {
            e.task.status_message = Some(err.message.chars().take(200).collect());
        }
        e.task.last_updated_at = now_iso();
        e.abort = None;
        e.outcome.send_replace(Some(out));
    }

    /// `tasks/get`.
    pub fn get(&self, params: Option<&JsonObject>) -> Result<JsonObject, ErrorObject> {
        let id = task_id(params)?;
        let mut tasks = self.lock();
        Self::sweep(&mut tasks);
        let e = tasks.get(&id).ok_or_else(|| unknown(&id))?;
        Ok(object(&GetTaskResult {
            meta: None,
            task: e.task.clone(),
        }))
    }

    /// `tasks/list`: every task kept (at most [`MAX_TASKS`], one page).
    pub fn list(&self) -> JsonObject {
        let mut tasks = self.lock();
        Self::sweep(&mut tasks);
        let mut all: Vec<Task> = tasks.values().map(|e| e.task.clone()).collect();
        all.sort_by(|a, b| {
            a.created_at
                .cmp(&b.created_at)
                .then_with(|| a.task_id.cmp(&b.task_id))
        });
        object(&ListTasksResult {
            meta: None,
            tasks: all,
            next_cursor: None,
        })
    }

    /// `tasks/cancel`: stops the handler; a finished task cannot be cancelled.
    pub fn cancel(&self, params: Option<&JsonObject>) -> Result<JsonObject, ErrorObject> {
        let id = task_id(params)?;
        let mut tasks = self.lock();
        Self::sweep(&mut tasks);
        let e = tasks.get_mut(&id).ok_or_else(|| unknown(&id))?;
        if e.task.status.is_terminal() {
            return Err(ErrorObject::invalid_params(format!(
                "Invalid params: task {id} is already {} and cannot be cancelled",
                serde_json::to_value(e.task.status)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default()
            )));
        }
        if let Some(a) = e.abort.take() {
            a.abort();
        }
        e.task.status = TaskStatus::Cancelled;
        e.task.status_message = Some("cancelled by the server".into());
        e.task.last_updated_at = now_iso();
        e.outcome
            .send_replace(Some(Err(ErrorObject::internal(format!(
                "Internal error: task {id} was cancelled before it produced a result"
            )))));
        Ok(object(&GetTaskResult {
            meta: None,
            task: e.task.clone(),
        }))
    }

    /// `tasks/result`: waits until the task ends, then answers what the
    /// request would have answered, tied to the task.
    pub async fn result(&self, params: Option<&JsonObject>) -> Result<JsonObject, ErrorObject> {
        let id = task_id(params)?;
        let (mut outcome, expires) = {
            let mut tasks = self.lock();
            Self::sweep(&mut tasks);
            let e = tasks.get(&id).ok_or_else(|| unknown(&id))?;
            (e.outcome.subscribe(), e.expires)
        };
        let done = tokio::select! {
            r = outcome.wait_for(Option::is_some) => r.ok().and_then(|v| (*v).clone()),
            _ = tokio::time::sleep_until(expires) => None,
        };
        let related = json!({ "taskId": id });
        match done {
            Some(Ok(mut result)) => {
                let meta = result
                    .entry("_meta")
                    .or_insert_with(|| Value::Object(JsonObject::new()));
                if let Value::Object(m) = meta {
                    m.insert(RELATED_TASK.into(), related);
                }
                Ok(result)
            }
            Some(Err(e)) => Err(e),
            None => Err(unknown(&id)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(v: Value) -> Option<JsonObject> {
        v.as_object().cloned()
    }

    #[tokio::test]
    async fn a_task_runs_finishes_and_is_listed() {
        let r = Arc::new(TaskReceiver::default());
        let (go, wait) = tokio::sync::oneshot::channel::<()>();
        let created = r
            .create(
                Some(5_000),
                Box::pin(async move {
                    let _ = wait.await;
                    Ok(params(json!({"answer": 42})).unwrap_or_default())
                }),
            )
            .expect("created");
        let id = created["task"]["taskId"].as_str().expect("id").to_owned();
        assert_eq!(created["task"]["status"], "working");
        assert_eq!(created["task"]["ttl"], 5_000);
        let p = params(json!({ "taskId": id }));
        assert_eq!(r.get(p.as_ref()).expect("get")["status"], "working");
        let _ = go.send(());
        let out = r.result(p.as_ref()).await.expect("result");
        assert_eq!(out["answer"], 42);
        assert_eq!(out["_meta"][RELATED_TASK]["taskId"], id.as_str());
        assert_eq!(r.get(p.as_ref()).expect("get")["status"], "completed");
        assert_eq!(r.list()["tasks"][0]["taskId"], id.as_str());
        let e = r.cancel(p.as_ref()).expect_err("finished");
        assert_eq!(e.code, -32602);
        let e = r
            .get(params(json!({"taskId": "nope"})).as_ref())
            .expect_err("unknown");
        assert_eq!(e.code, -32602);
    }

    #[tokio::test]
    async fn cancel_stops_the_handler_and_result_reports_it() {
        let r = Arc::new(TaskReceiver::default());
        let created = r
            .create(None, Box::pin(std::future::pending()))
            .expect("created");
        let p = params(json!({ "taskId": created["task"]["taskId"] }));
        assert_eq!(r.cancel(p.as_ref()).expect("cancel")["status"], "cancelled");
        let e = r.result(p.as_ref()).await.expect_err("no result");
        assert!(e.message.contains("cancelled"), "{e:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn expired_tasks_are_forgotten() {
        let r = Arc::new(TaskReceiver::default());
        let created = r
            .create(Some(1_000), Box::pin(std::future::pending()))
            .expect("created");
        let p = params(json!({ "taskId": created["task"]["taskId"] }));
        // tasks/result gives up when the task expires.
        let e = r.result(p.as_ref()).await.expect_err("expired");
        assert_eq!(e.code, -32602);
        assert!(r.get(p.as_ref()).is_err());
        assert_eq!(r.list()["tasks"], json!([]));
    }

    #[test]
    fn the_task_member_is_taken_out() {
        let mut p = params(json!({"message": "m", "task": {"ttl": 9}}));
        assert_eq!(
            take_task(&mut p).expect("ok"),
            Some(TaskAsk { ttl_ms: Some(9) })
        );
        assert!(!p.as_ref().is_some_and(|p| p.contains_key("task")));
        let mut p = params(json!({"task": {}}));
        assert_eq!(
            take_task(&mut p).expect("ok"),
            Some(TaskAsk { ttl_ms: None })
        );
        let mut p = params(json!({"task": 3}));
        assert!(take_task(&mut p).is_err());
        let mut p = params(json!({"message": "m"}));
        assert_eq!(take_task(&mut p).expect("ok"), None);
    }
}
