//! [`MetricsLayer`]: a hook called with what each request did.

use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tessera_proto::Reply;
use tessera_types::ErrorCode;
use tokio::time::Instant;
use tower::BoxError;

use crate::service::{BoxFuture, Request};

/// How a request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A result.
    Ok,
    /// A JSON-RPC error with this code.
    Error(ErrorCode),
    /// The request was cancelled (by the peer or the connection closing)
    /// before it was answered.
    Cancelled,
}

impl Outcome {
    /// The outcome of a stack's result.
    pub fn of(result: &Result<Reply, BoxError>) -> Outcome {
        match result {
            Ok(_) => Outcome::Ok,
            Err(e) => Outcome::Error(super::error_code(e)),
        }
    }

    /// A short label: `ok`, `error` or `cancelled`.
    pub fn label(&self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Error(_) => "error",
            Outcome::Cancelled => "cancelled",
        }
    }
}

/// What one request did, as the metrics hook sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestRecord {
    /// The method.
    pub method: String,
    /// The tool or prompt name, or the resource URI ([`Request::target`]).
    pub target: Option<String>,
    /// From the request reaching this layer to its answer.
    pub duration: Duration,
    /// How it ended.
    pub outcome: Outcome,
}

type Hook = Arc<dyn Fn(&RequestRecord) + Send + Sync>;

/// Calls a hook with a [`RequestRecord`] for every request: wire it to the
/// metrics library of your choice (a counter by method and outcome, a
/// histogram of durations). The hook runs on the request's task; keep it
/// quick.
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
    /// A layer calling `hook` once per request, when it ends.
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
    pub(super) fn start(request: &Request, done: F) -> Self {
        Watch {
            method: request.method.clone(),
            target: request.target().map(str::to_owned),
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

impl<S> tower::Service<Request> for MetricsService<S>
where
    S: tower::Service<Request, Response = Reply, Error = BoxError>,
    S::Future: Send + 'static,
{
    type Response = Reply;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<Reply, BoxError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let hook = self.hook.clone();
        let watch = Watch::start(&request, move |r: RequestRecord| hook(&r));
        let answer = self.inner.call(request);
        Box::pin(async move {
            let result = answer.await;
            watch.finish(Outcome::of(&result));
            result
        })
    }
}
