//! Export from the standard OpenTelemetry environment variables, and the
//! Prometheus text exposition.
//!
//! [`init_from_env`] reads:
//!
//! - `OTEL_SDK_DISABLED=true`: no OTLP export at all;
//! - `OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`,
//!   `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`: a signal is exported when its
//!   endpoint (or the common one) is set, unless `OTEL_TRACES_EXPORTER` /
//!   `OTEL_METRICS_EXPORTER` is `none`;
//! - `OTEL_EXPORTER_OTLP_PROTOCOL` and the per-signal
//!   `OTEL_EXPORTER_OTLP_{TRACES,METRICS}_PROTOCOL`: `http/protobuf`
//!   (the default) or `grpc`;
//! - `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES` (the service name
//!   defaults to the program's), `OTEL_TRACES_SAMPLER` and
//!   `OTEL_TRACES_SAMPLER_ARG`, `OTEL_METRIC_EXPORT_INTERVAL`,
//!   `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TIMEOUT` and the
//!   `OTEL_BSP_*` batch settings, which the OpenTelemetry SDK and exporter
//!   read themselves.
//!
//! Spans leave through a batch processor with a bounded queue
//! (`OTEL_BSP_MAX_QUEUE_SIZE`, default 2048 spans; a full queue drops new
//! spans) on the Tokio runtime, each export bounded by
//! `OTEL_EXPORTER_OTLP_TIMEOUT` (default 10 s): a collector that is down or
//! never answers costs that queue and a logged warning, never a request.

mod prometheus;

use std::env;

use opentelemetry::global;
use opentelemetry_otlp::{MetricExporter, SpanExporter};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::metrics::periodic_reader_with_async_runtime::PeriodicReader;
use opentelemetry_sdk::propagation::{BaggagePropagator, TraceContextPropagator};
use opentelemetry_sdk::runtime::Tokio;
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::trace::span_processor_with_async_runtime::BatchSpanProcessor;

pub use self::prometheus::{MetricsEndpoint, serve_metrics};
use crate::Telemetry;

/// Why telemetry could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExportError {
    /// An `OTEL_*` variable has a value this build cannot honour.
    #[error("{variable}={value}: {reason}")]
    Setting {
        /// The variable.
        variable: String,
        /// Its value.
        value: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The OTLP exporter could not be built.
    #[error("cannot set up OTLP export: {0}")]
    Exporter(String),
    /// The Prometheus exporter could not be built.
    #[error("cannot set up the Prometheus metrics: {0}")]
    Prometheus(String),
}

/// Which OTLP protocol a signal uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Protocol {
    HttpProtobuf,
    Grpc,
}

/// The value of the first of `names` that is set and not empty.
fn var(names: &[&str]) -> Option<(String, String)> {
    names.iter().find_map(|n| {
        env::var(n)
            .ok()
            .filter(|v| !v.trim().is_empty())
            .map(|v| (n.to_string(), v.trim().to_owned()))
    })
}

fn protocol(signal: &str) -> Result<Protocol, ExportError> {
    let specific = format!("OTEL_EXPORTER_OTLP_{signal}_PROTOCOL");
    match var(&[&specific, "OTEL_EXPORTER_OTLP_PROTOCOL"]) {
        None => Ok(Protocol::HttpProtobuf),
        Some((_, v)) if v == "http/protobuf" => Ok(Protocol::HttpProtobuf),
        Some((_, v)) if v == "grpc" => Ok(Protocol::Grpc),
        Some((variable, value)) => Err(ExportError::Setting {
            variable,
            value,
            reason: "supported protocols are http/protobuf and grpc",
        }),
    }
}

/// Whether `signal` (`TRACES`, `METRICS`) is to be exported over OTLP.
fn wanted(signal: &str) -> bool {
    let exporter = format!("OTEL_{signal}_EXPORTER");
    if var(&[&exporter]).is_some_and(|(_, v)| v == "none") {
        return false;
    }
    let endpoint = format!("OTEL_EXPORTER_OTLP_{signal}_ENDPOINT");
    var(&[&endpoint, "OTEL_EXPORTER_OTLP_ENDPOINT"]).is_some()
}

fn disabled() -> bool {
    var(&["OTEL_SDK_DISABLED"]).is_some_and(|(_, v)| v.eq_ignore_ascii_case("true"))
}

fn resource(default_service: &str) -> Resource {
    let named = env::var("OTEL_SERVICE_NAME").is_ok_and(|v| !v.is_empty())
        || env::var("OTEL_RESOURCE_ATTRIBUTES").is_ok_and(|v| v.contains("service.name="));
    let b = Resource::builder();
    if named {
        b.build()
    } else {
        b.with_service_name(default_service.to_owned()).build()
    }
}

