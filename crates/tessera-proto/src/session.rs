//! Legacy session state and log-level filtering.

use std::sync::Arc;

use tessera_types::{JsonObject, ProtocolVersion};

/// The legacy (`initialize`) handshake as seen by this side.
#[derive(Debug, Clone, Default)]
pub(crate) struct Session {
    /// Set once `initialize` has been answered (server) or its answer accepted (client).
    pub version: Option<ProtocolVersion>,
    /// Set once `notifications/initialized` has been received (server) or sent (client).
    pub initialized: bool,
    /// The peer's capabilities from the handshake.
    pub peer_capabilities: Arc<JsonObject>,
    /// The peer's `Implementation` info from the handshake.
    pub peer_info: Option<Arc<JsonObject>>,
    /// The level set by `logging/setLevel` (server role).
    pub log_level: Option<String>,
}

/// The severity order of `LoggingLevel` (RFC 5424), lowest first.
const LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// The rank of a logging level, `None` for an unknown one.
pub fn level_rank(level: &str) -> Option<usize> {
    LEVELS.iter().position(|l| *l == level)
}

/// Whether a message at `level` passes a `minimum`.
pub fn level_passes(level: &str, minimum: &str) -> bool {
    match (level_rank(level), level_rank(minimum)) {
        (Some(l), Some(m)) => l >= m,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_order() {
        assert!(level_passes("error", "warning"));
        assert!(level_passes("debug", "debug"));
        assert!(!level_passes("info", "notice"));
        assert!(!level_passes("bogus", "debug"));
        assert_eq!(level_rank("emergency"), Some(7));
    }
}
