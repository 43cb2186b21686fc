//! DPoP on the bearer layer, in process, with a settable clock: every proof
//! algorithm, rotating nonces, the `iat` window, introspected tokens, the
//! replay cache's limit, and the `off` mode. (The whole attack matrix runs
//! against a real `tessera serve` in tessera-cli's tests/serve_dpop.rs.)

use crate::common;

use std::time::Duration;

use bytes::Bytes;
use common::*;
use http::{Request, StatusCode};
use http_body_util::{BodyExt, Full};
use serde_json::{Map, Value};
use tessera_auth::challenge::BearerChallenge;
use tessera_auth::server::dpop::{ManualClock, MemoryReplayCache};
use tessera_auth::server::{
    Algorithm, ClientAuth, DpopMode, DpopNonces, DpopSettings, IntrospectionVerifier, TokenVerifier,
};
use tessera_auth::testing::{TestAuthorizationServer, TestDpopKey, now};
use tower::ServiceExt;

const HTU: &str = "http://127.0.0.1:9/mcp";

/// What came back: status, every WWW-Authenticate, the DPoP-Nonce, the body.
#[derive(Debug)]
struct Answer {
    status: StatusCode,
    challenges: Vec<BearerChallenge>,
    nonce: Option<String>,
    body: String,
}

impl Answer {
    fn challenge(&self, scheme: &str) -> &BearerChallenge {
        self.challenges
            .iter()
            .find(|c| c.scheme.eq_ignore_ascii_case(scheme))
            .unwrap_or_else(|| panic!("no {scheme} challenge: {self:?}"))
    }

    fn dpop_error(&self) -> Option<&str> {
        self.challenge("DPoP").error.as_deref()
    }
}

fn protected(verifier: impl TokenVerifier, dpop: DpopSettings) -> Protected {
    Protected::new(verifier, move |b| b.dpop(dpop))
}

async fn send(p: &Protected, scheme: &str, token: &str, proof: Option<&str>) -> Answer {
    let mut b = Request::post("/mcp")
        .header("content-type", "application/json")
        .header("authorization", format!("{scheme} {token}"));
    if let Some(proof) = proof {
        b = b.header("dpop", proof);
    }
    let req = b.body(Full::new(Bytes::from(PING))).unwrap();
    let resp = p.svc.clone().oneshot(req).await.unwrap();
    let status = resp.status();
    let challenges = resp
        .headers()
        .get_all(http::header::WWW_AUTHENTICATE)
        .iter()
        .flat_map(|v| BearerChallenge::parse_all(v.to_str().unwrap()))
        .collect();
    let nonce = resp
        .headers()
        .get("dpop-nonce")
        .map(|v| v.to_str().unwrap().to_owned());
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    Answer {
        status,
        challenges,
        nonce,
        body: String::from_utf8_lossy(&body).into_owned(),
    }
}

/// A token bound to `key`.
fn bound_token(asrv: &TestAuthorizationServer, key: &TestDpopKey) -> String {
    let mut c = asrv.claims(RESOURCE, &["mcp"]);
    c.insert("cnf".into(), key.cnf());
    asrv.token(&c)
}

/// A proof made at `iat`, with `nonce`.
fn proof_at(key: &TestDpopKey, token: &str, iat: u64, nonce: Option<&str>) -> String {
    let mut c: Map<String, Value> = key.claims("POST", HTU, Some(token), nonce);
    c.insert("iat".into(), iat.into());
    key.sign(&key.header(), &c)
}

#[tokio::test]
async fn every_proof_algorithm_passes_and_binds_the_principal() {
    let asrv = TestAuthorizationServer::start().await.unwrap();
    let p = protected(jwt_verifier(&asrv), DpopSettings::new(DpopMode::Required));
    for key in [
        TestDpopKey::es256(),
        TestDpopKey::ed25519(),
        TestDpopKey::rsa(Algorithm::PS256, 1),
        TestDpopKey::rsa(Algorithm::RS256, 2),
    ] {
        let token = bound_token(&asrv, &key);
        let a = send(
            &p,
            "DPoP",
            &token,
            Some(&key.proof("POST", HTU, &token, None)),
        )
        .await;
        assert_eq!(a.status, StatusCode::OK, "{:?}: {a:?}", key.alg);
        assert!(
            a.body.ends_with(&format!(" jkt={}", key.thumbprint())),
            "the principal carries the key: {a:?}"
        );
    }
    assert_eq!(p.calls(), 4);

    // `typ` may carry the `application/` prefix (RFC 7515 §4.1.9).
    let key = TestDpopKey::es256();
    let token = bound_token(&asrv, &key);
    let mut header = key.header();
    header.insert("typ".into(), "application/DPoP+JWT".into());
    let proof = key.sign(&header, &key.claims("POST", HTU, Some(&token), None));
    let a = send(&p, "DPoP", &token, Some(&proof)).await;
    assert_eq!(a.status, StatusCode::OK, "{a:?}");
    header.insert("typ".into(), "application/jwt".into());
    let proof = key.sign(&header, &key.claims("POST", HTU, Some(&token), None));
    let a = send(&p, "DPoP", &token, Some(&proof)).await;
    assert_eq!(a.dpop_error(), Some("invalid_dpop_proof"), "{a:?}");
}

