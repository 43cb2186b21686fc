//! [`JwtVerifier`]: JWT access tokens (RFC 9068) verified with the
//! authorization server's published keys.

use std::sync::Arc;
use std::time::Duration;

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value};

use super::auth_info::AuthInfo;
use super::error::VerifyError;
use super::jwks::{JwksCache, JwksSource};
use super::resource::same_resource;
use super::verifier::TokenVerifier;

/// The asymmetric algorithms accepted by default. `none` is never accepted
/// and HMAC (`HS*`) cannot be enabled: a resource server that only knows the
/// authorization server's public keys must not treat one as a shared secret.
pub const DEFAULT_ALGORITHMS: &[Algorithm] = &[
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// Verifies JWT access tokens: the signature with a key from the
/// authorization server's JWK Set ([`JwksCache`]), then `iss` (exactly the
/// issuer), `aud` (must name this resource: the RFC 8707 resource indicator,
/// the server's canonical URL), `exp` (required) and `nbf` with a small
/// leeway, and an allow-list of algorithms.
///
/// ```no_run
/// # use tessera_auth::server::JwtVerifier;
/// let v = JwtVerifier::builder("https://auth.example.com", "https://mcp.example.com/mcp")
///     .jwks_uri("https://auth.example.com/jwks.json") // else discovered from the issuer
///     .build();
/// ```
#[derive(Debug, Clone)]
pub struct JwtVerifier {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    issuer: String,
    audiences: Vec<String>,
    algorithms: Vec<Algorithm>,
    leeway: Duration,
    jwks: JwksCache,
}

/// Builds a [`JwtVerifier`].
#[derive(Debug)]
pub struct JwtVerifierBuilder {
    issuer: String,
    audiences: Vec<String>,
    algorithms: Vec<Algorithm>,
    leeway: Duration,
    jwks_uri: Option<String>,
    min_refresh: Duration,
    client: Option<reqwest::Client>,
}

impl JwtVerifier {
    /// Starts a verifier for tokens of `issuer` meant for `audience` (this
    /// server's canonical resource URL).
    pub fn builder(issuer: impl Into<String>, audience: impl Into<String>) -> JwtVerifierBuilder {
        JwtVerifierBuilder {
            issuer: issuer.into(),
            audiences: vec![audience.into()],
            algorithms: DEFAULT_ALGORITHMS.to_vec(),
            leeway: Duration::from_secs(30),
            jwks_uri: None,
            min_refresh: Duration::from_secs(30),
            client: None,
        }
    }

    /// The key cache (to read its fetch count, for example).
    pub fn jwks(&self) -> &JwksCache {
        &self.inner.jwks
    }

    async fn check(&self, token: &str) -> Result<AuthInfo, VerifyError> {
        let inner = &self.inner;
        let header = jsonwebtoken::decode_header(token)
            .map_err(|e| VerifyError::Invalid(format!("not a well-formed JWT: {e}")))?;
        if !inner.algorithms.contains(&header.alg) {
            return Err(VerifyError::Invalid(format!(
                "the signing algorithm {:?} is not accepted",
                header.alg
            )));
        }
        let keys = inner
            .jwks
            .keys_for(header.kid.as_deref(), header.alg)
            .await?;
        if keys.is_empty() {
            return Err(VerifyError::Invalid(match &header.kid {
                Some(kid) => format!("signed with an unknown key ({kid:?})"),
                None => "no key of the authorization server fits the token".into(),
            }));
        }
        let mut validation = Validation::new(header.alg);
        validation.algorithms = vec![header.alg];
        validation.leeway = inner.leeway.as_secs();
        validation.validate_nbf = true;
        // `aud` is checked below against the canonical resource URL(s).
        validation.validate_aud = false;
        validation.set_issuer(&[inner.issuer.as_str()]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        let mut last = VerifyError::Invalid("bad signature".into());
        for jwk in &keys {
            let key = match DecodingKey::from_jwk(jwk) {
                Ok(k) => k,
                Err(e) => {
                    last = VerifyError::Invalid(format!("unusable key: {e}"));
                    continue;
                }
            };
            match jsonwebtoken::decode::<Map<String, Value>>(token, &key, &validation) {
                Ok(data) => return self.accept(data.claims),
                Err(e) => {
                    last = VerifyError::Invalid(describe(e.kind()));
                    if !matches!(e.kind(), ErrorKind::InvalidSignature) {
                        break;
                    }
                }
            }
        }
        Err(last)
    }

    fn accept(&self, claims: Map<String, Value>) -> Result<AuthInfo, VerifyError> {
        let info = AuthInfo::from_claims(claims);
        let ours = info.audience.iter().any(|a| {
            self.inner
                .audiences
                .iter()
                .any(|ours| same_resource(a, ours))
        });
        if !ours {
            return Err(VerifyError::Invalid(
                "the token was issued for another resource (audience)".into(),
            ));
        }
        Ok(info)
    }
}

/// A short, safe description of a validation failure.
fn describe(kind: &ErrorKind) -> String {
    match kind {
        ErrorKind::ExpiredSignature => "the token has expired".into(),
        ErrorKind::ImmatureSignature => "the token is not valid yet (nbf)".into(),
        ErrorKind::InvalidIssuer => "the token was issued by another authorization server".into(),
        ErrorKind::InvalidSignature => "bad signature".into(),
        ErrorKind::InvalidAlgorithm => "the signing algorithm does not match the key".into(),
        ErrorKind::MissingRequiredClaim(c) => format!("the token has no {c:?} claim"),
        other => format!("invalid token ({other:?})"),
    }
}

impl TokenVerifier for JwtVerifier {
    fn verify(&self, token: &str) -> impl Future<Output = Result<AuthInfo, VerifyError>> + Send {
        self.check(token)
    }
}

impl JwtVerifierBuilder {
    /// Also accepts tokens whose `aud` names `audience` (a server reachable
    /// under several URLs).
    pub fn audience(mut self, audience: impl Into<String>) -> Self {
        self.audiences.push(audience.into());
        self
    }

    /// The JWK Set URL. Without it, the `jwks_uri` of the issuer's RFC 8414
    /// (or OpenID Connect) metadata is used.
    pub fn jwks_uri(mut self, url: impl Into<String>) -> Self {
        self.jwks_uri = Some(url.into());
        self
    }

    /// The accepted algorithms (default: [`DEFAULT_ALGORITHMS`]); `HS*` ones
    /// are dropped.
    pub fn algorithms(mut self, algs: impl IntoIterator<Item = Algorithm>) -> Self {
        self.algorithms = algs
            .into_iter()
            .filter(|a| !matches!(a, Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512))
            .collect();
        self
    }

    /// The clock skew allowed on `exp` and `nbf` (default 30 s).
    pub fn leeway(mut self, d: Duration) -> Self {
        self.leeway = d;
        self
    }

    /// The least time between two JWK Set fetches (default 30 s).
    pub fn min_refresh_interval(mut self, d: Duration) -> Self {
        self.min_refresh = d;
        self
    }

    /// Uses this HTTP client for the JWK Set and metadata.
    pub fn http_client(mut self, client: reqwest::Client) -> Self {
        self.client = Some(client);
        self
    }

    /// The verifier.
    pub fn build(self) -> JwtVerifier {
        let source = match self.jwks_uri {
            Some(u) => JwksSource::Url(u),
            None => JwksSource::Issuer(self.issuer.clone()),
        };
        let mut jwks = JwksCache::new(source).min_refresh_interval(self.min_refresh);
        if let Some(c) = self.client {
            jwks = jwks.with_client(c);
        }
        JwtVerifier {
            inner: Arc::new(Inner {
                issuer: self.issuer,
                audiences: self.audiences,
                algorithms: self.algorithms,
                leeway: self.leeway,
                jwks,
            }),
        }
    }
}
