//! [`RetryAfterLayer`]: HTTP `429 Too Many Requests` with `Retry-After`
//! where a rate limit refuses a whole HTTP request.
//!
//! A POST that carries one request and is answered with one JSON-RPC error
//! of the gateway's rate limits (its `data` holds `retryAfterMs` and a
//! `limit`) was refused whole: its status becomes `429` and `Retry-After`
//! says when to come back (whole seconds, rounded up). The JSON-RPC error
//! stays the body, so a client reading it still finds `retryAfterMs`.
//! Event streams, batches and any other answer pass unchanged; only JSON
//! bodies of known size up to [`MAX_INSPECTED`] bytes are read.

use std::task::{Context, Poll};

use bytes::Bytes;
use http::{HeaderValue, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Either, Full};
use tessera_runtime::BoxFuture;

use crate::refusal::ErrorResponse;

/// The largest answer body inspected, in bytes (a refusal is far smaller).
pub const MAX_INSPECTED: u64 = 4096;

/// A tower layer turning rate-limit refusals into `429` (see the module
/// docs).
#[derive(Debug, Clone, Copy, Default)]
pub struct RetryAfterLayer;

impl<S> tower::Layer<S> for RetryAfterLayer {
    type Service = RetryAfter<S>;

    fn layer(&self, inner: S) -> RetryAfter<S> {
        RetryAfter { inner }
    }
}

/// The service made by [`RetryAfterLayer`].
#[derive(Debug, Clone)]
pub struct RetryAfter<S> {
    inner: S,
}

/// The seconds to wait when `body` is one JSON-RPC error of a rate limit.
fn refused_for(body: &[u8]) -> Option<u64> {
    // Only a body that names `retryAfterMs` (or has a `\u` escape, which
    // could spell it) can be a refusal: any other answer, a result above
    // all, is not read.
    let named = memchr::memmem::find(body, b"retryAfterMs").is_some()
        || memchr::memmem::find(body, b"\\u").is_some();
    if !named {
        return None;
    }
    let v: ErrorResponse = serde_json::from_slice(body).ok()?;
    let data = v.error.data;
    let limit = data.limit?;
    let rate_limit = limit.starts_with("rateLimits[")
        || limit == "rate-limit-buckets"
        || limit == "shared-rate-limiter";
    if !rate_limit {
        return None;
    }
    let ms = data.retry_after_ms?;
    Some(ms.div_ceil(1000).max(1))
}

impl<S, B, RB> tower::Service<Request<B>> for RetryAfter<S>
where
    S: tower::Service<Request<B>, Response = Response<RB>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    B: Send + 'static,
    RB: http_body::Body<Data = Bytes> + Send + 'static,
    RB::Error: std::fmt::Display,
{
    type Response = Response<Either<RB, Full<Bytes>>>;
    type Error = S::Error;
    type Future = BoxFuture<'static, Result<Self::Response, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        let post = req.method() == http::Method::POST;
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        Box::pin(async move {
            let response = inner.call(req).await?;
            let json = response
                .headers()
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.starts_with("application/json"));
            let small = response
                .body()
                .size_hint()
                .exact()
                .is_some_and(|n| n <= MAX_INSPECTED);
            if !(post && json && small && response.status() == StatusCode::OK) {
                return Ok(response.map(Either::Left));
            }
            let (mut parts, body) = response.into_parts();
            let bytes = match body.collect().await {
                Ok(b) => b.to_bytes(),
                Err(e) => {
                    tracing::debug!(%e, "reading an answer body failed");
                    Bytes::new()
                }
            };
            if let Some(secs) = refused_for(&bytes) {
                parts.status = StatusCode::TOO_MANY_REQUESTS;
                parts
                    .headers
                    .insert(header::RETRY_AFTER, HeaderValue::from(secs));
            }
            Ok(Response::from_parts(parts, Either::Right(Full::new(bytes))))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_rate_limit_refusal_is_a_429() {
        let refusal = br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"rate limit","data":{"retryAfterMs":1500,"limit":"rateLimits[0] \"pace\""}}}"#;
        assert_eq!(refused_for(refusal), Some(2));
        let shared = br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"x","data":{"retryAfterMs":1,"limit":"shared-rate-limiter"}}}"#;
        assert_eq!(refused_for(shared), Some(1));
        // The key spelled with an escape is the same key.
        let escaped = br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"x","data":{"retry\u0041fterMs":1,"limit":"shared-rate-limiter"}}}"#;
        assert_eq!(refused_for(escaped), Some(1));
        for other in [
            // A circuit breaker's refusal is not a rate limit.
            &br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"x","data":{"retryAfterMs":1000,"circuit":"open","upstream":"a"}}}"#[..],
            br#"{"jsonrpc":"2.0","id":1,"result":{"retryAfterMs":5}}"#,
            br#"[{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x","data":{"retryAfterMs":1,"limit":"rateLimits[0]"}}}]"#,
            b"not json",
            br#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#,
        ] {
            assert_eq!(refused_for(other), None, "{}", String::from_utf8_lossy(other));
        }
    }
}
