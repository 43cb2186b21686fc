//! The DPoP attack matrix (RFC 9449) against the built `tessera serve
//! --http … --auth-dpop required|allowed`, protected by a real (in-process)
//! test authorization server: each attack with its exact status, `error`
//! and challenges; server nonces; the metadata; and a proof replayed on
//! another instance sharing a Redis.

use crate::common;
use crate::dpop_matrix;

use std::process::Command;
use std::time::{Duration, Instant};

use dpop_matrix::{call, token};
use serde_json::Value;
use tessera_auth::server::Algorithm;
use tessera_auth::testing::{TestAuthorizationServer, TestDpopKey};

const DEADLINE: Duration = Duration::from_secs(30);

/// A `tessera serve` child process; killed when dropped.
struct Node {
    _child: common::Running,
    port: u16,
}

impl Node {
    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }
}

/// Starts `tessera serve --http 127.0.0.1:0` protected by `asrv`'s tokens
/// (keys from its JWK Set), with `extra` options.
fn serve(asrv: &TestAuthorizationServer, extra: &[&str]) -> Node {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tessera"));
    cmd.args(["serve", "--http", "127.0.0.1:0", "--auth-issuer"])
        .arg(asrv.issuer())
        .arg("--auth-jwks")
        .arg(asrv.jwks_uri())
        .args(extra);
    let (child, port) = common::spawn_serving(&mut cmd, DEADLINE);
    Node {
        _child: common::Running(child),
        port,
    }
}

