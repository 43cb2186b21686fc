//! The metric instruments: the convention's four duration histograms and
//! Tessera's own `tessera.*` gauges and counters.

use opentelemetry::KeyValue;
use opentelemetry::metrics::{Histogram, Meter};

use crate::convention::{
    CLIENT_OPERATION_DURATION, CLIENT_SESSION_DURATION, DURATION_BUCKETS,
    SERVER_OPERATION_DURATION, SERVER_SESSION_DURATION,
};

/// `tessera.sessions.open` (gauge): live legacy sessions on an HTTP
/// endpoint.
pub const SESSIONS_OPEN: &str = "tessera.sessions.open";
/// `tessera.connections.open` (gauge): open HTTP connections.
pub const CONNECTIONS_OPEN: &str = "tessera.connections.open";
/// `tessera.streams.open` (gauge): open SSE response streams.
pub const STREAMS_OPEN: &str = "tessera.streams.open";
/// `tessera.requests.refused` (counter, by [`LIMIT`]): requests refused by
/// a limit.
pub const REQUESTS_REFUSED: &str = "tessera.requests.refused";
/// `tessera.limit`: the limit that refused a request, by the name of its
/// setting (`max_body_bytes`, `max_sessions`, …).
pub const LIMIT: &str = "tessera.limit";
/// `tessera.tasks.running` (gauge): tasks running in this process.
pub const TASKS_RUNNING: &str = "tessera.tasks.running";
/// `tessera.tasks.entered` (counter, by [`TASK_STATUS`]): how many times a
/// task entered each status.
pub const TASKS_ENTERED: &str = "tessera.tasks.entered";
/// `tessera.task.status`: a task status as the protocol spells it
/// (`working`, `input_required`, `completed`, `failed`, `cancelled`).
pub const TASK_STATUS: &str = "tessera.task.status";
/// `tessera.redis.round_trips` (counter): operations sent to Redis.
pub const REDIS_ROUND_TRIPS: &str = "tessera.redis.round_trips";
/// `tessera.redis.errors` (counter): Redis operations that failed.
pub const REDIS_ERRORS: &str = "tessera.redis.errors";

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

    /// Registers a counter read by `read` at each collection: `read`
    /// returns the running total (a count kept elsewhere, such as the Redis
    /// operations of [`REDIS_ROUND_TRIPS`]).
    pub fn counter(
        &self,
        name: &'static str,
        description: &'static str,
        read: impl Fn() -> u64 + Send + Sync + 'static,
    ) {
        let _ = self
            .meter
            .u64_observable_counter(name)
            .with_description(description)
            .with_callback(move |o| o.observe(read(), &[]))
            .build();
    }

    /// Registers a counter with one attribute `key`, read by `read` at each
    /// collection: `read` returns the running total of each value of `key`
    /// (the refusals of each limit, [`REQUESTS_REFUSED`] by [`LIMIT`]).
    /// Register each name once, with every source in one `read`.
    pub fn counter_by<I>(
        &self,
        name: &'static str,
        description: &'static str,
        key: &'static str,
        read: impl Fn() -> I + Send + Sync + 'static,
    ) where
        I: IntoIterator<Item = (&'static str, u64)>,
    {
        let _ = self
            .meter
            .u64_observable_counter(name)
            .with_description(description)
            .with_callback(move |o| {
                for (value, n) in read() {
                    o.observe(n, &[KeyValue::new(key, value)]);
                }
            })
            .build();
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
