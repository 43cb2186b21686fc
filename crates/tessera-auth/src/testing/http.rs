//! The HTTP side of the test authorization server.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use base64::Engine as _;
use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use serde_json::{Map, Value, json};

use super::{State, code_flow, lock, now};

pub(crate) type Answer = Response<Full<Bytes>>;

/// Accepts connections until the task is aborted (connections end with it).
pub(crate) async fn run(listener: tokio::net::TcpListener, state: Arc<State>) {
    let mut connections = tokio::task::JoinSet::new();
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let state = state.clone();
        connections.spawn(async move {
            let service = hyper::service::service_fn(move |req| {
                let state = state.clone();
                async move { Ok::<_, Infallible>(route(&state, req).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
        // Reap finished connections.
        while connections.try_join_next().is_some() {}
    }
}

async fn route(state: &State, req: Request<Incoming>) -> Answer {
    let path = req.uri().path().to_owned();
    match (req.method().clone(), path.as_str()) {
        (
            Method::GET,
            "/.well-known/oauth-authorization-server" | "/.well-known/openid-configuration",
        ) => json_answer(StatusCode::OK, &metadata(state)),
        (Method::GET, "/jwks") => {
            state.jwks_requests.fetch_add(1, Ordering::Relaxed);
            json_answer(StatusCode::OK, &jwks(state))
        }
        (Method::GET, "/authorize") => {
            code_flow::authorize(state, req.uri().query().unwrap_or_default())
        }
        (Method::POST, "/register") => {
            let bytes = req
                .into_body()
                .collect()
                .await
                .map(|c| c.to_bytes())
                .unwrap_or_default();
            code_flow::register(state, &bytes)
        }
        (Method::POST, "/token") => {
            let (headers, form) = read_form(req).await;
            match form.get("grant_type").map(String::as_str) {
                Some("authorization_code" | "refresh_token") => {
                    code_flow::token(state, &headers, &form)
                }
                Some(super::JWT_BEARER) => super::workload::token(state, &headers, &form).await,
                Some(super::exchange::TOKEN_EXCHANGE) => {
                    super::exchange::token(state, &headers, &form)
                }
                _ => token(state, &headers, &form),
            }
        }
        (Method::POST, "/introspect") => {
            let (headers, form) = read_form(req).await;
            introspect(state, &headers, &form)
        }
        _ => json_answer(StatusCode::NOT_FOUND, &json!({"error": "not_found"})),
    }
}

fn metadata(state: &State) -> Value {
    let iss = &state.issuer;
    let settings = lock(&state.settings).clone();
    let mut m = json!({
        "issuer": iss,
        "authorization_endpoint": format!("{iss}/authorize"),
        "token_endpoint": format!("{iss}/token"),
        "registration_endpoint": format!("{iss}/register"),
        "jwks_uri": format!("{iss}/jwks"),
        "introspection_endpoint": format!("{iss}/introspect"),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials", super::JWT_BEARER, super::exchange::TOKEN_EXCHANGE],
        "token_endpoint_auth_methods_supported": ["none", "client_secret_basic", "client_secret_post", "private_key_jwt"],
        "introspection_endpoint_auth_methods_supported": ["client_secret_basic"],
        "code_challenge_methods_supported": ["S256"],
        "authorization_response_iss_parameter_supported": settings.advertise_iss,
    });
    if let Some(s) = settings.scopes_supported {
        m["scopes_supported"] = json!(s);
    }
    if settings.dpop {
        m["dpop_signing_alg_values_supported"] = json!(["ES256", "EdDSA", "PS256", "RS256"]);
    }
    m
}

fn jwks(state: &State) -> Value {
    let k = lock(&state.keys);
    let keys: Vec<Value> = k
        .all
        .iter()
        .filter(|key| k.published.contains(&key.kid))
        .filter_map(|key| serde_json::to_value(&key.jwk).ok())
        .collect();
    json!({ "keys": keys })
}

async fn read_form(req: Request<Incoming>) -> (http::HeaderMap, HashMap<String, String>) {
    let (parts, body) = req.into_parts();
    let bytes = body
        .collect()
        .await
        .map(|c| c.to_bytes())
        .unwrap_or_default();
    let form = url::form_urlencoded::parse(&bytes).into_owned().collect();
    (parts.headers, form)
}

/// The client id of a token request: a confidential client authenticated
/// by secret or by a `private_key_jwt` assertion, or a registered public
/// client naming itself.
pub(crate) fn client_id_of(
    state: &State,
    headers: &http::HeaderMap,
    form: &HashMap<String, String>,
) -> Option<String> {
    if form.contains_key("client_assertion") {
        return asserted_client(state, form);
    }
    let has_secret =
        headers.contains_key(header::AUTHORIZATION) || form.contains_key("client_secret");
    if has_secret {
        return client(state, headers, form);
    }
    let id = form.get("client_id")?;
    lock(&state.public_clients).contains(id).then(|| id.clone())
}

/// The client id a `private_key_jwt` assertion (RFC 7523 §3) proves: signed
/// with the client's registered key, issued by and about the client, for
/// this server (its issuer or token endpoint), and unexpired.
fn asserted_client(state: &State, form: &HashMap<String, String>) -> Option<String> {
    if form.get("client_assertion_type").map(String::as_str)
        != Some("urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
    {
        return None;
    }
    let id = form.get("client_id")?;
    let pem = lock(&state.key_clients).get(id)?.clone();
    let key = jsonwebtoken::DecodingKey::from_ec_pem(pem.as_bytes()).ok()?;
    let mut v = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::ES256);
    v.set_audience(&[state.issuer.clone(), format!("{}/token", state.issuer)]);
    v.set_issuer(&[id]);
    v.sub = Some(id.clone());
    v.set_required_spec_claims(&["exp", "aud", "iss", "sub"]);
    jsonwebtoken::decode::<Map<String, Value>>(form.get("client_assertion")?, &key, &v)
        .ok()
        .map(|_| id.clone())
}

/// The authenticated client id, by `client_secret_basic` or `client_secret_post`.
pub(crate) fn client(
    state: &State,
    headers: &http::HeaderMap,
    form: &HashMap<String, String>,
) -> Option<String> {
    let (id, secret) = if let Some(basic) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Basic "))
    {
        let raw = base64::engine::general_purpose::STANDARD
            .decode(basic.trim())
            .ok()?;
        let text = String::from_utf8(raw).ok()?;
        let (i, s) = text.split_once(':')?;
        let dec = |x: &str| {
            url::form_urlencoded::parse(format!("x={x}").as_bytes())
                .next()
                .map(|(_, v)| v.into_owned())
        };
        (dec(i)?, dec(s)?)
    } else {
        (
            form.get("client_id")?.clone(),
            form.get("client_secret")?.clone(),
        )
    };
    (lock(&state.clients).get(&id) == Some(&secret)).then_some(id)
}

fn token(state: &State, headers: &http::HeaderMap, form: &HashMap<String, String>) -> Answer {
    let grant = form.get("grant_type").cloned().unwrap_or_default();
    *lock(&state.token_requests).entry(grant).or_insert(0) += 1;
    let Some(client_id) = client(state, headers, form) else {
        return json_answer(
            StatusCode::UNAUTHORIZED,
            &json!({"error": "invalid_client"}),
        );
    };
    if form.get("grant_type").map(String::as_str) != Some("client_credentials") {
        return json_answer(
            StatusCode::BAD_REQUEST,
            &json!({"error": "unsupported_grant_type"}),
        );
    }
    let Some(resource) = form.get("resource") else {
        return json_answer(
            StatusCode::BAD_REQUEST,
            &json!({"error": "invalid_target", "error_description": "resource is required"}),
        );
    };
    let jkt = match super::dpop_grant::token_request_jkt(state, headers) {
        Ok(j) => j,
        Err(answer) => return *answer,
    };
    let scope = form.get("scope").cloned().unwrap_or_default();
    let Some((access_token, _)) = sign_access_token(
        state,
        &client_id,
        &client_id,
        resource,
        &scope,
        3600,
        jkt.as_deref(),
    ) else {
        return server_error();
    };
    json_answer(
        StatusCode::OK,
        &json!({
            "access_token": access_token,
            "token_type": if jkt.is_some() { "DPoP" } else { "Bearer" },
            "expires_in": 3600,
            "scope": scope,
        }),
    )
}

/// Signs an access token (a JWT with the current key) for `client_id`
/// (none when empty) acting as `sub`, valid for `ttl` seconds, bound to the DPoP key `jkt`
/// if given; returns it with its serial number, or `None` when there is no
/// current key.
pub(crate) fn sign_access_token(
    state: &State,
    sub: &str,
    client_id: &str,
    resource: &str,
    scope: &str,
    ttl: u64,
    jkt: Option<&str>,
) -> Option<(String, u64)> {
    let t = now();
    let n = state.next.fetch_add(1, Ordering::Relaxed);
    let Value::Object(mut claims) = json!({
        "iss": state.issuer, "sub": sub, "client_id": client_id, "aud": resource,
        "scope": scope, "iat": t, "exp": t + ttl, "jti": format!("jti-{n}"),
    }) else {
        unreachable!("a JSON object literal")
    };
    if client_id.is_empty() {
        // A workload's token: issued to no client.
        claims.remove("client_id");
    }
    if let Some(jkt) = jkt {
        claims.insert("cnf".into(), json!({ "jkt": jkt }));
    }
    let key = {
        let k = lock(&state.keys);
        k.all.iter().find(|x| x.kid == k.current).cloned()
    };
    let key = key?;
    Some((key.sign(&claims), n))
}

/// The token endpoint's answer when it cannot sign.
pub(crate) fn server_error() -> Answer {
    json_answer(
        StatusCode::INTERNAL_SERVER_ERROR,
        &json!({"error": "server_error"}),
    )
}

fn introspect(state: &State, headers: &http::HeaderMap, form: &HashMap<String, String>) -> Answer {
    if client(state, headers, form).is_none() {
        return json_answer(
            StatusCode::UNAUTHORIZED,
            &json!({"error": "invalid_client"}),
        );
    }
    state.introspections.fetch_add(1, Ordering::Relaxed);
    let inactive = json!({"active": false});
    let Some(token) = form.get("token") else {
        return json_answer(StatusCode::OK, &inactive);
    };
    if lock(&state.revoked).contains(token) {
        return json_answer(StatusCode::OK, &inactive);
    }
    let claims = match lock(&state.opaque).get(token) {
        Some(c) => Some(c.clone()),
        None => verify_own(state, token),
    };
    let Some(mut claims) = claims else {
        return json_answer(StatusCode::OK, &inactive);
    };
    if claims
        .get("exp")
        .and_then(Value::as_u64)
        .is_some_and(|e| e <= now())
    {
        return json_answer(StatusCode::OK, &inactive);
    }
    claims.insert("active".into(), Value::Bool(true));
    claims.insert("token_type".into(), Value::String("Bearer".into()));
    json_answer(StatusCode::OK, &Value::Object(claims))
}

/// The claims of a JWT this server signed (signature checked, times not).
pub(crate) fn verify_own(state: &State, token: &str) -> Option<Map<String, Value>> {
    let header = jsonwebtoken::decode_header(token).ok()?;
    let key = {
        let k = lock(&state.keys);
        k.all
            .iter()
            .find(|x| Some(&x.kid) == header.kid.as_ref())
            .cloned()?
    };
    let decoding = jsonwebtoken::DecodingKey::from_jwk(&key.jwk).ok()?;
    let mut v = jsonwebtoken::Validation::new(key.alg);
    v.validate_exp = false;
    v.validate_aud = false;
    v.required_spec_claims.clear();
    jsonwebtoken::decode::<Map<String, Value>>(token, &decoding, &v)
        .ok()
        .map(|d| d.claims)
}

pub(crate) fn json_answer(status: StatusCode, v: &Value) -> Answer {
    let mut r = Response::new(Full::new(Bytes::from(v.to_string())));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    r
}
