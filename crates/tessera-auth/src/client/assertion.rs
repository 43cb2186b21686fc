//! Client assertions (RFC 7523 §2.2, `private_key_jwt`): a short-lived JWT
//! signed with the client's private key.

use jsonwebtoken::{Algorithm, EncodingKey, Header};

use super::error::OAuthError;
use super::pkce::random_token;

/// The `client_assertion_type` of a JWT client assertion.
pub const JWT_BEARER_ASSERTION_TYPE: &str =
    "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// How long an assertion is valid.
const LIFETIME_SECS: u64 = 300;

/// A private key for `private_key_jwt`.
#[derive(Clone)]
pub struct ClientSigningKey {
    key: EncodingKey,
    alg: Algorithm,
    kid: Option<String>,
}

impl std::fmt::Debug for ClientSigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientSigningKey")
            .field("alg", &self.alg)
            .field("kid", &self.kid)
            .finish_non_exhaustive()
    }
}

impl ClientSigningKey {
    /// A key from a PEM document (PKCS#8 for EC and Ed25519, PKCS#1 or
    /// PKCS#8 for RSA) and an algorithm name (`ES256`, `RS256`, `PS256`,
    /// `EdDSA`, …).
    pub fn from_pem(pem: &str, alg: &str) -> Result<Self, OAuthError> {
        let alg: Algorithm = alg
            .parse()
            .map_err(|_| OAuthError::Signing(format!("unknown algorithm {alg:?}")))?;
        let bytes = pem.as_bytes();
        let key = match alg {
            Algorithm::ES256 | Algorithm::ES384 => EncodingKey::from_ec_pem(bytes),
            Algorithm::RS256
            | Algorithm::RS384
            | Algorithm::RS512
            | Algorithm::PS256
            | Algorithm::PS384
            | Algorithm::PS512 => EncodingKey::from_rsa_pem(bytes),
            Algorithm::EdDSA => EncodingKey::from_ed_pem(bytes),
            _ => {
                return Err(OAuthError::Signing(format!(
                    "{alg:?} is not an asymmetric algorithm"
                )));
            }
        }
        .map_err(|e| OAuthError::Signing(format!("reading the private key: {e}")))?;
        Ok(ClientSigningKey {
            key,
            alg,
            kid: None,
        })
    }

    /// Sets the `kid` header.
    pub fn with_kid(mut self, kid: impl Into<String>) -> Self {
        self.kid = Some(kid.into());
        self
    }

    /// A client assertion for `client_id`, for the authorization server
    /// `audience` (its issuer identifier), issued at `now` (Unix seconds).
    pub fn assertion(
        &self,
        client_id: &str,
        audience: &str,
        now: u64,
    ) -> Result<String, OAuthError> {
        let mut header = Header::new(self.alg);
        header.kid = self.kid.clone();
        let claims = AssertionClaims {
            aud: audience,
            exp: now + LIFETIME_SECS,
            iat: now,
            iss: client_id,
            jti: random_token(16),
            sub: client_id,
        };
        jsonwebtoken::encode(&header, &claims, &self.key)
            .map_err(|e| OAuthError::Signing(e.to_string()))
    }
}

/// The claims of a client assertion (RFC 7523 §3), in the order of their
/// names (as the JSON object they replace was written).
#[derive(Debug, serde::Serialize)]
struct AssertionClaims<'a> {
    aud: &'a str,
    exp: u64,
    iat: u64,
    iss: &'a str,
    jti: String,
    sub: &'a str,
}
