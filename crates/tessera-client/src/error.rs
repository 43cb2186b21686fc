//! Client errors.

use tessera_runtime::PeerError;
use tessera_types::ErrorObject;

/// Why a client operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The server process could not be started, or a transport failed.
    #[error("transport error: {0}")]
    Io(#[from] std::io::Error),
    /// Connecting (era probe, handshake) failed.
    #[error("could not connect: {0}")]
    Connect(PeerError),
    /// A request failed: an error response, a timeout, a closed connection.
    #[error("{0}")]
    Request(PeerError),
    /// The server's answer did not have the shape the protocol requires.
    #[error("unexpected answer to {method}: {source}")]
    Decode {
        /// The method that was called.
        method: String,
        /// What did not fit.
        source: serde_json::Error,
    },
    /// The server does not offer what was asked (a capability it did not declare).
    #[error("the server does not support {0}")]
    Unsupported(String),
}

impl ClientError {
    /// The server's JSON-RPC error, if that is what this is.
    pub fn remote(&self) -> Option<&ErrorObject> {
        match self {
            ClientError::Request(e) | ClientError::Connect(e) => e.remote(),
            _ => None,
        }
    }
}
