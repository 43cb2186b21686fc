//! The OAuth client against the in-process test authorization server and a
//! scriptable protected resource, over real loopback HTTP: discovery order,
//! PKCE, state and iss checks, the resource check, scope selection, step-up
//! and its limit, refresh before expiry, and the token file.

use crate::client_support;

use std::sync::Arc;

use client_support::{DEADLINE, Resource, send};
use http::StatusCode;
use serde_json::json;
use tessera_auth::client::{
    ClientCredentials, FileTokenStore, Grant, HeadlessUserAgent, MemoryTokenStore, OAuthClient,
    OAuthError, StoredCredentials, TokenSet, TokenStore,
};
use tessera_auth::testing::{IssMode, TestAuthorizationServer};

const REDIRECT: &str = "http://127.0.0.1:9/callback";

fn oauth(url: &str) -> OAuthClient {
    let ua = HeadlessUserAgent::new(REDIRECT).unwrap();
    OAuthClient::builder(url, Grant::AuthorizationCode(Arc::new(ua)))
        .client_name("client-test")
        .build()
        .unwrap()
}

async fn fixture() -> (TestAuthorizationServer, Resource) {
    let asrv = TestAuthorizationServer::start().await.unwrap();
    let rs = Resource::start(&asrv).await;
    (asrv, rs)
}

/// Runs `f` with the test deadline.
async fn within<F: std::future::Future<Output = ()>>(f: F) {
    tokio::time::timeout(DEADLINE, f)
        .await
        .expect("the test did not finish in time");
}

#[tokio::test]
async fn full_flow_registers_and_sends_resource_and_pkce() {
    within(async {
        let (asrv, rs) = fixture().await;
        let c = oauth(&rs.url);
        assert_eq!(send(&c, &rs.url, "read").await.unwrap(), StatusCode::OK);
        let regs = asrv.registrations();
        assert_eq!(regs.len(), 1);
        assert_eq!(regs[0]["application_type"], "native");
        assert_eq!(regs[0]["redirect_uris"], json!([REDIRECT]));
        let req = &asrv.authorization_requests()[0];
        assert_eq!(req["resource"], rs.url);
        assert_eq!(req["code_challenge_method"], "S256");
        assert!(!req.contains_key("scope"));
        assert_eq!(asrv.token_requests("authorization_code"), 1);
        // The metadata URL of the challenge was used, nothing else.
        assert_eq!(rs.gets(), ["/.well-known/oauth-protected-resource/mcp"]);
        // A second request reuses the token.
        assert_eq!(send(&c, &rs.url, "read").await.unwrap(), StatusCode::OK);
        assert_eq!(asrv.authorization_requests().len(), 1);
    })
    .await;
}

#[tokio::test]
async fn discovery_tries_path_then_root() {
    within(async {
        let (asrv, rs) = fixture().await;
        rs.configure(|c| {
            c.prm_paths = vec!["/.well-known/oauth-protected-resource".into()];
            c.challenge = "Bearer realm=\"mcp\"".into();
        });
        let c = oauth(&rs.url);
        assert_eq!(send(&c, &rs.url, "read").await.unwrap(), StatusCode::OK);
        assert_eq!(
            rs.gets(),
            [
                "/.well-known/oauth-protected-resource/mcp",
                "/.well-known/oauth-protected-resource"
            ]
        );
        assert_eq!(asrv.token_requests("authorization_code"), 1);
    })
    .await;
}

#[tokio::test]
async fn discovery_follows_the_challenge_url_first() {
    within(async {
        let (_asrv, rs) = fixture().await;
        let custom = format!("http://{}/custom/prm.json", rs.addr);
        rs.configure(|c| {
            c.prm_paths = vec!["/custom/prm.json".into()];
            c.challenge = format!("Bearer resource_metadata=\"{custom}\"");
        });
        let c = oauth(&rs.url);
        assert_eq!(send(&c, &rs.url, "read").await.unwrap(), StatusCode::OK);
        assert_eq!(rs.gets(), ["/custom/prm.json"]);
    })
    .await;
}

#[tokio::test]
async fn pkce_verification_failure_is_reported() {
    within(async {
        let (asrv, rs) = fixture().await;
        asrv.configure(|s| s.corrupt_pkce = true);
        let c = oauth(&rs.url);
        let e = send(&c, &rs.url, "read").await.unwrap_err();
        assert!(e.contains("invalid_grant"), "{e}");
        assert!(c.credentials().await.unwrap().is_none());
    })
    .await;
}

#[tokio::test]
async fn state_mismatch_stops_before_the_token_request() {
    within(async {
        let (asrv, rs) = fixture().await;
        asrv.configure(|s| s.state_override = Some("forged".into()));
        let c = oauth(&rs.url);
        let e = send(&c, &rs.url, "read").await.unwrap_err();
        assert!(e.contains("state"), "{e}");
        assert_eq!(asrv.token_requests("authorization_code"), 0);
    })
    .await;
}

