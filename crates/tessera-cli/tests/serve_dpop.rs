//! The DPoP attack matrix (RFC 9449) against the built `tessera serve
//! --http … --auth-dpop required|allowed`, protected by a real (in-process)
//! test authorization server: each attack with its exact status, `error`
//! and challenges; server nonces; the metadata; and a proof replayed on
//! another instance sharing a Redis.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use tessera_auth::challenge::BearerChallenge;
use tessera_auth::server::Algorithm;
use tessera_auth::testing::{TestAuthorizationServer, TestDpopKey, now, signing_input};

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
#[derive(Debug)]
struct Answer {
    status: u16,
    challenges: Vec<BearerChallenge>,
    nonce: Option<String>,
    body: String,
}

impl Answer {
    fn challenge(&self, scheme: &str) -> Option<&BearerChallenge> {
        self.challenges
            .iter()
            .find(|c| c.scheme.eq_ignore_ascii_case(scheme))
    }

    fn schemes(&self) -> Vec<String> {
        self.challenges.iter().map(|c| c.scheme.clone()).collect()
    }
}

/// A 2026-07-28 `tools/list` POSTed to `url` with `Authorization: auth`
/// and one `DPoP` header per proof.
async fn call(url: &str, auth: Option<String>, proofs: &[String]) -> Answer {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "serve-dpop-test", "version": "1"}
    }}});
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let mut req = client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/list")
        .body(body.to_string());
    if let Some(a) = auth {
        req = req.header("authorization", a);
    }
    for p in proofs {
        req = req.header("dpop", p.as_str());
    }
    let r = req.send().await.unwrap();
    let status = r.status().as_u16();
    let challenges = r
        .headers()
        .get_all("www-authenticate")
        .iter()
        .flat_map(|v| BearerChallenge::parse_all(v.to_str().unwrap()))
        .collect();
    let nonce = r
        .headers()
        .get("dpop-nonce")
        .map(|v| v.to_str().unwrap().to_owned());
    let body = r.text().await.unwrap_or_default();
    Answer {
        status,
        challenges,
        nonce,
        body,
    }
}

/// A token of `asrv` for `aud`, bound to `key` when given.
fn token(asrv: &TestAuthorizationServer, aud: &str, key: Option<&TestDpopKey>) -> String {
    let mut c = asrv.claims(aud, &[]);
    if let Some(k) = key {
        c.insert("cnf".into(), k.cnf());
    }
    asrv.token(&c)
}

/// The attacks, each a proof (or proofs) and the `error` it must get.
struct Attack {
    name: &'static str,
    auth: String,
    proofs: Vec<String>,
    error: &'static str,
    says: &'static str,
}

