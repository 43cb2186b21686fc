//! [`TokenExchange`] against the test authorization server's RFC 8693
//! grant, at a configured token endpoint: what is issued (audience, `act`,
//! subject), and each refusal as the error the caller gets.

use serde_json::json;
use tessera_auth::client::{ClientCredentials, OAuthError, TokenExchange};
use tessera_auth::testing::TestAuthorizationServer;

const RESOURCE: &str = "http://127.0.0.1:9/upstream/mcp";

fn exchanger(asrv: &TestAuthorizationServer, secret: &str) -> TokenExchange {
    TokenExchange::builder(RESOURCE, ClientCredentials::confidential("gateway", secret))
        .token_endpoint(asrv.token_endpoint())
        .audience("upstream")
        .scope("mcp")
        .build()
        .unwrap()
}

fn claims_of(token: &str) -> serde_json::Value {
    use base64::Engine as _;
    let payload = token.split('.').nth(1).unwrap();
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .unwrap();
    serde_json::from_slice(&raw).unwrap()
}

#[tokio::test]
async fn a_live_token_is_exchanged_for_one_issued_for_the_upstream() {
    let asrv = TestAuthorizationServer::start().await.unwrap();
    asrv.register_client("gateway", "gateway-secret");
    asrv.configure_exchange(|s| s.ttl = 120);
    let mut subject = asrv.claims("http://proxy.example/mcp", &["mcp"]);
    subject.insert("act".into(), json!({"sub": "front-door"}));
    let t = exchanger(&asrv, "gateway-secret")
        .exchange(&asrv.token(&subject))
        .await
        .expect("exchanged");
    assert_eq!(t.token_type, "Bearer");
    assert!(t.expires_at.is_some());
    let c = claims_of(&t.access_token);
    assert_eq!(c["aud"], json!([RESOURCE, "upstream"]));
    assert_eq!(c["sub"], "user-1");
    assert_eq!(c["scope"], "mcp");
    // The gateway acts, for an actor that acted before it.
    assert_eq!(
        c["act"],
        json!({"sub": "gateway", "act": {"sub": "front-door"}})
    );
    assert_eq!(asrv.exchanges().len(), 1);
}

#[tokio::test]
async fn refusals_are_token_errors() {
    let asrv = TestAuthorizationServer::start().await.unwrap();
    asrv.register_client("gateway", "gateway-secret");
    let live = asrv.token(&asrv.claims("http://proxy.example/mcp", &["mcp"]));
    let mut old = asrv.claims("http://proxy.example/mcp", &["mcp"]);
    old.insert("exp".into(), json!(1));
    let revoked = asrv.token(&asrv.claims("http://proxy.example/mcp", &["mcp"]));
    asrv.revoke(&revoked);
    let good = exchanger(&asrv, "gateway-secret");
    for (x, subject, code) in [
        (&good, asrv.token(&old), "invalid_grant"),
        (&good, revoked, "invalid_grant"),
        (&good, "not-a-token".to_owned(), "invalid_grant"),
        (&exchanger(&asrv, "wrong"), live.clone(), "invalid_client"),
    ] {
        match x.exchange(&subject).await {
            Err(OAuthError::Token { error, .. }) => assert_eq!(error, code),
            other => panic!("{code}: {other:?}"),
        }
    }
    asrv.configure_exchange(|s| s.refuse = Some("access_denied".into()));
    let e = good.exchange(&live).await.unwrap_err();
    assert!(e.to_string().contains("access_denied"), "{e}");
    assert!(asrv.exchanges().is_empty());
}
