//! [`HealthLayer`]: `GET /healthz` (the process answers) and `GET /readyz`
//! (whether the proxy can serve, with each upstream's state), answered in
//! front of everything else (authentication included, so that probes need
//! no credentials).

use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::{Either, Full};
use serde::Serialize;
use serde_json::Value;
use tessera_runtime::BoxFuture;

/// The path of the liveness probe.
pub const HEALTHZ_PATH: &str = "/healthz";
/// The path of the readiness probe.
pub const READYZ_PATH: &str = "/readyz";

/// What `GET /readyz` reports (its body, as JSON).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Readiness {
    /// Whether the proxy can serve (`200`; else `503`).
    pub ready: bool,
    /// Each upstream's state, by name (`connected`, `reconnecting`, …).
    pub upstreams: serde_json::Map<String, Value>,
}

/// What `GET /healthz` reports.
#[derive(Serialize)]
struct Alive {
    status: &'static str,
}

type Report = Arc<dyn Fn() -> Readiness + Send + Sync>;

/// A tower layer answering the health probes (see the module docs).
#[derive(Clone)]
pub struct HealthLayer {
    report: Report,
}

impl std::fmt::Debug for HealthLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HealthLayer").finish_non_exhaustive()
    }
}

impl HealthLayer {
    /// Answers `/readyz` with what `report` says at the time.
    pub fn new(report: impl Fn() -> Readiness + Send + Sync + 'static) -> Self {
        HealthLayer {
            report: Arc::new(report),
        }
    }
}

impl<S> tower::Layer<S> for HealthLayer {
    type Service = Health<S>;

    fn layer(&self, inner: S) -> Health<S> {
        Health {
            inner,
            report: self.report.clone(),
        }
    }
}

/// The service made by [`HealthLayer`].
#[derive(Clone)]
pub struct Health<S> {
    inner: S,
    report: Report,
}

impl<S: std::fmt::Debug> std::fmt::Debug for Health<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Health")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

fn json(status: StatusCode, body: &impl Serialize) -> Response<Full<Bytes>> {
    // Strings, booleans and maps of strings: always serialised.
    let text = serde_json::to_string(body).unwrap_or_default();
    let mut r = Response::new(Full::new(Bytes::from(text)));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    r.headers_mut().insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("no-store"),
    );
    r
}

impl<S, B, RB> tower::Service<Request<B>> for Health<S>
where
    S: tower::Service<Request<B>, Response = Response<RB>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    B: Send + 'static,
    RB: Send + 'static,
{
    type Response = Response<Either<RB, Full<Bytes>>>;
    type Error = S::Error;
    type Future = BoxFuture<'static, Result<Self::Response, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        let probe = (req.method() == Method::GET).then(|| req.uri().path());
        let answer = match probe {
            Some(HEALTHZ_PATH) => Some(json(StatusCode::OK, &Alive { status: "ok" })),
            Some(READYZ_PATH) => {
                let r = (self.report)();
                let status = if r.ready {
                    StatusCode::OK
                } else {
                    StatusCode::SERVICE_UNAVAILABLE
                };
                Some(json(status, &r))
            }
            _ => None,
        };
        if let Some(a) = answer {
            return Box::pin(async move { Ok(a.map(Either::Right)) });
        }
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        Box::pin(async move { Ok(inner.call(req).await?.map(Either::Left)) })
    }
}