#[tokio::test]
async fn iss_mismatch_and_missing_iss_are_refused() {
    within(async {
        let (asrv, rs) = fixture().await;
        asrv.configure(|s| s.iss = IssMode::Wrong);
        let e = send(&oauth(&rs.url), &rs.url, "read").await.unwrap_err();
        assert!(e.contains("iss"), "{e}");
        asrv.configure(|s| s.iss = IssMode::Omit);
        let e = send(&oauth(&rs.url), &rs.url, "read").await.unwrap_err();
        assert!(e.contains("iss"), "{e}");
        assert_eq!(asrv.token_requests("authorization_code"), 0);
        // Not advertised and absent: accepted.
        asrv.configure(|s| s.advertise_iss = false);
        assert_eq!(
            send(&oauth(&rs.url), &rs.url, "read").await.unwrap(),
            StatusCode::OK
        );
    })
    .await;
}

#[tokio::test]
async fn resource_mismatch_is_refused_before_authorization() {
    within(async {
        let (asrv, rs) = fixture().await;
        rs.configure(|c| {
            c.prm = json!({"resource": "https://evil.example.com/mcp",
                           "authorization_servers": [asrv.issuer()]})
        });
        let c = oauth(&rs.url);
        let e = send(&c, &rs.url, "read").await.unwrap_err();
        assert!(e.contains("refusing"), "{e}");
        assert!(asrv.authorization_requests().is_empty());
        assert!(asrv.registrations().is_empty());
    })
    .await;
}

#[tokio::test]
async fn scope_selection_rules() {
    within(async {
        let (asrv, rs) = fixture().await;
        // 1. The challenge's scope wins over scopes_supported.
        let prm_url = format!(
            "http://{}/.well-known/oauth-protected-resource/mcp",
            rs.addr
        );
        let url = rs.url.clone();
        let issuer = asrv.issuer();
        rs.configure(|c| {
            c.challenge = format!("Bearer scope=\"files:read\", resource_metadata=\"{prm_url}\"");
            c.prm = json!({"resource": url, "authorization_servers": [issuer],
                           "scopes_supported": ["a", "b"]});
        });
        send(&oauth(&rs.url), &rs.url, "read").await.unwrap();
        // 2. Without one, every scope of scopes_supported.
        rs.configure(|c| c.challenge = format!("Bearer resource_metadata=\"{prm_url}\""));
        send(&oauth(&rs.url), &rs.url, "read").await.unwrap();
        // 3. offline_access is added when the authorization server lists it.
        asrv.configure(|s| s.scopes_supported = Some(vec!["offline_access".into()]));
        send(&oauth(&rs.url), &rs.url, "read").await.unwrap();
        let reqs = asrv.authorization_requests();
        assert_eq!(reqs[0]["scope"], "files:read");
        assert_eq!(reqs[1]["scope"], "a b");
        assert_eq!(reqs[2]["scope"], "a b offline_access");
        // DCR asked for the refresh grant.
        let grants = &asrv.registrations()[2]["grant_types"];
        assert_eq!(*grants, json!(["authorization_code", "refresh_token"]));
    })
    .await;
}

#[tokio::test]
async fn step_up_requests_the_union_of_scopes() {
    within(async {
        let (asrv, rs) = fixture().await;
        let prm_url = format!(
            "http://{}/.well-known/oauth-protected-resource/mcp",
            rs.addr
        );
        rs.configure(|c| {
            c.challenge = format!("Bearer scope=\"files:read\", resource_metadata=\"{prm_url}\"")
        });
        let c = oauth(&rs.url);
        assert_eq!(send(&c, &rs.url, "read").await.unwrap(), StatusCode::OK);
        assert_eq!(send(&c, &rs.url, "write").await.unwrap(), StatusCode::OK);
        let reqs = asrv.authorization_requests();
        assert_eq!(reqs.len(), 2);
        assert_eq!(reqs[1]["scope"], "files:read files:write");
        // One registration serves both authorizations.
        assert_eq!(asrv.registrations().len(), 1);
    })
    .await;
}

#[tokio::test]
async fn step_up_gives_up_after_three_attempts() {
    within(async {
        let (asrv, rs) = fixture().await;
        rs.configure(|c| c.always_forbidden = true);
        let c = oauth(&rs.url);
        // The transport sends a request at most four times; the caller then
        // tries again, and again.
        let first = send(&c, &rs.url, "read").await;
        assert_eq!(first, Ok(StatusCode::FORBIDDEN));
        let second = send(&c, &rs.url, "read").await.unwrap_err();
        assert!(second.contains("3 authorization attempts"), "{second}");
        let before = asrv.authorization_requests().len();
        let third = send(&c, &rs.url, "read").await.unwrap_err();
        assert!(third.contains("3 authorization attempts"), "{third}");
        let reqs = asrv.authorization_requests();
        assert_eq!(
            reqs.len(),
            before,
            "no new authorization once the limit is hit"
        );
        let step_ups = reqs
            .iter()
            .filter(|q| q.get("scope").map(String::as_str) == Some("files:write"))
            .count();
        assert_eq!(step_ups, 3);
    })
    .await;
}

