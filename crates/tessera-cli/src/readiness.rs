//! `GET /readyz` of `tessera serve --http`: `200 ok` while the server can do
//! its work, `503` with the reason when it cannot — today, when the task
//! store fails its check (a deleted, replaced or corrupted SQLite file).
//! Answered in front of everything else (authorization included), so that
//! a load balancer or an orchestrator can probe it without a token.

use std::sync::Arc;
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use tessera_http::http::{Method, Request, Response, StatusCode, header};

/// The path probed.
pub const PATH: &str = "/readyz";

/// What is checked: `Err` is the reason the server is not ready.
pub type Check = Arc<dyn Fn() -> BoxFuture<'static, Result<(), String>> + Send + Sync>;

/// `inner` with `GET /readyz` answered by `check`.
#[derive(Clone)]
pub struct Readiness<S> {
    inner: S,
    check: Check,
}

impl<S> Readiness<S> {
    /// Wraps `inner`.
    pub fn new(inner: S, check: Check) -> Self {
        Readiness { inner, check }
    }
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl<S, ReqB, B> tower::Service<Request<ReqB>> for Readiness<S>
where
    S: tower::Service<Request<ReqB>, Response = Response<B>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    ReqB: Send + 'static,
    B: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Response = Response<axum::body::Body>;
    type Error = S::Error;
    type Future = BoxFuture<'static, Result<Self::Response, Self::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<ReqB>) -> Self::Future {
        if req.uri().path() == PATH && matches!(*req.method(), Method::GET | Method::HEAD) {
            let check = self.check.clone();
            return Box::pin(async move {
                let (status, text) = match check().await {
                    Ok(()) => (StatusCode::OK, "ok\n".to_owned()),
                    Err(why) => (
                        StatusCode::SERVICE_UNAVAILABLE,
                        format!("not ready: {why}\n"),
                    ),
                };
                let mut r = Response::new(axum::body::Body::from(text));
                *r.status_mut() = status;
                r.headers_mut().insert(
                    header::CONTENT_TYPE,
                    header::HeaderValue::from_static("text/plain; charset=utf-8"),
                );
                Ok(r)
            });
        }
        let fut = self.inner.call(req);
        Box::pin(async move { Ok(fut.await?.map(axum::body::Body::new)) })
    }
}
