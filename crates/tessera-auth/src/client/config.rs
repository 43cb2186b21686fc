//! How an [`OAuthClient`](super::OAuthClient) gets its tokens: the grant,
//! the client identity, the store, and the knobs of the flow.

use std::sync::Arc;

use super::assertion::ClientSigningKey;
use super::registration::ClientCredentials;
use super::store::{MemoryTokenStore, TokenStore};
use super::user_agent::DynUserAgent;
use super::workload::WorkloadToken;

/// The grant used to obtain tokens.
#[derive(Clone)]
#[non_exhaustive]
pub enum Grant {
    /// The authorization code grant with PKCE, through a user agent
    /// (`Arc::new(agent)` of any [`UserAgent`](super::UserAgent)).
    AuthorizationCode(Arc<dyn DynUserAgent>),
    /// The client credentials grant (the client acts on its own behalf).
    ClientCredentials,
    /// RFC 7523 JWT bearer grant with an assertion the client was given,
    /// for example a workload identity token (SEP-1933). Errors are final:
    /// the grant is never retried nor swapped for another.
    JwtBearer {
        /// The signed JWT to present as `assertion`.
        assertion: String,
    },
    /// Workload identity (SEP-1933): the RFC 7523 JWT bearer grant with a
    /// platform-issued token read from a file or an environment variable
    /// at every token request (so a rotated file is picked up), without a
    /// client identity (no secret, no registration) unless
    /// [`client`](super::OAuthClientBuilder::client) gives one. A token
    /// about to expire is replaced by a new grant before the request.
    Workload(WorkloadToken),
    /// Enterprise-managed authorization (SEP-990): the user's ID token is
    /// exchanged at the enterprise IdP for an identity assertion grant
    /// (RFC 8693 token exchange), which is then presented to the MCP
    /// server's authorization server (RFC 7523 JWT bearer grant).
    IdentityAssertion(IdentityAssertion),
}

impl std::fmt::Debug for Grant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Grant::AuthorizationCode(_) => "AuthorizationCode",
            Grant::ClientCredentials => "ClientCredentials",
            Grant::JwtBearer { .. } => "JwtBearer",
            Grant::Workload(_) => "Workload",
            Grant::IdentityAssertion(_) => "IdentityAssertion",
        })
    }
}

/// The IdP side of [`Grant::IdentityAssertion`].
#[derive(Clone)]
#[non_exhaustive]
pub struct IdentityAssertion {
    /// The IdP's token endpoint.
    pub idp_token_endpoint: String,
    /// The user's ID token from the IdP.
    pub id_token: String,
    /// The client id at the IdP, if it wants one.
    pub idp_client_id: Option<String>,
    /// The client secret at the IdP, if it wants one.
    pub idp_client_secret: Option<String>,
}

impl IdentityAssertion {
    /// Exchange `id_token` at `idp_token_endpoint`.
    pub fn new(idp_token_endpoint: impl Into<String>, id_token: impl Into<String>) -> Self {
        IdentityAssertion {
            idp_token_endpoint: idp_token_endpoint.into(),
            id_token: id_token.into(),
            idp_client_id: None,
            idp_client_secret: None,
        }
    }

    /// The client's identity at the IdP.
    pub fn idp_client(mut self, id: impl Into<String>, secret: Option<String>) -> Self {
        self.idp_client_id = Some(id.into());
        self.idp_client_secret = secret;
        self
    }
}

/// Everything an [`OAuthClient`](super::OAuthClient) is set up with.
#[derive(Clone)]
pub(crate) struct Config {
    pub server_url: String,
    pub grant: Grant,
    pub client_name: String,
    pub client: Option<ClientCredentials>,
    pub client_metadata_url: Option<String>,
    pub signing_key: Option<ClientSigningKey>,
    pub store: Arc<dyn TokenStore>,
    pub scope: Option<String>,
    pub dpop: bool,
    pub require_dpop: bool,
    pub refresh_skew_secs: u64,
    pub max_attempts: u32,
}

impl Config {
    pub fn new(server_url: String, grant: Grant) -> Self {
        Config {
            server_url,
            grant,
            client_name: "tessera".into(),
            client: None,
            client_metadata_url: None,
            signing_key: None,
            store: Arc::new(MemoryTokenStore::new()),
            scope: None,
            dpop: true,
            require_dpop: false,
            refresh_skew_secs: 60,
            max_attempts: 3,
        }
    }
}
