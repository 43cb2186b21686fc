//! [`TaskBook`]: the tasks a connection's tool calls became (2025-11-25
//! task-augmented calls, or the 2026-07-28 tasks extension). Each is
//! followed until it ends: every change of status is recorded in the
//! journal (`task`), then its result or error; the page can cancel it.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use tessera::client::{TaskHandle, TaskState};
use tessera::types::tasks::TaskStatus;
use tessera::types::{ErrorObject, JsonObject};

use super::journal::Journal;
use super::problem::Problem;

/// The most tasks followed at once on one connection.
pub const MAX_TASKS: usize = 64;

/// The tasks of one connection. Cheap to clone.
#[derive(Clone, Default)]
pub struct TaskBook {
    inner: Arc<Mutex<BTreeMap<String, Followed>>>,
}

struct Followed {
    handle: TaskHandle,
    last: TaskEvent,
    follower: tokio::task::AbortHandle,
}

/// A `task` event: a task's state (also what `GET …/tasks` lists).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskEvent {
    /// The connection.
    pub connection: u64,
    /// The task.
    pub task_id: String,
    /// Its status.
    pub status: TaskStatus,
    /// The server's message about it (`null` when none; left out of the
    /// first event, written before the server said anything).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_message: Option<Option<String>>,
}

/// A `taskResult` event: how a task ended.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TaskEnded<'a> {
    connection: u64,
    task_id: &'a str,
    #[serde(flatten)]
    end: End,
}

/// A task's result, or why it has none.
#[derive(Serialize)]
#[serde(untagged)]
enum End {
    Result {
        result: JsonObject,
    },
    Error {
        error: String,
        remote: Option<ErrorObject>,
    },
}

fn state(conn: u64, s: &TaskState) -> TaskEvent {
    TaskEvent {
        connection: conn,
        task_id: s.task_id.clone(),
        status: s.status,
        status_message: Some(s.status_message.clone()),
    }
}

impl TaskBook {
    fn book(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Followed>> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Follows `handle` until its task ends, recording its states and
    /// its result in `journal`.
    pub fn follow(&self, conn: u64, handle: TaskHandle, journal: Journal) -> Result<(), Problem> {
        let id = handle.id().to_owned();
        let mut book = self.book();
        if book.len() >= MAX_TASKS {
            return Err(Problem::limit(format!(
                "{MAX_TASKS} tasks are already followed on this connection"
            )));
        }
        let first = TaskEvent {
            connection: conn,
            task_id: id.clone(),
            status: TaskStatus::Working,
            status_message: None,
        };
        journal.record("task", first.clone());
        let (me, h, task_id) = (self.clone(), handle.clone(), id.clone());
        let follower = tokio::spawn(async move {
            let j = journal.clone();
            let me2 = me.clone();
            let outcome = h
                .wait_raw(|s| {
                    let v = state(conn, s);
                    if let Some(f) = me2.book().get_mut(&s.task_id) {
                        f.last = v.clone();
                    }
                    j.record("task", v);
                })
                .await;
            let end = match outcome {
                Ok(result) => End::Result { result },
                Err(e) => End::Error {
                    error: e.to_string(),
                    remote: e.remote().cloned(),
                },
            };
            let end = TaskEnded {
                connection: conn,
                task_id: &task_id,
                end,
            };
            me.book().remove(&task_id);
            journal.record("taskResult", end);
        });
        book.insert(
            id,
            Followed {
                handle,
                last: first,
                follower: follower.abort_handle(),
            },
        );
        Ok(())
    }

    /// The tasks followed, with their last state.
    pub fn list(&self) -> Vec<TaskEvent> {
        self.book().values().map(|f| f.last.clone()).collect()
    }

    /// Asks the server to cancel task `id` (`tasks/cancel`); following it
    /// goes on until the server reports it ended.
    pub async fn cancel(&self, id: &str) -> Result<(), Problem> {
        let handle = self
            .book()
            .get(id)
            .map(|f| f.handle.clone())
            .ok_or_else(|| Problem::not_found(format!("no task {id:?} is followed")))?;
        handle
            .cancel()
            .await
            .map_err(|e| Problem::client(&e, "tasks/cancel"))
    }

    /// Stops following every task (the connection is closing).
    pub fn stop(&self) {
        for (_, f) in std::mem::take(&mut *self.book()) {
            f.follower.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events_keep_their_shape() {
        let first = TaskEvent {
            connection: 1,
            task_id: "t".into(),
            status: TaskStatus::Working,
            status_message: None,
        };
        assert_eq!(
            serde_json::to_value(&first).unwrap(),
            json!({"connection": 1, "taskId": "t", "status": "working"})
        );
        let later = TaskEvent {
            status: TaskStatus::Completed,
            status_message: Some(None),
            ..first
        };
        assert_eq!(
            serde_json::to_value(&later).unwrap(),
            json!({"connection": 1, "taskId": "t", "status": "completed", "statusMessage": null})
        );
        let ended = |end| {
            serde_json::to_value(TaskEnded {
                connection: 1,
                task_id: "t",
                end,
            })
            .unwrap()
        };
        assert_eq!(
            ended(End::Result {
                result: JsonObject::new()
            }),
            json!({"connection": 1, "taskId": "t", "result": {}})
        );
        assert_eq!(
            ended(End::Error {
                error: "e".into(),
                remote: Some(ErrorObject::new(-1, "m"))
            }),
            json!({"connection": 1, "taskId": "t", "error": "e", "remote": {"code": -1, "message": "m"}})
        );
        assert_eq!(
            ended(End::Error {
                error: "e".into(),
                remote: None
            }),
            json!({"connection": 1, "taskId": "t", "error": "e", "remote": null})
        );
    }
}
