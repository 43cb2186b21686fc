//! OAuth sign-in from the Servers tab, against `tessera serve --http` behind
//! the test authorization server: refused at first (the Network tab labels
//! the 401 as an authorization challenge); the page shows the authorization URL, the
//! user opens it (a second tab; the test authorization server approves at
//! once and redirects to the inspector's loopback listener), the page says
//! signed in, and connecting to the server then uses the stored token.

use std::process::Command;
use std::time::Duration;

use tessera_auth::testing::TestAuthorizationServer;

use super::webdriver::Session;
use super::{artifacts, common, in_browser, text_has};

// The authorization server runs on this runtime: the test's waits must not block it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sign_in_with_oauth_from_the_page_then_connect() {
    let asrv = TestAuthorizationServer::start().await.unwrap();
    let issuer = asrv.issuer();
    let (server, port) = tokio::task::spawn_blocking(move || {
        let mut serve = Command::new(env!("CARGO_BIN_EXE_tessera"));
        serve.args([
            "serve",
            "--http",
            "127.0.0.1:0",
            "--auth-issuer",
            &issuer,
            "--auth-scopes",
            "mcp",
        ]);
        common::spawn_serving(&mut serve, Duration::from_secs(30))
    })
    .await
    .unwrap();
    let _server = common::Running(server);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let tokens = artifacts().join(format!("tokens-{}.json", std::process::id()));
    let _ = std::fs::remove_file(&tokens);
    let inspector = tokio::task::spawn_blocking({
        let tokens = tokens.clone();
        move || {
            common::start_inspect_env(
                &[],
                &[("TESSERA_TOKEN_FILE", tokens.to_str().unwrap())],
                Duration::from_secs(30),
            )
        }
    })
    .await
    .unwrap();
    in_browser("signin", async |b: &Session| {
        b.goto(&inspector.url).await;
        b.wait_for("document.body.dataset.ready === 'true'").await;
        b.run(
            "const s = document.getElementById('srv-kind'); s.value = 'url'; s.dispatchEvent(new Event('change'))",
            serde_json::json!([]),
        )
        .await;
        b.fill("#srv-target", &url).await;
        // Without a token the server refuses: the Network tab labels the challenge.
        b.click("#srv-connect").await;
        b.wait_for(&text_has("#status", "Could not connect")).await;
        b.click("#tab-network").await;
        b.wait_for(&text_has("#net-list li[data-status='401']", "auth challenge"))
            .await;
        b.click("#tab-servers").await;
        b.click("#srv-signin").await;
        let href = b
            .wait_for("document.querySelector('#srv-login a[data-role=authorize]')?.href")
            .await;
        let href = href.as_str().unwrap().to_string();
        assert!(href.contains("code_challenge="), "{href}");
        // The user opens the authorization page in another tab.
        let page = b.window().await;
        b.new_tab().await;
        b.goto(&href).await;
        b.switch_to(&page).await;
        b.wait_for(&text_has("#srv-login [data-state=signed-in]", "Signed in"))
            .await;
        // Connecting now uses the stored token.
        b.click("#srv-connect").await;
        b.wait_for("document.querySelector('#tool-list [data-tool=echo]')")
            .await;
    })
    .await;
    let stored = std::fs::read_to_string(&tokens).unwrap_or_default();
    let _ = std::fs::remove_file(&tokens);
    assert!(
        stored.contains(&url),
        "the token file has no entry for {url}"
    );
}
