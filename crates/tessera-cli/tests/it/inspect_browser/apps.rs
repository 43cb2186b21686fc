//! MCP Apps in the page: the reference server's `app_counter` opened on the
//! Apps tab, rendered in the sandbox (a second origin; the view in an inner
//! frame of an opaque origin, under the view's Content-Security-Policy),
//! the view calling its tool through the bridge, the bridge's traffic
//! listed, the app torn down; an HTML resource rendered in the sandbox
//! without running its script; the rounds of a multi round-trip call
//! grouped in the Protocol tab.

use serde_json::json;

use super::webdriver::Session;
use super::{common, in_browser, text_has};

#[tokio::test]
async fn an_app_renders_in_the_sandbox_and_calls_its_tool_through_the_bridge() {
    let bin = env!("CARGO_BIN_EXE_tessera");
    let inspector = common::start_inspect(&["--", bin, "serve", "--stdio"], super::fixture::START);
    in_browser("apps", async |b: &Session| {
        b.goto(&inspector.url).await;
        b.wait_for("document.querySelector('#tool-list [data-tool=app_counter]')")
            .await;
        // The Tools tab marks the tool as having an app.
        b.wait_for(&text_has("#tool-list [data-tool=app_counter]", "app"))
            .await;
        b.click("#tab-apps").await;
        b.click("#app-list [data-app-tool=app_counter]").await;
        b.click("#app-open").await;

        // The frame comes from the sandbox's own port, with the view's policy shown.
        b.wait_for("document.querySelector('#app-frame-box iframe.app-frame')")
            .await;
        let (page, frame) = (
            b.run("return location.origin", json!([])).await,
            b.run(
                "return new URL(document.querySelector('#app-frame-box iframe').src).origin",
                json!([]),
            )
            .await,
        );
        assert_ne!(page, frame, "the sandbox must be another origin");
        let sandbox = b
            .run(
                "return document.querySelector('#app-frame-box iframe').getAttribute('sandbox')",
                json!([]),
            )
            .await;
        assert_eq!(sandbox, "allow-scripts allow-same-origin");
        b.wait_for(&text_has("#app-policy pre", "connect-src 'none'"))
            .await;

        // The handshake, then the tool's input and result, in the bridge list.
        b.wait_for("document.querySelector(\"#app-traffic li[data-method='ui/notifications/tool-result']\")")
            .await;
        let methods = b
            .run(
                "return [...document.querySelectorAll('#app-traffic li')].map(li => li.dataset.method)",
                json!([]),
            )
            .await;
        let methods: Vec<&str> = methods
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|m| m.as_str())
            .collect();
        let at = |m: &str| {
            methods
                .iter()
                .position(|x| *x == m)
                .unwrap_or_else(|| panic!("{m} missing from {methods:?}"))
        };
        assert!(at("ui/initialize") < at("ui/notifications/initialized"));
        assert!(at("ui/notifications/initialized") < at("ui/notifications/tool-input"));
        assert!(at("ui/notifications/tool-input") < at("ui/notifications/tool-result"));

        // Inside the view: it shows the count the tool returned.
        b.enter_frame("#app-frame-box iframe").await;
        b.enter_frame("iframe").await;
        b.wait_for("document.getElementById('count').textContent === '1'")
            .await;
        // It is an opaque origin that cannot reach the page or the network.
        let isolation = b
            .run_async(
                "const [api, done] = arguments;
                 let parentDoc = 'reachable';
                 try { void window.parent.document.body; } catch (e) { parentDoc = 'blocked'; }
                 fetch(api, {mode: 'no-cors'})
                   .then(() => done([self.origin, parentDoc, 'fetched']),
                         () => done([self.origin, parentDoc, 'refused']));",
                json!([format!("{}/api/info", inspector.base)]),
            )
            .await;
        assert_eq!(isolation, json!(["null", "blocked", "refused"]));
        // A click in the view calls the tool through the bridge.
        b.click("#bump").await;
        b.wait_for("document.getElementById('count').textContent === '2'")
            .await;
        b.leave_frames().await;
        b.wait_for(&text_has("#app-messages [data-kind='tools/call']", "app_counter"))
            .await;
        // The docs' screenshot of the Apps tab.
        let png = b.screenshot().await.expect("a screenshot");
        std::fs::write(super::artifacts().join("apps.png"), &png).unwrap();
        if std::env::var_os("TESSERA_UPDATE_SCREENSHOT").is_some() {
            let docs = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/images");
            std::fs::create_dir_all(&docs).unwrap();
            std::fs::write(docs.join("inspect-apps.png"), &png).unwrap();
        }
        b.wait_for("[...document.querySelectorAll('#app-traffic li')].filter(li => li.dataset.method === 'tools/call').length === 1")
            .await;
        // The view's call reached the server: the Protocol tab has two tools/call.
        b.click("#tab-protocol").await;
        b.wait_for("[...document.querySelectorAll('#proto-list li')].filter(li => li.dataset.method === 'tools/call ✓').length === 2")
            .await;

        // Closing tears the view down (ui/resource-teardown, answered or not).
        b.click("#tab-apps").await;
        b.click("#app-close").await;
        b.wait_for("!document.querySelector('#app-frame-box')").await;

        // The view's HTML as a resource: rendered in the sandbox, its script not run.
        b.click("#tab-resources").await;
        b.click("#res-list [data-uri='ui://tessera/counter']").await;
        b.wait_for("document.querySelector('#res-view iframe.html-view')")
            .await;
        b.enter_frame("#res-view iframe.html-view").await;
        b.enter_frame("iframe").await;
        b.wait_for("document.getElementById('bump')").await;
        let count = b
            .run("return document.getElementById('count').textContent", json!([]))
            .await;
        assert_eq!(count, "?", "the resource's script must not run");
        b.leave_frames().await;

        // A multi round-trip call (2026-07-28: the elicitation comes as an
        // input_required answer): its rounds are grouped under the first request.
        b.click("#tab-tools").await;
        b.fill("#tool-search", "test_elicitation").await;
        b.click("#tool-list [data-tool=test_elicitation]").await;
        b.fill("[data-arg=message]", "Rounds?").await;
        b.click("#tool-call").await;
        b.wait_for(&text_has("#asks", "Rounds?")).await;
        b.fill("#asks [data-arg=username]", "ada").await;
        b.fill("#asks [data-arg=email]", "ada@example.com").await;
        b.click("#asks [data-action=accept]").await;
        b.wait_for(&text_has("#tool-result pre.text", "action=accept"))
            .await;
        b.click("#tab-protocol").await;
        let rounds = b
            .wait_for(
                "(() => { const g = [...document.querySelectorAll('#proto-list > li.grouped')]
                   .find(li => li.dataset.method === 'tools/call');
                   const r = g ? [...g.querySelectorAll('ol.rounds > li')].map(li => li.dataset.method) : [];
                   return r.length >= 3 && r; })()",
            )
            .await;
        assert_eq!(
            rounds,
            json!(["tools/call ⋯ input required", "tools/call", "tools/call ✓"])
        );
        b.wait_for(&text_has("#proto-list > li.grouped ol.rounds", "round 2"))
            .await;
    })
    .await;
}
