//! [`TokenExchange`]: RFC 8693 token exchange on behalf of a caller, as a
//! gateway in front of an MCP server does it: the caller's access token (the
//! `subject_token`, issued for the gateway) is traded at the upstream's
//! authorization server for a token whose audience is the upstream.
//!
//! The token endpoint is the one configured, else the one of the
//! authorization server the upstream names in its protected resource
//! metadata (RFC 9728, found once and kept). The gateway authenticates as a
//! client ([`ClientCredentials`]: with a secret, with a signed assertion,
//! `private_key_jwt`, when given a [`ClientSigningKey`], or as a public
//! client with neither), and asks for `resource` (RFC 8707; the
//! upstream's resource identifier by default), and optionally `audience`
//! and `scope`.

use std::sync::Mutex;

use super::assertion::ClientSigningKey;
use super::discovery::discover_via;
use super::error::OAuthError;
use super::fetch;
use super::oauth::unix_now;
use super::registration::{AuthMethod, ClientCredentials};
use super::token::{TokenEndpoint, TokenSet, grant_type, pair};

/// The RFC 8693 token type of an access token.
pub const ACCESS_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:access_token";

/// Where exchanges go, once known.
#[derive(Clone)]
struct Endpoint {
    url: String,
    issuer: String,
    resource: String,
    method: AuthMethod,
}

/// Exchanges callers' tokens for tokens of one upstream MCP server (RFC 8693).
pub struct TokenExchange {
    http: fetch::Http,
    server_url: String,
    token_endpoint: Option<String>,
    client: ClientCredentials,
    signing_key: Option<ClientSigningKey>,
    scope: Option<String>,
    audience: Option<String>,
    resource: Option<String>,
    endpoint: tokio::sync::Mutex<Option<Endpoint>>,
    nonce: Mutex<Option<String>>,
}

impl std::fmt::Debug for TokenExchange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenExchange")
            .field("server_url", &self.server_url)
            .field("token_endpoint", &self.token_endpoint)
            .field("client", &self.client)
            .finish_non_exhaustive()
    }
}

/// Sets up a [`TokenExchange`].
#[derive(Debug)]
pub struct TokenExchangeBuilder {
    server_url: String,
    client: ClientCredentials,
    signing_key: Option<ClientSigningKey>,
    token_endpoint: Option<String>,
    scope: Option<String>,
    audience: Option<String>,
    resource: Option<String>,
}

impl TokenExchangeBuilder {
    /// Exchanges at this token endpoint instead of discovering the
    /// upstream's authorization server.
    pub fn token_endpoint(mut self, url: impl Into<String>) -> Self {
        self.token_endpoint = Some(url.into());
        self
    }

    /// Authenticates with `private_key_jwt` (RFC 7523 §2.2), signing client
    /// assertions with `key` (unless the credentials name another method).
    pub fn signing_key(mut self, key: ClientSigningKey) -> Self {
        self.signing_key = Some(key);
        self
    }

    /// The `scope` to ask for (space separated).
    pub fn scope(mut self, scope: impl Into<String>) -> Self {
        self.scope = Some(scope.into());
        self
    }

    /// The `audience` to ask for (a logical name the authorization server
    /// knows the upstream by).
    pub fn audience(mut self, audience: impl Into<String>) -> Self {
        self.audience = Some(audience.into());
        self
    }

    /// The `resource` to ask for (default: the `resource` of the upstream's
    /// protected resource metadata, else its URL).
    pub fn resource(mut self, resource: impl Into<String>) -> Self {
        self.resource = Some(resource.into());
        self
    }

    /// The exchanger.
    pub fn build(self) -> Result<TokenExchange, OAuthError> {
        for u in std::iter::once(&self.server_url).chain(self.token_endpoint.as_ref()) {
            url::Url::parse(u).map_err(|e| OAuthError::BadUrl {
                url: u.clone(),
                why: e.to_string(),
            })?;
        }
        Ok(TokenExchange {
            http: fetch::client()?,
            server_url: self.server_url,
            token_endpoint: self.token_endpoint,
            client: self.client,
            signing_key: self.signing_key,
            scope: self.scope,
            audience: self.audience,
            resource: self.resource,
            endpoint: tokio::sync::Mutex::new(None),
            nonce: Mutex::new(None),
        })
    }
}

