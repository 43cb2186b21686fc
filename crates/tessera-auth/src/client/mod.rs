//! The client half of MCP authorization: an OAuth 2.1 client that gets
//! and keeps tokens for one MCP server.
//!
//! [`OAuthClient`] implements the HTTP client transport's
//! [`HttpAuth`](tessera_http::HttpAuth) hook, so any `HttpClientTransport`
//! gets OAuth by installing it. On a `401` it runs
//! [discovery] (protected resource metadata, then RFC 8414 /
//! OpenID Connect metadata, or the 2025-03-26 fallbacks), obtains a client
//! identity ([`ClientCredentials`] given up front, a client ID metadata
//! document URL, or RFC 7591 registration), and runs the configured
//! [`Grant`]: authorization code with PKCE through a [`UserAgent`]
//! ([`LoopbackBrowser`] or [`HeadlessUserAgent`]), client credentials,
//! JWT bearer, workload identity ([`WorkloadToken`], SEP-1933), or
//! enterprise-managed token exchange. It sends `resource`
//! (RFC 8707), checks `state` and `iss` (RFC 9207), uses DPoP (RFC 9449)
//! when the authorization server offers it, refreshes before expiry, and
//! answers `403 insufficient_scope` with a step-up (at most three
//! attempts per scope set). Tokens live in a [`TokenStore`].
//!
//! [`TokenExchange`] is the gateway's side of RFC 8693: a caller's token
//! traded for one whose audience is the upstream MCP server.
//!
//! ```no_run
//! use std::sync::Arc;
//! use tessera_auth::client::{Grant, HeadlessUserAgent, OAuthClient};
//!
//! # fn f() -> Result<(), Box<dyn std::error::Error>> {
//! let ua = HeadlessUserAgent::new("http://127.0.0.1:8765/callback")?;
//! let oauth = OAuthClient::builder("https://mcp.example.com/mcp", Grant::AuthorizationCode(Arc::new(ua)))
//!     .client_name("my-agent")
//!     .build()?;
//! let transport = tessera_http::HttpClientTransport::new("https://mcp.example.com/mcp")?
//!     .with_auth(Arc::new(oauth));
//! # let _ = transport; Ok(()) }
//! ```

mod assertion;
mod authorization;
mod config;
pub mod discovery;
mod dpop;
mod error;
mod exchange;
mod fetch;
mod hook;
mod oauth;
mod observe;
mod pkce;
mod registration;
mod store;
mod token;
mod user_agent;
mod workload;

pub use assertion::{ClientSigningKey, JWT_BEARER_ASSERTION_TYPE};
pub use authorization::{AuthorizationParams, PendingAuthorization, begin as begin_authorization};
pub use config::{Grant, IdentityAssertion};
pub use dpop::DpopKey;
pub use error::OAuthError;
pub use exchange::{ACCESS_TOKEN_TYPE, TokenExchange, TokenExchangeBuilder};
pub use oauth::{OAuthClient, OAuthClientBuilder};
pub use observe::{OAuthExchange, OAuthObserver, OAuthPhase};
pub use pkce::Pkce;
pub use registration::{AuthMethod, ClientCredentials};
pub use store::{FileTokenStore, MemoryTokenStore, StoreLock, StoredCredentials, TokenStore};
pub use token::{TokenSet, grant_type};
pub use user_agent::{CallbackParams, DynUserAgent, HeadlessUserAgent, LoopbackBrowser, UserAgent};
pub use workload::{MAX_WORKLOAD_TOKEN_BYTES, WorkloadToken};
