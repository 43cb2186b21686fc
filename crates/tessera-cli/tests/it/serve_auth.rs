//! `tessera serve --http … --auth-*`: the built binary, protected by OAuth
//! 2.1 bearer tokens of a real (in-process) test authorization server, driven
//! over HTTP: challenges, protected resource metadata, JWTs (keys discovered
//! from the issuer or given), introspection, audience, expiry and scopes.

use crate::common;

use std::io::Read;
use std::process::{Command, Stdio};

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tessera_testkit::Running;

use serde_json::{Map, Value, json};
use tessera_auth::challenge::BearerChallenge;
use tessera_auth::testing::{TestAuthorizationServer, now};

const DEADLINE: Duration = Duration::from_secs(30);

/// A `tessera serve` child process; killed when dropped.
struct Served {
    child: Running,
    port: u16,
    stderr: Arc<Mutex<String>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Served {
    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }
}

/// Starts `tessera serve --http 127.0.0.1:0 EXTRA…` with `env`, stderr
/// captured (the port is read from it by [`start`]).
fn spawn(extra: &[&str], env: &[(&str, &str)]) -> Served {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tessera"));
    cmd.arg("serve")
        .arg("--http")
        .arg("127.0.0.1:0")
        .args(extra)
        .env_remove("TESSERA_AUTH_CLIENT_SECRET")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("the tessera binary starts");
    let stderr = Arc::new(Mutex::new(String::new()));
    let mut pipe = child.stderr.take().unwrap();
    let sink = stderr.clone();
    let reader = std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = pipe.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    Served {
        child: Running(child),
        port: 0,
        stderr,
        reader: Some(reader),
    }
}

/// Starts the server and waits (polling its stderr, bounded) until its
/// banner names the port it listens on and says it serves.
async fn start(extra: &[&str], env: &[(&str, &str)]) -> Served {
    let mut s = spawn(extra, env);
    let until = Instant::now() + DEADLINE;
    loop {
        if let Some(st) = s.child.try_wait().unwrap() {
            panic!("tessera serve exited early ({st}): {}", s.stderr());
        }
        let said = s.stderr();
        let port = said.lines().find_map(common::served_port);
        if let (Some(port), true) = (port, said.contains("authorization:")) {
            s.port = port;
            return s;
        }
        assert!(
            Instant::now() < until,
            "tessera serve not ready within {DEADLINE:?}: {said}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits (bounded) for a server that must fail at startup; returns its exit
/// code and stderr.
fn wait_exit(mut s: Served) -> (Option<i32>, String) {
    let until = Instant::now() + DEADLINE;
    loop {
        if let Some(st) = s.child.try_wait().unwrap() {
            // The child is gone, so its stderr ends: read it all.
            if let Some(r) = s.reader.take() {
                let _ = r.join();
            }
            return (st.code(), s.stderr());
        }
        assert!(
            Instant::now() < until,
            "tessera serve should have exited: {}",
            s.stderr()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap()
}

/// A 2026-07-28 (stateless) `tools/list`, with `token` if given.
async fn tools_list(s: &Served, token: Option<&str>) -> reqwest::Response {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "serve-auth-test", "version": "1"}
    }}});
    let mut req = http()
        .post(s.url("/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/list")
        .body(body.to_string());
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    req.send().await.unwrap()
}

/// The JSON-RPC message of a JSON or SSE answer.
async fn message(r: reqwest::Response) -> Value {
    let sse = r
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|c| c.starts_with("text/event-stream"));
    let text = r.text().await.unwrap();
    if !sse {
        return serde_json::from_str(&text).unwrap();
    }
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .find(|m| m.get("id").is_some())
        .unwrap_or_else(|| panic!("no response in the stream: {text}"))
}

fn challenge(r: &reqwest::Response) -> BearerChallenge {
    let h = r
        .headers()
        .get("www-authenticate")
        .expect("a WWW-Authenticate header")
        .to_str()
        .unwrap();
    BearerChallenge::parse(h).unwrap()
}

fn tool_names(v: &Value) -> Vec<String> {
    v["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools in {v}"))
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect()
}

