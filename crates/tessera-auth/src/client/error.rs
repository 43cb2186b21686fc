//! What can go wrong on the client side of MCP authorization.

/// An error of the OAuth client.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OAuthError {
    /// A URL could not be parsed or is not usable (for example not http(s)).
    #[error("bad URL {url:?}: {why}")]
    BadUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        why: String,
    },
    /// An HTTP exchange with a metadata, registration or token endpoint failed.
    #[error("HTTP request to {url} failed: {why}")]
    Http {
        /// The URL requested.
        url: String,
        /// The transport error.
        why: String,
    },
    /// No protected resource metadata and no authorization server could be found.
    #[error("authorization server discovery failed: {0}")]
    Discovery(String),
    /// The protected resource metadata names a different resource than the
    /// server the client talks to (RFC 9728 §3.3): the client refuses to go on.
    #[error(
        "the protected resource metadata is for {published:?}, not for {server:?}: refusing to authorize"
    )]
    ResourceMismatch {
        /// The `resource` of the metadata.
        published: String,
        /// The MCP server URL in use.
        server: String,
    },
    /// The authorization server metadata names another issuer than the one
    /// it was fetched for (RFC 8414 §3.3).
    #[error("authorization server metadata from {url} has issuer {found:?}, expected {expected:?}")]
    IssuerMismatch {
        /// The well-known URL.
        url: String,
        /// The issuer the client asked for.
        expected: String,
        /// The issuer in the document.
        found: String,
    },
    /// The authorization server does not offer what the flow needs.
    #[error("the authorization server cannot be used: {0}")]
    Unsupported(String),
    /// Client registration failed.
    #[error("client registration failed: {0}")]
    Registration(String),
    /// Pre-registered credentials belong to another authorization server.
    #[error(
        "the pre-registered client is bound to issuer {bound:?}, but the server now uses {current:?}"
    )]
    CredentialsForOtherIssuer {
        /// The issuer the credentials were registered with.
        bound: String,
        /// The issuer in use now.
        current: String,
    },
    /// The authorization response failed validation (state, iss, missing code).
    #[error("invalid authorization response: {0}")]
    AuthorizationResponse(String),
    /// The authorization server answered the authorization request with an error.
    #[error("authorization denied: {error}{}", description.as_deref().map(|d| format!(" ({d})")).unwrap_or_default())]
    AuthorizationDenied {
        /// The OAuth error code.
        error: String,
        /// `error_description`, if any.
        description: Option<String>,
    },
    /// The token endpoint refused a grant.
    #[error("token request failed: {error}{}", description.as_deref().map(|d| format!(" ({d})")).unwrap_or_default())]
    Token {
        /// The OAuth error code (or `http_<status>` when the body had none).
        error: String,
        /// `error_description`, if any.
        description: Option<String>,
    },
    /// A response could not be understood.
    #[error("unexpected response from {url}: {why}")]
    BadResponse {
        /// The URL requested.
        url: String,
        /// What was wrong.
        why: String,
    },
    /// Too many authorization attempts for the same scopes (step-up limit).
    #[error("gave up after {0} authorization attempts for the same scopes")]
    TooManyAttempts(u32),
    /// The user agent step (browser or headless) failed.
    #[error("user agent: {0}")]
    UserAgent(String),
    /// Signing a JWT (client assertion or DPoP proof) failed.
    #[error("signing failed: {0}")]
    Signing(String),
    /// The token store failed.
    #[error("token store: {0}")]
    Store(String),
    /// No deadline was met.
    #[error("timed out: {0}")]
    Timeout(String),
}
