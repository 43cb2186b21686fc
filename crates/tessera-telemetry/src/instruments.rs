//! The metric instruments: the convention's four duration histograms and
//! Tessera's own `tessera.*` gauges and counters.

use opentelemetry::metrics::{Histogram, Meter};

use crate::convention::{
    CLIENT_OPERATION_DURATION, CLIENT_SESSION_DURATION, DURATION_BUCKETS,
    SERVER_OPERATION_DURATION, SERVER_SESSION_DURATION,
};

/// `tessera.sessions.open`: live legacy sessions on an HTTP endpoint.
pub const SESSIONS_OPEN: &str = "tessera.sessions.open";

/// The instruments a [`Telemetry`](crate::Telemetry) records into.
#[derive(Debug, Clone)]
pub struct Instruments {
    meter: Meter,
    /// `mcp.client.operation.duration`.
    pub client_operation: Histogram<f64>,
    /// `mcp.server.operation.duration`.
    pub server_operation: Histogram<f64>,
    /// `mcp.client.session.duration`.
    pub client_session: Histogram<f64>,
    /// `mcp.server.session.duration`.
    pub server_session: Histogram<f64>,
}

fn duration(meter: &Meter, name: &'static str, description: &'static str) -> Histogram<f64> {
    meter
        .f64_histogram(name)
        .with_unit("s")
        .with_description(description)
        .with_boundaries(DURATION_BUCKETS.to_vec())
        .build()
}

impl Instruments {
    /// The instruments, made with `meter`.
    pub fn new(meter: Meter) -> Self {
        Instruments {
            client_operation: duration(
                &meter,
                CLIENT_OPERATION_DURATION,
                "The duration of the MCP request or notification as observed on the sender from the time it was sent until the response or ack is received.",
            ),
            server_operation: duration(
                &meter,
                SERVER_OPERATION_DURATION,
                "MCP request or notification duration as observed on the receiver from the time it was received until the result or ack is sent.",
            ),
            client_session: duration(
                &meter,
                CLIENT_SESSION_DURATION,
                "The duration of the MCP session as observed on the MCP client.",
            ),
            server_session: duration(
                &meter,
                SERVER_SESSION_DURATION,
                "The duration of the MCP session as observed on the MCP server.",
            ),
            meter,
        }
    }

    /// Registers a gauge read by `read` at each collection (for example
    /// the open sessions of an HTTP endpoint, [`SESSIONS_OPEN`]).
    pub fn gauge(
        &self,
        name: &'static str,
        description: &'static str,
        read: impl Fn() -> u64 + Send + Sync + 'static,
    ) {
        // The SDK keeps the callback for the meter provider's life.
        let _ = self
            .meter
            .u64_observable_gauge(name)
            .with_description(description)
            .with_callback(move |o| o.observe(read(), &[]))
            .build();
    }
}
