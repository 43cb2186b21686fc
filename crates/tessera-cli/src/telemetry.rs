//! Telemetry for the binary: OTLP export when the standard `OTEL_*`
//! variables ask for it (every command), and the Prometheus text format at
//! `http://ADDR/metrics` for `tessera serve --metrics ADDR`.

use std::sync::OnceLock;

use tessera_telemetry::export::{self, Exporting, MetricsEndpoint};
use tessera_telemetry::{Telemetry, TelemetryLayer};

use crate::exit::Failure;

/// What was set up for this process.
static STATE: OnceLock<(Telemetry, Option<MetricsEndpoint>)> = OnceLock::new();

/// Sets telemetry up from the environment (with a Prometheus registry when
/// `prometheus`); `None` when nothing is to be recorded. The requests this
/// process sends are recorded from here on.
pub fn init(prometheus: bool) -> Result<Option<Exporting>, Failure> {
    let exporting = export::init_from_env("tessera", prometheus)
        .map_err(|e| Failure::Usage(format!("telemetry: {e}")))?;
    if let Some(e) = &exporting {
        e.telemetry().observe_outgoing();
        let _ = STATE.set((e.telemetry().clone(), e.metrics().cloned()));
    }
    Ok(exporting)
}

/// The layer recording the requests a server of this process receives,
/// when telemetry is on.
pub fn layer() -> Option<TelemetryLayer> {
    STATE.get().map(|(t, _)| t.layer())
}

/// The telemetry, when on.
pub fn telemetry() -> Option<&'static Telemetry> {
    STATE.get().map(|(t, _)| t)
}

/// The Prometheus registry, when `--metrics` asked for it.
pub fn metrics() -> Option<MetricsEndpoint> {
    STATE.get().and_then(|(_, m)| m.clone())
}
