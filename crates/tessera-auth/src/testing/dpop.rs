//! [`TestDpopKey`]: a client's DPoP key for tests, able to sign well-formed
//! proofs and every kind of bad one.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey};
use rsa::pkcs1::EncodeRsaPrivateKey as _;
use rsa::traits::{PrivateKeyParts as _, PublicKeyParts as _};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::server::dpop::jwk::thumbprint;

/// A DPoP key pair: ES256 (fresh), EdDSA (the RFC 8032 test key) or
/// RS256/PS256 (from the test pool).
#[derive(Clone)]
pub struct TestDpopKey {
    /// The algorithm its proofs name.
    pub alg: Algorithm,
    encoding: EncodingKey,
    /// The public key as a JWK (no private members).
    pub jwk: Map<String, Value>,
    /// The private members, for tests that leak them into the header.
    pub private: Map<String, Value>,
}

impl std::fmt::Debug for TestDpopKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestDpopKey")
            .field("alg", &self.alg)
            .field("jkt", &self.thumbprint())
            .finish_non_exhaustive()
    }
}

fn object(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// Seconds since the Unix epoch.
fn now() -> u64 {
    super::now()
}

impl TestDpopKey {
    /// A fresh P-256 key (ES256).
    pub fn es256() -> TestDpopKey {
        use p256::elliptic_curve::sec1::ToEncodedPoint as _;
        use p256::pkcs8::EncodePrivateKey as _;
        let key = p256::SecretKey::random(&mut rsa::rand_core::OsRng);
        let der = key.to_pkcs8_der().expect("PKCS#8 encoding");
        let point = key.public_key().to_encoded_point(false);
        let (x, y) = (
            point.x().expect("an uncompressed point"),
            point.y().expect("an uncompressed point"),
        );
        TestDpopKey {
            alg: Algorithm::ES256,
            encoding: EncodingKey::from_ec_der(der.as_bytes()),
            jwk: object(json!({
                "kty": "EC", "crv": "P-256",
                "x": URL_SAFE_NO_PAD.encode(x), "y": URL_SAFE_NO_PAD.encode(y),
            })),
            private: object(json!({"d": URL_SAFE_NO_PAD.encode(key.to_bytes())})),
        }
    }

    /// The Ed25519 key of RFC 8032 §7.1, test 1 (EdDSA).
    pub fn ed25519() -> TestDpopKey {
        const SEED: &str = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
        const PUBLIC: &str = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";
        let hex = |s: &str| -> Vec<u8> {
            (0..s.len())
                .step_by(2)
                .filter_map(|i| u8::from_str_radix(&s[i..i + 2], 16).ok())
                .collect()
        };
        // PKCS#8 v1 wrapping of an Ed25519 seed (RFC 8410 §7).
        let mut der = vec![
            0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22,
            0x04, 0x20,
        ];
        der.extend(hex(SEED));
        TestDpopKey {
            alg: Algorithm::EdDSA,
            encoding: EncodingKey::from_ed_der(&der),
            jwk: object(json!({
                "kty": "OKP", "crv": "Ed25519", "x": URL_SAFE_NO_PAD.encode(hex(PUBLIC)),
            })),
            private: object(json!({"d": URL_SAFE_NO_PAD.encode(hex(SEED))})),
        }
    }

    /// An RSA key from the test pool (`n` picks one), for `RS256` or `PS256`.
    pub fn rsa(alg: Algorithm, n: usize) -> TestDpopKey {
        let pool = super::keys::rsa_pool();
        let key = &pool[n % pool.len()];
        let der = key.to_pkcs1_der().expect("PKCS#1 encoding");
        TestDpopKey {
            alg,
            encoding: EncodingKey::from_rsa_der(der.as_bytes()),
            jwk: object(json!({
                "kty": "RSA",
                "n": URL_SAFE_NO_PAD.encode(key.n().to_bytes_be()),
                "e": URL_SAFE_NO_PAD.encode(key.e().to_bytes_be()),
            })),
            private: object(json!({"d": URL_SAFE_NO_PAD.encode(key.d().to_bytes_be())})),
        }
    }

    /// The RFC 7638 SHA-256 thumbprint of the public key (the `cnf.jkt` a
    /// token bound to it names).
    pub fn thumbprint(&self) -> String {
        let s = |k: &str| self.jwk.get(k).and_then(Value::as_str).unwrap_or("");
        match s("kty") {
            "EC" => thumbprint(&[
                ("crv", s("crv")),
                ("kty", "EC"),
                ("x", s("x")),
                ("y", s("y")),
            ]),
            "OKP" => thumbprint(&[("crv", s("crv")), ("kty", "OKP"), ("x", s("x"))]),
            _ => thumbprint(&[("e", s("e")), ("kty", "RSA"), ("n", s("n"))]),
        }
    }

    /// The `cnf` claim of a token bound to this key.
    pub fn cnf(&self) -> Value {
        json!({ "jkt": self.thumbprint() })
    }

    /// The usual header: `typ: dpop+jwt`, this key's `alg` and public `jwk`.
    pub fn header(&self) -> Map<String, Value> {
        object(json!({
            "typ": "dpop+jwt",
            "alg": format!("{:?}", self.alg),
            "jwk": self.jwk,
        }))
    }

    /// The usual claims of a proof for `method` on `url`, made now, with
    /// `ath` for `token` and `nonce` when given (a fresh `jti`).
    pub fn claims(
        &self,
        method: &str,
        url: &str,
        token: Option<&str>,
        nonce: Option<&str>,
    ) -> Map<String, Value> {
        let mut c = object(json!({
            "jti": URL_SAFE_NO_PAD.encode(rand_bytes()),
            "htm": method,
            "htu": url,
            "iat": now(),
        }));
        if let Some(t) = token {
            c.insert("ath".into(), Value::from(ath(t)));
        }
        if let Some(n) = nonce {
            c.insert("nonce".into(), Value::from(n));
        }
        c
    }

    /// A valid proof for `method` on `url` presenting `token`.
    pub fn proof(&self, method: &str, url: &str, token: &str, nonce: Option<&str>) -> String {
        self.sign(
            &self.header(),
            &self.claims(method, url, Some(token), nonce),
        )
    }

    /// Signs any `header` and `claims` with this key and its algorithm
    /// (whatever `alg` the header names).
    pub fn sign(&self, header: &Map<String, Value>, claims: &Map<String, Value>) -> String {
        self.sign_as(self.alg, header, claims)
    }

    /// Signs any `header` and `claims` with this key using `alg`.
    pub fn sign_as(
        &self,
        alg: Algorithm,
        header: &Map<String, Value>,
        claims: &Map<String, Value>,
    ) -> String {
        let message = signing_input(header, claims);
        let sig =
            jsonwebtoken::crypto::sign(message.as_bytes(), &self.encoding, alg).expect("signing");
        format!("{message}.{sig}")
    }
}

impl TestDpopKey {
    /// The algorithm-confusion attack: `header` and `claims` signed with
    /// HS256 using the public JWK (as JSON) as the HMAC secret.
    pub fn hmac_with_public_key(
        &self,
        header: &Map<String, Value>,
        claims: &Map<String, Value>,
    ) -> String {
        let message = signing_input(header, claims);
        let secret =
            EncodingKey::from_secret(Value::Object(self.jwk.clone()).to_string().as_bytes());
        let sig = jsonwebtoken::crypto::sign(message.as_bytes(), &secret, Algorithm::HS256)
            .expect("signing");
        format!("{message}.{sig}")
    }
}

/// `base64url(header).base64url(claims)`.
pub fn signing_input(header: &Map<String, Value>, claims: &Map<String, Value>) -> String {
    let enc = |m: &Map<String, Value>| URL_SAFE_NO_PAD.encode(Value::Object(m.clone()).to_string());
    format!("{}.{}", enc(header), enc(claims))
}

/// The `ath` of `token`: base64url(SHA-256(token)).
pub fn ath(token: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(token.as_bytes()))
}

fn rand_bytes() -> [u8; 16] {
    use rsa::rand_core::RngCore as _;
    let mut b = [0u8; 16];
    rsa::rand_core::OsRng.fill_bytes(&mut b);
    b
}
