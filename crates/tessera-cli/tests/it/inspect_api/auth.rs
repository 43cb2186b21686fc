//! An OAuth-protected server (`tessera serve --http` behind the test
//! authorization server): refused without a token, reached with one given
//! on the command line (`-H`) or with the connection (`headers`).

use serde_json::json;
use tessera_auth::testing::TestAuthorizationServer;

use super::client::*;
use super::common;

// The authorization server runs on this runtime: the test's own waits must not block it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_protected_server_needs_the_token_given_on_the_command_line_or_with_the_connection() {
    let asrv = TestAuthorizationServer::start().await.unwrap();
    let (_server, url) = common::serve_behind(&asrv).await;
    let token = asrv.token(&asrv.claims(&url, &["mcp"]));

    // No token: refused, and the message says the server wants authorization.
    let bare = common::start_inspect(&[], START);
    let api = Api::of(&bare);
    let v = api
        .expect(
            502,
            reqwest::Method::POST,
            "connections",
            Some(json!({"url": url, "era": "legacy"})),
        )
        .await;
    says(&v, "401");

    // The token with the connection.
    let conn = api
        .post(
            "connections",
            json!({"url": url, "era": "legacy", "headers": [format!("Authorization: Bearer {token}")]}),
        )
        .await;
    let id = conn["id"].as_u64().unwrap();
    let tools = api.get(&format!("connections/{id}/tools")).await;
    assert!(tools.to_string().contains("\"echo\""));

    // The token on the command line: the launch TARGET connects with it.
    let header = format!("Authorization: Bearer {token}");
    let with = common::start_inspect(&["-H", &header, "--era", "legacy", &url], START);
    let api = Api::of(&with);
    let events = events_until(&api, |ev| {
        ev.iter()
            .any(|e| e["type"] == "connection" && e["state"] == "connected")
    })
    .await;
    let connected = events.iter().find(|e| e["state"] == "connected").unwrap();
    assert_eq!(connected["transport"], "http");
    assert!(asrv.jwks_requests() >= 1);
}
