//! Signing keys of the test authorization server.

use std::sync::OnceLock;

use jsonwebtoken::jwk::{Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use rsa::pkcs1::EncodeRsaPrivateKey;
use rsa::pkcs8::EncodePublicKey;
use serde_json::{Map, Value};

/// A signing key: private half for signing, public JWK for the JWK Set.
#[derive(Clone)]
pub struct TestKey {
    /// The key id (`kid`).
    pub kid: String,
    /// The algorithm it signs with (`RS256` or `ES256`).
    pub alg: Algorithm,
    /// The private key.
    pub encoding: EncodingKey,
    /// The public key as a JWK (with `kid`, `alg` and `use`).
    pub jwk: Jwk,
    /// The public key as PEM (SPKI), for algorithm-confusion tests.
    pub public_pem: String,
}

impl std::fmt::Debug for TestKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestKey")
            .field("kid", &self.kid)
            .field("alg", &self.alg)
            .finish_non_exhaustive()
    }
}

/// RSA key generation is slow: a few keys are made once per process and
/// handed out in turn.
pub(crate) fn rsa_pool() -> &'static [rsa::RsaPrivateKey] {
    static POOL: OnceLock<Vec<rsa::RsaPrivateKey>> = OnceLock::new();
    POOL.get_or_init(|| {
        (0..3)
            .map(|_| {
                rsa::RsaPrivateKey::new(&mut rsa::rand_core::OsRng, 2048)
                    .expect("RSA key generation")
            })
            .collect()
    })
}

impl TestKey {
    /// A new key for `alg` (`RS256` or `ES256`; anything else is treated as
    /// `ES256`). `n` picks one of a few pregenerated RSA keys.
    pub fn generate(kid: impl Into<String>, alg: Algorithm, n: usize) -> TestKey {
        let kid = kid.into();
        let (alg, encoding, public_pem) = match alg {
            Algorithm::RS256 => {
                let pool = rsa_pool();
                let key = &pool[n % pool.len()];
                let der = key.to_pkcs1_der().expect("PKCS#1 encoding");
                let pem = key
                    .to_public_key()
                    .to_public_key_pem(rsa::pkcs8::LineEnding::LF)
                    .expect("SPKI encoding");
                (
                    Algorithm::RS256,
                    EncodingKey::from_rsa_der(der.as_bytes()),
                    pem,
                )
            }
            _ => {
                use p256::pkcs8::{EncodePrivateKey, EncodePublicKey as _};
                let key = p256::SecretKey::random(&mut rsa::rand_core::OsRng);
                let der = key.to_pkcs8_der().expect("PKCS#8 encoding");
                let pem = key
                    .public_key()
                    .to_public_key_pem(p256::pkcs8::LineEnding::LF)
                    .expect("SPKI encoding");
                (
                    Algorithm::ES256,
                    EncodingKey::from_ec_der(der.as_bytes()),
                    pem,
                )
            }
        };
        let mut jwk = Jwk::from_encoding_key(&encoding, alg).expect("public JWK");
        jwk.common.key_id = Some(kid.clone());
        jwk.common.public_key_use = Some(PublicKeyUse::Signature);
        TestKey {
            kid,
            alg,
            encoding,
            jwk,
            public_pem,
        }
    }

    /// Signs `claims` as a JWT (`typ: at+jwt`, with this key's `kid`).
    pub fn sign(&self, claims: &Map<String, Value>) -> String {
        self.sign_typed(claims, "at+jwt")
    }

    /// Signs `claims` as a JWT of type `typ`, with this key's `kid`.
    pub fn sign_typed(&self, claims: &Map<String, Value>, typ: &str) -> String {
        let mut header = Header::new(self.alg);
        header.kid = Some(self.kid.clone());
        header.typ = Some(typ.into());
        jsonwebtoken::encode(&header, claims, &self.encoding).expect("signing")
    }
}
