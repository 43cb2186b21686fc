//! Errors of the engine, kept apart from the protocol errors it sends.

use std::time::Duration;

use tessera_types::ErrorObject;

/// Why a request this side sent did not get a result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CallError {
    /// The peer answered with a JSON-RPC error.
    #[error("peer returned an error: {0}")]
    Remote(ErrorObject),
    /// No answer within the deadline (a `notifications/cancelled` was sent).
    #[error("request timed out after {0:?}")]
    Timeout(Duration),
    /// This side cancelled the request.
    #[error("request cancelled")]
    Cancelled,
    /// The connection closed before an answer arrived.
    #[error("connection closed")]
    Closed,
    /// The answer was longer than the transport's message size limit, so it
    /// was dropped unread.
    #[error(
        "the answer of {len} bytes exceeds the message size limit of {limit} bytes ({} MiB)",
        limit / (1024 * 1024)
    )]
    TooLarge {
        /// The answer's size in bytes (at least).
        len: usize,
        /// The limit in bytes.
        limit: usize,
    },
}

/// Why a message could not be sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SendError {
    /// The connection is not ready for this message yet (legacy handshake not done).
    #[error("not connected: {0}")]
    NotReady(&'static str),
    /// The negotiated era or version does not allow this message.
    #[error("not allowed: {0}")]
    NotAllowed(String),
    /// The engine is closed.
    #[error("engine closed")]
    Closed,
}
