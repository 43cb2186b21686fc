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
use serde_json::{Value, json};
use tessera_runtime::Bus;
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
pub(crate) async fn send_answer(bus: &dyn Bus, id: &str, responses: &JsonObject) {
    let reply = format!("tessera/task-reply/{}", super::new_task_id());
    let mut done = match bus.subscribe(&reply).await {
        Ok(s) => Some(s),
        Err(e) => {
            tracing::warn!(task = id, error = %e, "not waiting for the running instance");
            None
        }
    };
    let msg = json!({"answer": responses, "reply": reply}).to_string();
    if let Err(e) = bus.publish(&task_topic(id), Bytes::from(msg)).await {
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
pub(crate) async fn send_cancel(bus: &dyn Bus, id: &str) {
    let msg = json!({"cancel": true}).to_string();
    if let Err(e) = bus.publish(&task_topic(id), Bytes::from(msg)).await {
        tracing::warn!(task = id, error = %e, "tasks/cancel not relayed to the running instance");
    }
}

/// Tells the other instances that task `id` of `owner` changed (`origin`:
/// the announcing hub, which skips its own message).
pub(crate) async fn send_changed(bus: &dyn Bus, origin: &str, id: &str, owner: &str) {
    let msg = json!({"id": id, "owner": owner, "from": origin}).to_string();
    if let Err(e) = bus.publish(CHANGED, Bytes::from(msg)).await {
        tracing::warn!(task = id, error = %e, "task change not announced to the other instances");
    }
}

/// Listens for requests about a task this instance runs, until the task is
/// forgotten (the returned handle is aborted) or the bus ends.
pub(crate) async fn serve_task(
    bus: Arc<dyn Bus>,
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
            let Ok(Value::Object(m)) = serde_json::from_slice::<Value>(&msg) else {
                continue;
            };
            let (Some(hub), Some(live)) = (hub.upgrade(), live.upgrade()) else {
                return;
            };
            if m.get("cancel") == Some(&Value::Bool(true)) {
                live.cancel.cancel();
            } else if let Some(Value::Object(answers)) = m.get("answer") {
                if live.input.answer(answers) > 0 {
                    if let Err(e) = hub.publish_input(&id, &live).await {
                        tracing::warn!(task = %id, error = %e.message, "task input not recorded");
                    }
                }
                if let Some(Value::String(reply)) = m.get("reply") {
                    let _ = bus.publish(reply, Bytes::from_static(b"recorded")).await;
                }
            }
        }
    }))
}

/// Feeds the transitions announced by other instances to this hub's
/// watchers, for as long as the hub lives.
pub(crate) async fn watch_changes(bus: Arc<dyn Bus>, hub: Weak<TaskHub>) {
    let mut sub = match bus.subscribe(CHANGED).await {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!(error = %e, "task changes of other instances will not be heard");
            return;
        }
    };
    tokio::spawn(async move {
        while let Some(msg) = sub.recv().await {
            let Ok(Value::Object(m)) = serde_json::from_slice::<Value>(&msg) else {
                continue;
            };
            let (Some(Value::String(id)), Some(Value::String(owner))) =
                (m.get("id"), m.get("owner"))
            else {
                continue;
            };
            let Some(hub) = hub.upgrade() else { return };
            if m.get("from").and_then(Value::as_str) == Some(hub.origin()) {
                continue;
            }
            hub.heard_change(owner, id).await;
        }
    });
}
