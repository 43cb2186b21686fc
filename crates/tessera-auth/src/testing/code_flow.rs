//! The user-facing half of the test authorization server: the
//! authorization endpoint (codes bound to a PKCE `S256` challenge), the
//! `authorization_code` and `refresh_token` grants, and RFC 7591 dynamic
//! client registration.

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use http::{StatusCode, header};
use serde_json::{Value, json};

use super::http::{Answer, client_id_of, json_answer, server_error, sign_access_token};
use super::{State, lock};

/// What the RFC 9207 `iss` parameter of authorization responses holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum IssMode {
    /// The issuer (the default).
    #[default]
    Correct,
    /// No `iss` at all.
    Omit,
    /// Another issuer.
    Wrong,
}

/// How the test authorization server behaves in the code flow; change it
/// with [`TestAuthorizationServer::configure`](super::TestAuthorizationServer::configure).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CodeFlowSettings {
    /// Lifetime of issued access tokens, in seconds.
    pub access_token_ttl: u64,
    /// Whether refresh tokens are issued with the code grant.
    pub issue_refresh_tokens: bool,
    /// What `iss` the redirect carries.
    pub iss: IssMode,
    /// Whether the metadata advertises `authorization_response_iss_parameter_supported`.
    pub advertise_iss: bool,
    /// `scopes_supported` in the metadata.
    pub scopes_supported: Option<Vec<String>>,
    /// Redirect with this `state` instead of the client's.
    pub state_override: Option<String>,
    /// Store a wrong PKCE challenge with each code (so the verifier never matches).
    pub corrupt_pkce: bool,
    /// DPoP (RFC 9449): advertise `dpop_signing_alg_values_supported`, and
    /// bind the token of a request with a valid proof to its key (`cnf.jkt`,
    /// `token_type: DPoP`; refresh tokens stay bound to the key).
    pub dpop: bool,
    /// With `dpop`, proofs must carry this nonce (`use_dpop_nonce` otherwise).
    pub dpop_nonce: Option<String>,
}

impl Default for CodeFlowSettings {
    fn default() -> Self {
        CodeFlowSettings {
            access_token_ttl: 3600,
            issue_refresh_tokens: true,
            iss: IssMode::Correct,
            advertise_iss: true,
            scopes_supported: None,
            state_override: None,
            corrupt_pkce: false,
            dpop: false,
            dpop_nonce: None,
        }
    }
}

/// An issued, unredeemed authorization code.
#[derive(Debug, Clone)]
pub(crate) struct CodeGrant {
    pub client_id: String,
    pub redirect_uri: String,
    pub challenge: String,
    pub scope: String,
    pub resource: String,
}

/// A refresh token's grant.
#[derive(Debug, Clone)]
pub(crate) struct RefreshGrant {
    pub client_id: String,
    pub scope: String,
    pub resource: String,
    /// The DPoP key the grant is bound to, if any.
    pub jkt: Option<String>,
}

fn redirect(to: &str) -> Answer {
    let mut r = json_answer(StatusCode::FOUND, &json!({}));
    if let Ok(v) = http::HeaderValue::from_str(to) {
        r.headers_mut().insert(header::LOCATION, v);
    }
    r
}

/// `GET /authorize`: records the request and redirects with a code.
pub(crate) fn authorize(state: &State, query: &str) -> Answer {
    let q: HashMap<String, String> = url::form_urlencoded::parse(query.as_bytes())
        .into_owned()
        .collect();
    lock(&state.authorization_requests).push(q.clone());
    let settings = lock(&state.settings).clone();
    let Some(redirect_uri) = q.get("redirect_uri") else {
        return json_answer(
            StatusCode::BAD_REQUEST,
            &json!({"error": "invalid_request"}),
        );
    };
    let Ok(mut target) = url::Url::parse(redirect_uri) else {
        return json_answer(
            StatusCode::BAD_REQUEST,
            &json!({"error": "invalid_request"}),
        );
    };
    let known = q.get("client_id").is_some_and(|id| {
        lock(&state.public_clients).contains(id) || lock(&state.clients).contains_key(id)
    });
    let error = if !known {
        Some("unauthorized_client")
    } else if q.get("response_type").map(String::as_str) != Some("code")
        || q.get("code_challenge_method").map(String::as_str) != Some("S256")
        || !q.contains_key("code_challenge")
    {
        Some("invalid_request")
    } else {
        None
    };
    let mut pairs: Vec<(String, String)> = Vec::new();
    match error {
        Some(e) => pairs.push(("error".into(), e.into())),
        None => {
            let n = state.next.fetch_add(1, Ordering::Relaxed);
            let code = format!("code-{n}");
            let mut challenge = q["code_challenge"].clone();
            if settings.corrupt_pkce {
                challenge.push('x');
            }
            lock(&state.codes).insert(
                code.clone(),
                CodeGrant {
                    client_id: q["client_id"].clone(),
                    redirect_uri: redirect_uri.clone(),
                    challenge,
                    scope: q.get("scope").cloned().unwrap_or_default(),
                    resource: q.get("resource").cloned().unwrap_or_default(),
                },
            );
            pairs.push(("code".into(), code));
        }
    }
    let st = settings.state_override.or_else(|| q.get("state").cloned());
    if let Some(s) = st {
        pairs.push(("state".into(), s));
    }
    match settings.iss {
        IssMode::Correct => pairs.push(("iss".into(), state.issuer.clone())),
        IssMode::Wrong => pairs.push(("iss".into(), "https://evil.example.com".into())),
        IssMode::Omit => {}
    }
    target.query_pairs_mut().extend_pairs(pairs);
    redirect(target.as_str())
}

