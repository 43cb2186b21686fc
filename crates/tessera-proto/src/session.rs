//! Legacy session state and log-level filtering.

use std::sync::Arc;

use tessera_types::{ClientCapabilities, JsonObject, ProtocolVersion};

use crate::peer::PeerCapabilities;

/// The legacy (`initialize`) handshake as seen by this side.
#[derive(Debug, Clone, Default)]
pub(crate) struct Session {
    /// Set once `initialize` has been answered (server) or its answer accepted (client).
    pub version: Option<ProtocolVersion>,
    /// Set once `notifications/initialized` has been received (server) or sent (client).
    pub initialized: bool,
    /// The peer's capabilities from the handshake.
    pub peer_capabilities: PeerCapabilities,
    /// The peer's `Implementation` info from the handshake.
    pub peer_info: Option<Arc<JsonObject>>,
    /// The level set by `logging/setLevel` (server role).
    pub log_level: Option<String>,
    /// Counts the changes of the fields above (see [`crate::Engine::session_revision`]).
    pub revision: u64,
}

/// What a server engine knows of its legacy session once the handshake is
/// answered: enough for a fresh engine to carry on the same session
/// ([`crate::Engine::session_snapshot`], [`crate::Engine::restore_session`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SessionSnapshot {
    /// The negotiated version.
    pub version: ProtocolVersion,
    /// Whether `notifications/initialized` has arrived.
    pub initialized: bool,
    /// The client's capabilities from `initialize`.
    pub peer_capabilities: Arc<ClientCapabilities>,
    /// The client's `clientInfo` from `initialize`.
    pub peer_info: Option<Arc<JsonObject>>,
    /// The level set by `logging/setLevel`, if any.
    pub log_level: Option<String>,
}

impl SessionSnapshot {
    /// A session at `version` whose client has sent `notifications/initialized`,
    /// with no capabilities, no `clientInfo` and no log level (set the public
    /// fields for more).
    pub fn new(version: ProtocolVersion) -> Self {
        SessionSnapshot {
            version,
            initialized: true,
            peer_capabilities: Arc::default(),
            peer_info: None,
            log_level: None,
        }
    }

    /// With these client capabilities and `clientInfo`.
    pub fn with_peer(
        mut self,
        capabilities: Arc<ClientCapabilities>,
        info: Option<Arc<JsonObject>>,
    ) -> Self {
        self.peer_capabilities = capabilities;
        self.peer_info = info;
        self
    }
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
