//! The RFC 8693 token exchange grant of the test authorization server: a
//! registered client trades an access token this server signed (the
//! `subject_token`, checked: signature, expiry, revocation) for a token
//! whose audience is the requested `resource` (and `audience`), with the
//! subject's `sub` and an `act` claim naming the client that acts for it.

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use http::StatusCode;
use serde_json::{Map, Value, json};

use super::http::{Answer, client_id_of, json_answer, server_error, verify_own};
use super::{State, lock, now};

/// The grant type.
pub(crate) const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
/// The token type of an access token.
const ACCESS_TOKEN: &str = "urn:ietf:params:oauth:token-type:access_token";

/// How many issued claim sets are kept for [`super::TestAuthorizationServer::exchanges`].
const MAX_KEPT: usize = 1024;

/// How the grant behaves ([`super::TestAuthorizationServer::configure_exchange`]).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ExchangeSettings {
    /// The lifetime of issued tokens, in seconds (default 3600).
    pub ttl: u64,
    /// When set, every exchange is refused with this OAuth error code
    /// (`access_denied`, say).
    pub refuse: Option<String>,
}

impl Default for ExchangeSettings {
    fn default() -> Self {
        ExchangeSettings {
            ttl: 3600,
            refuse: None,
        }
    }
}

fn refused(code: &str, why: &str) -> Answer {
    json_answer(
        StatusCode::BAD_REQUEST,
        &json!({"error": code, "error_description": why}),
    )
}

/// Answers a token request with the token exchange grant.
pub(crate) fn token(
    state: &State,
    headers: &http::HeaderMap,
    form: &HashMap<String, String>,
) -> Answer {
    *lock(&state.token_requests)
        .entry(TOKEN_EXCHANGE.to_owned())
        .or_insert(0) += 1;
    let Some(client_id) = client_id_of(state, headers, form) else {
        return json_answer(
            StatusCode::UNAUTHORIZED,
            &json!({"error": "invalid_client"}),
        );
    };
    let settings = lock(&state.exchange).clone();
    if let Some(code) = &settings.refuse {
        return refused(code, "this server refuses token exchange");
    }
    if form.get("subject_token_type").map(String::as_str) != Some(ACCESS_TOKEN) {
        return refused(
            "invalid_request",
            "subject_token_type must be an access token",
        );
    }
    if let Some(t) = form.get("requested_token_type") {
        if t != ACCESS_TOKEN {
            return refused("invalid_request", "only access tokens are issued");
        }
    }
    let Some(subject) = form.get("subject_token") else {
        return refused("invalid_request", "subject_token is required");
    };
    let live = !lock(&state.revoked).contains(subject);
    let claims = verify_own(state, subject).filter(|c| {
        live && c
            .get("exp")
            .and_then(Value::as_u64)
            .is_some_and(|e| e > now())
    });
    let Some(subject_claims) = claims else {
        return refused(
            "invalid_grant",
            "the subject_token is not a live token of this server",
        );
    };
    let mut aud: Vec<Value> = Vec::new();
    for k in ["resource", "audience"] {
        if let Some(v) = form.get(k) {
            aud.push(json!(v));
        }
    }
    if aud.is_empty() {
        return refused(
            "invalid_target",
            "resource or audience names the token's target",
        );
    }
    let scope = form
        .get("scope")
        .cloned()
        .or_else(|| {
            subject_claims
                .get("scope")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .unwrap_or_default();
    // RFC 8693 §4.1: the acting party, with any earlier actor nested.
    let mut act = Map::new();
    act.insert("sub".into(), json!(client_id));
    if let Some(prior) = subject_claims.get("act") {
        act.insert("act".into(), prior.clone());
    }
    let t = now();
    let n = state.next.fetch_add(1, Ordering::Relaxed);
    let Value::Object(claims) = json!({
        "iss": state.issuer,
        "sub": subject_claims.get("sub").cloned().unwrap_or(Value::Null),
        "client_id": client_id,
        "aud": if aud.len() == 1 { aud[0].clone() } else { Value::Array(aud) },
        "scope": scope,
        "act": act,
        "iat": t,
        "exp": t + settings.ttl,
        "jti": format!("jti-{n}"),
    }) else {
        unreachable!("a JSON object literal")
    };
    let key = {
        let k = lock(&state.keys);
        k.all.iter().find(|x| x.kid == k.current).cloned()
    };
    let Some(key) = key else {
        return server_error();
    };
    {
        let mut seen = lock(&state.exchanges);
        if seen.len() >= MAX_KEPT {
            seen.remove(0);
        }
        seen.push(claims.clone());
    }
    json_answer(
        StatusCode::OK,
        &json!({
            "access_token": key.sign(&claims),
            "issued_token_type": ACCESS_TOKEN,
            "token_type": "Bearer",
            "expires_in": settings.ttl,
            "scope": scope,
        }),
    )
}
