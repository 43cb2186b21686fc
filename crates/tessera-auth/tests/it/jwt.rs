//! The bearer layer with JWT verification against a real (test)
//! authorization server: every refusal with its exact status and challenge,
//! and the inner service never running for one.

use crate::common;

use std::time::Duration;

use base64::Engine as _;
use common::*;
use http::StatusCode;
use serde_json::{Value, json};
use tessera_auth::server::{Algorithm, JwtVerifier};
use tessera_auth::testing::{TestAuthorizationServer, now};

fn b64(v: &Value) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string())
}

/// Asserts a 401 invalid_token refusal naming the metadata and scope `mcp`.
fn assert_invalid_token(r: &(StatusCode, Option<String>, String)) {
    assert_eq!(r.0, StatusCode::UNAUTHORIZED, "{r:?}");
    let c = challenge(r.1.clone());
    assert_eq!(c.error.as_deref(), Some("invalid_token"), "{r:?}");
    assert_eq!(c.resource_metadata.as_deref(), Some(METADATA));
    assert_eq!(c.scope.as_deref(), Some("mcp"));
}

#[tokio::test]
async fn valid_tokens_pass_with_claims() {
    let asrv = TestAuthorizationServer::start().await.unwrap();
    let p = Protected::new(jwt_verifier(&asrv), |b| b);
    let rs = asrv.token(&asrv.claims(RESOURCE, &["mcp"]));
    let r = p.with_token(&rs).await;
    assert_eq!(r.0, StatusCode::OK, "{r:?}");
    assert_eq!(r.2, format!("user-1|{} sub:user-1", asrv.issuer()));
    let es = asrv.token_with("es-1", &asrv.claims(RESOURCE, &["mcp", "other"]));
    assert_eq!(p.with_token(&es).await.0, StatusCode::OK);
    // An audience that differs only in host case and a trailing slash is the same resource.
    let loose = asrv.token(&asrv.claims("HTTP://127.0.0.1:9/mcp/", &["mcp"]));
    assert_eq!(p.with_token(&loose).await.0, StatusCode::OK);
    assert_eq!(p.calls(), 3);
}

#[tokio::test]
async fn no_token_or_malformed_header() {
    let asrv = TestAuthorizationServer::start().await.unwrap();
    let p = Protected::new(jwt_verifier(&asrv), |b| b);

    let (status, www, _) = p.post(None, PING).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        www.as_deref(),
        Some(format!(r#"Bearer scope="mcp", resource_metadata="{METADATA}""#).as_str())
    );

    // Another scheme is no bearer token at all.
    let (status, www, _) = p.post(Some("Basic dXNlcjpwYXNz"), PING).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(challenge(www).error, None);

    for bad in ["Bearer", "Bearer a b", "Bearer a=b"] {
        let (status, www, _) = p.post(Some(bad), PING).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}");
        let c = challenge(www);
        assert_eq!(c.error.as_deref(), Some("invalid_request"));
        assert_eq!(c.resource_metadata.as_deref(), Some(METADATA));
    }

    // A token in the query string is refused even with a good header.
    let good = asrv.token(&asrv.claims(RESOURCE, &["mcp"]));
    let req = http::Request::post(format!("/mcp?access_token={good}"))
        .header("authorization", format!("Bearer {good}"))
        .body(http_body_util::Full::new(bytes::Bytes::from(PING)))
        .unwrap();
    let (status, www, _) = p.send(req).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(challenge(www).error.as_deref(), Some("invalid_request"));

    // Garbage that looks like a token.
    assert_invalid_token(&p.with_token("not.a.jwt").await);
    assert_eq!(p.calls(), 0);
}

