//! Workload identity (SEP-1933) from the command line: `tessera call
//! --workload-token-file PATH` (and `--workload-token-env NAME`, and
//! `TESSERA_WORKLOAD_TOKEN_FILE`) against `tessera serve --auth-issuer`,
//! whose authorization server (the in-process test one) takes the RFC 7523
//! jwt-bearer grant with tokens of a trusted platform issuer (a second test
//! server playing Kubernetes). A long-running `tessera proxy` with a
//! workload token presents the rotated token at its next token request.

use crate::common;

use std::process::Command;
use std::time::Duration;

use serde_json::Value;
use tessera_auth::testing::TestAuthorizationServer;

const TESSERA: &str = env!("CARGO_BIN_EXE_tessera");
const DEADLINE: Duration = Duration::from_secs(30);

/// The platform (the workload token's issuer) and the MCP server's
/// authorization server, which trusts it and issues 30-second tokens (less
/// than the client's 60-second renewal margin: every request renews, so
/// every request shows which workload token was presented).
async fn servers() -> (TestAuthorizationServer, TestAuthorizationServer) {
    let platform = TestAuthorizationServer::start().await.unwrap();
    let asrv = TestAuthorizationServer::start().await.unwrap();
    asrv.trust_workload_issuer(&platform.issuer());
    asrv.configure(|s| s.access_token_ttl = 30);
    (platform, asrv)
}

/// `tessera serve --http 127.0.0.1:0` protected by `asrv`; returns the
/// process and its endpoint URL.
fn serve(asrv: &TestAuthorizationServer) -> (common::Running, String) {
    let mut cmd = Command::new(TESSERA);
    cmd.args(["serve", "--http", "127.0.0.1:0", "--auth-issuer"])
        .arg(asrv.issuer())
        .arg("--auth-jwks")
        .arg(asrv.jwks_uri());
    let (child, port) = common::spawn_serving(&mut cmd, DEADLINE);
    (
        common::Running(child),
        format!("http://127.0.0.1:{port}/mcp"),
    )
}