impl TokenExchange {
    /// An exchanger for the MCP server at `server_url`, authenticating to
    /// the authorization server as `client`.
    pub fn builder(
        server_url: impl Into<String>,
        client: ClientCredentials,
    ) -> TokenExchangeBuilder {
        TokenExchangeBuilder {
            server_url: server_url.into(),
            client,
            signing_key: None,
            token_endpoint: None,
            scope: None,
            audience: None,
            resource: None,
        }
    }

    /// The MCP server the exchanged tokens are for.
    pub fn server_url(&self) -> &str {
        &self.server_url
    }

    /// The token endpoint and what to ask there: configured, or found by
    /// discovery once (a failed discovery is tried again next time).
    async fn endpoint(&self) -> Result<Endpoint, OAuthError> {
        let mut known = self.endpoint.lock().await;
        if let Some(e) = known.as_ref() {
            return Ok(e.clone());
        }
        let e = match &self.token_endpoint {
            Some(url) => Endpoint {
                url: url.clone(),
                issuer: url.clone(),
                resource: self
                    .resource
                    .clone()
                    .unwrap_or_else(|| self.server_url.clone()),
                method: self
                    .client
                    .auth_method
                    .unwrap_or(if self.signing_key.is_some() {
                        AuthMethod::PrivateKeyJwt
                    } else if self.client.client_secret.is_some() {
                        AuthMethod::ClientSecretBasic
                    } else {
                        AuthMethod::None
                    }),
            },
            None => {
                let d = discover_via(&self.http, &self.server_url, None).await?;
                if !d.metadata.supports_grant(grant_type::TOKEN_EXCHANGE)
                    && d.metadata.grant_types_supported.is_some()
                {
                    return Err(OAuthError::Unsupported(format!(
                        "{} does not list the token exchange grant ({}) in grant_types_supported",
                        d.issuer,
                        grant_type::TOKEN_EXCHANGE
                    )));
                }
                let url = d.metadata.token_endpoint.clone().ok_or_else(|| {
                    OAuthError::Unsupported(format!("{} has no token endpoint", d.issuer))
                })?;
                Endpoint {
                    url,
                    method: self
                        .client
                        .method_for(&d.metadata, self.signing_key.is_some()),
                    resource: self.resource.clone().unwrap_or(d.resource),
                    issuer: d.issuer,
                }
            }
        };
        *known = Some(e.clone());
        Ok(e)
    }

    /// Exchanges `subject_token` (an access token) for a bearer access
    /// token for the upstream.
    pub async fn exchange(&self, subject_token: &str) -> Result<TokenSet, OAuthError> {
        let e = self.endpoint().await?;
        let mut form = vec![
            pair("grant_type", grant_type::TOKEN_EXCHANGE),
            pair("subject_token", subject_token),
            pair("subject_token_type", ACCESS_TOKEN_TYPE),
            pair("requested_token_type", ACCESS_TOKEN_TYPE),
            pair("resource", e.resource.clone()),
        ];
        form.extend(self.audience.as_ref().map(|a| pair("audience", a.clone())));
        form.extend(self.scope.as_ref().map(|s| pair("scope", s.clone())));
        let ep = TokenEndpoint {
            http: &self.http,
            url: &e.url,
            issuer: &e.issuer,
            client: &self.client,
            method: e.method,
            signing_key: self.signing_key.as_ref(),
            dpop: None,
            nonce: &self.nonce,
        };
        let tokens = ep.request(&form, unix_now).await?;
        if !tokens.token_type.eq_ignore_ascii_case("bearer") {
            return Err(OAuthError::Unsupported(format!(
                "the token exchange at {} issued a {:?} token, not a bearer access token",
                e.url, tokens.token_type
            )));
        }
        Ok(tokens)
    }
}