#[tokio::test]
async fn refreshes_before_expiry() {
    within(async {
        let (asrv, rs) = fixture().await;
        let store = Arc::new(MemoryTokenStore::new());
        let ua = Arc::new(HeadlessUserAgent::new(REDIRECT).unwrap());
        let first = OAuthClient::builder(&rs.url, Grant::AuthorizationCode(ua.clone()))
            .store(store.clone())
            .build()
            .unwrap();
        send(&first, &rs.url, "read").await.unwrap();
        // The stored token now expires in 10 s (the client refreshes 60 s
        // ahead): the next request refreshes first, without a 401.
        let mut creds = store.load(&rs.url).unwrap().unwrap();
        let old = creds.tokens.access_token.clone();
        creds.tokens.expires_at = Some(tessera_auth::testing::now() + 10);
        store.save(&rs.url, &creds).unwrap();
        let second = OAuthClient::builder(&rs.url, Grant::AuthorizationCode(ua))
            .store(store.clone())
            .build()
            .unwrap();
        assert_eq!(
            send(&second, &rs.url, "read").await.unwrap(),
            StatusCode::OK
        );
        assert_eq!(asrv.token_requests("refresh_token"), 1);
        assert_eq!(asrv.authorization_requests().len(), 1);
        let now = store.load(&rs.url).unwrap().unwrap().tokens;
        assert_ne!(now.access_token, old);
        assert!(now.refresh_token.is_some());
        let seen = rs.tokens_seen.lock().unwrap().clone();
        assert_eq!(seen.last(), Some(&now.access_token));
        assert!(!seen.contains(&old) || seen.iter().filter(|t| **t == old).count() == 1);
    })
    .await;
}

#[tokio::test]
async fn pre_registered_client_bound_to_another_issuer_is_refused() {
    within(async {
        let (asrv, rs) = fixture().await;
        asrv.register_client("pre", "secret");
        let ua = HeadlessUserAgent::new(REDIRECT).unwrap();
        let c = OAuthClient::builder(&rs.url, Grant::AuthorizationCode(Arc::new(ua)))
            .client(
                ClientCredentials::confidential("pre", "secret")
                    .for_issuer("https://other.example"),
            )
            .build()
            .unwrap();
        let e = send(&c, &rs.url, "read").await.unwrap_err();
        assert!(e.contains("bound to issuer"), "{e}");
        assert!(asrv.registrations().is_empty());
    })
    .await;
}

#[tokio::test]
async fn token_file_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub").join("tokens.json");
    let store = FileTokenStore::new(&path);
    assert!(store.load("http://x/mcp").unwrap().is_none());
    let mut tokens = TokenSet::bearer("access-1");
    tokens.refresh_token = Some("refresh-1".into());
    tokens.expires_at = Some(4_000_000_000);
    let creds = StoredCredentials::new(
        "http://x/mcp",
        "http://as",
        ClientCredentials::public("client-1"),
        tokens,
    );
    store.save("http://x/mcp", &creds).unwrap();
    store.save("http://y/mcp", &creds).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let dmode = std::fs::metadata(path.parent().unwrap())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(dmode & 0o777, 0o700);
    }
    let again = FileTokenStore::new(&path);
    assert_eq!(again.load("http://x/mcp").unwrap(), Some(creds.clone()));
    again.remove("http://x/mcp").unwrap();
    assert!(again.load("http://x/mcp").unwrap().is_none());
    assert!(again.load("http://y/mcp").unwrap().is_some());
    // A broken file is an error, not a panic.
    std::fs::write(&path, b"not json").unwrap();
    assert!(matches!(
        again.load("http://y/mcp"),
        Err(OAuthError::Store(_))
    ));
}

#[tokio::test]
async fn a_stored_token_is_used_without_a_flow() {
    within(async {
        let (asrv, rs) = fixture().await;
        let store = Arc::new(MemoryTokenStore::new());
        // Log in once with one client…
        let ua = HeadlessUserAgent::new(REDIRECT).unwrap();
        let first = OAuthClient::builder(&rs.url, Grant::AuthorizationCode(Arc::new(ua.clone())))
            .store(store.clone())
            .build()
            .unwrap();
        send(&first, &rs.url, "read").await.unwrap();
        // …then a new client (a new process) finds the token in the store.
        let second = OAuthClient::builder(&rs.url, Grant::AuthorizationCode(Arc::new(ua)))
            .store(store.clone())
            .build()
            .unwrap();
        assert_eq!(
            send(&second, &rs.url, "read").await.unwrap(),
            StatusCode::OK
        );
        assert_eq!(asrv.authorization_requests().len(), 1);
        second.logout().await.unwrap();
        assert!(store.load(&rs.url).unwrap().is_none());
    })
    .await;
}
