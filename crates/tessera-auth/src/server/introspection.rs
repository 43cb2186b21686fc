//! [`IntrospectionVerifier`]: opaque (or any) tokens checked by asking the
//! authorization server (RFC 7662).

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Deserialize;
use serde_json::{Map, Value};

use super::auth_info::AuthInfo;
use tessera_types::loose::{lenient, view_map};

/// The members of an introspection answer (RFC 7662 §2.2) checked before
/// its claims are read, leniently (a member of another type is absent).
#[derive(Debug, Default, Deserialize)]
struct Activity {
    #[serde(default, deserialize_with = "lenient")]
    active: Option<bool>,
    #[serde(default, deserialize_with = "lenient")]
    exp: Option<u64>,
    #[serde(default, deserialize_with = "lenient")]
    nbf: Option<u64>,
}
use super::discovery::{discover, http_client};
use super::error::VerifyError;
use super::resource::same_resource;
use super::verifier::TokenVerifier;

/// How this resource server authenticates to the introspection endpoint
/// (RFC 7662 §2.1 requires it to).
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClientAuth {
    /// HTTP Basic with the client id and secret (`client_secret_basic`).
    Basic {
        /// The client id.
        client_id: String,
        /// The client secret.
        client_secret: String,
    },
    /// The client id and secret in the form body (`client_secret_post`).
    Post {
        /// The client id.
        client_id: String,
        /// The client secret.
        client_secret: String,
    },
    /// A bearer token of the resource server's own.
    Bearer(String),
}

impl std::fmt::Debug for ClientAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never log a secret.
        match self {
            ClientAuth::Basic { client_id, .. } => write!(f, "Basic({client_id:?}, …)"),
            ClientAuth::Post { client_id, .. } => write!(f, "Post({client_id:?}, …)"),
            ClientAuth::Bearer(_) => f.write_str("Bearer(…)"),
        }
    }
}

/// Verifies a token by introspection: it must be `active`, its `aud` must
/// name this resource (its canonical URL), its `iss` (if the answer has one)
/// the expected issuer, and `exp`/`nbf` (if present) must hold, with a small
/// leeway.
#[derive(Debug, Clone)]
pub struct IntrospectionVerifier {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    endpoint: Endpoint,
    auth: ClientAuth,
    issuer: Option<String>,
    audiences: Vec<String>,
    leeway: Duration,
    client: reqwest::Client,
    resolved: tokio::sync::OnceCell<String>,
}

#[derive(Debug)]
enum Endpoint {
    Url(String),
    FromIssuer,
}

/// Builds an [`IntrospectionVerifier`].
#[derive(Debug)]
pub struct IntrospectionVerifierBuilder {
    endpoint: Option<String>,
    auth: ClientAuth,
    issuer: Option<String>,
    audiences: Vec<String>,
    leeway: Duration,
    client: Option<reqwest::Client>,
}

impl IntrospectionVerifier {
    /// Starts a verifier for tokens meant for `audience` (this server's
    /// canonical resource URL), authenticating to the endpoint with `auth`.
    pub fn builder(audience: impl Into<String>, auth: ClientAuth) -> IntrospectionVerifierBuilder {
        IntrospectionVerifierBuilder {
            endpoint: None,
            auth,
            issuer: None,
            audiences: vec![audience.into()],
            leeway: Duration::from_secs(30),
            client: None,
        }
    }

    async fn endpoint(&self) -> Result<&str, VerifyError> {
        let inner = &self.inner;
        match &inner.endpoint {
            Endpoint::Url(u) => Ok(u),
            Endpoint::FromIssuer => {
                let issuer = inner.issuer.as_deref().unwrap_or_default();
                inner
                    .resolved
                    .get_or_try_init(|| async {
                        let meta = discover(&inner.client, issuer).await?;
                        meta.introspection_endpoint.ok_or_else(|| {
                            VerifyError::Unavailable(format!(
                                "the metadata of {issuer} has no introspection_endpoint"
                            ))
                        })
                    })
                    .await
                    .map(String::as_str)
            }
        }
    }

