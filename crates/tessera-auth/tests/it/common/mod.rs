//! Shared helpers: a counting inner service behind the layer, and requests.
#![allow(dead_code)]

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use tessera_auth::challenge::BearerChallenge;
use tessera_auth::server::{AuthBody, AuthInfo, BearerAuthLayer, JwtVerifier, TokenVerifier};
use tessera_auth::testing::TestAuthorizationServer;
use tower::{Layer, ServiceExt};

/// The resource (MCP endpoint) the tests protect.
pub const RESOURCE: &str = "http://127.0.0.1:9/mcp";
/// Its path-aware metadata URL.
pub const METADATA: &str = "http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp";

/// The inner service's answer: 200 and the subject the layer verified.
pub type Inner =
    tower::util::BoxCloneService<Request<AuthBody<Full<Bytes>>>, Response<Full<Bytes>>, Infallible>;

/// An inner service that counts its calls.
pub fn counting() -> (Inner, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let c = calls.clone();
    let svc = tower::service_fn(move |req: Request<AuthBody<Full<Bytes>>>| {
        c.fetch_add(1, Ordering::SeqCst);
        let who = req
            .extensions()
            .get::<AuthInfo>()
            .and_then(|a| a.subject.clone())
            .unwrap_or_default();
        let carried = req
            .extensions()
            .get::<tessera_runtime::Extensions>()
            .and_then(|e| e.get::<tessera_runtime::Principal>().cloned());
        let body = format!("{who}|{}", carried.map(|p| p.0).unwrap_or_default());
        async move { Ok::<_, Infallible>(Response::new(Full::new(Bytes::from(body)))) }
    });
    (tower::util::BoxCloneService::new(svc), calls)
}

/// A JWT verifier for the test server's tokens, refetching keys at will.
pub fn jwt_verifier(asrv: &TestAuthorizationServer) -> JwtVerifier {
    JwtVerifier::builder(asrv.issuer(), RESOURCE)
        .jwks_uri(asrv.jwks_uri())
        .min_refresh_interval(Duration::ZERO)
        .leeway(Duration::from_secs(5))
        .build()
}

/// The layer around a counting service, with `verifier` and base scope `mcp`.
pub struct Protected {
    pub svc: tessera_auth::server::BearerAuth<Inner>,
    pub calls: Arc<AtomicUsize>,
}

impl Protected {
    pub fn new(
        verifier: impl TokenVerifier,
        f: impl FnOnce(
            tessera_auth::server::BearerAuthLayerBuilder,
        ) -> tessera_auth::server::BearerAuthLayerBuilder,
    ) -> Protected {
        let (inner, calls) = counting();
        let layer = f(BearerAuthLayer::builder(RESOURCE, verifier)
            .authorization_server("http://as.invalid")
            .require_scopes(["mcp"]))
        .build();
        Protected {
            svc: layer.layer(inner),
            calls,
        }
    }

    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }

    /// Sends a request; returns status, WWW-Authenticate and body.
    pub async fn send(&self, req: Request<Full<Bytes>>) -> (StatusCode, Option<String>, String) {
        let resp = self.svc.clone().oneshot(req).await.unwrap();
        let status = resp.status();
        let www = resp
            .headers()
            .get(http::header::WWW_AUTHENTICATE)
            .map(|v| v.to_str().unwrap().to_owned());
        let body = resp.into_body().collect().await.unwrap().to_bytes();
        (status, www, String::from_utf8_lossy(&body).into_owned())
    }

    /// POSTs `body` to /mcp with `Authorization: <auth>` (if given).
    pub async fn post(
        &self,
        auth: Option<&str>,
        body: &str,
    ) -> (StatusCode, Option<String>, String) {
        let mut b = Request::post("/mcp").header("content-type", "application/json");
        if let Some(a) = auth {
            b = b.header("authorization", a);
        }
        self.send(b.body(Full::new(Bytes::from(body.to_owned()))).unwrap())
            .await
    }

    /// POSTs a ping with `Bearer <token>`.
    pub async fn with_token(&self, token: &str) -> (StatusCode, Option<String>, String) {
        self.post(Some(&format!("Bearer {token}")), PING).await
    }
}

pub const PING: &str = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;

/// Parses a WWW-Authenticate value (panics if absent or not Bearer).
pub fn challenge(www: Option<String>) -> BearerChallenge {
    BearerChallenge::parse(&www.expect("a WWW-Authenticate header")).expect("a Bearer challenge")
}