fn expired(asrv: &TestAuthorizationServer, aud: &str) -> Map<String, Value> {
    let mut c = asrv.claims(aud, &["mcp"]);
    c.insert("iat".into(), json!(now() - 7200));
    c.insert("exp".into(), json!(now() - 3600));
    c
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jwt_with_keys_discovered_from_the_issuer() {
    let asrv = TestAuthorizationServer::start().await.unwrap();
    let issuer = asrv.issuer();
    let s = start(
        &["--auth-issuer", &issuer, "--auth-scopes", "mcp,tools"],
        &[],
    )
    .await;
    let resource = s.url("/mcp");
    let metadata_url = s.url("/.well-known/oauth-protected-resource/mcp");

    // No token: 401 naming the metadata and the scopes every request needs.
    let r = tools_list(&s, None).await;
    assert_eq!(r.status(), 401);
    let c = challenge(&r);
    assert_eq!(c.resource_metadata.as_deref(), Some(metadata_url.as_str()));
    assert_eq!(c.scope.as_deref(), Some("mcp tools"));
    assert_eq!(c.error, None);

    // The legacy HTTP+SSE endpoint is protected too.
    let r = http().get(s.url("/sse")).send().await.unwrap();
    assert_eq!(r.status(), 401);

    // The protected resource metadata, no token needed.
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let r = http().get(s.url(path)).send().await.unwrap();
        assert_eq!(r.status(), 200, "{path}");
        let doc: Value = r.json().await.unwrap();
        assert_eq!(doc["resource"], resource.as_str());
        assert_eq!(doc["authorization_servers"], json!([issuer]));
        assert_eq!(doc["scopes_supported"], json!(["mcp", "tools"]));
        assert_eq!(doc["bearer_methods_supported"], json!(["header"]));
    }

    // A valid token: the tools.
    let token = asrv.token(&asrv.claims(&resource, &["mcp", "tools"]));
    let r = tools_list(&s, Some(&token)).await;
    assert_eq!(r.status(), 200);
    assert!(tool_names(&message(r).await).contains(&"echo".to_owned()));
    assert!(asrv.jwks_requests() >= 1);

    // Issued for another resource: refused.
    let foreign = asrv.token(&asrv.claims("http://127.0.0.1:1/mcp", &["mcp", "tools"]));
    let r = tools_list(&s, Some(&foreign)).await;
    assert_eq!(r.status(), 401);
    assert_eq!(challenge(&r).error.as_deref(), Some("invalid_token"));

    // Expired: refused.
    let old = asrv.token(&expired(&asrv, &resource));
    let r = tools_list(&s, Some(&old)).await;
    assert_eq!(r.status(), 401);
    assert_eq!(challenge(&r).error.as_deref(), Some("invalid_token"));

    // Not a JWT at all: refused, the server goes on.
    let r = tools_list(&s, Some("not-a-jwt")).await;
    assert_eq!(r.status(), 401);

    // Missing a required scope: 403 with every scope needed (step-up).
    let weak = asrv.token(&asrv.claims(&resource, &["mcp"]));
    let r = tools_list(&s, Some(&weak)).await;
    assert_eq!(r.status(), 403);
    let c = challenge(&r);
    assert_eq!(c.error.as_deref(), Some("insufficient_scope"));
    assert_eq!(c.scope.as_deref(), Some("mcp tools"));
    assert_eq!(c.resource_metadata.as_deref(), Some(metadata_url.as_str()));

    // Still serving.
    let r = tools_list(&s, Some(&token)).await;
    assert_eq!(r.status(), 200);

    // The CLI's own client, with the token given by -H.
    let list = |extra: Vec<String>| {
        let resource = resource.clone();
        tokio::task::spawn_blocking(move || {
            Command::new(env!("CARGO_BIN_EXE_tessera"))
                .args(["list", "tools"])
                .args(extra)
                .arg(resource)
                .stdin(Stdio::null())
                .output()
                .unwrap()
        })
    };
    let out = list(vec!["-H".into(), format!("Authorization: Bearer {token}")])
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("echo"));
    // Without a token: authorization needed, exit 4.
    let out = list(vec![]).await.unwrap();
    assert_eq!(out.status.code(), Some(4));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("401"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explicit_audience_and_jwks() {
    let asrv = TestAuthorizationServer::start().await.unwrap();
    let public = "https://mcp.example.com/mcp";
    let s = start(
        &[
            "--auth-issuer",
            &asrv.issuer(),
            "--auth-audience",
            public,
            "--auth-jwks",
            &asrv.jwks_uri(),
        ],
        &[],
    )
    .await;

    // Tokens must name the configured audience, not the local URL.
    let local = asrv.token(&asrv.claims(&s.url("/mcp"), &[]));
    let r = tools_list(&s, Some(&local)).await;
    assert_eq!(r.status(), 401);
    let ours = asrv.token(&asrv.claims(public, &[]));
    let r = tools_list(&s, Some(&ours)).await;
    assert_eq!(r.status(), 200);
    assert!(tool_names(&message(r).await).contains(&"add".to_owned()));

    // The metadata names it; no scopes were configured, so none are listed
    // and the challenge asks for none.
    let doc: Value = http()
        .get(s.url("/.well-known/oauth-protected-resource/mcp"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(doc["resource"], public);
    assert!(doc.get("scopes_supported").is_none(), "{doc}");
    let r = tools_list(&s, None).await;
    assert_eq!(r.status(), 401);
    let c = challenge(&r);
    assert_eq!(c.scope, None);
    assert_eq!(
        c.resource_metadata.as_deref(),
        Some("https://mcp.example.com/.well-known/oauth-protected-resource/mcp")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn introspection_with_the_secret_from_the_environment() {
    let asrv = TestAuthorizationServer::start().await.unwrap();
    let s = start(
        &[
            "--auth-issuer",
            &asrv.issuer(),
            "--auth-introspect",
            &asrv.introspection_endpoint(),
            "--auth-client-id",
            "mcp-server",
            "--auth-scopes",
            "mcp",
        ],
        &[("TESSERA_AUTH_CLIENT_SECRET", "server-secret")],
    )
    .await;
    let resource = s.url("/mcp");
    assert!(!s.stderr().contains("server-secret"), "{}", s.stderr());

    let opaque = asrv.opaque_token(&asrv.claims(&resource, &["mcp"]));
    let r = tools_list(&s, Some(&opaque)).await;
    assert_eq!(r.status(), 200);
    assert!(tool_names(&message(r).await).contains(&"echo".to_owned()));
    assert!(asrv.introspections() >= 1);

    // A signed JWT is introspected too, and must be for this resource.
    let foreign = asrv.token(&asrv.claims("http://127.0.0.1:1/mcp", &["mcp"]));
    let r = tools_list(&s, Some(&foreign)).await;
    assert_eq!(r.status(), 401);

    let no_scope = asrv.opaque_token(&asrv.claims(&resource, &[]));
    let r = tools_list(&s, Some(&no_scope)).await;
    assert_eq!(r.status(), 403);

    asrv.revoke(&opaque);
    let r = tools_list(&s, Some(&opaque)).await;
    assert_eq!(r.status(), 401);
    assert_eq!(challenge(&r).error.as_deref(), Some("invalid_token"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn introspection_with_a_wrong_secret_refuses_every_token() {
    let asrv = TestAuthorizationServer::start().await.unwrap();
    let s = start(
        &[
            "--auth-issuer",
            &asrv.issuer(),
            "--auth-introspect",
            &asrv.introspection_endpoint(),
            "--auth-client-id",
            "mcp-server",
            "--auth-client-secret",
            "wrong",
        ],
        &[],
    )
    .await;
    let opaque = asrv.opaque_token(&asrv.claims(&s.url("/mcp"), &["mcp"]));
    let r = tools_list(&s, Some(&opaque)).await;
    assert!(
        r.status() == 401 || r.status() == 503,
        "status {}",
        r.status()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn startup_errors_are_clear() {
    // No authorization server behind the issuer: a local failure (exit 11), saying what to do.
    let (code, err) = wait_exit(spawn(&["--auth-issuer", "http://127.0.0.1:1"], &[]));
    assert_eq!(code, Some(11), "{err}");
    assert!(
        err.contains("cannot read the authorization server metadata of http://127.0.0.1:1"),
        "{err}"
    );
    assert!(err.contains("--auth-jwks"), "{err}");

    // Usage errors: exit 2.
    for (args, says) in [
        (
            vec![
                "--auth-issuer",
                "http://127.0.0.1:1",
                "--auth-client-id",
                "x",
            ],
            "--auth-introspect",
        ),
        (vec!["--auth-issuer", "not a url"], "--auth-issuer"),
        (
            vec![
                "--auth-issuer",
                "http://127.0.0.1:1",
                "--auth-scopes",
                "a,b c",
            ],
            "b c",
        ),
        (
            vec![
                "--auth-issuer",
                "http://127.0.0.1:1",
                "--auth-introspect",
                "http://127.0.0.1:1/introspect",
            ],
            "--auth-client-id",
        ),
    ] {
        let (code, err) = wait_exit(spawn(&args, &[]));
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }

    // --auth-* needs --http.
    let out = Command::new(env!("CARGO_BIN_EXE_tessera"))
        .args(["serve", "--stdio", "--auth-issuer", "http://127.0.0.1:1"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--http"));
}

#[test]
fn help_documents_the_options() {
    let out = Command::new(env!("CARGO_BIN_EXE_tessera"))
        .args(["serve", "--help"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    for opt in [
        "--auth-issuer",
        "--auth-audience",
        "--auth-jwks",
        "--auth-introspect",
        "--auth-client-id",
        "--auth-client-secret",
        "--auth-scopes",
        "--auth-dpop",
        "--auth-dpop-nonce",
        "--auth-dpop-nonce-period",
        "--auth-dpop-iat-window",
        "--auth-dpop-origin",
        "--auth-dpop-replay-entries",
    ] {
        assert!(text.contains(opt), "{opt} missing from serve --help");
    }
}
