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
//! metadata), lists with `tasks/list` (pages of [`PAGE_SIZE`], opaque
//! cursors) and cancels with `tasks/cancel` (the handler is stopped). Every
//! status change (`completed`, `failed`, `cancelled`) is also told to the
//! server with `notifications/tasks/status` on the connection that created
//! the task. Tasks are kept until their `ttl` (at most an hour) and at most
//! [`MAX_TASKS`] at once.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tessera_types::methods;

use rand::RngCore as _;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tessera_runtime::{BoxFuture, Peer};
use tessera_types::tasks::TaskStatus;
use tessera_types::tasks::legacy::{
    LegacyCreateTaskResult, LegacyGetTaskResult, LegacyTask, LegacyTaskStatusNotification,
    LegacyTaskStatusNotificationParams, ListTasksResult,
};
use tessera_types::{ErrorObject, JsonObject, Loose, NotificationMethod, WithMeta};
use tokio::sync::watch;
use tokio::time::Instant;

use crate::members::{CursorOf, TaskIdOf, read, take};

/// The `_meta` key tying a message to a task.
const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";
/// The most tasks kept at once (finished ones are dropped first).
pub const MAX_TASKS: usize = 256;
/// The most tasks in one `tasks/list` page.
pub const PAGE_SIZE: usize = 64;
/// What every `tasks/list` cursor of this receiver starts with.
const CURSOR_PREFIX: &str = "rtask-";
/// The lifetime of a task when the server asks for none, and the longest.
const DEFAULT_TTL: Duration = Duration::from_secs(600);
const MAX_TTL: Duration = Duration::from_secs(3600);
/// The polling interval suggested to the server.
const POLL_INTERVAL_MS: u64 = 250;

/// How a task ended: the request's result or its error.
type Outcome = Result<JsonObject, ErrorObject>;

struct Entry {
    /// Creation order (what `tasks/list` pages and its cursors follow).
    seq: u64,
    task: LegacyTask,
    expires: Instant,
    outcome: watch::Sender<Option<Outcome>>,
    abort: Option<tokio::task::AbortHandle>,
    /// The connection that created the task, told of its status changes.
    peer: Option<Peer>,
}

/// The tasks this client runs for its server.
#[derive(Default)]
pub(crate) struct TaskReceiver {
    tasks: Mutex<HashMap<String, Entry>>,
    /// The sequence number of the next task.
    next_seq: AtomicU64,
}

impl std::fmt::Debug for TaskReceiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskReceiver")
            .field("tasks", &self.lock().len())
            .field("next_seq", &self.next_seq.load(Ordering::Relaxed))
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
    read::<TaskIdOf>(params)
        .task_id
        .into_valid()
        .ok_or_else(|| ErrorObject::invalid_params("Invalid params: taskId must be a string"))
}

/// The cursor of the page after the task numbered `seq`.
fn cursor(seq: u64) -> String {
    format!("{CURSOR_PREFIX}{seq:x}")
}

fn invalid_cursor() -> ErrorObject {
    ErrorObject::invalid_params("Invalid params: unknown tasks/list cursor")
}

/// Tells the requestor that a task's status changed. The notification
/// carries the whole task and, as the spec asks, no related-task metadata.
fn announce(peer: Option<&Peer>, task: &LegacyTask) {
    let Some(peer) = peer else { return };
    let params = LegacyTaskStatusNotificationParams {
        meta: None,
        task: task.clone(),
    };
    // A connection that is gone has no one to tell.
    let _ = peer.notify(
        LegacyTaskStatusNotification::METHOD,
        Some(object(&params)),
        None,
    );
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
    let Some(p) = params.take() else {
        return Ok(None);
    };
    let asked: WithTask = take(p);
    *params = Some(asked.rest);
    match asked.task {
        Loose::Absent | Loose::Malformed(Value::Null) => Ok(None),
        Loose::Valid(t) => match t.ttl {
            Loose::Absent | Loose::Malformed(Value::Null) => Ok(Some(TaskAsk { ttl_ms: None })),
            Loose::Valid(ms) => Ok(Some(TaskAsk { ttl_ms: Some(ms) })),
            Loose::Malformed(_) => Err(ErrorObject::invalid_params(
                "Invalid params: task.ttl must be a whole number of milliseconds",
            )),
        },
        Loose::Malformed(_) => Err(ErrorObject::invalid_params(
            "Invalid params: task must be an object",
        )),
    }
}

