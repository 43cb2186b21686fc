//! [`TraceLayer`]: a tracing span per request and per notification.

use std::task::{Context, Poll};

use tessera_proto::Reply;
use tower::BoxError;
use tracing::Instrument;

use super::metrics::{Outcome, Watch};
use crate::service::{BoxFuture, Message};

/// Runs each request in an `INFO` span named `mcp.request` with the fields
/// `method`, `target` (tool or prompt name, resource URI), `id`, `era` and
/// `version`, and ends it with one event carrying `duration_ms` and
/// `outcome` (`ok`, `error` with its `code`, or `cancelled`): an `INFO`
/// event for a result, `WARN` for an error. Each notification runs in an
/// `INFO` span named `mcp.notification` with the fields `method` and
/// `version` (once the connection knows it), ended by
/// one event with `duration_ms` and `outcome`: `notified` (`DEBUG`), or
/// `dropped` with the `code` of the layer's refusal (`INFO`).
#[derive(Debug, Clone, Copy, Default)]
pub struct TraceLayer;

impl TraceLayer {
    /// The layer.
    pub fn new() -> Self {
        TraceLayer
    }
}

impl<S> tower::Layer<S> for TraceLayer {
    type Service = TraceService<S>;

    fn layer(&self, inner: S) -> TraceService<S> {
        TraceService { inner }
    }
}

/// The service of a [`TraceLayer`].
#[derive(Debug, Clone)]
pub struct TraceService<S> {
    inner: S,
}

impl<S> tower::Service<Message> for TraceService<S>
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
        let (span, notification) = match &message {
            Message::Request(request) => (
                tracing::info_span!(
                    "mcp.request",
                    method = %request.method,
                    target = request.target(),
                    id = %request.id,
                    era = ?request.context.era,
                    version = %request.context.version.as_str(),
                ),
                false,
            ),
            Message::Notification(n) => (
                tracing::info_span!(
                    "mcp.notification",
                    method = %n.method,
                    version = n.version.map(|v| v.as_str()),
                ),
                true,
            ),
        };
        let in_span = span.clone();
        let watch = Watch::start(&message, move |r| {
            let _entered = in_span.enter();
            let ms = r.duration.as_secs_f64() * 1000.0;
            match r.outcome {
                Outcome::Ok => tracing::info!(duration_ms = ms, outcome = "ok", "request done"),
                Outcome::Error(code) => tracing::warn!(
                    duration_ms = ms,
                    outcome = "error",
                    code = code.0,
                    "request failed"
                ),
                Outcome::Cancelled => {
                    tracing::info!(duration_ms = ms, outcome = "cancelled", "request cancelled")
                }
                Outcome::Notified => {
                    tracing::debug!(duration_ms = ms, outcome = "notified", "notification taken")
                }
                Outcome::Dropped(code) => tracing::info!(
                    duration_ms = ms,
                    outcome = "dropped",
                    code = code.0,
                    "notification dropped"
                ),
            }
        });
        let answer = self.inner.call(message);
        Box::pin(
            async move {
                let result = answer.await;
                watch.finish(if notification {
                    Outcome::of_notification(&result)
                } else {
                    Outcome::of(&result)
                });
                result
            }
            .instrument(span),
        )
    }
}