fn attacks(
    key: &TestDpopKey,
    other: &TestDpopKey,
    url: &str,
    bound: &str,
    port: u16,
) -> Vec<Attack> {
    let dpop = format!("DPoP {bound}");
    let claims = |f: &dyn Fn(&mut Map<String, Value>)| {
        let mut c = key.claims("POST", url, Some(bound), None);
        f(&mut c);
        c
    };
    let signed = |f: &dyn Fn(&mut Map<String, Value>)| key.sign(&key.header(), &claims(f));
    let at =
        |htu: String| signed(&move |c| drop(c.insert("htu".into(), Value::from(htu.as_str()))));
    let replayed = key.proof("POST", url, bound, None);
    let mut none_header = key.header();
    none_header.insert("alg".into(), "none".into());
    let mut hs_header = key.header();
    hs_header.insert("alg".into(), "HS256".into());
    let mut private_header = key.header();
    let mut leaked = key.jwk.clone();
    leaked.extend(key.private.clone());
    private_header.insert("jwk".into(), Value::Object(leaked));
    let mut jwt_typ = key.header();
    jwt_typ.insert("typ".into(), "JWT".into());
    let big = format!(
        "{}.{}.{}",
        "e".repeat(40_000),
        "e".repeat(40_000),
        "A".repeat(20_000)
    );
    let a = |name, auth: &str, proofs: Vec<String>, error, says| Attack {
        name,
        auth: auth.to_owned(),
        proofs,
        error,
        says,
    };
    vec![
        a("replayed jti", &dpop, vec![replayed.clone()], "", ""),
        a(
            "replayed jti",
            &dpop,
            vec![replayed],
            "invalid_dpop_proof",
            "already used",
        ),
        a(
            "htm mismatch",
            &dpop,
            vec![key.sign(
                &key.header(),
                &claims(&|c| drop(c.insert("htm".into(), "GET".into()))),
            )],
            "invalid_dpop_proof",
            "htm",
        ),
        a(
            "htu other host",
            &dpop,
            vec![at(format!("http://evil.example:{port}/mcp"))],
            "invalid_dpop_proof",
            "htu",
        ),
        a(
            "htu other port",
            &dpop,
            vec![at("http://127.0.0.1:1/mcp".into())],
            "invalid_dpop_proof",
            "htu",
        ),
        a(
            "htu other path",
            &dpop,
            vec![at(format!("http://127.0.0.1:{port}/other"))],
            "invalid_dpop_proof",
            "htu",
        ),
        a(
            "htu with query",
            &dpop,
            vec![at(format!("{url}?x=1"))],
            "invalid_dpop_proof",
            "htu",
        ),
        a(
            "htu with fragment",
            &dpop,
            vec![at(format!("{url}#f"))],
            "invalid_dpop_proof",
            "htu",
        ),
        a(
            "iat too old",
            &dpop,
            vec![signed(&|c| {
                drop(c.insert("iat".into(), json!(now() - 120)))
            })],
            "invalid_dpop_proof",
            "ago",
        ),
        a(
            "iat in the future",
            &dpop,
            vec![signed(&|c| {
                drop(c.insert("iat".into(), json!(now() + 120)))
            })],
            "invalid_dpop_proof",
            "future",
        ),
        a(
            "missing ath",
            &dpop,
            vec![signed(&|c| drop(c.remove("ath")))],
            "invalid_dpop_proof",
            "no ath",
        ),
        a(
            "missing jti",
            &dpop,
            vec![signed(&|c| drop(c.remove("jti")))],
            "invalid_dpop_proof",
            "no jti",
        ),
        a(
            "missing htm",
            &dpop,
            vec![signed(&|c| drop(c.remove("htm")))],
            "invalid_dpop_proof",
            "no htm",
        ),
        a(
            "missing htu",
            &dpop,
            vec![signed(&|c| drop(c.remove("htu")))],
            "invalid_dpop_proof",
            "no htu",
        ),
        a(
            "missing iat",
            &dpop,
            vec![signed(&|c| drop(c.remove("iat")))],
            "invalid_dpop_proof",
            "no iat",
        ),
        a(
            "not a JWT",
            &dpop,
            vec!["not-a-jwt".to_owned()],
            "invalid_dpop_proof",
            "three parts",
        ),
        a(
            "wrong ath",
            &dpop,
            vec![signed(&|c| {
                drop(c.insert(
                    "ath".into(),
                    Value::from(tessera_auth::testing::ath("another-token")),
                ))
            })],
            "invalid_dpop_proof",
            "ath does not match",
        ),
        a(
            "proof key is not cnf.jkt",
            &dpop,
            vec![other.proof("POST", url, bound, None)],
            "invalid_token",
            "cnf.jkt",
        ),
        a(
            "alg none",
            &dpop,
            vec![format!(
                "{}.",
                signing_input(&none_header, &claims(&|_| {}))
            )],
            "invalid_dpop_proof",
            "\"none\" is not accepted",
        ),
        a(
            "HS256 with the public key",
            &dpop,
            vec![key.hmac_with_public_key(&hs_header, &claims(&|_| {}))],
            "invalid_dpop_proof",
            "\"HS256\" is not accepted",
        ),
        a(
            "jwk with the private key",
            &dpop,
            vec![key.sign(&private_header, &claims(&|_| {}))],
            "invalid_dpop_proof",
            "private key",
        ),
        a(
            "typ JWT",
            &dpop,
            vec![key.sign(&jwt_typ, &claims(&|_| {}))],
            "invalid_dpop_proof",
            "typ",
        ),
        a(
            "bad signature",
            &dpop,
            vec![other.sign(&key.header(), &claims(&|_| {}))],
            "invalid_dpop_proof",
            "signature",
        ),
        a(
            "two DPoP headers",
            &dpop,
            vec![
                key.proof("POST", url, bound, None),
                key.proof("POST", url, bound, None),
            ],
            "invalid_dpop_proof",
            "more than one",
        ),
        a(
            "no DPoP header",
            &dpop,
            vec![],
            "invalid_dpop_proof",
            "no DPoP header",
        ),
        a(
            "100 KB proof",
            &dpop,
            vec![big],
            "invalid_dpop_proof",
            "bytes",
        ),
        a(
            "bound token as Bearer",
            &format!("Bearer {bound}"),
            vec![],
            "invalid_token",
            "bound to a DPoP key",
        ),
    ]
}

