//! [`OAuthObserver`]: sees every HTTP exchange of the OAuth flow —
//! metadata discovery, client registration, token requests — labelled by
//! its phase, for a debugging tool that shows the flow step by step (set it
//! with [`OAuthClientBuilder::observer`](super::OAuthClientBuilder::observer)).
//! The exchanges of the MCP requests themselves go through the HTTP client
//! transport (see `tessera_http::HttpObserver`).

use std::time::Duration;

use reqwest::header::HeaderMap;

/// The step of the flow an exchange belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OAuthPhase {
    /// Protected resource metadata (RFC 9728) or authorization server
    /// metadata (RFC 8414, OpenID Connect Discovery).
    Discovery,
    /// Dynamic client registration (RFC 7591).
    Registration,
    /// A token request (authorization code, refresh, client credentials,
    /// JWT bearer, token exchange).
    Token,
}

impl OAuthPhase {
    /// `discovery`, `registration` or `token`.
    pub fn as_str(self) -> &'static str {
        match self {
            OAuthPhase::Discovery => "discovery",
            OAuthPhase::Registration => "registration",
            OAuthPhase::Token => "token",
        }
    }
}

/// One exchange of the flow.
#[derive(Debug)]
#[non_exhaustive]
pub struct OAuthExchange<'a> {
    /// Its phase.
    pub phase: OAuthPhase,
    /// The request's method.
    pub method: &'a str,
    /// Its URL.
    pub url: &'a str,
    /// Its headers (a DPoP proof or client authentication included).
    pub request_headers: &'a HeaderMap,
    /// What it sent: the form's fields, or for registration one field
    /// `json` holding the JSON body. Secrets included: mask them.
    pub request_body: &'a [(String, String)],
    /// The status, headers and body of the answer, or why there was none.
    pub outcome: Result<(u16, &'a HeaderMap, &'a [u8]), String>,
    /// From sending to the whole answer.
    pub elapsed: Duration,
}

/// Sees the exchanges of an [`OAuthClient`](super::OAuthClient)'s flow.
/// Called on the flow's task: it must not block.
pub trait OAuthObserver: Send + Sync + 'static {
    /// One exchange happened.
    fn exchange(&self, exchange: &OAuthExchange<'_>);
}
