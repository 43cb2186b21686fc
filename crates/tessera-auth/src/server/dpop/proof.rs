//! Checking one DPoP proof against its request (RFC 9449 §4.3, §7.1).

use std::collections::HashSet;
use std::str::FromStr as _;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http::HeaderMap;
use jsonwebtoken::{Algorithm, Validation};
use serde::Deserialize;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::{DPOP_HEADER, DpopSettings, htu, jwk};
use tessera_types::loose::{lenient, present_value, view_map};

/// The longest `jti` accepted, in bytes.
const MAX_JTI_BYTES: usize = 256;

/// A proof that passed every check that needs no store: what the layer
/// still checks against the token (`cnf.jkt`) and the replay cache.
#[derive(Debug, Clone)]
pub(crate) struct CheckedProof {
    /// The RFC 7638 thumbprint of the proof's key.
    pub jkt: String,
    /// The replay-cache key: a digest of `jkt`, `htu` and `jti`.
    pub replay_key: [u8; 32],
    /// Until when the proof could be accepted (Unix seconds).
    pub expires_at: u64,
    /// Whether the proof carried the current nonce (else the server sends it).
    pub current_nonce: bool,
}

/// Why a proof was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ProofError {
    /// `invalid_dpop_proof`.
    Invalid(String),
    /// `use_dpop_nonce`: the proof has no nonce, or not a live one.
    UseNonce(String),
}

fn invalid(s: impl Into<String>) -> ProofError {
    ProofError::Invalid(s.into())
}

/// Decodes one base64url JWT segment as a JSON object.
fn segment(seg: &str, what: &str) -> Result<Map<String, Value>, ProofError> {
    let bytes = URL_SAFE_NO_PAD
        .decode(seg)
        .map_err(|_| invalid(format!("the DPoP proof's {what} is not base64url")))?;
    match serde_json::from_slice(&bytes) {
        Ok(Value::Object(m)) => Ok(m),
        _ => Err(invalid(format!(
            "the DPoP proof's {what} is not a JSON object"
        ))),
    }
}

/// The header members of a DPoP proof the check reads (RFC 9449 §4.2),
/// leniently (one of another type is absent).
#[derive(Debug, Default, Deserialize)]
struct ProofHeader {
    #[serde(default, deserialize_with = "lenient")]
    typ: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    alg: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    jwk: Option<Map<String, Value>>,
}

/// The claims of a DPoP proof, as sent (each checked by the rules of
/// RFC 9449 §4.3, with its own error).
#[derive(Debug, Default, Deserialize)]
struct ProofClaims {
    #[serde(default, deserialize_with = "present_value")]
    jti: Option<Value>,
    #[serde(default, deserialize_with = "present_value")]
    htm: Option<Value>,
    #[serde(default, deserialize_with = "present_value")]
    htu: Option<Value>,
    #[serde(default, deserialize_with = "present_value")]
    iat: Option<Value>,
    #[serde(default, deserialize_with = "present_value")]
    ath: Option<Value>,
    #[serde(default, deserialize_with = "lenient")]
    nonce: Option<String>,
}

/// Claim `name` (`claim` its value), which must be a non-empty string.
fn text<'a>(claim: &'a Option<Value>, name: &str) -> Result<&'a str, ProofError> {
    match claim {
        Some(Value::String(s)) if !s.is_empty() => Ok(s),
        Some(_) => Err(invalid(format!(
            "the DPoP proof's {name} claim is not a non-empty string"
        ))),
        None => Err(invalid(format!("the DPoP proof has no {name} claim"))),
    }
}

/// The access token hash (`ath`): base64url(SHA-256(token)).
pub(crate) fn ath(token: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(token.as_bytes()))
}