    async fn check(&self, token: &str) -> Result<AuthInfo, VerifyError> {
        let inner = &self.inner;
        let url = self.endpoint().await?;
        let mut form = vec![("token", token), ("token_type_hint", "access_token")];
        let mut req = inner
            .client
            .post(url)
            .header(http::header::ACCEPT, "application/json");
        match &inner.auth {
            ClientAuth::Basic {
                client_id,
                client_secret,
            } => {
                // RFC 6749 §2.3.1: form-urlencode id and secret before Basic.
                req = req.basic_auth(form_encode(client_id), Some(form_encode(client_secret)));
            }
            ClientAuth::Post {
                client_id,
                client_secret,
            } => {
                form.push(("client_id", client_id));
                form.push(("client_secret", client_secret));
            }
            ClientAuth::Bearer(t) => req = req.bearer_auth(t),
        }
        let unavailable = |e: String| VerifyError::Unavailable(format!("introspection {url}: {e}"));
        let resp = req
            .form(&form)
            .send()
            .await
            .map_err(|e| unavailable(e.to_string()))?;
        if !resp.status().is_success() {
            return Err(unavailable(format!("HTTP {}", resp.status())));
        }
        let answer: Map<String, Value> =
            resp.json().await.map_err(|e| unavailable(e.to_string()))?;
        self.accept(answer)
    }

    fn accept(&self, answer: Map<String, Value>) -> Result<AuthInfo, VerifyError> {
        let inner = &self.inner;
        let state: Activity = view_map(&answer).unwrap_or_default();
        if state.active != Some(true) {
            return Err(VerifyError::Invalid("the token is not active".into()));
        }
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        let leeway = inner.leeway.as_secs();
        if let Some(exp) = state.exp {
            if exp.saturating_add(leeway) <= now {
                return Err(VerifyError::Invalid("the token has expired".into()));
            }
        }
        if let Some(nbf) = state.nbf {
            if nbf > now.saturating_add(leeway) {
                return Err(VerifyError::Invalid(
                    "the token is not valid yet (nbf)".into(),
                ));
            }
        }
        let info = AuthInfo::from_claims(answer);
        if let (Some(want), Some(got)) = (&inner.issuer, &info.issuer) {
            if want != got {
                return Err(VerifyError::Invalid(
                    "the token was issued by another authorization server".into(),
                ));
            }
        }
        let ours = info
            .audience
            .iter()
            .any(|a| inner.audiences.iter().any(|o| same_resource(a, o)));
        if !ours {
            return Err(VerifyError::Invalid(
                "the token was issued for another resource (audience)".into(),
            ));
        }
        Ok(info)
    }
}

fn form_encode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

impl TokenVerifier for IntrospectionVerifier {
    fn verify(&self, token: &str) -> impl Future<Output = Result<AuthInfo, VerifyError>> + Send {
        self.check(token)
    }
}

impl IntrospectionVerifierBuilder {
    /// The introspection endpoint. Without it, the `introspection_endpoint`
    /// of the issuer's metadata is used (then [`issuer`](Self::issuer) is
    /// required).
    pub fn endpoint(mut self, url: impl Into<String>) -> Self {
        self.endpoint = Some(url.into());
        self
    }

    /// The expected issuer: an answer naming another `iss` is refused, and
    /// the endpoint can be discovered from it.
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// Also accepts tokens whose `aud` names `audience`.
    pub fn audience(mut self, audience: impl Into<String>) -> Self {
        self.audiences.push(audience.into());
        self
    }

    /// The clock skew allowed on `exp` and `nbf` (default 30 s).
    pub fn leeway(mut self, d: Duration) -> Self {
        self.leeway = d;
        self
    }

    /// Uses this HTTP client.
    pub fn http_client(mut self, client: reqwest::Client) -> Self {
        self.client = Some(client);
        self
    }

    /// The verifier; fails if it has neither an endpoint nor an issuer to
    /// discover one from.
    pub fn build(self) -> Result<IntrospectionVerifier, String> {
        let endpoint = match (self.endpoint, &self.issuer) {
            (Some(u), _) => Endpoint::Url(u),
            (None, Some(_)) => Endpoint::FromIssuer,
            (None, None) => {
                return Err("an introspection verifier needs an endpoint or an issuer".into());
            }
        };
        Ok(IntrospectionVerifier {
            inner: Arc::new(Inner {
                endpoint,
                auth: self.auth,
                issuer: self.issuer,
                audiences: self.audiences,
                leeway: self.leeway,
                client: self.client.unwrap_or_else(http_client),
                resolved: tokio::sync::OnceCell::new(),
            }),
        })
    }
}
