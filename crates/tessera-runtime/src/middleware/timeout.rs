//! [`TimeoutLayer`]: a time limit per request.

use std::time::Duration;

use tessera_types::ErrorObject;

use super::{Middleware, Next};
use crate::service::{BoxFuture, HandlerResult, Request};

/// Answers a request that is not done within a time limit with an internal
/// error (`-32603`, "Request timed out after N ms") and drops its handler.
/// The limit counts from the request reaching this layer; put the layer
/// outside a [`ConcurrencyLimitLayer`](super::ConcurrencyLimitLayer) to count
/// the wait for a slot too.
#[derive(Debug, Clone, Copy)]
pub struct TimeoutLayer {
    limit: Duration,
}

impl TimeoutLayer {
    /// A layer that gives each request at most `limit`.
    pub fn new(limit: Duration) -> Self {
        TimeoutLayer { limit }
    }
}

impl Middleware for TimeoutLayer {
    fn call(&self, request: Request, next: Next) -> BoxFuture<'static, HandlerResult> {
        let limit = self.limit;
        let answer = next.run(request);
        Box::pin(async move {
            match tokio::time::timeout(limit, answer).await {
                Ok(result) => result,
                Err(_) => Err(ErrorObject::internal(format!(
                    "Request timed out after {} ms",
                    limit.as_millis()
                ))),
            }
        })
    }
}
