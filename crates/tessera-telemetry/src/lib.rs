//! OpenTelemetry traces and metrics for Tessera, following the MCP semantic
//! conventions (OpenTelemetry GenAI semantic conventions,
//! `docs/gen-ai/mcp.md`).
//!
//! A [`Telemetry`] records, in both roles and both eras:
//!
//! - a `SERVER` span per request and per notification a connection
//!   receives, through the [`TelemetryLayer`] on the middleware stack,
//!   parented on the `traceparent` the sender put in `params._meta` (and
//!   linked to the ambient span, an HTTP server's say);
//! - a `CLIENT` span per request the process sends, whose context goes into
//!   the request's `params._meta` (`traceparent`, `tracestate`, `baggage`),
//!   so the receiver continues the trace and a proxy passes it on;
//! - `mcp.client.operation.duration` and `mcp.server.operation.duration`
//!   with the convention's advised buckets ([`convention::DURATION_BUCKETS`]).
//!
//! Spans are named `{mcp.method.name} {target}` and carry the attributes
//! listed in [`convention`]; how 2026-07-28 maps onto the conventions is in
//! [`era`]. The guide's telemetry chapter (`tessera::guide::telemetry`) has the table.
//!
//! With the `export` feature, `export::init_from_env` sets up OTLP export
//! from the standard `OTEL_*` variables and `export::serve_metrics` serves
//! the Prometheus text format; without it the layer records into whatever
//! tracer and meter providers the application installed.
//!
//! ```
//! use opentelemetry_sdk::trace::SdkTracerProvider;
//! use tessera_telemetry::Telemetry;
//! use tessera_runtime::middleware::MiddlewareStack;
//!
//! // Records into the global OpenTelemetry providers: none is installed,
//! // so there is nothing to record and the layer stays out of the stack.
//! let telemetry = Telemetry::builder().build();
//! assert!(!telemetry.is_active());
//! let stack = telemetry.install(MiddlewareStack::new());
//! assert_eq!(stack.len(), 0);
//!
//! // Records spans with a tracer provider of the program's.
//! let provider = SdkTracerProvider::builder().build();
//! let telemetry = Telemetry::builder().tracer_provider(&provider).build();
//! let stack = telemetry.install(MiddlewareStack::new());
//! assert_eq!(stack.len(), 1);
//! ```
//!
//! A [`Telemetry`] with nothing to record into (no tracer or meter provider
//! given, and the global tracer provider the API's no-op one) is not
//! active: [`Telemetry::install`] leaves the middleware stack as it was and
//! adds no observer of sent requests, so a request costs what it costs without
//! the layer. A program whose only provider is a global *meter* provider
//! passes it with [`TelemetryBuilder::meter_provider`] (the API cannot tell
//! a global no-op meter provider from a real one).

mod client;
pub mod convention;
pub mod era;
#[cfg(feature = "export")]
pub mod export;
mod instruments;
pub mod meta;
mod operation;
mod options;
mod peek;
mod server;
mod session;

use std::sync::Arc;

use opentelemetry::InstrumentationScope;
use opentelemetry::global::{self, BoxedTracer};
use opentelemetry::metrics::Meter;
use opentelemetry::propagation::{TextMapCompositePropagator, TextMapPropagator};
use opentelemetry_sdk::propagation::{BaggagePropagator, TraceContextPropagator};

pub use instruments::{
    CONNECTIONS_OPEN, Instruments, LIMIT, REDIS_ERRORS, REDIS_ROUND_TRIPS, REQUESTS_REFUSED,
    SESSIONS_OPEN, STREAMS_OPEN, TASK_STATUS, TASKS_ENTERED, TASKS_RUNNING,
};
pub use options::Options;
pub use server::{TelemetryLayer, TelemetryService};
use tessera_runtime::middleware::MiddlewareStack;

/// The instrumentation scope name of Tessera's spans and metrics.
pub const SCOPE: &str = "tessera";

