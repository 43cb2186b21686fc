//! DPoP at the test authorization server's token endpoint (RFC 9449 §5):
//! a token request with a valid `DPoP` proof gets a token bound to the
//! proof's key (`cnf.jkt`, `token_type: DPoP`); with a nonce configured, a
//! proof without it gets `400 use_dpop_nonce` and a `DPoP-Nonce` header.

use std::collections::HashSet;
use std::str::FromStr as _;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http::StatusCode;
use jsonwebtoken::{Algorithm, Validation};
use serde_json::{Map, Value, json};

use super::http::{Answer, json_answer};
use super::{State, lock, now};
use crate::server::dpop::jwk::proof_key;

fn refuse(error: &str, why: &str, nonce: Option<&str>) -> Box<Answer> {
    let mut a = json_answer(
        StatusCode::BAD_REQUEST,
        &json!({"error": error, "error_description": why}),
    );
    if let Some(n) = nonce.and_then(|n| http::HeaderValue::from_str(n).ok()) {
        a.headers_mut().insert("dpop-nonce", n);
    }
    Box::new(a)
}

fn object(seg: &str) -> Option<Map<String, Value>> {
    let bytes = URL_SAFE_NO_PAD.decode(seg).ok()?;
    match serde_json::from_slice(&bytes).ok()? {
        Value::Object(m) => Some(m),
        _ => None,
    }
}

/// The thumbprint of the key a token request's DPoP proof is signed with
/// (`None` without a proof), or the refusal to answer with.
pub(crate) fn token_request_jkt(
    state: &State,
    headers: &http::HeaderMap,
) -> Result<Option<String>, Box<Answer>> {
    let settings = lock(&state.settings).clone();
    let mut values = headers.get_all("dpop").iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if !settings.dpop {
        // A server without DPoP ignores the header (and issues a Bearer token).
        return Ok(None);
    }
    if values.next().is_some() {
        return Err(refuse(
            "invalid_dpop_proof",
            "more than one DPoP header",
            None,
        ));
    }
    let bad = |why: &str| refuse("invalid_dpop_proof", why, None);
    let proof = value.to_str().map_err(|_| bad("not ASCII"))?;
    let parts: Vec<&str> = proof.split('.').collect();
    if parts.len() != 3 {
        return Err(bad("not a JWS"));
    }
    let header = object(parts[0]).ok_or_else(|| bad("bad header"))?;
    if header.get("typ").and_then(Value::as_str) != Some("dpop+jwt") {
        return Err(bad("typ"));
    }
    let alg = header
        .get("alg")
        .and_then(Value::as_str)
        .and_then(|a| Algorithm::from_str(a).ok())
        .filter(|a| crate::server::dpop::DPOP_ALGORITHMS.contains(a))
        .ok_or_else(|| bad("alg"))?;
    let Some(Value::Object(jwk)) = header.get("jwk") else {
        return Err(bad("no jwk"));
    };
    let key = proof_key(jwk, alg).map_err(|e| bad(&e))?;
    let mut v = Validation::new(alg);
    v.required_spec_claims = HashSet::new();
    v.validate_exp = false;
    v.validate_aud = false;
    let claims = jsonwebtoken::decode::<Map<String, Value>>(proof, &key.decoding, &v)
        .map_err(|_| bad("signature"))?
        .claims;
    let text = |k: &str| claims.get(k).and_then(Value::as_str).unwrap_or_default();
    if text("htm") != "POST" || text("htu") != format!("{}/token", state.issuer) {
        return Err(bad("htm or htu"));
    }
    let iat = claims.get("iat").and_then(Value::as_u64).unwrap_or(0);
    if iat.abs_diff(now()) > 60 {
        return Err(bad("iat"));
    }
    if let Some(n) = &settings.dpop_nonce {
        if text("nonce") != n {
            return Err(refuse(
                "use_dpop_nonce",
                "the authorization server requires a nonce",
                Some(n),
            ));
        }
    }
    Ok(Some(key.thumbprint))
}