/// Request params: the `task` member (the request asks to be run as a
/// task), and the rest.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct WithTask {
    task: Loose<TaskMember>,
    #[serde(flatten)]
    rest: JsonObject,
}

/// The `task` member of request params.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct TaskMember {
    ttl: Loose<u64>,
    /// Other members (ignored; they make only objects read as a task).
    #[serde(flatten)]
    _others: JsonObject,
}

/// The `_meta` member naming the task a result belongs to.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct RelatedTask<'a> {
    task_id: &'a str,
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

    /// Starts `work` as a task and answers with `{task}` at once; its status
    /// changes are told to `peer` (the connection that asked).
    pub fn create(
        self: &Arc<Self>,
        ttl_ms: Option<u64>,
        work: BoxFuture<'static, Outcome>,
        peer: Option<Peer>,
    ) -> Result<JsonObject, ErrorObject> {
        let ttl = ttl_ms
            .map(Duration::from_millis)
            .unwrap_or(DEFAULT_TTL)
            .min(MAX_TTL);
        let mut bytes = [0u8; 16];
        rand::rng().fill_bytes(&mut bytes);
        let id: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let created = now_iso();
        let task = LegacyTask {
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
                    .min_by_key(|(_, e)| e.seq)
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
                    seq: self.next_seq.fetch_add(1, Ordering::Relaxed),
                    task: task.clone(),
                    expires: Instant::now() + ttl,
                    outcome: watch::channel(None).0,
                    abort: None,
                    peer,
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
        Ok(object(&LegacyCreateTaskResult { meta: None, task }))
    }

    /// Records how task `id` ended (unless it was cancelled first) and
    /// tells the requestor.
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
        let (peer, task) = (e.peer.clone(), e.task.clone());
        drop(tasks);
        announce(peer.as_ref(), &task);
    }

    /// `tasks/get`.
    pub fn get(&self, params: Option<&JsonObject>) -> Result<JsonObject, ErrorObject> {
        let id = task_id(params)?;
        let mut tasks = self.lock();
        Self::sweep(&mut tasks);
        let e = tasks.get(&id).ok_or_else(|| unknown(&id))?;
        Ok(object(&LegacyGetTaskResult {
            meta: None,
            task: e.task.clone(),
        }))
    }

    /// `tasks/list`: the tasks kept, oldest first, [`PAGE_SIZE`] at a time;
    /// `nextCursor` names the next page. A cursor stays valid while tasks
    /// come and go (it marks a position in creation order); one this
    /// receiver did not make is `-32602`.
    pub fn list(&self, params: Option<&JsonObject>) -> Result<JsonObject, ErrorObject> {
        let after = match read::<CursorOf>(params).cursor {
            Loose::Absent | Loose::Malformed(Value::Null) => None,
            Loose::Valid(c) => Some(self.parse_cursor(&c).ok_or_else(invalid_cursor)?),
            Loose::Malformed(_) => {
                return Err(ErrorObject::invalid_params(
                    "Invalid params: cursor must be a string",
                ));
            }
        };
        let mut tasks = self.lock();
        Self::sweep(&mut tasks);
        let mut all: Vec<(u64, &LegacyTask)> = tasks
            .values()
            .filter(|e| after.is_none_or(|a| e.seq > a))
            .map(|e| (e.seq, &e.task))
            .collect();
        all.sort_by_key(|(seq, _)| *seq);
        let next_cursor = (all.len() > PAGE_SIZE).then(|| cursor(all[PAGE_SIZE - 1].0));
        let page = all
            .into_iter()
            .take(PAGE_SIZE)
            .map(|(_, t)| t.clone())
            .collect();
        Ok(object(&ListTasksResult {
            meta: None,
            tasks: page,
            next_cursor,
        }))
    }

    /// The position a cursor of this receiver marks.
    fn parse_cursor(&self, c: &str) -> Option<u64> {
        let seq = u64::from_str_radix(c.strip_prefix(CURSOR_PREFIX)?, 16).ok()?;
        (seq < self.next_seq.load(Ordering::Relaxed)).then_some(seq)
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
        let (peer, task) = (e.peer.clone(), e.task.clone());
        drop(tasks);
        announce(peer.as_ref(), &task);
        Ok(object(&LegacyGetTaskResult { meta: None, task }))
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
        match done {
            Some(Ok(result)) => {
                let mut result = WithMeta::split(result);
                let related =
                    serde_json::to_value(RelatedTask { task_id: &id }).unwrap_or(Value::Null);
                result.edit_meta(|m| m.insert(RELATED_TASK.into(), related));
                Ok(result.join())
            }
            Some(Err(e)) => Err(e),
            None => Err(unknown(&id)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
                None,
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
        assert_eq!(
            r.list(None).expect("list")["tasks"][0]["taskId"],
            id.as_str()
        );
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
            .create(None, Box::pin(std::future::pending()), None)
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
            .create(Some(1_000), Box::pin(std::future::pending()), None)
            .expect("created");
        let p = params(json!({ "taskId": created["task"]["taskId"] }));
        // tasks/result gives up when the task expires.
        let e = r.result(p.as_ref()).await.expect_err("expired");
        assert_eq!(e.code, -32602);
        assert!(r.get(p.as_ref()).is_err());
        assert_eq!(r.list(None).expect("list")["tasks"], json!([]));
    }

    #[tokio::test]
    async fn tasks_list_pages_with_cursors() {
        let r = Arc::new(TaskReceiver::default());
        let n = 2 * PAGE_SIZE + 5;
        let mut ids = Vec::new();
        for _ in 0..n {
            let created = r
                .create(None, Box::pin(std::future::pending()), None)
                .expect("created");
            ids.push(created["task"]["taskId"].clone());
        }
        let mut seen = Vec::new();
        let mut pages = 0;
        let mut cursor = Value::Null;
        loop {
            let page = r
                .list(params(json!({ "cursor": cursor })).as_ref())
                .expect("a page");
            pages += 1;
            let tasks = page["tasks"].as_array().expect("tasks");
            assert!(tasks.len() <= PAGE_SIZE);
            seen.extend(tasks.iter().map(|t| t["taskId"].clone()));
            match page.get("nextCursor") {
                Some(c) => cursor = c.clone(),
                None => break,
            }
        }
        assert_eq!(pages, 3);
        assert_eq!(seen, ids, "every task once, oldest first");

        // A task cancelled and one added between pages: the cursor still holds.
        let first = r.list(None).expect("first page");
        let next = first["nextCursor"].clone();
        r.cancel(params(json!({ "taskId": ids[PAGE_SIZE] })).as_ref())
            .expect("cancel");
        let added = r
            .create(None, Box::pin(std::future::pending()), None)
            .expect("created")["task"]["taskId"]
            .clone();
        let second = r
            .list(params(json!({ "cursor": next })).as_ref())
            .expect("second");
        assert_eq!(second["tasks"][0]["taskId"], ids[PAGE_SIZE]);
        assert_eq!(second["tasks"][0]["status"], "cancelled");
        let third = r
            .list(params(json!({ "cursor": second["nextCursor"] })).as_ref())
            .expect("third");
        let last = third["tasks"].as_array().expect("tasks");
        assert_eq!(last.last().expect("one")["taskId"], added);

        for bad in [
            json!("nope"),
            json!("rtask-zz"),
            json!("rtask-ffffff"),
            json!(7),
        ] {
            let e = r
                .list(params(json!({ "cursor": bad })).as_ref())
                .expect_err("a bad cursor");
            assert_eq!(e.code, -32602, "{bad}");
        }
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
