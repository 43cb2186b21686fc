//! OAuth sign-in from the Servers tab, against `tessera serve --http` behind
//! the test authorization server: refused at first (the Network tab labels
//! the 401 as an authorization challenge); the page shows the authorization URL, the
//! user opens it (a second tab; the test authorization server approves at
//! once and redirects to the inspector's loopback listener), the page says
//! signed in, and connecting to the server then uses the stored token.

use serde_json::json;

use tessera_auth::testing::TestAuthorizationServer;

use super::webdriver::Session;
use super::{artifacts, common, in_browser, text_has};

// The authorization server runs on this runtime: the test's waits must not block it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sign_in_with_oauth_from_the_page_then_connect() {
    let asrv = TestAuthorizationServer::start().await.unwrap();
    let (_server, url) = common::serve_behind(&asrv).await;
    let tokens = artifacts().join(format!("tokens-{}.json", std::process::id()));
    let _ = std::fs::remove_file(&tokens);
    let inspector = tokio::task::spawn_blocking({
        let tokens = tokens.clone();
        move || {
            common::start_inspect_env(
                &[],
                &[("TESSERA_TOKEN_FILE", tokens.to_str().unwrap())],
                super::fixture::START,
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
            json!([]),
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
        // The OAuth debugger: every step of the flow, each held to its rules.
        b.run("document.getElementById('srv-oauth-debug').open = true", json!([]))
            .await;
        let steps = b
            .wait_for(
                "(() => { const s = [...document.querySelectorAll('#srv-oauth-steps > li')];
                   return s.some(li => li.dataset.phase === 'mcp request' && li.querySelector('.label').textContent.endsWith('200'))
                     && s.map(li => [li.dataset.phase, li.dataset.checks, li.querySelector('.label').textContent]); })()",
            )
            .await;
        let steps = steps.as_array().unwrap();
        let phases: Vec<&str> = steps.iter().map(|s| s[0].as_str().unwrap()).collect();
        let first = |p: &str| {
            phases
                .iter()
                .position(|x| *x == p)
                .unwrap_or_else(|| panic!("no {p} step in {steps:?}"))
        };
        // The server's challenge starts the flow; the same request goes again with the token.
        assert!(first("mcp request") < first("discovery"), "{phases:?}");
        assert!(steps[0][2].as_str().unwrap().ends_with("401"), "{steps:?}");
        assert!(first("discovery") < first("registration"), "{phases:?}");
        assert!(first("registration") < first("authorization"), "{phases:?}");
        assert!(first("authorization") < first("token"), "{phases:?}");
        let last_call = phases.iter().rposition(|x| *x == "mcp request").unwrap();
        assert!(first("token") < last_call, "{phases:?}");
        assert!(steps[last_call][2].as_str().unwrap().ends_with("200"), "{steps:?}");
        // One rule is broken, and shown so: the test authorization server
        // answers tokens without `Cache-Control: no-store` (RFC 6749 5.1).
        let broken: Vec<_> = steps.iter().filter(|s| s[1] != "ok").collect();
        assert_eq!(broken.len(), 1, "rules broken: {broken:?}");
        assert_eq!(broken[0][0], "token", "{broken:?}");
        let why = b
            .run(
                "return [...document.querySelectorAll(\"#srv-oauth-steps > li[data-checks=failing] li[data-ok=false]\")].map(li => li.textContent)",
                json!([]),
            )
            .await;
        assert_eq!(why.as_array().unwrap().len(), 1, "{why}");
        assert!(why[0].as_str().unwrap().starts_with("✗ RFC 6749: the answer is sent with Cache-Control: no-store"), "{why}");
        // The token is never shown, only its length.
        let shown = b
            .run("return document.getElementById('srv-oauth-steps').textContent", json!([]))
            .await;
        assert!(shown.as_str().unwrap().contains("characters, masked"), "{shown}");
        // The Network tab labels the flow's exchanges by phase.
        b.click("#tab-network").await;
        b.wait_for(&text_has("#net-list", "OAuth: token")).await;
        b.click("#tab-servers").await;
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
