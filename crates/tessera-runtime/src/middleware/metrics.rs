//! [`MetricsLayer`]: a hook called with what each request and notification
//! did.

use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tessera_proto::Reply;
use tessera_types::ErrorCode;
use tokio::time::Instant;
use tower::BoxError;

use crate::service::{BoxFuture, Message};

/// How a request or a notification ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A result.
    Ok,
    /// A JSON-RPC error with this code.
    Error(ErrorCode),
    /// The request was cancelled (by the peer or the connection closing)
    /// before it was answered.
    Cancelled,
    /// A notification, taken by the rest of the stack (a notification gets
    /// no response).
    Notified,
    /// A notification that a layer below refused, with this code: it was
    /// dropped, and nothing was sent back.
    Dropped(ErrorCode),
}

impl Outcome {
    /// The outcome of a stack's result for a request.
    pub fn of(result: &Result<Reply, BoxError>) -> Outcome {
        match result {
            Ok(_) => Outcome::Ok,
            Err(e) => Outcome::Error(super::error_code(e)),
        }
    }

    /// The outcome of a stack's result for a notification.
    pub fn of_notification(result: &Result<Reply, BoxError>) -> Outcome {
        match result {
            Ok(_) => Outcome::Notified,
            Err(e) => Outcome::Dropped(super::error_code(e)),
        }
    }

    /// A short label: `ok`, `error`, `cancelled`, `notified` or `dropped`.
    pub fn label(&self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Error(_) => "error",
            Outcome::Cancelled => "cancelled",
            Outcome::Notified => "notified",
            Outcome::Dropped(_) => "dropped",
        }
    }
}

/// What one request or notification did, as the metrics hook sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestRecord {
    /// The method.
    pub method: String,
    /// The tool or prompt name, or the resource URI of a request
    /// ([`Request::target`](crate::Request::target)); `None` for a notification.
    pub target: Option<String>,
    /// From the request reaching this layer to its answer.
    pub duration: Duration,
    /// How it ended: [`Outcome::Notified`] or [`Outcome::Dropped`] for a
    /// notification (or [`Outcome::Cancelled`] when the connection closed
    /// first).
    pub outcome: Outcome,
}

impl RequestRecord {
    /// Whether this records a notification.
    pub fn is_notification(&self) -> bool {
        matches!(self.outcome, Outcome::Notified | Outcome::Dropped(_))
    }
}

type Hook = Arc<dyn Fn(&RequestRecord) + Send + Sync>;

/// Calls a hook with a [`RequestRecord`] for every request and every
/// notification: wire it to the metrics library of your choice (a counter
/// by method and outcome, a histogram of durations). A notification is
/// recorded as its own kind of outcome ([`Outcome::Notified`],
/// [`Outcome::Dropped`]): it has no response or error. The hook runs on the
/// connection's task; keep it quick.
#[derive(Clone)]
pub struct MetricsLayer {
    hook: Hook,
}

impl std::fmt::Debug for MetricsLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MetricsLayer")
    }
}

impl MetricsLayer {
    /// A layer calling `hook` once per request or notification, when it
    /// ends.
    pub fn new(hook: impl Fn(&RequestRecord) + Send + Sync + 'static) -> Self {
        MetricsLayer {
            hook: Arc::new(hook),
        }
    }
}

/// Calls `done` with the record when dropped: a request whose future is
/// dropped unanswered (cancelled) is recorded too.
pub(super) struct Watch<F: FnOnce(RequestRecord)> {
    pub(super) method: String,
    pub(super) target: Option<String>,
    pub(super) started: Instant,
    pub(super) outcome: Outcome,
    pub(super) done: Option<F>,
}

impl<F: FnOnce(RequestRecord)> Watch<F> {
    pub(super) fn start(message: &Message, done: F) -> Self {
        let target = match message {
            Message::Request(r) => r.target().map(str::to_owned),
            Message::Notification(_) => None,
        };
        Watch {
            method: message.method().to_owned(),
            target,
            started: Instant::now(),
            outcome: Outcome::Cancelled,
            done: Some(done),
        }
    }
}

impl<F: FnOnce(RequestRecord)> Watch<F> {
    /// Records `outcome` now.
    pub(super) fn finish(mut self, outcome: Outcome) {
        self.outcome = outcome;
    }
}

impl<F: FnOnce(RequestRecord)> Drop for Watch<F> {
    fn drop(&mut self) {
        if let Some(done) = self.done.take() {
            done(RequestRecord {
                method: std::mem::take(&mut self.method),
                target: self.target.take(),
                duration: self.started.elapsed(),
                outcome: self.outcome,
            });
        }
    }
}

impl<S> tower::Layer<S> for MetricsLayer {
    type Service = MetricsService<S>;

    fn layer(&self, inner: S) -> MetricsService<S> {
        MetricsService {
            hook: self.hook.clone(),
            inner,
        }
    }
}

/// The service of a [`MetricsLayer`].
#[derive(Clone)]
pub struct MetricsService<S> {
    hook: Hook,
    inner: S,
}

impl<S> std::fmt::Debug for MetricsService<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MetricsService")
    }
}

impl<S> tower::Service<Message> for MetricsService<S>
where
    S: tower::Service<Message, Response = Reply, Error = BoxError>,
    S::Future: Send + 'static,
{
    type Response = Reply;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<Reply, BoxError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, message: Message) -> Self::Future {
        let hook = self.hook.clone();
        let watch = Watch::start(&message, move |r: RequestRecord| hook(&r));
        let notification = message.is_notification();
        let answer = self.inner.call(message);
        Box::pin(async move {
            let result = answer.await;
            watch.finish(if notification {
                Outcome::of_notification(&result)
            } else {
                Outcome::of(&result)
            });
            result
        })
    }
}
