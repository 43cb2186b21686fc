//! Progress of a 2025-11-25 task: the `progressToken` of the call that
//! created the task stays valid for the task's whole life, so its
//! notifications keep arriving after the call is answered. A
//! [`ProgressFeed`] picks them out of the client's events and hands them to
//! the caller's [`ProgressCallback`] until the task ends, the last
//! [`TaskHandle`](crate::TaskHandle) is dropped or the connection ends.

use std::sync::{Arc, Mutex};

use rand::RngCore;
use tessera_types::ProgressToken;
use tessera_types::tasks::TaskStatus;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::events::{ClientEvent, EventStream};
use crate::options::ProgressCallback;

/// A fresh progress token for a task-augmented call: unique within the
/// session (64 random bits), so no request id of this client can collide.
pub(crate) fn fresh_token() -> ProgressToken {
    ProgressToken::from(format!("task-progress-{:016x}", rand::rng().next_u64()))
}

/// Forwards the progress notifications carrying one token to a callback,
/// in a background task.
#[derive(Debug)]
pub(crate) struct ProgressFeed {
    stop: CancellationToken,
    task_id: Arc<Mutex<Option<String>>>,
    forwarder: Mutex<Option<JoinHandle<()>>>,
}

/// What the forwarder does with one event.
enum Step {
    Go,
    Stop,
}

impl ProgressFeed {
    /// Starts forwarding the progress with `token` found on `events` (a
    /// stream subscribed before the call was sent, so nothing is missed).
    pub fn start(events: EventStream, token: ProgressToken, callback: ProgressCallback) -> Self {
        let stop = CancellationToken::new();
        let task_id = Arc::new(Mutex::new(None));
        let forwarder = tokio::spawn(forward(
            events,
            token,
            callback,
            task_id.clone(),
            stop.clone(),
        ));
        ProgressFeed {
            stop,
            task_id,
            forwarder: Mutex::new(Some(forwarder)),
        }
    }

    /// Names the task the call became: its terminal status notification
    /// (`notifications/tasks/status`) ends the feed.
    pub fn set_task(&self, task_id: &str) {
        if let Ok(mut t) = self.task_id.lock() {
            *t = Some(task_id.to_owned());
        }
    }

    /// Delivers what has already arrived, then stops forwarding; returns once
    /// the callback has seen it all. Progress the server sent before the
    /// answer that ended the wait has arrived by then, in order.
    pub async fn finish(&self) {
        self.stop.cancel();
        let forwarder = self.forwarder.lock().ok().and_then(|mut f| f.take());
        if let Some(f) = forwarder {
            let _ = f.await;
        }
    }
}

impl Drop for ProgressFeed {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

async fn forward(
    mut events: EventStream,
    token: ProgressToken,
    callback: ProgressCallback,
    task_id: Arc<Mutex<Option<String>>>,
    stop: CancellationToken,
) {
    let ours = |id: &str| {
        task_id
            .lock()
            .map(|t| t.as_deref() == Some(id))
            .unwrap_or(false)
    };
    let step = |e: ClientEvent| -> Step {
        match e {
            ClientEvent::Progress(p) if p.progress_token == token => {
                callback(p);
                Step::Go
            }
            ClientEvent::LegacyTaskStatus(s)
                if is_terminal(s.task.status) && ours(&s.task.task_id) =>
            {
                Step::Stop
            }
            ClientEvent::Disconnected => Step::Stop,
            _ => Step::Go,
        }
    };
    loop {
        tokio::select! {
            biased;
            e = events.recv() => match e {
                Some(e) => {
                    if let Step::Stop = step(e) {
                        return;
                    }
                }
                None => return,
            },
            _ = stop.cancelled() => {
                while let Some(e) = events.try_recv() {
                    if let Step::Stop = step(e) {
                        return;
                    }
                }
                return;
            }
        }
    }
}

fn is_terminal(s: TaskStatus) -> bool {
    matches!(
        s,
        TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
    )
}

#[cfg(test)]
fn progress(token: &str, n: f64) -> tessera_types::ProgressNotificationParams {
    use tessera_types::ProgressNotificationParams;
    ProgressNotificationParams::new(ProgressToken::from(token.to_owned()), n, None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::sync::broadcast;

    #[tokio::test]
    async fn only_its_token_reaches_the_callback_and_finish_drains() {
        let (tx, rx) = broadcast::channel(16);
        let seen = Arc::new(AtomicUsize::new(0));
        let s = seen.clone();
        let feed = ProgressFeed::start(
            EventStream::new(rx),
            ProgressToken::from("mine".to_owned()),
            Arc::new(move |_p| {
                s.fetch_add(1, Ordering::SeqCst);
            }),
        );
        for (t, n) in [("mine", 1.0), ("other", 1.0), ("mine", 2.0), ("mine", 3.0)] {
            tx.send(ClientEvent::Progress(progress(t, n))).unwrap();
        }
        feed.finish().await;
        assert_eq!(seen.load(Ordering::SeqCst), 3);
        // Nothing after finish.
        let _ = tx.send(ClientEvent::Progress(progress("mine", 4.0)));
        tokio::task::yield_now().await;
        assert_eq!(seen.load(Ordering::SeqCst), 3);
    }
}
