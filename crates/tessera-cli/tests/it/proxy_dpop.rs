//! DPoP (RFC 9449) on `tessera proxy --http … --auth-issuer URL`: the
//! proxy's OAuth resource-server front takes the same `--auth-dpop` and
//! `--auth-dpop-nonce` options as `tessera serve` and verifies with the
//! same verifier, so the whole attack matrix gets the same answers there;
//! server nonces; and the options it refuses.

use crate::common;
use crate::dpop_matrix;

use std::process::Command;

use dpop_matrix::{call, token};
use tessera_auth::testing::{TestAuthorizationServer, TestDpopKey};

const TESSERA: &str = env!("CARGO_BIN_EXE_tessera");

/// `tessera proxy --http 127.0.0.1:0` in front of `tessera serve --stdio`,
/// protected by `asrv`'s tokens, with `extra` options; returns the process,
/// its base URL (`http://127.0.0.1:PORT`) and port.
fn proxy(asrv: &TestAuthorizationServer, extra: &[&str]) -> (common::Running, String, u16) {
    let mut args: Vec<String> = vec![
        "--http".into(),
        "127.0.0.1:0".into(),
        "--auth-issuer".into(),
        asrv.issuer(),
        "--auth-jwks".into(),
        asrv.jwks_uri(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    args.extend([
        "--".into(),
        TESSERA.into(),
        "serve".into(),
        "--stdio".into(),
    ]);
    let (running, url) = common::start_proxy(&args);
    let base = url
        .strip_suffix("/mcp")
        .unwrap_or_else(|| panic!("an /mcp endpoint: {url}"))
        .to_owned();
    let port = base
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("a port in {base}"));
    (running, base, port)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proxy_attack_matrix_when_dpop_is_required() {
    let asrv = TestAuthorizationServer::start().await.unwrap();
    let (_proxy, base, port) = proxy(&asrv, &["--auth-dpop", "required"]);
    dpop_matrix::matrix(&asrv, &base, port, "required").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proxy_attack_matrix_when_dpop_is_allowed() {
    let asrv = TestAuthorizationServer::start().await.unwrap();
    let (_proxy, base, port) = proxy(&asrv, &[]);
    dpop_matrix::matrix(&asrv, &base, port, "allowed").await;
}

/// `--auth-dpop-nonce` on the proxy: a proof without the nonce gets 401
/// `use_dpop_nonce` and the nonce; with it, the call reaches the upstream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proxy_server_nonces() {
    let asrv = TestAuthorizationServer::start().await.unwrap();
    let (_proxy, base, _) = proxy(&asrv, &["--auth-dpop", "required", "--auth-dpop-nonce"]);
    let url = format!("{base}/mcp");
    let key = TestDpopKey::es256();
    let bound = token(&asrv, &url, Some(&key));
    let auth = || Some(format!("DPoP {bound}"));
    let a = call(&url, auth(), &[key.proof("POST", &url, &bound, None)]).await;
    assert_eq!(a.status, 401, "{a:?}");
    assert_eq!(
        a.challenge("DPoP").unwrap().error.as_deref(),
        Some("use_dpop_nonce")
    );
    let nonce = a.nonce.clone().expect("a DPoP-Nonce header");
    let a = call(
        &url,
        auth(),
        &[key.proof("POST", &url, &bound, Some(&nonce))],
    )
    .await;
    assert_eq!(a.status, 200, "{a:?}");
    assert!(a.body.contains("\"echo\""), "the upstream's tools: {a:?}");
}

#[test]
fn proxy_auth_needs_http() {
    let out = Command::new(TESSERA)
        .args(["proxy", "--stdio", "--auth-issuer", "http://127.0.0.1:1"])
        .args(["--", TESSERA, "serve", "--stdio"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--auth-issuer"), "{err}");
}