/// What came back: status, every challenge, the DPoP-Nonce.
/// Runs the matrix against `tessera serve` in `mode`.
async fn matrix(mode: &str) {
    let asrv = TestAuthorizationServer::start().await.unwrap();
    let node = serve(&asrv, &["--auth-dpop", mode]);
    dpop_matrix::matrix(&asrv, &node.url(""), node.port, mode).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attack_matrix_when_dpop_is_required() {
    matrix("required").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attack_matrix_when_dpop_is_allowed() {
    matrix("allowed").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_nonces_missing_stale_and_rotated() {
    let asrv = TestAuthorizationServer::start().await.unwrap();
    let node = serve(
        &asrv,
        &[
            "--auth-dpop",
            "required",
            "--auth-dpop-nonce",
            "--auth-dpop-nonce-period",
            "2",
        ],
    );
    let url = node.url("/mcp");
    let key = TestDpopKey::ed25519();
    let bound = token(&asrv, &url, Some(&key));
    let auth = || Some(format!("DPoP {bound}"));
    let with_nonce = |n: Option<&str>| vec![key.proof("POST", &url, &bound, n)];

    // Missing: 401 use_dpop_nonce and the nonce to use.
    let a = call(&url, auth(), &with_nonce(None)).await;
    assert_eq!(a.status, 401, "{a:?}");
    assert_eq!(
        a.challenge("DPoP").unwrap().error.as_deref(),
        Some("use_dpop_nonce")
    );
    let first = a.nonce.clone().expect("a DPoP-Nonce header");
    // Made up: the same.
    let a = call(&url, auth(), &with_nonce(Some("made-up"))).await;
    assert_eq!(a.status, 401, "{a:?}");
    assert_eq!(
        a.challenge("DPoP").unwrap().error.as_deref(),
        Some("use_dpop_nonce")
    );
    assert!(a.nonce.is_some());
    // Fresh nonce: accepted (the server's key is the Ed25519 test key: EdDSA).
    let a = call(&url, auth(), &with_nonce(Some(&first))).await;
    assert_eq!(a.status, 200, "{a:?}");

    // Rotation (every 2 s): ask until the nonce changes (bounded); the
    // previous one is still accepted, and the answer hands out the new one.
    let next_nonce = |after: String| {
        let url = url.clone();
        async move {
            let until = Instant::now() + DEADLINE;
            loop {
                let a = call(&url, None, &[]).await;
                let n = a.nonce.expect("every refusal carries the nonce");
                if n != after {
                    return n;
                }
                assert!(Instant::now() < until, "the nonce never rotated");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    };
    let second = next_nonce(first.clone()).await;
    let a = call(&url, auth(), &with_nonce(Some(&first))).await;
    assert_eq!(a.status, 200, "the previous nonce: {a:?}");
    assert_eq!(a.nonce.as_deref(), Some(second.as_str()), "{a:?}");
    // Once it rotates again, the first one is stale.
    let _third = next_nonce(second.clone()).await;
    let a = call(&url, auth(), &with_nonce(Some(&first))).await;
    assert_eq!(a.status, 401, "{a:?}");
    let c = a.challenge("DPoP").unwrap();
    assert_eq!(c.error.as_deref(), Some("use_dpop_nonce"));
    assert!(c.error_description.as_deref().unwrap().contains("stale"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_algorithms_and_a_public_origin() {
    let asrv = TestAuthorizationServer::start().await.unwrap();
    // Clients reach the server as https://mcp.example.com (a proxy in front).
    let node = serve(
        &asrv,
        &[
            "--auth-dpop",
            "required",
            "--auth-audience",
            "https://mcp.example.com/mcp",
            "--auth-dpop-origin",
            "https://MCP.example.com:443",
        ],
    );
    let url = node.url("/mcp");
    for key in [
        TestDpopKey::rsa(Algorithm::PS256, 0),
        TestDpopKey::rsa(Algorithm::RS256, 1),
    ] {
        let bound = token(&asrv, "https://mcp.example.com/mcp", Some(&key));
        let proof = key.proof("POST", "https://mcp.example.com/mcp", &bound, None);
        let a = call(&url, Some(format!("DPoP {bound}")), &[proof]).await;
        assert_eq!(a.status, 200, "{:?}: {a:?}", key.alg);
        // A proof naming the internal address is for another URL.
        let proof = key.proof("POST", &url, &bound, None);
        let a = call(&url, Some(format!("DPoP {bound}")), &[proof]).await;
        assert_eq!(a.status, 401, "{a:?}");
        assert_eq!(
            a.challenge("DPoP").unwrap().error.as_deref(),
            Some("invalid_dpop_proof")
        );
    }
}

/// Three `tessera serve --redis` instances of one endpoint (public URL
/// `http://mcp.test/mcp`, server nonces on), alone and behind HAProxy
/// round-robin: a nonce handed out by one instance is good on the others,
/// and a proof used on one instance is refused on the others.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proof_replayed_on_another_instance_is_refused() {
    use tessera_redis::testing::{Haproxy, RedisServer};
    let redis = RedisServer::start().expect("start redis-server");
    let asrv = TestAuthorizationServer::start().await.unwrap();
    let public = "http://mcp.test/mcp";
    let nodes: Vec<Node> = (0..3)
        .map(|i| {
            serve(
                &asrv,
                &[
                    "--auth-dpop",
                    "required",
                    "--auth-dpop-nonce",
                    "--auth-audience",
                    public,
                    "--redis",
                    &redis.url(),
                    "--redis-prefix",
                    "dpop-test:",
                    "--instance-id",
                    &format!("node-{i}"),
                    "--allow-host",
                    "127.0.0.1",
                ],
            )
        })
        .collect();
    let key = TestDpopKey::es256();
    let bound = token(&asrv, public, Some(&key));
    let auth = || Some(format!("DPoP {bound}"));

    let first = call(&nodes[0].url("/mcp"), None, &[]).await;
    let nonce = first
        .nonce
        .clone()
        .unwrap_or_else(|| panic!("a nonce: {first:?}"));
    for node in &nodes[1..] {
        let n = call(&node.url("/mcp"), None, &[]).await.nonce;
        assert_eq!(
            n.as_deref(),
            Some(nonce.as_str()),
            "one nonce for all instances"
        );
    }
    let nonce = Some(nonce.as_str());
    let proof = key.proof("POST", public, &bound, nonce);
    let a = call(&nodes[0].url("/mcp"), auth(), std::slice::from_ref(&proof)).await;
    assert_eq!(a.status, 200, "first use: {a:?}");
    for node in &nodes[1..] {
        let a = call(&node.url("/mcp"), auth(), std::slice::from_ref(&proof)).await;
        assert_eq!(a.status, 401, "replayed on another instance: {a:?}");
        let c = a.challenge("DPoP").unwrap();
        assert_eq!(c.error.as_deref(), Some("invalid_dpop_proof"));
        assert!(
            c.error_description
                .as_deref()
                .unwrap()
                .contains("already used")
        );
    }

    let addrs: Vec<std::net::SocketAddr> = nodes
        .iter()
        .map(|n| std::net::SocketAddr::from(([127, 0, 0, 1], n.port)))
        .collect();
    let balancer = Haproxy::start(&addrs).expect("start haproxy");
    let lb = format!("http://127.0.0.1:{}/mcp", balancer.port());
    for _ in 0..3 {
        let proof = key.proof("POST", public, &bound, nonce);
        let a = call(&lb, auth(), std::slice::from_ref(&proof)).await;
        assert_eq!(a.status, 200, "a fresh proof through the balancer: {a:?}");
        // Round-robin: the replays land on the other instances.
        for _ in 0..2 {
            let a = call(&lb, auth(), std::slice::from_ref(&proof)).await;
            assert_eq!(a.status, 401, "replayed through the balancer: {a:?}");
        }
    }
}

#[test]
fn bad_dpop_options_are_usage_errors() {
    for (args, says) in [
        (
            &["--auth-dpop", "sometimes"][..],
            "possible values: required, allowed, off",
        ),
        (
            &["--auth-dpop-origin", "ftp://mcp.example.com"][..],
            "--auth-dpop-origin",
        ),
        (&["--auth-dpop-nonce-period", "5"][..], "--auth-dpop-nonce"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_tessera"))
            .args([
                "serve",
                "--http",
                "127.0.0.1:0",
                "--auth-issuer",
                "http://127.0.0.1:1",
            ])
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// Runs `tessera login URL --token-file FILE EXTRA…`, plays the browser
/// (the test authorization server approves at once and redirects to the
/// loopback listener of `tessera login`), and returns whether it succeeded
/// and what it said.
async fn login(url: &str, file: &std::path::Path, extra: &[&str]) -> (bool, String) {
    use std::io::{BufRead as _, BufReader};
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_tessera"))
        .args(["login", url, "--token-file"])
        .arg(file)
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut child = common::Running(child);
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut said = String::new();
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if let Some(u) = line.trim().strip_prefix("http") {
                let _ = tx.send(format!("http{u}"));
            }
            said.push_str(&line);
            said.push('\n');
        }
        said
    });
    // Every authorization URL it prints is followed (a failed grant may
    // lead to another attempt), until it exits.
    let mut followed = 0;
    let until = Instant::now() + DEADLINE;
    let status = loop {
        if let Some(s) = child.0.try_wait().unwrap() {
            break s;
        }
        if let Ok(authorize) = rx.try_recv() {
            let _ = reqwest::get(&authorize).await;
            followed += 1;
            continue;
        }
        assert!(Instant::now() < until, "tessera login did not finish");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(followed > 0, "login printed no authorization URL");
    (status.success(), reader.join().unwrap())
}

/// A private temporary directory for a token file; removed when dropped.
struct TempDir(std::path::PathBuf);

impl TempDir {
    fn new(tag: u16) -> TempDir {
        let dir =
            std::env::temp_dir().join(format!("tessera-dpop-login-{}-{tag}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `tessera login --dpop` against the test authorization server issuing
/// DPoP-bound tokens (after a nonce round), then `tessera call` with the
/// stored token and key, against `tessera serve --auth-dpop required
/// --auth-dpop-nonce`: the whole client half from the command line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_then_call_with_a_dpop_bound_token() {
    let asrv = TestAuthorizationServer::start().await.unwrap();
    asrv.configure(|s| {
        s.dpop = true;
        s.dpop_nonce = Some("as-nonce-1".into());
    });
    let node = serve(&asrv, &["--auth-dpop", "required", "--auth-dpop-nonce"]);
    let url = node.url("/mcp");
    let dir = TempDir::new(node.port);
    let file = dir.0.join("tokens.json");

    let (ok, said) = login(&url, &file, &["--dpop"]).await;
    assert!(ok, "{said}");
    assert!(said.contains("DPoP-bound token and its key"), "{said}");
    let stored = std::fs::read_to_string(&file).unwrap();
    assert!(stored.contains("\"dpop_key\""), "{stored}");

    let out = Command::new(env!("CARGO_BIN_EXE_tessera"))
        .args(["call", "echo", r#"{"text":"bound"}"#, &url])
        .env("TESSERA_TOKEN_FILE", &file)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text} {err}");
    assert!(text.contains("bound"), "{text}");
    assert_eq!(
        asrv.authorization_requests().len(),
        1,
        "one login, no new grant"
    );
}

/// `tessera login --dpop` refuses a plain bearer token from an
/// authorization server without DPoP; without `--dpop` it takes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_dpop_insists_on_a_bound_token() {
    let asrv = TestAuthorizationServer::start().await.unwrap();
    let node = serve(&asrv, &[]);
    let url = node.url("/mcp");
    let dir = TempDir::new(node.port);
    let file = dir.0.join("tokens.json");
    let (ok, said) = login(&url, &file, &["--dpop"]).await;
    assert!(!ok, "{said}");
    assert!(said.contains("not a DPoP-bound one"), "{said}");
    let (ok, said) = login(&url, &file, &[]).await;
    assert!(ok, "{said}");
    assert!(said.contains("; token stored"), "{said}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_replay_cache_answers_503_naming_the_limit() {
    let asrv = TestAuthorizationServer::start().await.unwrap();
    let node = serve(&asrv, &["--auth-dpop-replay-entries", "1"]);
    let url = node.url("/mcp");
    let key = TestDpopKey::es256();
    let bound = token(&asrv, &url, Some(&key));
    let a = call(
        &url,
        Some(format!("DPoP {bound}")),
        &[key.proof("POST", &url, &bound, None)],
    )
    .await;
    assert_eq!(a.status, 200, "{a:?}");
    let a = call(
        &url,
        Some(format!("DPoP {bound}")),
        &[key.proof("POST", &url, &bound, None)],
    )
    .await;
    assert_eq!(a.status, 503, "{a:?}");
    let body: Value = serde_json::from_str(&a.body).unwrap();
    assert_eq!(body["error"], "temporarily_unavailable");
    assert!(
        body["error_description"]
            .as_str()
            .unwrap()
            .contains("1 entries (the entry limit)"),
        "{body}"
    );
    // Plain bearer tokens do not need the cache (allowed mode).
    let plain = token(&asrv, &url, None);
    assert_eq!(
        call(&url, Some(format!("Bearer {plain}")), &[])
            .await
            .status,
        200
    );
}
