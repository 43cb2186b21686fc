//! `mcp.client.session.duration` and `mcp.server.session.duration`: from a
//! legacy session's handshake to its connection's end. 2026-07-28 has no
//! session ([`era::has_sessions`](crate::era::has_sessions)).

use std::time::Instant;

use opentelemetry::KeyValue;
use opentelemetry::metrics::Histogram;
use tessera_runtime::Peer;
use tessera_types::ProtocolVersion;

use crate::convention::MCP_PROTOCOL_VERSION;

/// Records into `histogram` how long `peer`'s connection lives from now.
/// Does nothing outside a Tokio runtime.
pub(crate) fn watch(peer: &Peer, version: ProtocolVersion, histogram: Histogram<f64>) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let started = Instant::now();
    let peer = peer.clone();
    runtime.spawn(async move {
        peer.closed().await;
        let attrs = [KeyValue::new(
            MCP_PROTOCOL_VERSION,
            version.as_str().to_owned(),
        )];
        histogram.record(started.elapsed().as_secs_f64(), &attrs);
    });
}