/// A private temporary directory; removed when dropped.
struct TempDir(std::path::PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let dir =
            std::env::temp_dir().join(format!("tessera-workload-{}-{tag}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Writes `token` to `path` the way Kubernetes rotates a projected token:
/// a new file renamed over the old one.
fn rotate(path: &std::path::Path, token: &str) {
    let tmp = path.with_extension("new");
    std::fs::write(&tmp, token).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

/// `tessera call echo {"text": text} URL EXTRA…` with `env`; its success, stdout and stderr.
fn call(url: &str, text: &str, extra: &[&str], env: &[(&str, &str)]) -> (bool, String, String) {
    let out = Command::new(TESSERA)
        .args(["call", "echo", &format!(r#"{{"text":"{text}"}}"#), url])
        .args(extra)
        .env_remove("TESSERA_WORKLOAD_TOKEN_FILE")
        .envs(env.iter().copied())
        .env("TESSERA_TOKEN_FILE", "/nonexistent/tessera-tokens.json")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn last_grant(asrv: &TestAuthorizationServer) -> (String, String) {
    let g = asrv.workload_grants();
    let last = g.last().expect("a workload grant");
    let text = |k: &str| last[k].as_str().unwrap_or_default().to_owned();
    (text("sub"), text("jti"))
}

fn jti_of(jwt: &str) -> String {
    use base64::Engine as _;
    let payload = jwt.split('.').nth(1).unwrap();
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .unwrap();
    let v: Value = serde_json::from_slice(&bytes).unwrap();
    v["jti"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn call_with_a_workload_token_file_and_variable() {
    let (platform, asrv) = servers().await;
    let (_server, url) = serve(&asrv);
    let dir = TempDir::new("call");
    let file = dir.0.join("token");
    let a = platform.workload_token("system:serviceaccount:ns:agent", &asrv.issuer(), 600);
    rotate(&file, &a);
    let path = file.to_str().unwrap();

    let (ok, out, err) = call(&url, "from a file", &["--workload-token-file", path], &[]);
    assert!(ok, "{out} {err}");
    assert!(out.contains("from a file"), "{out}");
    assert_eq!(
        last_grant(&asrv),
        ("system:serviceaccount:ns:agent".to_owned(), jti_of(&a))
    );
    assert_eq!(asrv.registrations().len(), 0, "no client registration");

    // Rotated: the next token request presents the new token.
    let b = platform.workload_token("system:serviceaccount:ns:agent-b", &asrv.issuer(), 600);
    rotate(&file, &b);
    let (ok, out, err) = call(
        &url,
        "rotated",
        &[],
        &[("TESSERA_WORKLOAD_TOKEN_FILE", path)],
    );
    assert!(ok, "{out} {err}");
    assert_eq!(last_grant(&asrv).1, jti_of(&b));

    // The variable form.
    let c = platform.workload_token("spiffe://example.org/agent", &asrv.issuer(), 600);
    let (ok, out, err) = call(
        &url,
        "from a variable",
        &["--workload-token-env", "AGENT_TOKEN"],
        &[("AGENT_TOKEN", &c)],
    );
    assert!(ok, "{out} {err}");
    assert_eq!(
        last_grant(&asrv),
        ("spiffe://example.org/agent".to_owned(), jti_of(&c))
    );
    // Every token request was a jwt-bearer grant the server accepted.
    assert_eq!(
        asrv.token_requests(JWT_BEARER),
        asrv.workload_grants().len() as u64
    );
}

const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_workload_tokens_fail_the_command_clearly() {
    let (platform, asrv) = servers().await;
    let (_server, url) = serve(&asrv);
    let dir = TempDir::new("refused");
    let file = dir.0.join("token");
    let path = file.to_str().unwrap();
    let untrusted = TestAuthorizationServer::start().await.unwrap();
    for (token, says) in [
        (
            untrusted.workload_token("intruder", &asrv.issuer(), 600),
            "not trusted",
        ),
        (
            platform.workload_token("agent", "https://another-as.example", 600),
            "audience",
        ),
        ("not a token".to_owned(), "signed JWT"),
        ("{\"iss\":1}.e30.sig".to_owned(), "signed JWT"),
    ] {
        rotate(&file, &token);
        let (ok, out, err) = call(&url, "x", &["--workload-token-file", path], &[]);
        assert!(!ok, "{says}: {out}");
        assert!(err.contains(says), "{says}: {err}");
    }
    // Signed with a key the platform does not publish.
    platform.add_key("unpublished", tessera_auth::server::Algorithm::ES256, false);
    platform.set_current("unpublished");
    rotate(
        &file,
        &platform.workload_token("agent", &asrv.issuer(), 600),
    );
    let (ok, _, err) = call(&url, "x", &["--workload-token-file", path], &[]);
    assert!(!ok);
    assert!(err.contains("unknown key"), "{err}");
    // A missing file is named.
    let (ok, _, err) = call(
        &url,
        "x",
        &["--workload-token-file", "/nonexistent/token"],
        &[],
    );
    assert!(!ok);
    assert!(err.contains("/nonexistent/token"), "{err}");
}

/// A long-running `tessera proxy` in front of the protected server, with a
/// workload token: each upstream request renews its 30-second token, and
/// once the file is rotated the next grant presents the new token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_proxy_presents_the_rotated_token() {
    let (platform, asrv) = servers().await;
    let (_server, url) = serve(&asrv);
    let dir = TempDir::new("proxy");
    let file = dir.0.join("token");
    let a = platform.workload_token("agent-a", &asrv.issuer(), 600);
    rotate(&file, &a);
    let (_proxy, front) = common::start_proxy(&[
        "--http",
        "127.0.0.1:0",
        "--workload-token-file",
        file.to_str().unwrap(),
        &url,
    ]);
    let (ok, out, err) = call(&front, "before", &[], &[]);
    assert!(ok, "{out} {err}");
    assert!(out.contains("before"), "{out}");
    assert_eq!(last_grant(&asrv).1, jti_of(&a));

    let b = platform.workload_token("agent-b", &asrv.issuer(), 600);
    rotate(&file, &b);
    let before = asrv.workload_grants().len();
    let (ok, out, err) = call(&front, "after", &[], &[]);
    assert!(ok, "{out} {err}");
    assert!(out.contains("after"), "{out}");
    let grants = asrv.workload_grants();
    assert!(grants.len() > before, "a new grant after the rotation");
    assert!(
        grants[before..]
            .iter()
            .all(|g| g["jti"].as_str() == Some(jti_of(&b).as_str())),
        "every grant after the rotation presents the new token"
    );
    assert_eq!(last_grant(&asrv), ("agent-b".to_owned(), jti_of(&b)));
}
