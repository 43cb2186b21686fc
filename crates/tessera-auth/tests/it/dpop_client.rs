//! The OAuth client's DPoP half end to end: a `tessera_client::Client`
//! with an `OAuthClient` against `McpHttp` behind the bearer layer in DPoP
//! `required` mode with server nonces, and the test authorization server
//! issuing DPoP-bound tokens after a nonce round of its own. The key is
//! stored with the tokens (0600) and a second client on the same store
//! uses both without a new grant; a refresh stays bound to the key.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tessera_auth::client::{FileTokenStore, Grant, HeadlessUserAgent, OAuthClient, TokenStore};
use tessera_auth::server::{BearerAuthLayer, DpopMode, DpopNonces, DpopSettings, JwtVerifier};
use tessera_auth::testing::TestAuthorizationServer;
use tessera_client::Client;
use tessera_http::{HttpClientTransport, McpHttp, ResponseMode};
use tessera_server::{Server, tool};
use tower::Layer;

#[tokio::test]
async fn dpop_bound_tokens_with_nonces_and_a_stored_key() {
    tokio::time::timeout(Duration::from_secs(60), run())
        .await
        .expect("the test did not finish in time");
}

/// A client on `store`, refreshing tokens that expire within `skew` seconds.
async fn connect(
    resource: &str,
    store: Arc<dyn TokenStore>,
    skew: u64,
) -> (Client, Arc<OAuthClient>) {
    let ua = HeadlessUserAgent::new("http://127.0.0.1:9/callback").unwrap();
    let oauth = Arc::new(
        OAuthClient::builder(resource, Grant::AuthorizationCode(Arc::new(ua)))
            .client_name("dpop-e2e")
            .store(store)
            .refresh_skew_secs(skew)
            .build()
            .unwrap(),
    );
    let transport = HttpClientTransport::new(resource)
        .unwrap()
        .with_auth(oauth.clone());
    let client = Client::builder("dpop-e2e", "1.0.0")
        .connect_transport(transport)
        .await
        .expect("connect through the OAuth flow");
    (client, oauth)
}

async fn run() {
    let asrv = TestAuthorizationServer::start().await.unwrap();
    asrv.configure(|s| {
        s.dpop = true;
        s.dpop_nonce = Some("as-nonce-1".into());
    });
    let server = Server::builder()
        .name_version("dpop-client-e2e", "1.0.0")
        .tool(tool("hello").handler(|| async { "hello" }))
        .build()
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let resource = format!("http://{addr}/mcp");
    let mcp = McpHttp::builder(server)
        .bind_address(addr)
        .endpoint_path("/mcp")
        .response_mode(ResponseMode::Json)
        .build();
    let verifier = JwtVerifier::builder(asrv.issuer(), &resource)
        .min_refresh_interval(Duration::ZERO)
        .build();
    let layer = BearerAuthLayer::builder(&resource, verifier)
        .authorization_server(asrv.issuer())
        .require_scopes(["mcp"])
        .scopes_supported(["mcp"])
        .dpop(DpopSettings::new(DpopMode::Required).nonces(DpopNonces::random(300)))
        .build();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(tessera_http::serve_with(
        listener,
        mcp.clone(),
        layer.layer(mcp),
        async move {
            let _ = stopped.await;
        },
    ));

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokens.json");
    let store: Arc<dyn TokenStore> = Arc::new(FileTokenStore::new(&path));
    let (client, oauth) = connect(&resource, store.clone(), 60).await;
    let r = client.call_tool("hello", json!({})).await.unwrap();
    assert_ne!(r.is_error, Some(true), "{r:?}");
    client.close().await;
    let creds = oauth.credentials().await.unwrap().unwrap();
    assert!(creds.tokens.is_dpop(), "{:?}", creds.tokens.token_type);
    assert!(
        creds.dpop_key.is_some(),
        "the key is stored with the tokens"
    );
    assert_eq!(asrv.authorization_requests().len(), 1);
    // Two code-grant requests: the first got use_dpop_nonce, the retry
    // carried the authorization server's nonce.
    assert_eq!(asrv.token_requests("authorization_code"), 2);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "the store is private");
    }

    // Another client (another process, in effect) on the same store: the
    // stored token and key work, with no new grant.
    let (client, oauth2) = connect(&resource, store.clone(), 60).await;
    let r = client.call_tool("hello", json!({})).await.unwrap();
    assert_ne!(r.is_error, Some(true), "{r:?}");
    assert_eq!(asrv.authorization_requests().len(), 1, "no new grant");
    assert_eq!(asrv.token_requests("authorization_code"), 2);
    let again = oauth2.credentials().await.unwrap().unwrap();
    assert_eq!(again.tokens.access_token, creds.tokens.access_token);

    client.close().await;

    // A client that finds the token about to expire refreshes it, proven
    // with the same key (the refresh token is bound to it).
    let (client, oauth3) = connect(&resource, store.clone(), 7200).await;
    let r = client.call_tool("hello", json!({})).await.unwrap();
    assert_ne!(r.is_error, Some(true), "{r:?}");
    assert!(asrv.token_requests("refresh_token") >= 1);
    assert_eq!(asrv.authorization_requests().len(), 1, "no new grant");
    let refreshed = oauth3.credentials().await.unwrap().unwrap();
    assert_ne!(refreshed.tokens.access_token, creds.tokens.access_token);
    assert!(refreshed.tokens.is_dpop());
    assert_eq!(refreshed.dpop_key, creds.dpop_key);
    client.close().await;
    let _ = stop.send(());
    let _ = task.await;
}