#[tokio::test]
async fn nonces_rotate_and_the_previous_one_still_works() {
    let asrv = TestAuthorizationServer::start().await.unwrap();
    let t0 = now();
    let clock = ManualClock::new(t0);
    let settings = DpopSettings::new(DpopMode::Required)
        .nonces(DpopNonces::with_secret([1; 32], 60))
        .clock(clock.clone());
    let p = protected(jwt_verifier(&asrv), settings);
    let key = TestDpopKey::es256();
    let token = bound_token(&asrv, &key);

    // No nonce: 401 use_dpop_nonce, with the nonce to use.
    let a = send(&p, "DPoP", &token, Some(&proof_at(&key, &token, t0, None))).await;
    assert_eq!(a.status, StatusCode::UNAUTHORIZED, "{a:?}");
    assert_eq!(a.dpop_error(), Some("use_dpop_nonce"));
    let first = a.nonce.clone().expect("a DPoP-Nonce header");

    // With it: accepted, no new nonce needed.
    let a = send(
        &p,
        "DPoP",
        &token,
        Some(&proof_at(&key, &token, t0, Some(&first))),
    )
    .await;
    assert_eq!(a.status, StatusCode::OK, "{a:?}");
    assert_eq!(a.nonce, None);

    // One rotation later the previous nonce still works, and the answer
    // hands out the current one.
    clock.advance(60);
    let t1 = t0 + 60;
    let a = send(
        &p,
        "DPoP",
        &token,
        Some(&proof_at(&key, &token, t1, Some(&first))),
    )
    .await;
    assert_eq!(a.status, StatusCode::OK, "{a:?}");
    let second = a.nonce.clone().expect("the rotated nonce");
    assert_ne!(second, first);

    // Two rotations later the first one is stale.
    clock.advance(60);
    let t2 = t1 + 60;
    let a = send(
        &p,
        "DPoP",
        &token,
        Some(&proof_at(&key, &token, t2, Some(&first))),
    )
    .await;
    assert_eq!(a.status, StatusCode::UNAUTHORIZED, "{a:?}");
    assert_eq!(a.dpop_error(), Some("use_dpop_nonce"));
    assert!(
        a.challenge("DPoP")
            .error_description
            .as_deref()
            .unwrap()
            .contains("stale")
    );
    let third = a.nonce.clone().expect("the current nonce");
    assert_ne!(third, second);
    let a = send(
        &p,
        "DPoP",
        &token,
        Some(&proof_at(&key, &token, t2, Some(&second))),
    )
    .await;
    assert_eq!(a.status, StatusCode::OK, "the previous nonce: {a:?}");
    let a = send(
        &p,
        "DPoP",
        &token,
        Some(&proof_at(&key, &token, t2, Some(&third))),
    )
    .await;
    assert_eq!(a.status, StatusCode::OK, "the current nonce: {a:?}");
    assert_eq!(p.calls(), 4);
}

#[tokio::test]
async fn the_iat_window_follows_the_clock_and_the_setting() {
    let asrv = TestAuthorizationServer::start().await.unwrap();
    let t0 = now();
    let clock = ManualClock::new(t0);
    let key = TestDpopKey::es256();
    let token = bound_token(&asrv, &key);
    let p = protected(
        jwt_verifier(&asrv),
        DpopSettings::new(DpopMode::Allowed).clock(clock.clone()),
    );
    let at = |iat: u64| proof_at(&key, &token, iat, None);
    assert_eq!(
        send(&p, "DPoP", &token, Some(&at(t0 - 60))).await.status,
        StatusCode::OK
    );
    let a = send(&p, "DPoP", &token, Some(&at(t0 - 61))).await;
    assert_eq!(
        (a.status, a.dpop_error()),
        (StatusCode::UNAUTHORIZED, Some("invalid_dpop_proof"))
    );
    assert_eq!(
        send(&p, "DPoP", &token, Some(&at(t0 + 60))).await.status,
        StatusCode::OK
    );
    let a = send(&p, "DPoP", &token, Some(&at(t0 + 61))).await;
    assert!(
        a.challenge("DPoP")
            .error_description
            .as_deref()
            .unwrap()
            .contains("future"),
        "{a:?}"
    );
    // In allowed mode both schemes are challenged, the error on DPoP's.
    assert_eq!(a.challenge("Bearer").error, None);

    // A wider window, and the clock moved on.
    let p = protected(
        jwt_verifier(&asrv),
        DpopSettings::new(DpopMode::Allowed)
            .clock(clock.clone())
            .iat_window(Duration::from_secs(300)),
    );
    clock.advance(200);
    assert_eq!(
        send(&p, "DPoP", &token, Some(&at(t0))).await.status,
        StatusCode::OK
    );
    clock.advance(101);
    assert_eq!(
        send(&p, "DPoP", &token, Some(&at(t0))).await.status,
        StatusCode::UNAUTHORIZED
    );
}

