//! Scope checks: 403 insufficient_scope with every scope the request needs
//! (step-up), per method, per tool, in batches, with hierarchies.

mod common;

use common::*;
use http::StatusCode;
use tessera_auth::testing::TestAuthorizationServer;

const CALL_WRITE: &str =
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write","arguments":{}}}"#;
const CALL_OTHER: &str =
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"other","arguments":{}}}"#;
const READ: &str =
    r#"{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"file:///x"}}"#;

fn rules(
    b: tessera_auth::server::BearerAuthLayerBuilder,
) -> tessera_auth::server::BearerAuthLayerBuilder {
    b.method_scopes("resources/read", ["files:read"])
        .tool_scopes(|name| (name == "write").then(|| vec!["files:write".to_owned()]))
        .scope_implies("files", ["files:read", "files:write"])
}

fn assert_insufficient(r: &(StatusCode, Option<String>, String), scope: &str) {
    assert_eq!(r.0, StatusCode::FORBIDDEN, "{r:?}");
    let c = challenge(r.1.clone());
    assert_eq!(c.error.as_deref(), Some("insufficient_scope"));
    assert_eq!(c.scope.as_deref(), Some(scope));
    assert_eq!(c.resource_metadata.as_deref(), Some(METADATA));
    assert!(r.2.contains("insufficient_scope"));
}

#[tokio::test]
async fn base_scope_missing_is_403() {
    let asrv = TestAuthorizationServer::start().await.unwrap();
    let p = Protected::new(jwt_verifier(&asrv), rules);
    let t = asrv.token(&asrv.claims(RESOURCE, &["files:read"]));
    let r = p.with_token(&t).await;
    assert_insufficient(&r, "mcp");
    assert_eq!(
        r.1.as_deref(),
        Some(format!(
            r#"Bearer error="insufficient_scope", error_description="this request needs the scopes: mcp", scope="mcp", resource_metadata="{METADATA}""#
        ).as_str())
    );
    assert_eq!(p.calls(), 0);
}

#[tokio::test]
async fn tool_and_method_scopes() {
    let asrv = TestAuthorizationServer::start().await.unwrap();
    let p = Protected::new(jwt_verifier(&asrv), rules);
    let bearer = |s: &[&str]| format!("Bearer {}", asrv.token(&asrv.claims(RESOURCE, s)));

    let only_mcp = bearer(&["mcp"]);
    assert_insufficient(
        &p.post(Some(&only_mcp), CALL_WRITE).await,
        "mcp files:write",
    );
    assert_insufficient(&p.post(Some(&only_mcp), READ).await, "mcp files:read");
    assert_eq!(p.calls(), 0);
    // A tool without scopes, and a ping, need only the base scope.
    assert_eq!(p.post(Some(&only_mcp), CALL_OTHER).await.0, StatusCode::OK);
    assert_eq!(p.post(Some(&only_mcp), PING).await.0, StatusCode::OK);
    assert_eq!(p.calls(), 2);

    let writer = bearer(&["mcp", "files:write"]);
    let r = p.post(Some(&writer), CALL_WRITE).await;
    assert_eq!(r.0, StatusCode::OK);
    // The body reaches the inner service intact after being read.
    assert_eq!(p.calls(), 3);

    // A batch needs the union, named in one challenge.
    let batch = format!("[{CALL_WRITE},{READ}]");
    assert_insufficient(
        &p.post(Some(&writer), &batch).await,
        "mcp files:write files:read",
    );
    assert_eq!(p.calls(), 3);

    // A broader scope implies the narrower ones.
    let broad = bearer(&["mcp", "files"]);
    assert_eq!(p.post(Some(&broad), &batch).await.0, StatusCode::OK);
    assert_eq!(p.calls(), 4);
}

#[tokio::test]
async fn metadata_documents_need_no_token() {
    let asrv = TestAuthorizationServer::start().await.unwrap();
    let p = Protected::new(jwt_verifier(&asrv), |b| {
        b.scopes_supported(["mcp", "files:read"])
            .resource_name("Test")
    });
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let req = http::Request::get(path)
            .body(http_body_util::Full::new(bytes::Bytes::new()))
            .unwrap();
        let (status, www, body) = p.send(req).await;
        assert_eq!(status, StatusCode::OK, "{path}");
        assert_eq!(www, None);
        let doc: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(doc["resource"], RESOURCE);
        assert_eq!(
            doc["authorization_servers"],
            serde_json::json!(["http://as.invalid"])
        );
        assert_eq!(
            doc["scopes_supported"],
            serde_json::json!(["mcp", "files:read"])
        );
        assert_eq!(
            doc["bearer_methods_supported"],
            serde_json::json!(["header"])
        );
        assert_eq!(doc["resource_name"], "Test");
    }
    // Other well-known paths are protected like the rest.
    let req = http::Request::get("/.well-known/oauth-protected-resource/other")
        .body(http_body_util::Full::new(bytes::Bytes::new()))
        .unwrap();
    assert_eq!(p.send(req).await.0, StatusCode::UNAUTHORIZED);
    assert_eq!(p.calls(), 0);
}