/// Runs the matrix against a server in `mode`.
async fn matrix(mode: &str) {
    let asrv = TestAuthorizationServer::start().await.unwrap();
    let node = serve(&asrv, &["--auth-dpop", mode]);
    let url = node.url("/mcp");
    let (key, other) = (TestDpopKey::es256(), TestDpopKey::es256());
    let bound = token(&asrv, &url, Some(&key));
    let plain = token(&asrv, &url, None);
    let required = mode == "required";
    let algs = "ES256 EdDSA PS256 RS256";

    // The metadata announces DPoP.
    let meta: Value = reqwest::get(node.url("/.well-known/oauth-protected-resource/mcp"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        meta["dpop_signing_alg_values_supported"],
        json!(["ES256", "EdDSA", "PS256", "RS256"])
    );
    assert_eq!(meta["dpop_bound_access_tokens_required"], json!(required));

    // No token: the schemes of the mode, no error.
    let a = call(&url, None, &[]).await;
    assert_eq!(a.status, 401, "{a:?}");
    let want: &[&str] = if required {
        &["DPoP"]
    } else {
        &["Bearer", "DPoP"]
    };
    assert_eq!(a.schemes(), want, "{a:?}");
    assert!(a.challenges.iter().all(|c| c.error.is_none()), "{a:?}");
    let d = a.challenge("DPoP").unwrap();
    assert_eq!(d.other, [("algs".to_owned(), algs.to_owned())]);
    assert_eq!(
        d.resource_metadata.as_deref(),
        Some(
            node.url("/.well-known/oauth-protected-resource/mcp")
                .as_str()
        )
    );

    // A valid proof.
    let a = call(
        &url,
        Some(format!("DPoP {bound}")),
        &[key.proof("POST", &url, &bound, None)],
    )
    .await;
    assert_eq!(a.status, 200, "valid proof: {a:?}");
    assert!(a.body.contains("tools"), "{a:?}");

    // A plain bearer token: fine when allowed, refused when required.
    let a = call(&url, Some(format!("Bearer {plain}")), &[]).await;
    if required {
        assert_eq!(a.status, 401, "{a:?}");
        assert_eq!(a.schemes(), ["DPoP"]);
        let c = a.challenge("DPoP").unwrap();
        assert_eq!(c.error.as_deref(), Some("invalid_token"));
        assert!(
            c.error_description
                .as_deref()
                .unwrap()
                .contains("DPoP-bound tokens only")
        );
    } else {
        assert_eq!(a.status, 200, "plain bearer in allowed mode: {a:?}");
    }

    // An unbound token presented with the DPoP scheme (and a good proof).
    let a = call(
        &url,
        Some(format!("DPoP {plain}")),
        &[key.proof("POST", &url, &plain, None)],
    )
    .await;
    assert_eq!(a.status, 401, "{a:?}");
    let c = a.challenge("DPoP").unwrap();
    assert_eq!(c.error.as_deref(), Some("invalid_token"));
    assert!(
        c.error_description
            .as_deref()
            .unwrap()
            .contains("not DPoP-bound")
    );

    for attack in attacks(&key, &other, &url, &bound, node.port) {
        let a = call(&url, Some(attack.auth.clone()), &attack.proofs).await;
        if attack.error.is_empty() {
            assert_eq!(a.status, 200, "{} (first use): {a:?}", attack.name);
            continue;
        }
        assert_eq!(a.status, 401, "{}: {a:?}", attack.name);
        let as_bearer = attack.auth.starts_with("Bearer");
        // The error is on the challenge of the scheme used (DPoP only, when required).
        let (with_error, plain_scheme) = match (required, as_bearer) {
            (true, _) => ("DPoP", None),
            (false, true) => ("Bearer", Some("DPoP")),
            (false, false) => ("DPoP", Some("Bearer")),
        };
        let c = a
            .challenge(with_error)
            .unwrap_or_else(|| panic!("{}: {a:?}", attack.name));
        assert_eq!(
            c.error.as_deref(),
            Some(attack.error),
            "{}: {a:?}",
            attack.name
        );
        let why = c.error_description.as_deref().unwrap_or_default();
        assert!(why.contains(attack.says), "{}: {why:?}", attack.name);
        match plain_scheme {
            Some(s) => assert_eq!(
                a.challenge(s).unwrap().error,
                None,
                "{}: {a:?}",
                attack.name
            ),
            None => assert_eq!(a.schemes(), ["DPoP"], "{}: {a:?}", attack.name),
        }
        let body: Value = serde_json::from_str(&a.body).unwrap();
        assert_eq!(body["error"], attack.error, "{}", attack.name);
    }
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
