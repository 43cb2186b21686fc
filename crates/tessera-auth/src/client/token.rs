//! Tokens and the token endpoint: the token set a grant yields, client
//! authentication (`none`, `client_secret_basic`, `client_secret_post`,
//! `private_key_jwt`), DPoP proofs and their nonce retry.

use std::sync::Mutex;

use base64::Engine as _;
use reqwest::header::{HeaderMap, HeaderValue};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::assertion::{ClientSigningKey, JWT_BEARER_ASSERTION_TYPE};
use super::dpop::{DPOP_HEADER, DPOP_NONCE_HEADER, DpopKey};
use super::error::OAuthError;
use super::fetch;
use super::registration::{AuthMethod, ClientCredentials};
use tessera_types::loose::{lenient, view_or_default};

/// Grant type names.
pub mod grant_type {
    /// The authorization code grant.
    pub const AUTHORIZATION_CODE: &str = "authorization_code";
    /// The refresh token grant.
    pub const REFRESH_TOKEN: &str = "refresh_token";
    /// The client credentials grant.
    pub const CLIENT_CREDENTIALS: &str = "client_credentials";
    /// RFC 7523 JWT bearer grant.
    pub const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
    /// RFC 8693 token exchange.
    pub const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
}

/// What a token endpoint issued.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TokenSet {
    /// The access token.
    pub access_token: String,
    /// `Bearer` or `DPoP`.
    pub token_type: String,
    /// The refresh token, if one was issued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// When the access token expires (Unix seconds), if the server said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    /// The granted scopes (space separated), if the server said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

impl std::fmt::Debug for TokenSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenSet")
            .field("token_type", &self.token_type)
            .field("refresh_token", &self.refresh_token.as_ref().map(|_| "…"))
            .field("expires_at", &self.expires_at)
            .field("scope", &self.scope)
            .finish_non_exhaustive()
    }
}

impl TokenSet {
    /// A bearer token without expiry.
    pub fn bearer(access_token: impl Into<String>) -> TokenSet {
        TokenSet {
            access_token: access_token.into(),
            token_type: "Bearer".into(),
            refresh_token: None,
            expires_at: None,
            scope: None,
        }
    }

    /// Whether the token is DPoP-bound (`token_type` `DPoP`).
    pub fn is_dpop(&self) -> bool {
        self.token_type.eq_ignore_ascii_case("dpop")
    }

    /// Whether the token expires within `skew_secs` of `now`.
    pub fn expires_within(&self, now: u64, skew_secs: u64) -> bool {
        self.expires_at.is_some_and(|e| e <= now + skew_secs)
    }

    /// Reads a successful token response, issued at `now`.
    pub(crate) fn from_response(doc: &Value, now: u64) -> Option<TokenSet> {
        let doc: TokenResponse = view_or_default(doc);
        let expires_in = match doc.expires_in {
            Some(ExpiresIn::Seconds(s)) => Some(s),
            Some(ExpiresIn::Text(s)) => s.parse().ok(),
            None => None,
        };
        Some(TokenSet {
            access_token: doc.access_token?,
            token_type: doc.token_type.unwrap_or_else(|| "Bearer".into()),
            refresh_token: doc.refresh_token,
            expires_at: expires_in.map(|s| now.saturating_add(s)),
            scope: doc.scope,
        })
    }
}

/// A successful token response (RFC 6749 §5.1), its members read
/// leniently; the others are kept.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct TokenResponse {
    /// `access_token`.
    #[serde(default, deserialize_with = "lenient")]
    pub access_token: Option<String>,
    /// `token_type`.
    #[serde(default, deserialize_with = "lenient")]
    pub token_type: Option<String>,
    /// `refresh_token`.
    #[serde(default, deserialize_with = "lenient")]
    pub refresh_token: Option<String>,
    /// `expires_in`: seconds (some servers send them as a string).
    #[serde(default, deserialize_with = "lenient")]
    pub expires_in: Option<ExpiresIn>,
    /// `scope`.
    #[serde(default, deserialize_with = "lenient")]
    pub scope: Option<String>,
    /// The other members.
    #[serde(flatten)]
    pub _extra: serde_json::Map<String, Value>,
}

/// A token lifetime as sent: a number of seconds, or a string of one.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum ExpiresIn {
    /// Whole seconds.
    Seconds(u64),
    /// Text (parsed as whole seconds).
    Text(String),
}

/// An error response (RFC 6749 §5.2), its members read leniently; the
/// others are kept.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ErrorResponse {
    /// `error`.
    #[serde(default, deserialize_with = "lenient")]
    pub error: Option<String>,
    /// `error_description`.
    #[serde(default, deserialize_with = "lenient")]
    pub error_description: Option<String>,
    /// The other members.
    #[serde(flatten)]
    pub _extra: serde_json::Map<String, Value>,
}

