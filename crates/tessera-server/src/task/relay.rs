//! Tasks across instances: when several servers share one [`TaskStore`]
//! (a Redis store behind a load balancer), a request about a task may reach
//! an instance other than the one running it. With a [`Bus`] in the
//! [`TaskSettings`](super::TaskSettings), the instances tell each other:
//!
//! - `tessera/task/{id}`: the instance running task `id` listens here for
//!   the answers of a `tasks/update` (`{"answer": {…}, "reply": topic}`;
//!   once it has recorded them it publishes to the reply topic, which the
//!   relaying instance waits for before acknowledging) and for
//!   `tasks/cancel` (`{"cancel": true}`) made elsewhere;
//! - `tessera/tasks/changed`: every applied transition
//!   (`{"id": …, "owner": …, "from": …}`), so that `tasks/result` waiters and
//!   `subscriptions/listen` streams on every instance see it (each reads the
//!   task from the store).
//!
//! Delivery is at most once (a message lost while the bus is down is not
//! repeated); waiters also read the store again at the task's polling
//! interval.

use std::sync::{Arc, Weak};
use std::time::Duration;

use bytes::Bytes;
use serde::{Deserialize, Serialize};
use tessera_runtime::{Bus, DynBus};
use tessera_types::JsonObject;

use super::hub::{LiveTask, TaskHub};

/// The topic of one running task.
pub(crate) fn task_topic(id: &str) -> String {
    format!("tessera/task/{id}")
}

/// The topic of applied transitions.
pub(crate) const CHANGED: &str = "tessera/tasks/changed";

/// How long a relayed `tasks/update` waits for the running instance to
/// record the answers, so that a `tasks/get` after the acknowledgement
/// (on any instance) sees them.
const ANSWER_RECORDED_WITHIN: Duration = Duration::from_secs(2);

/// Asks the instance running task `id` to deliver `responses`, and waits
/// (bounded) until it has recorded them.
pub(crate) async fn send_answer(bus: &dyn DynBus, id: &str, responses: &JsonObject) {
    let reply = format!("tessera/task-reply/{}", super::new_task_id());
    let mut done = match bus.subscribe(&reply).await {
        Ok(s) => Some(s),
        Err(e) => {
            tracing::warn!(task = id, error = %e, "not waiting for the running instance");
            None
        }
    };
    let msg = wire(&TaskRequest {
        cancel: false,
        answer: Some(responses),
        reply: Some(reply.as_str()),
    });
    if let Err(e) = bus.publish(&task_topic(id), msg).await {
        tracing::warn!(task = id, error = %e, "tasks/update not relayed to the running instance");
        return;
    }
    if let Some(done) = done.as_mut() {
        if tokio::time::timeout(ANSWER_RECORDED_WITHIN, done.recv())
            .await
            .is_err()
        {
            tracing::warn!(
                task = id,
                "the running instance did not confirm the answers in time"
            );
        }
    }
}

/// Asks the instance running task `id` to stop its handler.
pub(crate) async fn send_cancel(bus: &dyn DynBus, id: &str) {
    let msg = wire(&TaskRequest::<&JsonObject, &str> {
        cancel: true,
        answer: None,
        reply: None,
    });
    if let Err(e) = bus.publish(&task_topic(id), msg).await {
        tracing::warn!(task = id, error = %e, "tasks/cancel not relayed to the running instance");
    }
}

/// Tells the other instances that task `id` of `owner` changed (`origin`:
/// the announcing hub, which skips its own message).
pub(crate) async fn send_changed(bus: &dyn DynBus, origin: &str, id: &str, owner: &str) {
    let msg = wire(&Changed {
        id,
        owner,
        from: origin,
    });
    if let Err(e) = bus.publish(CHANGED, msg).await {
        tracing::warn!(task = id, error = %e, "task change not announced to the other instances");
    }
}

/// Listens for requests about a task this instance runs, until the task is
/// forgotten (the returned handle is aborted) or the bus ends.
pub(crate) async fn serve_task(
    bus: Arc<dyn DynBus>,
    hub: Weak<TaskHub>,
    id: String,
    live: Weak<LiveTask>,
) -> Option<tokio::task::JoinHandle<()>> {
    let mut sub = match bus.subscribe(&task_topic(&id)).await {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!(task = %id, error = %e, "task not reachable from other instances");
            return None;
        }
    };
    Some(tokio::spawn(async move {
        while let Some(msg) = sub.recv().await {
            let Ok(m) = serde_json::from_slice::<TaskRequest<JsonObject, String>>(&msg) else {
                continue;
            };
            let (Some(hub), Some(live)) = (hub.upgrade(), live.upgrade()) else {
                return;
            };
            if m.cancel {
                live.cancel.cancel();
            } else if let Some(answers) = &m.answer {
                if live.input.answer(answers) > 0 {
                    if let Err(e) = hub.publish_input(&id, &live).await {
                        tracing::warn!(task = %id, error = %e.message, "task input not recorded");
                    }
                }
                if let Some(reply) = &m.reply {
                    let _ = bus.publish(reply, Bytes::from_static(b"recorded")).await;
                }
            }
        }
    }))
}

/// Feeds the transitions announced by other instances to this hub's
/// watchers, for as long as the hub lives.
pub(crate) async fn watch_changes(bus: Arc<dyn DynBus>, hub: Weak<TaskHub>) {
    let mut sub = match bus.subscribe(CHANGED).await {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!(error = %e, "task changes of other instances will not be heard");
            return;
        }
    };
    tokio::spawn(async move {
        while let Some(msg) = sub.recv().await {
            let Ok(m) = serde_json::from_slice::<Changed<String>>(&msg) else {
                continue;
            };
            let Some(hub) = hub.upgrade() else { return };
            if m.from == hub.origin() {
                continue;
            }
            let (owner, id) = (&m.owner, &m.id);
            hub.heard_change(owner, id).await;
        }
    });
}

/// What another instance asks of the one running a task, on the task's
/// topic: `{"cancel": true}`, or `{"answer": {...}, "reply": TOPIC}` (the
/// topic to confirm on once the answers are recorded).
#[derive(Serialize, Deserialize)]
struct TaskRequest<A, S> {
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    cancel: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    answer: Option<A>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reply: Option<S>,
}

/// A task transition announced to the other instances (`from`: the
/// announcing hub, which skips its own message).
#[derive(Serialize, Deserialize)]
struct Changed<S> {
    id: S,
    owner: S,
    from: S,
}

/// A bus message's bytes.
fn wire(message: &impl Serialize) -> Bytes {
    // Strings and JSON objects always serialize.
    Bytes::from(serde_json::to_vec(message).unwrap_or_default())
}