/// Records MCP traffic into a tracer and a meter. Cheap to clone.
#[derive(Clone)]
pub struct Telemetry {
    inner: Arc<Inner>,
}

struct Inner {
    tracer: BoxedTracer,
    propagator: Box<dyn TextMapPropagator + Send + Sync>,
    instruments: Instruments,
    options: Options,
    /// Whether there is anything to record into.
    active: bool,
}

impl std::fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Telemetry")
            .field("options", &self.inner.options)
            .finish_non_exhaustive()
    }
}

impl Telemetry {
    /// Starts a [`Telemetry`]: by default it records into the global
    /// tracer and meter providers (as they are when [`TelemetryBuilder::build`]
    /// runs) and propagates W3C trace context and baggage.
    pub fn builder() -> TelemetryBuilder {
        TelemetryBuilder {
            tracer: None,
            meter: None,
            propagator: None,
            options: Options::default(),
        }
    }

    /// Whether anything is recorded: a tracer or meter provider was given,
    /// or the global tracer provider was a real one when the telemetry was
    /// built (see the crate docs).
    pub fn is_active(&self) -> bool {
        self.inner.active
    }

    /// Adds this telemetry to a middleware stack: its [`TelemetryLayer`]
    /// (what the stack's connections receive), the observer of the requests
    /// they send (`CLIENT` spans, [`MiddlewareStack::observe_outgoing`]) and
    /// the observer of legacy sessions (their duration histogram). An
    /// inactive telemetry leaves the stack as it was, so a request costs
    /// what it costs without it. Use it with a server's or a client's
    /// builder: `Server::builder().middleware(|s| telemetry.install(s))`.
    /// Each stack records into its own telemetry, so two in one process
    /// (two tenants' providers, say) stay apart.
    pub fn install(&self, stack: MiddlewareStack) -> MiddlewareStack {
        if !self.is_active() {
            return stack;
        }
        let histogram = self.inner.instruments.server_session.clone();
        stack
            .layer(self.layer())
            .observe_outgoing(self.sender())
            .observe_sessions(move |peer, version| session::watch(peer, version, histogram.clone()))
    }

    /// The middleware layer alone: it records what a connection
    /// *receives*. The requests the connection sends are recorded by the
    /// observer [`Telemetry::install`] also puts on the stack; a stack
    /// given only this layer leaves them to the process's observer
    /// ([`Telemetry::observe_outgoing`]), if one is installed. An inactive
    /// telemetry's layer passes requests on untouched.
    pub fn layer(&self) -> TelemetryLayer {
        TelemetryLayer {
            telemetry: self.clone(),
        }
    }

    /// Installs this telemetry as the process's observer of the requests
    /// it sends on connections whose middleware stack has none of its own:
    /// for a process that sends but has no middleware stack (a command-line
    /// client, a proxy's upstream connections). Only the first call in a
    /// process takes effect; returns whether this one did.
    pub fn observe_outgoing(&self) -> bool {
        if !self.inner.active {
            return false;
        }
        tessera_runtime::outgoing::observe_outgoing(self.sender())
    }

    /// The observer of the requests a connection sends.
    fn sender(&self) -> Arc<dyn tessera_runtime::outgoing::OutgoingObserver> {
        Arc::new(client::Sender {
            telemetry: self.clone(),
        })
    }

    /// The metric instruments (for gauges and counters an application
    /// wires itself, such as [`SESSIONS_OPEN`]).
    pub fn instruments(&self) -> &Instruments {
        &self.inner.instruments
    }
}

/// Builds a [`Telemetry`].
pub struct TelemetryBuilder {
    tracer: Option<BoxedTracer>,
    meter: Option<Meter>,
    propagator: Option<Box<dyn TextMapPropagator + Send + Sync>>,
    options: Options,
}

