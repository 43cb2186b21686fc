//! The Prometheus text exposition: `GET /metrics` on a listener of its own.

use std::sync::Arc;
use std::time::Duration;

use http::{Method, Response, StatusCode, header};
use http_body_util::Full;
use hyper::body::Bytes;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use prometheus::{Encoder, Registry, TextEncoder};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use super::ExportError;

/// How long a scrape's connection may take to send its request.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// The registry the metrics are gathered into, ready to be served.
#[derive(Debug, Clone)]
pub struct MetricsEndpoint {
    registry: Arc<Registry>,
}

impl MetricsEndpoint {
    /// The metrics in the Prometheus text format (version 0.0.4).
    pub fn render(&self) -> Vec<u8> {
        let mut out = Vec::new();
        if let Err(e) = TextEncoder::new().encode(&self.registry.gather(), &mut out) {
            tracing::warn!(%e, "telemetry: cannot encode the Prometheus metrics");
        }
        out
    }
}

/// A metric reader feeding a new registry, and the registry's endpoint.
pub(super) fn reader() -> Result<
    (
        opentelemetry_prometheus::PrometheusExporter,
        MetricsEndpoint,
    ),
    ExportError,
> {
    let registry = Registry::new();
    let exporter = opentelemetry_prometheus::exporter()
        .with_registry(registry.clone())
        .build()
        .map_err(|e| ExportError::Prometheus(e.to_string()))?;
    Ok((
        exporter,
        MetricsEndpoint {
            registry: Arc::new(registry),
        },
    ))
}

/// Serves `endpoint` at `http://ADDR/metrics` on `listener` (HTTP/1.1;
/// any other path is `404`, any other method `405`) until the task is
/// aborted.
pub fn serve_metrics(listener: TcpListener, endpoint: MetricsEndpoint) -> JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            let (stream, _) = match listener.accept().await {
                Ok(s) => s,
                Err(e) => {
                    tracing::warn!(%e, "metrics endpoint: accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            };
            let endpoint = endpoint.clone();
            tokio::spawn(async move {
                let service = service_fn(move |req: http::Request<hyper::body::Incoming>| {
                    let endpoint = endpoint.clone();
                    async move { Ok::<_, std::convert::Infallible>(answer(&req, &endpoint)) }
                });
                let mut builder = hyper::server::conn::http1::Builder::new();
                builder
                    .timer(hyper_util::rt::TokioTimer::new())
                    .header_read_timeout(HEADER_TIMEOUT);
                let _ = builder
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    })
}

fn answer<B>(req: &http::Request<B>, endpoint: &MetricsEndpoint) -> Response<Full<Bytes>> {
    let plain = |status, text: &'static str| {
        let mut r = Response::new(Full::new(Bytes::from_static(text.as_bytes())));
        *r.status_mut() = status;
        r
    };
    if req.uri().path() != "/metrics" {
        return plain(
            StatusCode::NOT_FOUND,
            "not found: the metrics are at /metrics\n",
        );
    }
    if req.method() != Method::GET && req.method() != Method::HEAD {
        return plain(StatusCode::METHOD_NOT_ALLOWED, "use GET\n");
    }
    let mut r = Response::new(Full::new(Bytes::from(endpoint.render())));
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    r
}