/// The longest [`Exporting::shutdown`] waits for the last exports.
pub const SHUTDOWN_BOUND: std::time::Duration = std::time::Duration::from_secs(3);

/// What [`init_from_env`] set up; [`Exporting::shutdown`] flushes it.
#[derive(Debug)]
pub struct Exporting {
    telemetry: Telemetry,
    tracer_provider: Option<SdkTracerProvider>,
    meter_provider: Option<SdkMeterProvider>,
    metrics: Option<MetricsEndpoint>,
}

impl Exporting {
    /// The telemetry recording into the exporters.
    pub fn telemetry(&self) -> &Telemetry {
        &self.telemetry
    }

    /// The Prometheus registry's endpoint, when asked for.
    pub fn metrics(&self) -> Option<&MetricsEndpoint> {
        self.metrics.as_ref()
    }

    /// Whether spans are exported over OTLP.
    pub fn exports_traces(&self) -> bool {
        self.tracer_provider.is_some()
    }

    /// Exports what is queued and stops the exporters, waiting at most
    /// [`SHUTDOWN_BOUND`] (a collector that never answers does not hold the
    /// process).
    pub async fn shutdown(self) {
        let Exporting {
            tracer_provider,
            meter_provider,
            ..
        } = self;
        // The SDK's shutdown waits on the batch task: off the runtime's
        // worker threads.
        let flush = tokio::task::spawn_blocking(move || {
            if let Some(t) = tracer_provider {
                if let Err(e) = t.shutdown() {
                    tracing::warn!(%e, "telemetry: spans not all exported");
                }
            }
            if let Some(m) = meter_provider {
                if let Err(e) = m.shutdown() {
                    tracing::debug!(%e, "telemetry: metrics not all exported");
                }
            }
        });
        if tokio::time::timeout(SHUTDOWN_BOUND, flush).await.is_err() {
            tracing::warn!(
                bound = ?SHUTDOWN_BOUND,
                "telemetry: the collector did not take the last spans in time; not waiting"
            );
        }
    }
}

/// Sets up telemetry from the `OTEL_*` environment variables (see the
/// module documentation), with a Prometheus registry when `prometheus` is
/// set. Returns `None` when there is nothing to record into (no endpoint,
/// or the SDK disabled, and no Prometheus). Installs the global tracer and
/// meter providers and the W3C propagators. Call it inside a Tokio runtime.
pub fn init_from_env(
    default_service: &str,
    prometheus: bool,
) -> Result<Option<Exporting>, ExportError> {
    let off = disabled();
    let traces = !off && wanted("TRACES");
    let metrics = !off && wanted("METRICS");
    if !traces && !metrics && !prometheus {
        return Ok(None);
    }
    let resource = resource(default_service);
    let tracer_provider = if traces {
        let exporter = match protocol("TRACES")? {
            Protocol::HttpProtobuf => SpanExporter::builder().with_http().build(),
            Protocol::Grpc => SpanExporter::builder().with_tonic().build(),
        }
        .map_err(|e| ExportError::Exporter(e.to_string()))?;
        let processor = BatchSpanProcessor::builder(exporter, Tokio).build();
        Some(
            SdkTracerProvider::builder()
                .with_span_processor(processor)
                .with_resource(resource.clone())
                .build(),
        )
    } else {
        None
    };
    let mut endpoint = None;
    let meter_provider = if metrics || prometheus {
        let mut b = SdkMeterProvider::builder().with_resource(resource);
        if metrics {
            let exporter = match protocol("METRICS")? {
                Protocol::HttpProtobuf => MetricExporter::builder().with_http().build(),
                Protocol::Grpc => MetricExporter::builder().with_tonic().build(),
            }
            .map_err(|e| ExportError::Exporter(e.to_string()))?;
            b = b.with_reader(PeriodicReader::builder(exporter, Tokio).build());
        }
        if prometheus {
            let (reader, ep) = self::prometheus::reader()?;
            b = b.with_reader(reader);
            endpoint = Some(ep);
        }
        Some(b.build())
    } else {
        None
    };
    global::set_text_map_propagator(opentelemetry::propagation::TextMapCompositePropagator::new(
        vec![
            Box::new(TraceContextPropagator::new()),
            Box::new(BaggagePropagator::new()),
        ],
    ));
    let mut builder = Telemetry::builder();
    if let Some(t) = &tracer_provider {
        global::set_tracer_provider(t.clone());
        builder = builder.tracer_provider(t);
    }
    if let Some(m) = &meter_provider {
        global::set_meter_provider(m.clone());
        builder = builder.meter_provider(m);
    }
    Ok(Some(Exporting {
        telemetry: builder.build(),
        tracer_provider,
        meter_provider,
        metrics: endpoint,
    }))
}