#[tokio::test]
async fn introspected_tokens_are_bound_to_their_key() {
    let asrv = TestAuthorizationServer::start().await.unwrap();
    let verifier = IntrospectionVerifier::builder(
        RESOURCE,
        ClientAuth::Basic {
            client_id: "mcp-server".into(),
            client_secret: "server-secret".into(),
        },
    )
    .endpoint(asrv.introspection_endpoint())
    .issuer(asrv.issuer())
    .build()
    .unwrap();
    let p = protected(verifier, DpopSettings::new(DpopMode::Allowed));
    let (key, other) = (TestDpopKey::es256(), TestDpopKey::es256());
    let mut c = asrv.claims(RESOURCE, &["mcp"]);
    c.insert("cnf".into(), key.cnf());
    let token = asrv.opaque_token(&c);

    let a = send(
        &p,
        "DPoP",
        &token,
        Some(&key.proof("POST", HTU, &token, None)),
    )
    .await;
    assert_eq!(a.status, StatusCode::OK, "{a:?}");
    let a = send(
        &p,
        "DPoP",
        &token,
        Some(&other.proof("POST", HTU, &token, None)),
    )
    .await;
    assert_eq!(
        (a.status, a.dpop_error()),
        (StatusCode::UNAUTHORIZED, Some("invalid_token"))
    );
    assert!(
        a.challenge("DPoP")
            .error_description
            .as_deref()
            .unwrap()
            .contains("cnf.jkt")
    );
    let a = send(&p, "Bearer", &token, None).await;
    assert_eq!(a.status, StatusCode::UNAUTHORIZED, "{a:?}");
    assert_eq!(
        a.challenge("Bearer").error.as_deref(),
        Some("invalid_token")
    );
    assert_eq!(p.calls(), 1);
}

#[tokio::test]
async fn a_full_replay_cache_refuses_rather_than_forgets() {
    let asrv = TestAuthorizationServer::start().await.unwrap();
    let p = protected(
        jwt_verifier(&asrv),
        DpopSettings::new(DpopMode::Required).replay_cache(MemoryReplayCache::new(1, 1 << 20)),
    );
    let key = TestDpopKey::es256();
    let token = bound_token(&asrv, &key);
    let a = send(
        &p,
        "DPoP",
        &token,
        Some(&key.proof("POST", HTU, &token, None)),
    )
    .await;
    assert_eq!(a.status, StatusCode::OK);
    let a = send(
        &p,
        "DPoP",
        &token,
        Some(&key.proof("POST", HTU, &token, None)),
    )
    .await;
    assert_eq!(a.status, StatusCode::SERVICE_UNAVAILABLE, "{a:?}");
    assert!(a.body.contains("temporarily_unavailable"), "{a:?}");
    assert!(
        a.body.contains("1 entries (the entry limit)"),
        "names the limit: {a:?}"
    );
}

#[tokio::test]
async fn off_mode_knows_no_dpop_and_still_refuses_bound_tokens_as_bearer() {
    let asrv = TestAuthorizationServer::start().await.unwrap();
    let p = protected(jwt_verifier(&asrv), DpopSettings::new(DpopMode::Off));
    let key = TestDpopKey::es256();
    let token = bound_token(&asrv, &key);
    let a = send(
        &p,
        "DPoP",
        &token,
        Some(&key.proof("POST", HTU, &token, None)),
    )
    .await;
    assert_eq!(a.status, StatusCode::UNAUTHORIZED, "{a:?}");
    assert_eq!(a.challenges.len(), 1);
    assert_eq!(
        a.challenge("Bearer").error,
        None,
        "no bearer token presented"
    );
    let a = send(&p, "Bearer", &token, None).await;
    assert_eq!(
        a.challenge("Bearer").error.as_deref(),
        Some("invalid_token")
    );
    let plain = asrv.token(&asrv.claims(RESOURCE, &["mcp"]));
    assert_eq!(
        send(&p, "Bearer", &plain, None).await.status,
        StatusCode::OK
    );
    assert_eq!(p.calls(), 1);
}

