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
    },
    /// The aggregation configuration is wrong.
    #[error("configuration: {0}")]
    Config(String),
}
