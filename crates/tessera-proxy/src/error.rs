//! What can go wrong in the proxy itself (as opposed to errors the upstream
//! server returns, which are passed on to the client unchanged).

/// Why the proxy could not set something up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProxyError {
    /// The upstream process could not be started, or its transport failed.
    #[error("cannot start upstream {upstream}: {source}")]
    Spawn {
        /// Which upstream.
        upstream: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The HTTP client for an upstream could not be built.
    #[error("cannot reach upstream {upstream}: {source}")]
    Http {
        /// Which upstream.
        upstream: String,
        /// The HTTP client error.
        #[source]
        source: tessera_http::HttpClientError,
    },
    /// The upstream did not complete the handshake (`initialize` or
    /// `server/discover`).
    #[error("upstream {upstream} did not connect: {reason}")]
    Connect {
        /// Which upstream.
        upstream: String,
        /// What went wrong.
        reason: String,
        /// Whether the upstream answered, and refused (a JSON-RPC error, or
        /// an HTTP 4xx status): it is up. Otherwise it could not be
        /// reached, or failed.
        refused: bool,
    },
    /// The aggregation configuration is wrong.
    #[error("configuration: {0}")]
    Config(String),
}

impl ProxyError {
    /// Whether the upstream itself failed (it could not be started or
    /// reached, or broke off the handshake), as opposed to a refusal it
    /// answered or a mistake of the proxy's own.
    pub fn is_upstream_failure(&self) -> bool {
        match self {
            ProxyError::Spawn { .. } => true,
            ProxyError::Connect { refused, .. } => !refused,
            ProxyError::Http { .. } | ProxyError::Config(_) => false,
        }
    }
}
