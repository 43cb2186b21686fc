//! The public key of a DPoP proof (its `jwk` header) and its RFC 7638
//! thumbprint.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, DecodingKey};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// The members that only a private (or symmetric) key has.
const PRIVATE_MEMBERS: &[&str] = &["d", "p", "q", "dp", "dq", "qi", "oth", "k"];

/// The smallest RSA modulus accepted, in bytes (2048 bits).
const MIN_RSA_BYTES: usize = 256;

/// A proof key: what verifies the signature, and its thumbprint.
pub(crate) struct ProofKey {
    pub decoding: DecodingKey,
    pub thumbprint: String,
}

fn member<'a>(jwk: &'a Map<String, Value>, name: &str) -> Result<&'a str, String> {
    match jwk.get(name) {
        Some(Value::String(s)) if !s.is_empty() => Ok(s),
        _ => Err(format!("the jwk has no {name:?} member")),
    }
}

/// The RFC 7638 SHA-256 thumbprint of the required members (given in
/// lexicographic order), base64url.
pub(crate) fn thumbprint(members: &[(&str, &str)]) -> String {
    let mut canonical = String::from("{");
    for (i, (k, v)) in members.iter().enumerate() {
        if i > 0 {
            canonical.push(',');
        }
        // Both are strings; serde_json escapes them as JSON requires.
        canonical.push_str(&Value::from(*k).to_string());
        canonical.push(':');
        canonical.push_str(&Value::from(*v).to_string());
    }
    canonical.push('}');
    URL_SAFE_NO_PAD.encode(Sha256::digest(canonical.as_bytes()))
}

/// Reads the public key `jwk` for a proof signed with `alg` (one of the
/// DPoP algorithms): the key type must fit the algorithm, and a key with
/// private members is refused.
pub(crate) fn proof_key(jwk: &Map<String, Value>, alg: Algorithm) -> Result<ProofKey, String> {
    if let Some(m) = PRIVATE_MEMBERS.iter().find(|m| jwk.contains_key(**m)) {
        return Err(format!(
            "the jwk holds a private key member ({m:?}); a DPoP proof carries the public key only"
        ));
    }
    let kty = member(jwk, "kty")?;
    let bad = |e: jsonwebtoken::errors::Error| format!("the jwk is not a usable key: {e}");
    match alg {
        Algorithm::ES256 => {
            let crv = member(jwk, "crv")?;
            if kty != "EC" || crv != "P-256" {
                return Err(format!(
                    "ES256 needs an EC P-256 key, the jwk is {kty} {crv}"
                ));
            }
            let (x, y) = (member(jwk, "x")?, member(jwk, "y")?);
            for c in [x, y] {
                let len = URL_SAFE_NO_PAD.decode(c).map(|b| b.len()).unwrap_or(0);
                if len != 32 {
                    return Err("the jwk's P-256 coordinates are not 32 bytes".into());
                }
            }
            Ok(ProofKey {
                decoding: DecodingKey::from_ec_components(x, y).map_err(bad)?,
                thumbprint: thumbprint(&[("crv", crv), ("kty", kty), ("x", x), ("y", y)]),
            })
        }
        Algorithm::EdDSA => {
            let crv = member(jwk, "crv")?;
            if kty != "OKP" || crv != "Ed25519" {
                return Err(format!(
                    "EdDSA needs an OKP Ed25519 key, the jwk is {kty} {crv}"
                ));
            }
            let x = member(jwk, "x")?;
            let len = URL_SAFE_NO_PAD.decode(x).map(|b| b.len()).unwrap_or(0);
            if len != 32 {
                return Err("the jwk's Ed25519 key is not 32 bytes".into());
            }
            Ok(ProofKey {
                decoding: DecodingKey::from_ed_components(x).map_err(bad)?,
                thumbprint: thumbprint(&[("crv", crv), ("kty", kty), ("x", x)]),
            })
        }
        Algorithm::RS256 | Algorithm::PS256 => {
            if kty != "RSA" {
                return Err(format!("{alg:?} needs an RSA key, the jwk is {kty}"));
            }
            let (n, e) = (member(jwk, "n")?, member(jwk, "e")?);
            let bytes = URL_SAFE_NO_PAD
                .decode(n)
                .map_err(|_| "the jwk's RSA modulus is not base64url".to_owned())?;
            let significant = bytes.iter().skip_while(|b| **b == 0).count();
            if significant < MIN_RSA_BYTES {
                return Err("the jwk's RSA key is shorter than 2048 bits".into());
            }
            Ok(ProofKey {
                decoding: DecodingKey::from_rsa_components(n, e).map_err(bad)?,
                thumbprint: thumbprint(&[("e", e), ("kty", kty), ("n", n)]),
            })
        }
        other => Err(format!("{other:?} is not a DPoP algorithm here")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    #[test]
    fn rfc7638_example_thumbprint() {
        // The example key of RFC 7638 §3.1 and its thumbprint.
        let n = "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw";
        assert_eq!(
            thumbprint(&[("e", "AQAB"), ("kty", "RSA"), ("n", n)]),
            "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"
        );
        let key = proof_key(
            &obj(json!({"kty": "RSA", "n": n, "e": "AQAB", "alg": "RS256"})),
            Algorithm::RS256,
        )
        .unwrap();
        assert_eq!(
            key.thumbprint,
            "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"
        );
    }

    #[test]
    fn refuses_private_and_mismatched_keys() {
        let x = URL_SAFE_NO_PAD.encode([1u8; 32]);
        let private = obj(json!({"kty": "OKP", "crv": "Ed25519", "x": x, "d": x}));
        assert!(proof_key(&private, Algorithm::EdDSA).is_err_and(|e| e.contains("private")));
        let ec_for_ed = obj(json!({"kty": "EC", "crv": "Ed25519", "x": x, "y": x}));
        assert!(proof_key(&ec_for_ed, Algorithm::ES256).is_err());
        assert!(proof_key(&ec_for_ed, Algorithm::EdDSA).is_err());
        let small_rsa =
            obj(json!({"kty": "RSA", "n": URL_SAFE_NO_PAD.encode([9u8; 128]), "e": "AQAB"}));
        assert!(proof_key(&small_rsa, Algorithm::RS256).is_err_and(|e| e.contains("2048")));
        assert!(
            proof_key(
                &obj(json!({"kty": "oct", "k": "c2VjcmV0"})),
                Algorithm::ES256
            )
            .is_err()
        );
    }
}
