//! Workload identity at the test authorization server (SEP-1933): the RFC
//! 7523 `jwt-bearer` grant with a workload token from a trusted issuer.
//!
//! The assertion's `iss` must be one of the issuers trusted with
//! [`trust_workload_issuer`](super::TestAuthorizationServer::trust_workload_issuer);
//! the issuer's keys are found by discovery (OpenID Connect / RFC 8414
//! metadata, then its `jwks_uri`) and the assertion is checked with the
//! resource server's own JWT verifier: signature, `exp`, `nbf`, `iss`, and
//! an `aud` naming this authorization server (RFC 7523 §3), and a `sub`.
//! The same assertion may be presented again until it expires, as
//! platforms expect (a Kubernetes token is rotated long before it ends). The
//! access token is issued to the workload (`sub` of the assertion, no
//! client id), bound to a DPoP key when the request has a proof.

use std::collections::HashMap;
use std::sync::Arc;

use http::StatusCode;
use serde_json::{Map, Value, json};

use super::http::{Answer, json_answer, server_error, sign_access_token};
use super::{State, lock};
use crate::server::{JwtVerifier, TokenVerifier as _};

/// The most accepted assertions remembered for `workload_grants` (the oldest go first).
const MAX_GRANTS_KEPT: usize = 1024;

/// What the server knows of workload issuers and the grants so far.
#[derive(Default)]
pub(crate) struct WorkloadTrust {
    /// Trusted issuers, with their verifier once discovered.
    pub issuers: HashMap<String, Option<Arc<JwtVerifier>>>,
    /// The claims of the accepted assertions, in order (the last [`MAX_GRANTS_KEPT`]).
    pub grants: Vec<Map<String, Value>>,
}

fn invalid_grant(why: &str) -> Answer {
    json_answer(
        StatusCode::BAD_REQUEST,
        &json!({"error": "invalid_grant", "error_description": why}),
    )
}

/// The unverified claims of a JWT (only to read `iss` before choosing keys).
fn peek_claims(jwt: &str) -> Option<Map<String, Value>> {
    use base64::Engine as _;
    let payload = jwt.split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .ok()?;
    match serde_json::from_slice(&bytes).ok()? {
        Value::Object(m) => Some(m),
        _ => None,
    }
}

/// The verifier for the trusted issuer `iss`, discovering its keys the
/// first time; `Err` is the refusal.
async fn verifier_for(state: &State, iss: &str) -> Result<Arc<JwtVerifier>, Answer> {
    let known = lock(&state.workload).issuers.get(iss).cloned();
    match known {
        None => Err(invalid_grant("the assertion's issuer is not trusted")),
        Some(Some(v)) => Ok(v),
        Some(None) => {
            let http = reqwest::Client::new();
            let meta = crate::server::discover(&http, iss)
                .await
                .map_err(|e| invalid_grant(&format!("discovery of the issuer failed: {e}")))?;
            let jwks = meta
                .jwks_uri
                .ok_or_else(|| invalid_grant("the issuer's metadata has no jwks_uri"))?;
            let v = Arc::new(
                JwtVerifier::builder(iss, state.issuer.clone())
                    .jwks_uri(jwks)
                    .build(),
            );
            lock(&state.workload)
                .issuers
                .insert(iss.to_owned(), Some(v.clone()));
            Ok(v)
        }
    }
}

/// `POST /token` with `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer`.
pub(crate) async fn token(
    state: &State,
    headers: &http::HeaderMap,
    form: &HashMap<String, String>,
) -> Answer {
    *lock(&state.token_requests)
        .entry(crate::testing::JWT_BEARER.to_owned())
        .or_insert(0) += 1;
    let Some(assertion) = form.get("assertion") else {
        return json_answer(
            StatusCode::BAD_REQUEST,
            &json!({"error": "invalid_request", "error_description": "no assertion"}),
        );
    };
    let Some(resource) = form.get("resource") else {
        return json_answer(
            StatusCode::BAD_REQUEST,
            &json!({"error": "invalid_target", "error_description": "resource is required"}),
        );
    };
    let Some(iss) = peek_claims(assertion)
        .and_then(|c| c.get("iss").and_then(Value::as_str).map(str::to_owned))
    else {
        return invalid_grant("the assertion is not a JWT with an iss");
    };
    let verifier = match verifier_for(state, &iss).await {
        Ok(v) => v,
        Err(a) => return a,
    };
    let info = match verifier.verify(assertion).await {
        Ok(i) => i,
        Err(e) => return invalid_grant(&format!("the assertion is not valid: {e}")),
    };
    let Some(sub) = info.subject.clone() else {
        return invalid_grant("the assertion has no sub");
    };
    {
        let mut w = lock(&state.workload);
        if w.grants.len() >= MAX_GRANTS_KEPT {
            w.grants.remove(0);
        }
        w.grants.push(info.claims.clone());
    }
    let jkt = match super::dpop_grant::token_request_jkt(state, headers) {
        Ok(j) => j,
        Err(answer) => return *answer,
    };
    let scope = form.get("scope").cloned().unwrap_or_default();
    let ttl = lock(&state.settings).access_token_ttl;
    let Some((access_token, _)) =
        sign_access_token(state, &sub, "", resource, &scope, ttl, jkt.as_deref())
    else {
        return server_error();
    };
    json_answer(
        StatusCode::OK,
        &json!({
            "access_token": access_token,
            "token_type": if jkt.is_some() { "DPoP" } else { "Bearer" },
            "expires_in": ttl,
            "scope": scope,
        }),
    )
}