/// Checks the `DPoP` header(s) of a request with `method` to `path`,
/// presenting `token`, at `now`: everything but the token binding and the
/// replay cache.
pub(crate) fn check(
    settings: &DpopSettings,
    headers: &HeaderMap,
    method: &str,
    path: &str,
    token: &str,
    now: u64,
) -> Result<CheckedProof, ProofError> {
    // 1. Exactly one DPoP header, 2. a single well-formed JWT.
    let mut values = headers.get_all(DPOP_HEADER).iter();
    let Some(value) = values.next() else {
        return Err(invalid(
            "the request has no DPoP header: a token presented with the DPoP scheme needs a proof",
        ));
    };
    if values.next().is_some() {
        return Err(invalid("the request has more than one DPoP header"));
    }
    let max = settings.max_proof_bytes;
    if value.len() > max {
        return Err(invalid(format!(
            "the DPoP proof is {} bytes, more than the {max} accepted",
            value.len()
        )));
    }
    let proof = value
        .to_str()
        .map_err(|_| invalid("the DPoP header is not ASCII"))?;
    let parts: Vec<&str> = proof.split('.').collect();
    // An empty signature (`alg: none`) is refused by the alg check below.
    if parts.len() != 3 || parts[0].is_empty() || parts[1].is_empty() {
        return Err(invalid("the DPoP header is not a signed JWT (three parts)"));
    }
    let header: ProofHeader = view_map(&segment(parts[0], "header")?).unwrap_or_default();
    // 4. typ.
    let typ = header.typ.as_deref();
    // RFC 7515 §4.1.9: the `application/` prefix may be left out.
    let typ = typ.map(|t| {
        t.get(..12)
            .filter(|p| p.eq_ignore_ascii_case("application/"))
            .map_or(t, |_| &t[12..])
    });
    if !typ.is_some_and(|t| t.eq_ignore_ascii_case("dpop+jwt")) {
        return Err(invalid("the DPoP proof's typ is not \"dpop+jwt\""));
    }
    // 5. An asymmetric algorithm from the allow-list.
    let alg_name = header.alg.as_deref().unwrap_or("");
    let alg = Algorithm::from_str(alg_name)
        .ok()
        .filter(|a| settings.algorithms.contains(a))
        .ok_or_else(|| {
            invalid(format!(
                "the DPoP proof's alg {alg_name:?} is not accepted (accepted: {})",
                settings.algs_text()
            ))
        })?;
    // 7. A public key only, of the algorithm's type.
    let Some(key) = &header.jwk else {
        return Err(invalid("the DPoP proof has no jwk header (its public key)"));
    };
    let key = jwk::proof_key(key, alg).map_err(invalid)?;
    // 6. The signature.
    let mut validation = Validation::new(alg);
    validation.algorithms = vec![alg];
    validation.required_spec_claims = HashSet::new();
    validation.validate_exp = false;
    validation.validate_nbf = false;
    validation.validate_aud = false;
    let claims = jsonwebtoken::decode::<Map<String, Value>>(proof, &key.decoding, &validation)
        .map_err(|e| invalid(format!("the DPoP proof's signature does not verify ({e})")))?
        .claims;
    let claims: ProofClaims = view_map(&claims).unwrap_or_default();
    // 3. The claims.
    let jti = text(&claims.jti, "jti")?;
    if jti.len() > MAX_JTI_BYTES {
        return Err(invalid(format!(
            "the DPoP proof's jti is longer than {MAX_JTI_BYTES} bytes"
        )));
    }
    // 8. htm.
    let htm = text(&claims.htm, "htm")?;
    if htm != method {
        return Err(invalid(format!(
            "the DPoP proof is for {htm:?} requests, this one is {method:?} (htm)"
        )));
    }
    // 9. htu.
    let htu_claim = text(&claims.htu, "htu")?;
    let want = settings
        .origin
        .as_ref()
        .and_then(|o| htu::expected(o, path))
        .ok_or_else(|| invalid("this server has no URL origin to check the proof's htu against"))?;
    let got = htu::parse(htu_claim)
        .ok_or_else(|| invalid("the DPoP proof's htu is not an absolute http(s) URL"))?;
    if !htu::matches(&got, &want) {
        return Err(invalid(format!(
            "the DPoP proof is for {htu_claim:?}, this request is to {want} (htu; no query or fragment)"
        )));
    }
    // 11. iat within the window.
    let iat = match &claims.iat {
        Some(v) => v
            .as_i64()
            .or_else(|| v.as_f64().filter(|f| f.is_finite()).map(|f| f as i64))
            .ok_or_else(|| invalid("the DPoP proof's iat is not a number"))?,
        None => return Err(invalid("the DPoP proof has no iat claim")),
    };
    let window = settings.iat_window.as_secs() as i64;
    let now_i = i64::try_from(now).unwrap_or(i64::MAX);
    if iat < now_i.saturating_sub(window) {
        return Err(invalid(format!(
            "the DPoP proof was made {}s ago, more than the {window}s accepted (iat)",
            now_i.saturating_sub(iat)
        )));
    }
    if iat > now_i.saturating_add(window) {
        return Err(invalid(format!(
            "the DPoP proof is dated {}s in the future, more than the {window}s accepted (iat)",
            iat.saturating_sub(now_i)
        )));
    }
    // 12. ath.
    match &claims.ath {
        None => {
            return Err(invalid(
                "the DPoP proof has no ath claim (the access token's hash)",
            ));
        }
        Some(Value::String(a)) if *a == ath(token) => {}
        Some(_) => {
            return Err(invalid(
                "the DPoP proof's ath does not match the access token",
            ));
        }
    }
    // 10. The server's nonce.
    let mut current_nonce = true;
    if let Some(nonces) = &settings.nonces {
        match claims.nonce.as_deref() {
            None => {
                return Err(ProofError::UseNonce(
                    "this server requires a nonce in DPoP proofs: use the DPoP-Nonce header's"
                        .into(),
                ));
            }
            Some(n) if !nonces.accepts(n, now) => {
                return Err(ProofError::UseNonce(
                    "the DPoP proof's nonce is stale or unknown: use the DPoP-Nonce header's"
                        .into(),
                ));
            }
            Some(n) => current_nonce = nonces.is_current(n, now),
        }
    }
    let mut h = Sha256::new();
    for part in [key.thumbprint.as_str(), want.as_str(), jti] {
        h.update((part.len() as u64).to_be_bytes());
        h.update(part.as_bytes());
    }
    let expires_at = u64::try_from(iat.saturating_add(window))
        .unwrap_or(0)
        .max(now.saturating_add(1));
    Ok(CheckedProof {
        jkt: key.thumbprint,
        replay_key: h.finalize().into(),
        expires_at,
        current_nonce,
    })
}