/// One token endpoint and how to authenticate there.
pub(crate) struct TokenEndpoint<'a> {
    pub http: &'a super::fetch::Http,
    pub url: &'a str,
    /// The authorization server's issuer (the audience of client assertions).
    pub issuer: &'a str,
    pub client: &'a ClientCredentials,
    pub method: AuthMethod,
    pub signing_key: Option<&'a ClientSigningKey>,
    pub dpop: Option<&'a DpopKey>,
    /// The last `DPoP-Nonce` of this server.
    pub nonce: &'a Mutex<Option<String>>,
}

fn form_encode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl TokenEndpoint<'_> {
    /// Adds the client authentication to a request.
    fn authenticate(
        &self,
        form: &mut Vec<(String, String)>,
        headers: &mut HeaderMap,
        now: u64,
    ) -> Result<(), OAuthError> {
        let id = &self.client.client_id;
        let secret = || {
            self.client.client_secret.clone().ok_or_else(|| {
                OAuthError::Unsupported(format!("{} needs a client secret", self.method.as_str()))
            })
        };
        match self.method {
            // No identity at all (a workload identity grant): nothing to add.
            AuthMethod::None if id.is_empty() => {}
            AuthMethod::None => form.push(("client_id".into(), id.clone())),
            AuthMethod::ClientSecretBasic => {
                let pair = format!("{}:{}", form_encode(id), form_encode(&secret()?));
                let value = format!(
                    "Basic {}",
                    base64::engine::general_purpose::STANDARD.encode(pair)
                );
                let v = HeaderValue::from_str(&value).map_err(|_| {
                    OAuthError::Unsupported("client id not usable in a header".into())
                })?;
                headers.insert(reqwest::header::AUTHORIZATION, v);
            }
            AuthMethod::ClientSecretPost => {
                form.push(("client_id".into(), id.clone()));
                form.push(("client_secret".into(), secret()?));
            }
            AuthMethod::PrivateKeyJwt => {
                let key = self.signing_key.ok_or_else(|| {
                    OAuthError::Unsupported("private_key_jwt needs a signing key".into())
                })?;
                form.push(("client_id".into(), id.clone()));
                form.push((
                    "client_assertion_type".into(),
                    JWT_BEARER_ASSERTION_TYPE.into(),
                ));
                form.push((
                    "client_assertion".into(),
                    key.assertion(id, self.issuer, now)?,
                ));
            }
        }
        Ok(())
    }

    /// Sends a token request with the grant's `params`; with DPoP, retries
    /// once with the server's nonce when it asks for one.
    pub async fn request(
        &self,
        params: &[(String, String)],
        now: impl Fn() -> u64,
    ) -> Result<TokenSet, OAuthError> {
        let mut nonce_retry = true;
        loop {
            let t = now();
            let mut form = params.to_vec();
            let mut headers = HeaderMap::new();
            self.authenticate(&mut form, &mut headers, t)?;
            if let Some(key) = self.dpop {
                let nonce = lock(self.nonce).clone();
                let proof = key.proof("POST", self.url, None, nonce.as_deref(), t)?;
                if let Ok(v) = HeaderValue::from_str(&proof) {
                    headers.insert(DPOP_HEADER, v);
                }
            }
            let a = fetch::post_form(self.http, self.url, &form, headers).await?;
            let new_nonce = a
                .headers
                .get(DPOP_NONCE_HEADER)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            if let Some(n) = &new_nonce {
                *lock(self.nonce) = Some(n.clone());
            }
            let doc = a.json().unwrap_or(Value::Null);
            if a.status.is_success() {
                return TokenSet::from_response(&doc, t).ok_or_else(|| OAuthError::BadResponse {
                    url: self.url.to_owned(),
                    why: "the token response has no access_token".into(),
                });
            }
            let refused: ErrorResponse = view_or_default(&doc);
            let error = refused
                .error
                .unwrap_or_else(|| format!("http_{}", a.status.as_u16()));
            if error == "use_dpop_nonce"
                && self.dpop.is_some()
                && new_nonce.is_some()
                && nonce_retry
            {
                nonce_retry = false;
                continue;
            }
            return Err(OAuthError::Token {
                error,
                description: refused.error_description,
            });
        }
    }
}

/// A `(name, value)` pair for a form.
pub(crate) fn pair(k: &str, v: impl Into<String>) -> (String, String) {
    (k.to_owned(), v.into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn token_response_parsing() {
        let t = TokenSet::from_response(
            &json!({"access_token":"a","expires_in":60,"refresh_token":"r","scope":"x y"}),
            1000,
        )
        .unwrap();
        assert_eq!(t.token_type, "Bearer");
        assert_eq!(t.expires_at, Some(1060));
        assert!(t.expires_within(1000, 60));
        assert!(!t.expires_within(1000, 59));
        assert!(TokenSet::from_response(&json!({"token_type":"Bearer"}), 0).is_none());
        let d = TokenSet::from_response(
            &json!({"access_token":"a","token_type":"DPoP","expires_in":"5"}),
            1,
        )
        .unwrap();
        assert!(d.is_dpop());
        assert_eq!(d.expires_at, Some(6));
    }
}
