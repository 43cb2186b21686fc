//! Token refresh is single-flight: concurrent requests that find an expired
//! token cause one refresh, in one process and across two processes that
//! share a token file, and a rotated refresh token is never lost or replaced
//! by a stale one. The authorization server rotates refresh tokens and
//! refuses a spent one (`invalid_grant`), so any lost rotation would fail a
//! call.
//!
//! The second process is this test binary again, running the ignored test
//! `second_process` (it does nothing unless started that way).

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;

use http::{HeaderMap, Method, Uri};
use tessera_auth::client::{
    ClientCredentials, FileTokenStore, Grant, OAuthClient, StoredCredentials, TokenSet, TokenStore,
};
use tessera_auth::testing::TestAuthorizationServer;
use tessera_http::HttpAuth;

const SERVER_URL: &str = "http://127.0.0.1:9/mcp";
const CALLS: usize = 50;
const CHILD_FILE: &str = "TESSERA_REFRESH_RACE_FILE";

fn now() -> u64 {
    tessera_auth::testing::now()
}

/// Seeds the token file with an expired access token and a live refresh token.
fn seed(as_: &TestAuthorizationServer, file: &Path) -> String {
    as_.register_client("race-client", "race-secret");
    let rt = as_.issue_refresh_token("race-client", "mcp", SERVER_URL);
    let mut tokens = TokenSet::bearer("expired-at-start");
    tokens.refresh_token = Some(rt.clone());
    tokens.expires_at = Some(now() - 10);
    let mut creds = StoredCredentials::new(
        SERVER_URL,
        as_.issuer(),
        ClientCredentials::confidential("race-client", "race-secret"),
        tokens,
    );
    creds.token_endpoint = Some(as_.token_endpoint());
    FileTokenStore::new(file).save(SERVER_URL, &creds).unwrap();
    rt
}

fn client(file: &Path) -> Arc<OAuthClient> {
    Arc::new(
        OAuthClient::builder(SERVER_URL, Grant::ClientCredentials)
            .store(Arc::new(FileTokenStore::new(file)))
            .build()
            .unwrap(),
    )
}

/// Makes `CALLS` concurrent requests' worth of credentials; returns the
/// bearer token each got (`None`: the request would have gone without one).
async fn calls(client: Arc<OAuthClient>) -> Vec<Option<String>> {
    let uri: Uri = SERVER_URL.parse().unwrap();
    let tasks: Vec<_> = (0..CALLS)
        .map(|_| {
            let c = client.clone();
            let uri = uri.clone();
            tokio::spawn(async move {
                let mut h = HeaderMap::new();
                c.authorize(&Method::POST, &uri, &mut h).await.ok()?;
                h.get(http::header::AUTHORIZATION)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.strip_prefix("Bearer "))
                    .map(str::to_owned)
            })
        })
        .collect();
    let mut out = Vec::new();
    for t in tasks {
        out.push(t.await.unwrap());
    }
    out
}

fn assert_all_fresh(tokens: &[Option<String>], who: &str) {
    let failed = tokens
        .iter()
        .filter(|t| t.as_deref().is_none_or(|t| t == "expired-at-start"))
        .count();
    assert_eq!(
        failed,
        0,
        "{who}: {failed} of {} calls had no fresh token",
        tokens.len()
    );
}

/// Starts the second process on `file`.
fn start_second_process(file: &Path) -> tokio::process::Child {
    let exe = std::env::current_exe().unwrap();
    tokio::process::Command::new(exe)
        .args([
            "refresh_race::second_process",
            "--exact",
            "--ignored",
            "--nocapture",
        ])
        .env(CHILD_FILE, file)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap()
}

async fn finish(child: tokio::process::Child) {
    let out = child.wait_with_output().await.unwrap();
    assert!(
        out.status.success(),
        "second process failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn stored_refresh_token(file: &Path) -> String {
    FileTokenStore::new(file)
        .load(SERVER_URL)
        .unwrap()
        .and_then(|c| c.tokens.refresh_token)
        .expect("credentials are still stored")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_refresh_for_two_processes_of_50_concurrent_calls() {
    let as_ = TestAuthorizationServer::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tokens.json");
    let first = seed(&as_, &file);
    let child = start_second_process(&file);
    let mine = calls(client(&file)).await;
    finish(child).await;
    assert_all_fresh(&mine, "first process");
    assert_eq!(
        as_.token_requests("refresh_token"),
        1,
        "one refresh for 100 calls in two processes"
    );
    assert!(!as_.is_live_refresh_token(&first), "the seed was spent");
    assert!(as_.is_live_refresh_token(&stored_refresh_token(&file)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_that_expire_at_once_refresh_every_call_without_losing_a_rotation() {
    let as_ = TestAuthorizationServer::start().await.unwrap();
    // Every access token is expired when it arrives: each call refreshes,
    // 100 rotations in a row across the two processes.
    as_.configure(|s| s.access_token_ttl = 0);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tokens.json");
    seed(&as_, &file);
    let child = start_second_process(&file);
    let mine = calls(client(&file)).await;
    finish(child).await;
    assert_all_fresh(&mine, "first process");
    assert_eq!(as_.token_requests("refresh_token"), 2 * CALLS as u64);
    assert!(as_.is_live_refresh_token(&stored_refresh_token(&file)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "the second process of the cross-process refresh tests (started by them)"]
async fn second_process() {
    let Some(file) = std::env::var_os(CHILD_FILE) else {
        return;
    };
    let tokens = calls(client(Path::new(&file))).await;
    assert_all_fresh(&tokens, "second process");
}