#[tokio::test]
async fn time_issuer_audience_and_signature() {
    let asrv = TestAuthorizationServer::start().await.unwrap();
    let p = Protected::new(jwt_verifier(&asrv), |b| b);
    let t = now();

    let mut expired = asrv.claims(RESOURCE, &["mcp"]);
    expired.insert("exp".into(), json!(t - 300));
    let r = p.with_token(&asrv.token(&expired)).await;
    assert_invalid_token(&r);
    assert!(
        challenge(r.1)
            .error_description
            .unwrap()
            .contains("expired")
    );

    let mut early = asrv.claims(RESOURCE, &["mcp"]);
    early.insert("nbf".into(), json!(t + 300));
    let r = p.with_token(&asrv.token(&early)).await;
    assert_invalid_token(&r);
    assert!(
        challenge(r.1)
            .error_description
            .unwrap()
            .contains("not valid yet")
    );

    // Within the leeway, both are fine.
    let mut skewed = asrv.claims(RESOURCE, &["mcp"]);
    skewed.insert("nbf".into(), json!(t + 2));
    assert_eq!(p.with_token(&asrv.token(&skewed)).await.0, StatusCode::OK);

    let mut no_exp = asrv.claims(RESOURCE, &["mcp"]);
    no_exp.remove("exp");
    assert_invalid_token(&p.with_token(&asrv.token(&no_exp)).await);

    // A token for another resource is refused: no passthrough.
    let other = asrv.token(&asrv.claims("http://127.0.0.1:9/other", &["mcp"]));
    let r = p.with_token(&other).await;
    assert_invalid_token(&r);
    assert!(
        challenge(r.1)
            .error_description
            .unwrap()
            .contains("another resource")
    );
    let mut no_aud = asrv.claims(RESOURCE, &["mcp"]);
    no_aud.remove("aud");
    assert_invalid_token(&p.with_token(&asrv.token(&no_aud)).await);

    let mut wrong_iss = asrv.claims(RESOURCE, &["mcp"]);
    wrong_iss.insert("iss".into(), json!("http://evil.example"));
    let r = p.with_token(&asrv.token(&wrong_iss)).await;
    assert_invalid_token(&r);
    assert!(
        challenge(r.1)
            .error_description
            .unwrap()
            .contains("another authorization server")
    );

    // Bad signature: a valid token with its payload swapped.
    let good = asrv.token(&asrv.claims(RESOURCE, &["mcp"]));
    let mut parts: Vec<&str> = good.split('.').collect();
    let forged = b64(
        &json!({"iss": asrv.issuer(), "sub": "admin", "aud": RESOURCE,
        "scope": "mcp", "exp": t + 3600}),
    );
    parts[1] = &forged;
    let r = p.with_token(&parts.join(".")).await;
    assert_invalid_token(&r);
    assert!(
        challenge(r.1)
            .error_description
            .unwrap()
            .contains("bad signature")
    );

    assert_eq!(p.calls(), 1);
}

#[tokio::test]
async fn alg_none_and_hmac_confusion() {
    let asrv = TestAuthorizationServer::start().await.unwrap();
    let p = Protected::new(jwt_verifier(&asrv), |b| b);
    let claims = serde_json::Value::Object(asrv.claims(RESOURCE, &["mcp"]));

    let none = format!(
        "{}.{}.",
        b64(&json!({"alg": "none", "kid": "rs-1"})),
        b64(&claims)
    );
    assert_invalid_token(&p.with_token(&none).await);

    // HS256 keyed with the RSA public key (the classic confusion attack).
    let key = asrv.key("rs-1").unwrap();
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256);
    header.kid = Some("rs-1".into());
    let hs = jsonwebtoken::encode(
        &header,
        &claims,
        &jsonwebtoken::EncodingKey::from_secret(key.public_pem.as_bytes()),
    )
    .unwrap();
    let r = p.with_token(&hs).await;
    assert_invalid_token(&r);
    assert!(
        challenge(r.1)
            .error_description
            .unwrap()
            .contains("not accepted")
    );

    // Even a verifier told to accept HS256 drops it from the list.
    let lenient = JwtVerifier::builder(asrv.issuer(), RESOURCE)
        .jwks_uri(asrv.jwks_uri())
        .algorithms([Algorithm::HS256, Algorithm::RS256])
        .build();
    let p2 = Protected::new(lenient, |b| b);
    assert_invalid_token(&p2.with_token(&hs).await);

    // A key pinned to ES256 does not verify an RS256-labelled token.
    let mut h = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256);
    h.kid = Some("es-1".into());
    let rs_with_ec_kid =
        jsonwebtoken::encode(&h, &claims, &asrv.key("rs-1").unwrap().encoding).unwrap();
    assert_invalid_token(&p.with_token(&rs_with_ec_kid).await);

    assert_eq!(p.calls() + p2.calls(), 0);
}