#[tokio::test]
async fn a_tool_scope_refusal_challenges_with_the_dpop_scheme() {
    use tessera_auth::server::BearerAuthLayer;
    use tessera_server::{Server, tool};
    use tower::Layer as _;
    let asrv = TestAuthorizationServer::start().await.unwrap();
    let server = Server::builder()
        .name_version("dpop-scopes", "1.0.0")
        .tool(
            tool("write")
                .scopes(["files:write"])
                .handler(|| async { "done".to_owned() }),
        )
        .build()
        .unwrap();
    let mcp = tessera_http::McpHttp::builder(server.clone())
        .dangerous()
        .allow_any_host()
        .build();
    let svc = BearerAuthLayer::builder(RESOURCE, jwt_verifier(&asrv))
        .authorization_server("http://as.invalid")
        .tool_scopes(move |name| server.tool_scopes(name))
        .dpop(DpopSettings::new(DpopMode::Required))
        .build()
        .layer(mcp);
    let key = TestDpopKey::es256();
    let mut c = asrv.claims(RESOURCE, &["mcp"]);
    c.insert("cnf".into(), key.cnf());
    let token = asrv.token(&c);
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "write", "arguments": {}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"}
    }}});
    let req = Request::post("/mcp")
        .header("host", "127.0.0.1:9")
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "write")
        .header("authorization", format!("DPoP {token}"))
        .header("dpop", key.proof("POST", HTU, &token, None))
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap();
    let resp = svc.oneshot(req).await.unwrap();
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    let challenges: Vec<BearerChallenge> = resp
        .headers()
        .get_all(http::header::WWW_AUTHENTICATE)
        .iter()
        .flat_map(|v| BearerChallenge::parse_all(v.to_str().unwrap()))
        .collect();
    assert_eq!(challenges.len(), 1, "{challenges:?}");
    assert_eq!(challenges[0].scheme, "DPoP");
    assert_eq!(challenges[0].error.as_deref(), Some("insufficient_scope"));
    assert_eq!(challenges[0].scope.as_deref(), Some("files:write"));
}

#[tokio::test]
async fn odd_keys_in_the_proof_are_refused_without_a_panic() {
    use base64::Engine as _;
    use serde_json::json;
    let b64 = |b: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b);
    let asrv = TestAuthorizationServer::start().await.unwrap();
    let p = protected(jwt_verifier(&asrv), DpopSettings::new(DpopMode::Required));
    let key = TestDpopKey::es256();
    let token = bound_token(&asrv, &key);
    let n = TestDpopKey::rsa(Algorithm::RS256, 0).jwk["n"].clone();
    let odd = [
        (
            "ES256",
            json!({"kty": "EC", "crv": "P-256", "x": b64(&[0; 32]), "y": b64(&[0; 32])}),
        ),
        (
            "ES256",
            json!({"kty": "EC", "crv": "P-256", "x": b64(&[0xff; 32]), "y": b64(&[1; 32])}),
        ),
        (
            "ES256",
            json!({"kty": "EC", "crv": "P-256", "x": 1, "y": null}),
        ),
        (
            "EdDSA",
            json!({"kty": "OKP", "crv": "Ed25519", "x": b64(&[0xff; 32])}),
        ),
        (
            "EdDSA",
            json!({"kty": "OKP", "crv": "Ed25519", "x": b64(&[1; 31])}),
        ),
        ("RS256", json!({"kty": "RSA", "n": n, "e": b64(&[1])})),
        ("RS256", json!({"kty": "RSA", "n": n, "e": b64(&[0])})),
        (
            "RS256",
            json!({"kty": "RSA", "n": n, "e": b64(&[0xff; 600])}),
        ),
        (
            "RS256",
            json!({"kty": "RSA", "n": b64(&[0; 512]), "e": "AQAB"}),
        ),
        ("PS256", json!({"kty": "RSA", "n": "***", "e": "AQAB"})),
        ("ES256", json!("not an object")),
    ];
    for (alg, jwk) in odd {
        let mut header = key.header();
        header.insert("alg".into(), alg.into());
        header.insert("jwk".into(), jwk.clone());
        let claims = key.claims("POST", HTU, Some(&token), None);
        let proof = key.sign(&header, &claims);
        let a = send(&p, "DPoP", &token, Some(&proof)).await;
        assert_eq!(a.status, StatusCode::UNAUTHORIZED, "{jwk}: {a:?}");
        assert_eq!(a.dpop_error(), Some("invalid_dpop_proof"), "{jwk}: {a:?}");
    }
    assert_eq!(p.calls(), 0);
}
