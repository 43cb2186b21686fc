//! Scope checks: 403 insufficient_scope with every scope the request needs
//! (step-up), per method, per tool, in batches, with hierarchies.

use crate::common;

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

/// `tessera_http::McpHttp` serving tools `write` (needs `files:write`) and
/// `other`, behind the bearer layer with [`rules`]: the per-method and
/// per-tool scopes are checked by the scope layer the bearer layer attaches,
/// on the requests the MCP endpoint decoded.
struct Endpoint {
    svc: tessera_auth::server::BearerAuth<tessera_http::McpHttp>,
    calls: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    session: Option<String>,
}

impl Endpoint {
    fn new(
        verifier: impl tessera_auth::server::TokenVerifier,
        mode: tessera_http::ResponseMode,
    ) -> Endpoint {
        use std::sync::atomic::Ordering;
        use tessera_server::{Server, resource, tool};
        use tower::Layer;
        let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = |c: std::sync::Arc<std::sync::atomic::AtomicUsize>| {
            move || {
                let c = c.clone();
                async move {
                    c.fetch_add(1, Ordering::SeqCst);
                    "done".to_owned()
                }
            }
        };
        let server = Server::builder()
            .name_version("scopes", "1.0.0")
            .tool(
                tool("write")
                    .scopes(["files:write"])
                    .handler(counted(calls.clone())),
            )
            .tool(tool("other").handler(counted(calls.clone())))
            .resource(resource("file:///x", "x").handler(|| async { "x".to_owned() }))
            .build()
            .unwrap();
        let mcp = tessera_http::McpHttp::builder(server.clone())
            .dangerous()
            .allow_any_host()
            .response_mode(mode)
            .build();
        let layer = rules(
            tessera_auth::server::BearerAuthLayer::builder(RESOURCE, verifier)
                .authorization_server("http://as.invalid")
                .require_scopes(["mcp"]),
        )
        .tool_scopes(move |name| server.tool_scopes(name))
        .build();
        Endpoint {
            svc: layer.layer(mcp),
            calls,
            session: None,
        }
    }

    fn calls(&self) -> usize {
        self.calls.load(std::sync::atomic::Ordering::SeqCst)
    }

    async fn post(
        &self,
        auth: &str,
        body: &str,
    ) -> (StatusCode, Option<String>, String, Option<String>) {
        use http_body_util::BodyExt;
        use tower::ServiceExt;
        let mut b = http::Request::post("/mcp")
            .header("host", "127.0.0.1:9")
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("authorization", auth);
        if let Some(s) = &self.session {
            b = b
                .header("mcp-session-id", s)
                .header("mcp-protocol-version", "2025-03-26");
        }
        let req = b
            .body(http_body_util::Full::new(bytes::Bytes::from(
                body.to_owned(),
            )))
            .unwrap();
        let resp = self.svc.clone().oneshot(req).await.unwrap();
        let status = resp.status();
        let header = |name| {
            resp.headers()
                .get(name)
                .map(|v: &http::HeaderValue| v.to_str().unwrap().to_owned())
        };
        let www = header(http::header::WWW_AUTHENTICATE);
        let session = header(http::HeaderName::from_static("mcp-session-id"));
        let body = resp.into_body().collect().await.unwrap().to_bytes();
        (
            status,
            www,
            String::from_utf8_lossy(&body).into_owned(),
            session,
        )
    }

    /// Opens a 2025-03-26 session (the version with batches).
    async fn open(&mut self, auth: &str) {
        let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
        let r = self.post(auth, init).await;
        assert_eq!(r.0, StatusCode::OK, "{r:?}");
        self.session = r.3;
        let done = self
            .post(
                auth,
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            )
            .await;
        assert_eq!(done.0, StatusCode::ACCEPTED, "{done:?}");
    }
}

fn assert_insufficient4(r: &(StatusCode, Option<String>, String, Option<String>), scope: &str) {
    assert_insufficient(&(r.0, r.1.clone(), r.2.clone()), scope);
    assert_eq!(r.3, None, "a refusal carries no session header");
}

#[tokio::test]
async fn tool_and_method_scopes() {
    for mode in [
        tessera_http::ResponseMode::Auto,
        tessera_http::ResponseMode::Json,
        tessera_http::ResponseMode::Sse,
    ] {
        tool_and_method_scopes_in(mode).await;
    }
}

async fn tool_and_method_scopes_in(mode: tessera_http::ResponseMode) {
    let asrv = TestAuthorizationServer::start().await.unwrap();
    let mut p = Endpoint::new(jwt_verifier(&asrv), mode);
    let bearer = |s: &[&str]| format!("Bearer {}", asrv.token(&asrv.claims(RESOURCE, s)));

    let only_mcp = bearer(&["mcp"]);
    p.open(&only_mcp).await;
    assert_insufficient4(&p.post(&only_mcp, CALL_WRITE).await, "mcp files:write");
    assert_insufficient4(&p.post(&only_mcp, READ).await, "mcp files:read");
    assert_eq!(p.calls(), 0);
    // A tool without scopes, and a ping, need only the base scope.
    assert_eq!(p.post(&only_mcp, CALL_OTHER).await.0, StatusCode::OK);
    assert_eq!(p.post(&only_mcp, PING).await.0, StatusCode::OK);
    assert_eq!(p.calls(), 1);

    let writer = bearer(&["mcp", "files:write"]);
    let r = p.post(&writer, CALL_WRITE).await;
    assert_eq!(r.0, StatusCode::OK, "{mode:?} {r:?}");
    assert!(r.2.contains("done"), "{r:?}");
    assert_eq!(p.calls(), 2);

    // A batch needs the union, named in one challenge; nothing after the
    // refused request runs.
    let batch = format!("[{READ},{}]", CALL_WRITE.replace(r#""id":1"#, r#""id":7"#));
    assert_insufficient4(&p.post(&writer, &batch).await, "mcp files:read files:write");
    assert_eq!(p.calls(), 2);

    // A broader scope implies the narrower ones.
    let broad = bearer(&["mcp", "files"]);
    let batch = format!("[{CALL_WRITE},{}]", READ.replace(r#""id":2"#, r#""id":8"#));
    let r = p.post(&broad, &batch).await;
    assert_eq!(r.0, StatusCode::OK, "{r:?}");
    assert_eq!(p.calls(), 3);
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
