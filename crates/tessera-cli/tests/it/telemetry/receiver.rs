//! An OTLP receiver for the tests: decodes what the exporters send with the
//! official OTLP protobuf definitions (`opentelemetry-proto`) over
//! http/protobuf (`POST /v1/traces`, `POST /v1/metrics`), and keeps the
//! spans and metric names it received; [`Receiver::start_grpc`] takes
//! traces over OTLP/gRPC instead. In [`Mode::Hang`] it accepts connections
//! and reads requests but never answers (a stuck collector).

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::service::TowerToHyperService;
use opentelemetry_proto::tonic::collector::metrics::v1::{
    ExportMetricsServiceRequest, ExportMetricsServiceResponse,
};
use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
    TraceService, TraceServiceServer,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;

/// The largest export body read (the exporters batch at most 512 spans).
const MAX_BODY: usize = 16 * 1024 * 1024;

/// How the receiver behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Decodes and answers.
    Answer,
    /// Reads the request and never answers.
    Hang,
}

/// A span as received, with the `service.name` of its resource.
#[derive(Debug, Clone)]
pub struct Received {
    pub service: String,
    pub span: Span,
}

impl Received {
    /// The span's name.
    pub fn name(&self) -> &str {
        &self.span.name
    }

    /// A string attribute.
    pub fn attr(&self, key: &str) -> Option<String> {
        attr(&self.span.attributes, key).and_then(|v| match v {
            any_value::Value::StringValue(s) => Some(s),
            any_value::Value::IntValue(i) => Some(i.to_string()),
            any_value::Value::BoolValue(b) => Some(b.to_string()),
            _ => None,
        })
    }

    /// The trace id, hex.
    pub fn trace_id(&self) -> String {
        hex(&self.span.trace_id)
    }

    /// The span id, hex.
    pub fn span_id(&self) -> String {
        hex(&self.span.span_id)
    }

    /// The parent span id, hex (empty for a root).
    pub fn parent_id(&self) -> String {
        hex(&self.span.parent_span_id)
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn attr(attrs: &[KeyValue], key: &str) -> Option<any_value::Value> {
    attrs
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.clone())
        .and_then(|AnyValue { value }| value)
}

#[derive(Default)]
struct Store {
    spans: Mutex<Vec<Received>>,
    metrics: Mutex<BTreeSet<String>>,
    requests: Mutex<usize>,
    changed: Notify,
}

/// A running receiver; stops when dropped.
pub struct Receiver {
    pub addr: SocketAddr,
    store: Arc<Store>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Receiver {
    /// Starts a receiver on a free loopback port.
    pub async fn start(mode: Mode) -> Receiver {
        Receiver::serve(move |stream, s| {
            tokio::spawn(async move {
                let service = service_fn(move |req: hyper::Request<Incoming>| {
                    let s = s.clone();
                    async move { Ok::<_, std::convert::Infallible>(handle(req, &s, mode).await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        })
        .await
    }

    /// Starts a receiver of traces over OTLP/gRPC (HTTP/2) on a free
    /// loopback port.
    pub async fn start_grpc() -> Receiver {
        Receiver::serve(|stream, s| {
            let service = TowerToHyperService::new(TraceServiceServer::new(Grpc(s)));
            tokio::spawn(async move {
                let _ = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        })
        .await
    }

    /// Accepts connections on a free loopback port and hands each to `serve`.
    async fn serve(serve: impl Fn(TcpStream, Arc<Store>) + Send + 'static) -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let store = Arc::new(Store::default());
        let s = store.clone();
        let task = tokio::spawn(async move {
            loop {
                if let Ok((stream, _)) = listener.accept().await {
                    serve(stream, s.clone());
                }
            }
        });
        Receiver { addr, store, task }
    }

    /// `http://ADDR`, for `OTEL_EXPORTER_OTLP_ENDPOINT`.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The spans received so far.
    pub fn spans(&self) -> Vec<Received> {
        self.store.spans.lock().unwrap().clone()
    }

    /// The metric names received so far.
    pub fn metric_names(&self) -> BTreeSet<String> {
        self.store.metrics.lock().unwrap().clone()
    }

    /// How many export requests arrived (answered or not).
    pub fn requests(&self) -> usize {
        *self.store.requests.lock().unwrap()
    }

    /// Waits until `done` holds for the receiver, failing after `bound`.
    pub async fn wait_for(&self, what: &str, bound: Duration, done: impl Fn(&Receiver) -> bool) {
        let deadline = tokio::time::Instant::now() + bound;
        loop {
            let changed = self.store.changed.notified();
            if done(self) {
                return;
            }
            if tokio::time::timeout_at(deadline, changed).await.is_err() {
                panic!(
                    "{what}: not received within {bound:?}; spans: {:#?}",
                    self.spans()
                        .iter()
                        .map(|s| (s.service.clone(), s.name().to_owned()))
                        .collect::<Vec<_>>()
                );
            }
        }
    }
}

async fn handle(
    req: hyper::Request<Incoming>,
    store: &Store,
    mode: Mode,
) -> hyper::Response<Full<Bytes>> {
    let path = req.uri().path().to_owned();
    let body = match Limited::new(req.into_body(), MAX_BODY).collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => return status(hyper::StatusCode::PAYLOAD_TOO_LARGE),
    };
    *store.requests.lock().unwrap() += 1;
    store.changed.notify_waiters();
    if mode == Mode::Hang {
        std::future::pending::<()>().await;
    }
    let reply = match path.as_str() {
        "/v1/traces" => {
            let Ok(r) = ExportTraceServiceRequest::decode(body) else {
                return status(hyper::StatusCode::BAD_REQUEST);
            };
            keep_spans(store, r);
            ExportTraceServiceResponse::default().encode_to_vec()
        }
        "/v1/metrics" => {
            let Ok(r) = ExportMetricsServiceRequest::decode(body) else {
                return status(hyper::StatusCode::BAD_REQUEST);
            };
            let mut names = store.metrics.lock().unwrap();
            for rm in r.resource_metrics {
                for sm in rm.scope_metrics {
                    for m in sm.metrics {
                        names.insert(m.name);
                    }
                }
            }
            ExportMetricsServiceResponse::default().encode_to_vec()
        }
        _ => return status(hyper::StatusCode::NOT_FOUND),
    };
    store.changed.notify_waiters();
    let mut r = hyper::Response::new(Full::new(Bytes::from(reply)));
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/x-protobuf"),
    );
    r
}

/// Keeps the spans of an export.
fn keep_spans(store: &Store, r: ExportTraceServiceRequest) {
    let mut spans = store.spans.lock().unwrap();
    for rs in r.resource_spans {
        let service = rs
            .resource
            .as_ref()
            .and_then(|r| attr(&r.attributes, "service.name"))
            .and_then(|v| match v {
                any_value::Value::StringValue(s) => Some(s),
                _ => None,
            })
            .unwrap_or_default();
        for ss in rs.scope_spans {
            for span in ss.spans {
                spans.push(Received {
                    service: service.clone(),
                    span,
                });
            }
        }
    }
}

/// The OTLP/gRPC trace service.
struct Grpc(Arc<Store>);

#[tonic::async_trait]
impl TraceService for Grpc {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        *self.0.requests.lock().unwrap() += 1;
        keep_spans(&self.0, request.into_inner());
        self.0.changed.notify_waiters();
        Ok(tonic::Response::new(ExportTraceServiceResponse::default()))
    }
}

fn status(s: hyper::StatusCode) -> hyper::Response<Full<Bytes>> {
    let mut r = hyper::Response::new(Full::new(Bytes::new()));
    *r.status_mut() = s;
    r
}
