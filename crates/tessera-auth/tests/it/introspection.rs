//! The bearer layer with RFC 7662 introspection against the test
//! authorization server.

use crate::common;

use common::*;
use http::StatusCode;
use serde_json::json;
use tessera_auth::server::{ClientAuth, IntrospectionVerifier};
use tessera_auth::testing::{TestAuthorizationServer, now};

fn verifier(asrv: &TestAuthorizationServer, auth: ClientAuth) -> IntrospectionVerifier {
    IntrospectionVerifier::builder(RESOURCE, auth)
        .endpoint(asrv.introspection_endpoint())
        .issuer(asrv.issuer())
        .build()
        .unwrap()
}

fn basic() -> ClientAuth {
    ClientAuth::Basic {
        client_id: "mcp-server".into(),
        client_secret: "server-secret".into(),
    }
}

fn assert_invalid(r: &(StatusCode, Option<String>, String), why: &str) {
    assert_eq!(r.0, StatusCode::UNAUTHORIZED, "{r:?}");
    let c = challenge(r.1.clone());
    assert_eq!(c.error.as_deref(), Some("invalid_token"));
    assert_eq!(c.resource_metadata.as_deref(), Some(METADATA));
    assert!(c.error_description.unwrap().contains(why), "{r:?}");
}

#[tokio::test]
async fn active_and_inactive_tokens() {
    let asrv = TestAuthorizationServer::start().await.unwrap();
    let p = Protected::new(verifier(&asrv, basic()), |b| b);

    let opaque = asrv.opaque_token(&asrv.claims(RESOURCE, &["mcp"]));
    let r = p.with_token(&opaque).await;
    assert_eq!(r.0, StatusCode::OK, "{r:?}");
    assert_eq!(r.2, format!("user-1|{} sub:user-1", asrv.issuer()));
    // A JWT the server signed is introspected too.
    let jwt = asrv.token(&asrv.claims(RESOURCE, &["mcp"]));
    assert_eq!(p.with_token(&jwt).await.0, StatusCode::OK);
    assert_eq!(p.calls(), 2);

    asrv.revoke(&opaque);
    assert_invalid(&p.with_token(&opaque).await, "not active");
    assert_invalid(&p.with_token("never-issued").await, "not active");

    let mut expired = asrv.claims(RESOURCE, &["mcp"]);
    expired.insert("exp".into(), json!(now() - 300));
    assert_invalid(
        &p.with_token(&asrv.opaque_token(&expired)).await,
        "not active",
    );

    let other = asrv.opaque_token(&asrv.claims("http://127.0.0.1:9/other", &["mcp"]));
    assert_invalid(&p.with_token(&other).await, "another resource");
    let mut no_aud = asrv.claims(RESOURCE, &["mcp"]);
    no_aud.remove("aud");
    assert_invalid(
        &p.with_token(&asrv.opaque_token(&no_aud)).await,
        "another resource",
    );

    let mut wrong_iss = asrv.claims(RESOURCE, &["mcp"]);
    wrong_iss.insert("iss".into(), json!("http://evil.example"));
    assert_invalid(
        &p.with_token(&asrv.opaque_token(&wrong_iss)).await,
        "another authorization server",
    );

    let mut early = asrv.claims(RESOURCE, &["mcp"]);
    early.insert("nbf".into(), json!(now() + 300));
    assert_invalid(
        &p.with_token(&asrv.opaque_token(&early)).await,
        "not valid yet",
    );

    // Scopes come from the introspection answer.
    let weak = asrv.opaque_token(&asrv.claims(RESOURCE, &["other"]));
    let (status, www, _) = p.with_token(&weak).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(challenge(www).error.as_deref(), Some("insufficient_scope"));
    assert_eq!(p.calls(), 2);
}

#[tokio::test]
async fn client_authentication_and_discovery() {
    let asrv = TestAuthorizationServer::start().await.unwrap();
    let token = asrv.opaque_token(&asrv.claims(RESOURCE, &["mcp"]));

    // client_secret_post, endpoint discovered from the issuer's metadata.
    let post = IntrospectionVerifier::builder(
        RESOURCE,
        ClientAuth::Post {
            client_id: "mcp-server".into(),
            client_secret: "server-secret".into(),
        },
    )
    .issuer(asrv.issuer())
    .build()
    .unwrap();
    let p = Protected::new(post, |b| b);
    assert_eq!(p.with_token(&token).await.0, StatusCode::OK);

    // Wrong credentials: the authorization server refuses, so we cannot tell (503).
    let wrong = verifier(
        &asrv,
        ClientAuth::Basic {
            client_id: "mcp-server".into(),
            client_secret: "nope".into(),
        },
    );
    let p2 = Protected::new(wrong, |b| b);
    let (status, www, _) = p2.with_token(&token).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(www, None);
    assert_eq!(p.calls() + p2.calls(), 1);
    assert_eq!(asrv.introspections(), 1);

    assert!(
        IntrospectionVerifier::builder(RESOURCE, basic())
            .build()
            .is_err()
    );
}