#[tokio::test]
async fn unknown_key_then_rotation_is_picked_up() {
    let asrv = TestAuthorizationServer::start().await.unwrap();
    let p = Protected::new(jwt_verifier(&asrv), |b| b);
    assert_eq!(
        p.with_token(&asrv.token(&asrv.claims(RESOURCE, &["mcp"])))
            .await
            .0,
        StatusCode::OK
    );
    let fetched = asrv.jwks_requests();
    assert_eq!(fetched, 1);

    // A key the server has not published yet: unknown, after one refetch.
    asrv.add_key("rs-2", Algorithm::RS256, false);
    let token = asrv.token_with("rs-2", &asrv.claims(RESOURCE, &["mcp"]));
    let r = p.with_token(&token).await;
    assert_invalid_token(&r);
    assert!(
        challenge(r.1)
            .error_description
            .unwrap()
            .contains("unknown key")
    );
    assert_eq!(asrv.jwks_requests(), 2);

    // Rotation: once published, the same token is accepted (one more fetch).
    asrv.publish("rs-2");
    asrv.set_current("rs-2");
    assert_eq!(p.with_token(&token).await.0, StatusCode::OK);
    assert_eq!(asrv.jwks_requests(), 3);
    // Known keys need no fetch.
    assert_eq!(
        p.with_token(&asrv.token(&asrv.claims(RESOURCE, &["mcp"])))
            .await
            .0,
        StatusCode::OK
    );
    assert_eq!(asrv.jwks_requests(), 3);
    assert_eq!(p.calls(), 3);
}

#[tokio::test]
async fn unknown_kids_cannot_make_us_hammer_the_jwks() {
    let asrv = TestAuthorizationServer::start().await.unwrap();
    let v = JwtVerifier::builder(asrv.issuer(), RESOURCE)
        .jwks_uri(asrv.jwks_uri())
        .min_refresh_interval(Duration::from_secs(3600))
        .build();
    let p = Protected::new(v, |b| b);
    assert_eq!(
        p.with_token(&asrv.token(&asrv.claims(RESOURCE, &["mcp"])))
            .await
            .0,
        StatusCode::OK
    );
    let key = asrv.add_key("ghost", Algorithm::ES256, false);
    for _ in 0..20 {
        let t = key.sign(&asrv.claims(RESOURCE, &["mcp"]));
        assert_invalid_token(&p.with_token(&t).await);
    }
    assert_eq!(asrv.jwks_requests(), 1);
    assert_eq!(p.calls(), 1);
}

#[tokio::test]
async fn keys_discovered_from_the_issuer_metadata() {
    let asrv = TestAuthorizationServer::start().await.unwrap();
    let v = JwtVerifier::builder(asrv.issuer(), RESOURCE).build();
    let p = Protected::new(v, |b| b);
    assert_eq!(
        p.with_token(&asrv.token(&asrv.claims(RESOURCE, &["mcp"])))
            .await
            .0,
        StatusCode::OK
    );
    assert_eq!(asrv.jwks_requests(), 1);
    // An issuer whose metadata names another issuer is not trusted.
    let v = JwtVerifier::builder(format!("{}/", asrv.issuer()), RESOURCE).build();
    let p = Protected::new(v, |b| b);
    let (status, www, _) = p
        .with_token(&asrv.token(&asrv.claims(RESOURCE, &["mcp"])))
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(www, None);
    assert_eq!(p.calls(), 0);
}

#[tokio::test]
async fn unreachable_authorization_server_is_503() {
    let asrv = TestAuthorizationServer::start().await.unwrap();
    let token = asrv.token(&asrv.claims(RESOURCE, &["mcp"]));
    let jwks = asrv.jwks_uri();
    let issuer = asrv.issuer();
    drop(asrv);
    let v = JwtVerifier::builder(issuer, RESOURCE)
        .jwks_uri(jwks)
        .build();
    let p = Protected::new(v, |b| b);
    let (status, www, _) = p.with_token(&token).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(www, None);
    assert_eq!(p.calls(), 0);
}
