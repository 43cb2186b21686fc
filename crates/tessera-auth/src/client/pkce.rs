//! PKCE (RFC 7636, `S256` only) and the random values of a flow.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rand::RngCore as _;
use sha2::{Digest as _, Sha256};

/// `n` random bytes, base64url without padding.
pub(crate) fn random_token(n: usize) -> String {
    let mut bytes = vec![0u8; n];
    rand::rng().fill_bytes(&mut bytes);
    URL_SAFE_NO_PAD.encode(bytes)
}

/// base64url (no padding) of the SHA-256 of `input`.
pub(crate) fn sha256_b64url(input: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(input))
}

/// A PKCE verifier and its `S256` challenge.
#[derive(Debug, Clone)]
pub struct Pkce {
    /// The secret `code_verifier` (43 characters of base64url).
    pub verifier: String,
    /// `BASE64URL(SHA256(verifier))`.
    pub challenge: String,
}

impl Pkce {
    /// A fresh verifier (32 random bytes) and its challenge.
    pub fn generate() -> Pkce {
        Self::from_verifier(random_token(32))
    }

    /// The challenge of a given verifier.
    pub fn from_verifier(verifier: String) -> Pkce {
        let challenge = sha256_b64url(verifier.as_bytes());
        Pkce {
            verifier,
            challenge,
        }
    }

    /// The method name sent as `code_challenge_method`.
    pub const METHOD: &'static str = "S256";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc7636_appendix_b() {
        let p = Pkce::from_verifier("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk".into());
        assert_eq!(p.challenge, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
    }

    #[test]
    fn verifiers_are_fresh_and_long_enough() {
        let (a, b) = (Pkce::generate(), Pkce::generate());
        assert_ne!(a.verifier, b.verifier);
        assert!(a.verifier.len() >= 43);
    }
}