impl std::fmt::Debug for TelemetryBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TelemetryBuilder")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl TelemetryBuilder {
    /// Records spans with `provider`'s tracer instead of the global one.
    pub fn tracer_provider<P>(mut self, provider: &P) -> Self
    where
        P: opentelemetry::trace::TracerProvider,
        P::Tracer: Send + Sync + 'static,
        <P::Tracer as opentelemetry::trace::Tracer>::Span: Send + Sync + 'static,
    {
        self.tracer = Some(BoxedTracer::new(Box::new(
            provider.tracer_with_scope(scope()),
        )));
        self
    }

    /// Records metrics with `provider`'s meter instead of the global one.
    pub fn meter_provider(mut self, provider: &impl opentelemetry::metrics::MeterProvider) -> Self {
        self.meter = Some(provider.meter_with_scope(scope()));
        self
    }

    /// Propagates context with `propagator` instead of W3C trace context
    /// and baggage.
    pub fn propagator(
        mut self,
        propagator: impl TextMapPropagator + Send + Sync + 'static,
    ) -> Self {
        self.propagator = Some(Box::new(propagator));
        self
    }

    /// Opt-in recording ([`Options`]).
    pub fn options(mut self, options: Options) -> Self {
        self.options = options;
        self
    }

    /// The telemetry.
    pub fn build(self) -> Telemetry {
        let explicit = self.tracer.is_some() || self.meter.is_some();
        let tracer = self
            .tracer
            .unwrap_or_else(|| global::tracer_with_scope(scope()));
        let meter = self
            .meter
            .unwrap_or_else(|| global::meter_with_scope(scope()));
        let propagator = self.propagator.unwrap_or_else(|| {
            Box::new(TextMapCompositePropagator::new(vec![
                Box::new(TraceContextPropagator::new()),
                Box::new(BaggagePropagator::new()),
            ]))
        });
        let active = explicit || records(&tracer);
        Telemetry {
            inner: Arc::new(Inner {
                active,
                tracer,
                propagator,
                instruments: Instruments::new(meter),
                options: self.options,
            }),
        }
    }
}

/// Whether `tracer` makes real spans. The probe's parent is a remote span
/// that was not sampled: the API's no-op tracer hands the parent's context
/// back, a real tracer makes a span of its own (a parent-based sampler,
/// the SDK's default, drops it unexported; a sampler that ignores the
/// parent exports it once, named `tessera.probe`).
fn records(tracer: &BoxedTracer) -> bool {
    use opentelemetry::trace::{
        Span, SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState, Tracer,
    };
    let parent = SpanContext::new(
        TraceId::from(0x7465_7373_6572_6170_726f_6265_0000_0001_u128),
        SpanId::from(0x7465_7373_6572_6101_u64),
        TraceFlags::default(),
        true,
        TraceState::default(),
    );
    let cx = opentelemetry::Context::new().with_remote_span_context(parent.clone());
    let mut probe = tracer.start_with_context("tessera.probe", &cx);
    let real = probe.span_context().span_id() != parent.span_id();
    probe.end();
    real
}

fn scope() -> InstrumentationScope {
    InstrumentationScope::builder(SCOPE)
        .with_version(env!("CARGO_PKG_VERSION"))
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider};

    /// One test, since it sets the process's global tracer provider.
    #[test]
    fn telemetry_is_active_only_with_something_to_record_into() {
        assert!(!Telemetry::builder().build().is_active(), "the API's no-op");
        let exporter = InMemorySpanExporter::default();
        let provider = SdkTracerProvider::builder()
            .with_simple_exporter(exporter.clone())
            .build();
        let given = Telemetry::builder().tracer_provider(&provider).build();
        assert!(given.is_active());
        global::set_tracer_provider(provider.clone());
        assert!(Telemetry::builder().build().is_active(), "a real global");
        // The probe was dropped by the default parent-based sampler.
        provider.force_flush().unwrap();
        assert_eq!(exporter.get_finished_spans().unwrap(), Vec::new());
    }
}
