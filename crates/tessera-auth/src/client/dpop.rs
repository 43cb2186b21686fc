//! DPoP (RFC 9449): a per-client key pair whose proofs bind access tokens
//! to the client. A proof is a fresh `dpop+jwt` for each HTTP request,
//! carrying the method, the URL (without query and fragment), for resource
//! requests the access token's hash (`ath`), and the server's nonce when it
//! asked for one.

use jsonwebtoken::jwk::{Jwk, ThumbprintHash};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use p256::pkcs8::EncodePrivateKey as _;
use rand::RngCore as _;

use super::error::OAuthError;
use super::pkce::{random_token, sha256_b64url};

/// The `DPoP` header name.
pub const DPOP_HEADER: &str = "dpop";
/// The `DPoP-Nonce` header name.
pub const DPOP_NONCE_HEADER: &str = "dpop-nonce";

/// An ES256 key pair for DPoP proofs.
#[derive(Clone)]
pub struct DpopKey {
    key: EncodingKey,
    jwk: Jwk,
    thumbprint: String,
    /// The private key, PKCS#8 DER (to keep it with the tokens it binds).
    pkcs8: std::sync::Arc<[u8]>,
}

impl std::fmt::Debug for DpopKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DpopKey")
            .field("jkt", &self.thumbprint)
            .finish_non_exhaustive()
    }
}

/// The `htu` of a request: the URL without query and fragment.
fn htu(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) => {
            u.set_query(None);
            u.set_fragment(None);
            u.to_string()
        }
        Err(_) => url.split(['?', '#']).next().unwrap_or_default().to_owned(),
    }
}

impl DpopKey {
    /// A fresh P-256 key.
    pub fn generate() -> Result<DpopKey, OAuthError> {
        // A random scalar is a valid key except with negligible probability.
        let secret = loop {
            let mut bytes = [0u8; 32];
            rand::rng().fill_bytes(&mut bytes);
            if let Ok(k) = p256::SecretKey::from_slice(&bytes) {
                break k;
            }
        };
        let der = secret
            .to_pkcs8_der()
            .map_err(|e| OAuthError::Signing(e.to_string()))?;
        DpopKey::from_der(der.as_bytes())
    }

    /// The key kept by [`to_stored`](DpopKey::to_stored) (base64url PKCS#8).
    pub fn from_stored(stored: &str) -> Result<DpopKey, OAuthError> {
        use base64::Engine as _;
        use p256::pkcs8::DecodePrivateKey as _;
        let der = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(stored)
            .map_err(|e| OAuthError::Store(format!("the stored DPoP key is not base64url: {e}")))?;
        // Parse it first: a bad key is an error here, not at signing time.
        p256::SecretKey::from_pkcs8_der(&der).map_err(|e| {
            OAuthError::Store(format!("the stored DPoP key is not a P-256 key: {e}"))
        })?;
        DpopKey::from_der(&der)
    }

    /// The private key as kept in the token store (base64url PKCS#8 DER),
    /// beside the tokens bound to it.
    pub fn to_stored(&self) -> String {
        use base64::Engine as _;
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&self.pkcs8)
    }

    fn from_der(der: &[u8]) -> Result<DpopKey, OAuthError> {
        let key = EncodingKey::from_ec_der(der);
        let mut jwk = Jwk::from_encoding_key(&key, Algorithm::ES256)
            .map_err(|e| OAuthError::Signing(e.to_string()))?;
        // Only the public parameters go in the header.
        jwk.common.key_algorithm = None;
        let thumbprint = jwk.thumbprint(ThumbprintHash::SHA256);
        Ok(DpopKey {
            key,
            jwk,
            thumbprint,
            pkcs8: std::sync::Arc::from(der),
        })
    }

    /// The RFC 7638 SHA-256 thumbprint of the public key (`jkt`).
    pub fn thumbprint(&self) -> &str {
        &self.thumbprint
    }

    /// A proof for `method` on `url`, at `now` (Unix seconds), for a
    /// resource request with `access_token`, echoing `nonce`.
    pub fn proof(
        &self,
        method: &str,
        url: &str,
        access_token: Option<&str>,
        nonce: Option<&str>,
        now: u64,
    ) -> Result<String, OAuthError> {
        let mut header = Header::new(Algorithm::ES256);
        header.typ = Some("dpop+jwt".into());
        header.jwk = Some(self.jwk.clone());
        let claims = ProofClaims {
            ath: access_token.map(|t| sha256_b64url(t.as_bytes())),
            htm: method,
            htu: htu(url),
            iat: now,
            jti: random_token(16),
            nonce,
        };
        jsonwebtoken::encode(&header, &claims, &self.key)
            .map_err(|e| OAuthError::Signing(e.to_string()))
    }
}

/// The claims of a DPoP proof (RFC 9449 §4.2), in the order of their names
/// (as the JSON object they replace was written).
#[derive(Debug, serde::Serialize)]
struct ProofClaims<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    ath: Option<String>,
    htm: &'a str,
    htu: String,
    iat: u64,
    jti: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    nonce: Option<&'a str>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine as _;
    use serde_json::Value;

    fn part(jwt: &str, i: usize) -> Value {
        let seg = jwt.split('.').nth(i).unwrap();
        let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(seg)
            .unwrap();
        serde_json::from_slice(&raw).unwrap()
    }

    #[test]
    fn proofs_are_fresh_and_well_formed() {
        let k = DpopKey::generate().unwrap();
        let a = k
            .proof("POST", "http://h/mcp?x=1#f", Some("tok"), Some("n1"), 100)
            .unwrap();
        let b = k
            .proof("POST", "http://h/mcp", Some("tok"), None, 100)
            .unwrap();
        let (ha, ca, cb) = (part(&a, 0), part(&a, 1), part(&b, 1));
        assert_eq!(ha["typ"], "dpop+jwt");
        assert_eq!(ha["alg"], "ES256");
        assert_eq!(ha["jwk"]["kty"], "EC");
        assert!(ha["jwk"].get("d").is_none());
        assert_eq!(ca["htu"], "http://h/mcp");
        assert_eq!(ca["nonce"], "n1");
        assert_eq!(ca["ath"], sha256_b64url(b"tok"));
        assert_ne!(ca["jti"], cb["jti"]);
        assert_eq!(k.thumbprint().len(), 43);
    }

    #[test]
    fn a_stored_key_comes_back_the_same() {
        let k = DpopKey::generate().unwrap();
        let back = DpopKey::from_stored(&k.to_stored()).unwrap();
        assert_eq!(back.thumbprint(), k.thumbprint());
        let proof = back.proof("GET", "http://h/mcp", None, None, 1).unwrap();
        assert_eq!(
            part(&proof, 0)["jwk"],
            part(&k.proof("GET", "http://h/mcp", None, None, 1).unwrap(), 0)["jwk"]
        );
        assert!(DpopKey::from_stored("not a key").is_err());
        assert!(DpopKey::from_stored("AAAA").is_err());
    }
}
