//! What both tests record into: in-memory span and metric exporters behind
//! providers of their own (never the process's global ones), and the
//! telemetry over them.

use opentelemetry::trace::SpanKind;
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use tessera_telemetry::Telemetry;

/// A telemetry recording into memory, and where to read what it recorded.
pub struct Sinks {
    /// The finished spans.
    pub spans: InMemorySpanExporter,
    /// The exported metrics (after `meter.force_flush()`).
    pub metrics: InMemoryMetricExporter,
    /// The meter provider, to flush.
    pub meter: SdkMeterProvider,
    /// The telemetry over both providers.
    pub telemetry: Telemetry,
    /// Kept so its span processor lives as long as the test.
    _tracer: SdkTracerProvider,
}

/// A fresh telemetry with its own in-memory exporters.
pub fn in_memory() -> Sinks {
    let spans = InMemorySpanExporter::default();
    let tracer = SdkTracerProvider::builder()
        .with_simple_exporter(spans.clone())
        .build();
    let metrics = InMemoryMetricExporter::default();
    let meter = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(metrics.clone()).build())
        .build();
    let telemetry = Telemetry::builder()
        .tracer_provider(&tracer)
        .meter_provider(&meter)
        .build();
    Sinks {
        spans,
        metrics,
        meter,
        telemetry,
        _tracer: tracer,
    }
}

/// The value of the span attribute `key`, as text.
pub fn attr(span: &SpanData, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| kv.value.to_string())
}

/// The one span named `name` of kind `kind` (fails the test unless there
/// is exactly one).
pub fn one<'a>(spans: &'a [SpanData], name: &str, kind: SpanKind) -> &'a SpanData {
    let found: Vec<&SpanData> = spans
        .iter()
        .filter(|s| s.name == name && s.span_kind == kind)
        .collect();
    assert_eq!(found.len(), 1, "one {kind:?} span {name}: {spans:#?}");
    found[0]
}
