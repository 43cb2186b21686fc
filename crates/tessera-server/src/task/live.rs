//! What links a running handler to its task: the questions it waits on
//! (2026-07-28 `inputRequests`) and the task it belongs to.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tessera_types::JsonObject;
use tokio::sync::{Notify, oneshot};

use super::hub::TaskHub;
use crate::mrtr::InputError;

/// A question a task's handler waits on.
struct Pending {
    request: Value,
    answer: oneshot::Sender<Value>,
}

/// The outstanding questions of a running task.
#[derive(Default)]
pub(crate) struct TaskInput {
    pending: Mutex<BTreeMap<String, Pending>>,
    /// Serialises writes of the question set to the store, so the last
    /// writer writes the latest set.
    publish: tokio::sync::Mutex<()>,
    /// Wakes the runner when a question is asked.
    pub changed: Notify,
}

impl TaskInput {
    fn pending(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Pending>> {
        self.pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Registers a question and waits for its answer.
    pub async fn ask(&self, key: String, request: Value) -> Result<JsonObject, InputError> {
        let (tx, rx) = oneshot::channel();
        self.pending().insert(
            key.clone(),
            Pending {
                request,
                answer: tx,
            },
        );
        self.changed.notify_one();
        match rx.await {
            Ok(Value::Object(o)) => Ok(o),
            Ok(_) => Err(InputError::Malformed(format!(
                "inputResponses.{key} is not an object"
            ))),
            Err(_) => Err(InputError::Malformed("the task ended".into())),
        }
    }

    /// The questions not answered yet, as an `inputRequests` map.
    pub fn outstanding(&self) -> JsonObject {
        self.pending()
            .iter()
            .map(|(k, p)| (k.clone(), p.request.clone()))
            .collect()
    }

    /// Delivers answers to outstanding questions; answers to anything else
    /// are ignored. Returns how many were delivered.
    pub fn answer(&self, responses: &JsonObject) -> usize {
        let mut pending = self.pending();
        let mut n = 0;
        for (k, v) in responses {
            if let Some(p) = pending.remove(k) {
                let _ = p.answer.send(v.clone());
                n += 1;
            }
        }
        n
    }

    /// A turn at writing the question set.
    pub async fn publishing(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.publish.lock().await
    }
}

/// Ties a handler's [`RequestContext`](crate::RequestContext) to a task.
pub(crate) struct TaskLink {
    pub task_id: std::sync::OnceLock<String>,
    pub hub: Arc<TaskHub>,
    pub input: Arc<TaskInput>,
    /// Set once the request has become a task: from then on questions go
    /// to the task (`input_required`), not to a multi round-trip result.
    detached: AtomicBool,
}

impl std::fmt::Debug for TaskLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskLink")
            .field("task_id", &self.task_id.get())
            .finish_non_exhaustive()
    }
}

impl TaskLink {
    pub fn new(hub: Arc<TaskHub>, input: Arc<TaskInput>) -> Self {
        TaskLink {
            task_id: std::sync::OnceLock::new(),
            hub,
            input,
            detached: AtomicBool::new(false),
        }
    }

    /// Marks the request as a task.
    pub fn detach(&self, task_id: &str) {
        let _ = self.task_id.set(task_id.to_owned());
        self.detached.store(true, Ordering::Release);
    }

    pub fn is_detached(&self) -> bool {
        self.detached.load(Ordering::Acquire)
    }

    /// The task id, once detached.
    pub fn id(&self) -> Option<&str> {
        self.task_id.get().map(String::as_str)
    }
}
