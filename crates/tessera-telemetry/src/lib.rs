//! OpenTelemetry traces and metrics for Tessera, following the MCP semantic
//! conventions (OpenTelemetry GenAI semantic conventions,
//! `docs/gen-ai/mcp.md`).
//!
//! A [`Telemetry`] records, in both roles and both eras:
//!
//! - a `SERVER` span per request a connection receives, through the
//!   [`TelemetryLayer`] on the middleware stack, parented on the
//!   `traceparent` the sender put in `params._meta` (and linked to the
//!   ambient span, an HTTP server's say);
//! - a `CLIENT` span per request the process sends, whose context goes into
//!   the request's `params._meta` (`traceparent`, `tracestate`, `baggage`),
//!   so the receiver continues the trace and a proxy passes it on;
//! - `mcp.client.operation.duration` and `mcp.server.operation.duration`
//!   with the convention's advised buckets ([`convention::DURATION_BUCKETS`]).
//!
//! Spans are named `{mcp.method.name} {target}` and carry the attributes
//! listed in [`convention`]; how 2026-07-28 maps onto the conventions is in
//! [`era`]. The docs' telemetry chapter (`docs/telemetry.md`) has the table.
//!
//! With the `export` feature, `export::init_from_env` sets up OTLP export
//! from the standard `OTEL_*` variables and `export::serve_metrics` serves
//! the Prometheus text format; without it the layer records into whatever
//! tracer and meter providers the application installed.
//!
//! ```
//! use tessera_telemetry::Telemetry;
//! use tessera_runtime::middleware::MiddlewareStack;
//!
//! // Records into the global OpenTelemetry providers.
//! let telemetry = Telemetry::builder().build();
//! let stack = MiddlewareStack::new().layer(telemetry.layer());
//! assert_eq!(stack.len(), 1);
//! ```

mod client;
pub mod convention;
pub mod era;
#[cfg(feature = "export")]
pub mod export;
mod instruments;
pub mod meta;
mod operation;
mod options;
mod server;
mod session;

use std::sync::Arc;

use opentelemetry::InstrumentationScope;
use opentelemetry::global::{self, BoxedTracer};
use opentelemetry::metrics::Meter;
use opentelemetry::propagation::{TextMapCompositePropagator, TextMapPropagator};
use opentelemetry_sdk::propagation::{BaggagePropagator, TraceContextPropagator};

pub use instruments::{Instruments, SESSIONS_OPEN};
pub use options::Options;
pub use server::TelemetryLayer;

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

    /// The middleware layer for a server's (or a client's) stack. Making it
    /// also installs this telemetry as the process's observer of the
    /// requests it sends ([`tessera_runtime::outgoing`]; the first one
    /// installed stays), so one layer covers both directions.
    pub fn layer(&self) -> TelemetryLayer {
        self.observe_outgoing();
        TelemetryLayer {
            telemetry: self.clone(),
        }
    }

    /// Installs this telemetry as the process's observer of the requests
    /// it sends, for a process that sends but has no middleware stack (a
    /// command-line client). Returns whether this one was installed.
    pub fn observe_outgoing(&self) -> bool {
        tessera_runtime::outgoing::observe_outgoing(Arc::new(client::Sender {
            telemetry: self.clone(),
        }))
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
        Telemetry {
            inner: Arc::new(Inner {
                tracer,
                propagator,
                instruments: Instruments::new(meter),
                options: self.options,
            }),
        }
    }
}

fn scope() -> InstrumentationScope {
    InstrumentationScope::builder(SCOPE)
        .with_version(env!("CARGO_PKG_VERSION"))
        .build()
}