fn pkce_s256(verifier: &str) -> String {
    use base64::Engine as _;
    use sha2::{Digest as _, Sha256};
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

fn invalid_grant(why: &str) -> Answer {
    json_answer(
        StatusCode::BAD_REQUEST,
        &json!({"error": "invalid_grant", "error_description": why}),
    )
}

/// `POST /token` for `authorization_code` and `refresh_token`.
pub(crate) fn token(
    state: &State,
    headers: &http::HeaderMap,
    form: &HashMap<String, String>,
) -> Answer {
    let grant = form.get("grant_type").cloned().unwrap_or_default();
    *lock(&state.token_requests)
        .entry(grant.clone())
        .or_insert(0) += 1;
    let Some(client_id) = client_id_of(state, headers, form) else {
        return json_answer(
            StatusCode::UNAUTHORIZED,
            &json!({"error": "invalid_client"}),
        );
    };
    let jkt = match super::dpop_grant::token_request_jkt(state, headers) {
        Ok(j) => j,
        Err(answer) => return *answer,
    };
    let (scope, resource) = if grant == "authorization_code" {
        let code = form.get("code").cloned().unwrap_or_default();
        let Some(g) = lock(&state.codes).remove(&code) else {
            return invalid_grant("unknown or used code");
        };
        if g.client_id != client_id || form.get("redirect_uri") != Some(&g.redirect_uri) {
            return invalid_grant("client or redirect_uri mismatch");
        }
        let verifier = form.get("code_verifier").cloned().unwrap_or_default();
        if pkce_s256(&verifier) != g.challenge {
            return invalid_grant("PKCE verification failed");
        }
        if form.get("resource") != Some(&g.resource) {
            return json_answer(StatusCode::BAD_REQUEST, &json!({"error": "invalid_target"}));
        }
        (g.scope, g.resource)
    } else {
        let rt = form.get("refresh_token").cloned().unwrap_or_default();
        let Some(g) = lock(&state.refresh).remove(&rt) else {
            return invalid_grant("unknown refresh token");
        };
        if g.client_id != client_id {
            return invalid_grant("refresh token of another client");
        }
        if g.jkt.is_some() && g.jkt != jkt {
            return invalid_grant("the refresh token is bound to another DPoP key");
        }
        (g.scope, g.resource)
    };
    let settings = lock(&state.settings).clone();
    let Some((access_token, n)) = sign_access_token(
        state,
        "user-1",
        &client_id,
        &resource,
        &scope,
        settings.access_token_ttl,
        jkt.as_deref(),
    ) else {
        return server_error();
    };
    let mut body = json!({
        "access_token": access_token,
        "token_type": if jkt.is_some() { "DPoP" } else { "Bearer" },
        "expires_in": settings.access_token_ttl,
        "scope": scope,
    });
    if settings.issue_refresh_tokens {
        let rt = format!("refresh-{n}");
        lock(&state.refresh).insert(
            rt.clone(),
            RefreshGrant {
                client_id,
                scope,
                resource,
                jkt,
            },
        );
        body["refresh_token"] = Value::String(rt);
    }
    json_answer(StatusCode::OK, &body)
}

/// `POST /register` (RFC 7591): public clients get no secret.
pub(crate) fn register(state: &State, body: &[u8]) -> Answer {
    let Ok(doc) = serde_json::from_slice::<Value>(body) else {
        return json_answer(
            StatusCode::BAD_REQUEST,
            &json!({"error": "invalid_client_metadata"}),
        );
    };
    if doc["redirect_uris"].as_array().is_none_or(|a| a.is_empty()) {
        return json_answer(
            StatusCode::BAD_REQUEST,
            &json!({"error": "invalid_redirect_uri"}),
        );
    }
    let n = state.next.fetch_add(1, Ordering::Relaxed);
    let id = format!("dyn-client-{n}");
    let method = doc["token_endpoint_auth_method"]
        .as_str()
        .unwrap_or("client_secret_basic")
        .to_owned();
    let mut answer = doc.clone();
    answer["client_id"] = Value::String(id.clone());
    if method == "none" {
        lock(&state.public_clients).insert(id);
    } else {
        let secret = format!("dyn-secret-{n}");
        lock(&state.clients).insert(id, secret.clone());
        answer["client_secret"] = Value::String(secret);
    }
    lock(&state.registrations).push(doc);
    json_answer(StatusCode::CREATED, &answer)
}
