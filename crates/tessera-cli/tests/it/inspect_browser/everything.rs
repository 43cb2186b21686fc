//! The page against a third-party server: the official
//! `@modelcontextprotocol/server-everything` (stdio, installed by
//! `tests/interop/run.sh --setup`, which `.ci/run` runs). Connect from the
//! Servers tab, call a tool, see an image result, cancel a long call, read a
//! text and a binary resource, answer an elicitation.

use std::path::PathBuf;

use serde_json::json;

use super::webdriver::Session;
use super::{in_browser, text_has};

/// server-everything's entry point, or `None` (after saying why) when the
/// test may be skipped.
fn everything() -> Option<PathBuf> {
    let js = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(
        "../../tests/interop/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
    );
    let node = super::webdriver::which("node");
    if js.is_file() && node.is_some() {
        return Some(js);
    }
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
    assert!(
        !ci,
        "CI is set but node or server-everything is missing: run tests/interop/run.sh --setup (.ci/run does)"
    );
    use std::io::Write as _;
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED: the server-everything browser test needs node and tests/interop/node_modules \
         (bash tests/interop/run.sh --setup)"
    );
    None
}

#[tokio::test]
async fn the_official_everything_server_in_the_page() {
    let Some(js) = everything() else { return };
    let inspector = super::common::start_inspect(&[], super::fixture::START);
    in_browser("everything", async |b: &Session| {
        b.goto(&inspector.url).await;
        b.wait_for("document.body.dataset.ready === 'true'").await;
        b.fill("#srv-target", "node").await;
        b.fill("#srv-args", &format!("{}\nstdio", js.display())).await;
        b.click("#srv-connect").await;
        // server-everything registers its client-dependent tools after the
        // handshake, each with a tools/list_changed, so the page reloads its
        // list several times. It keeps an unchanged tool's button across
        // those reloads; the test still waits for the settled list (no load
        // due, the last of those tools shown) before it clicks.
        b.wait_for(
            "document.getElementById('tool-list').dataset.state === 'ready' \
             && document.querySelector('#tool-list [data-tool=simulate-research-query]')",
        )
        .await;
        // A legacy-era server (the TypeScript SDK): the badge says so.
        b.wait_for(&text_has("#conn-badges", "legacy")).await;

        b.click("#tool-list [data-tool=echo]").await;
        b.fill("[data-arg=message]", "from the browser").await;
        // A reload of the list (what each list_changed does) keeps the
        // tool's very button, its selection and what was typed in its form.
        b.run(
            "document.querySelector('#tool-list [data-tool=echo]').dataset.mark = 'kept'",
            json!([]),
        )
        .await;
        b.click("#tool-refresh").await;
        b.wait_for("document.getElementById('tool-list').dataset.state === 'ready'")
            .await;
        let after = b
            .run(
                "const e = document.querySelector('#tool-list [data-tool=echo]');
                 return [e.dataset.mark, e.getAttribute('aria-pressed'),
                         document.querySelector('[data-arg=message]').value];",
                json!([]),
            )
            .await;
        assert_eq!(after, json!(["kept", "true", "from the browser"]));
        b.click("#tool-call").await;
        b.wait_for(&text_has("#tool-result pre.text", "from the browser"))
            .await;

        // An image result is shown as an image.
        b.fill("#tool-search", "tiny").await;
        b.click("#tool-list [data-tool=get-tiny-image]").await;
        b.click("#tool-call").await;
        super::media_loaded(b, "#tool-result img.media").await;

        // Resource links, each with its URI.
        b.fill("#tool-search", "links").await;
        b.click("#tool-list [data-tool=get-resource-links]").await;
        b.click("#tool-call").await;
        b.wait_for("document.querySelectorAll('#tool-result .link').length >= 1 && document.querySelector('#tool-result .link').textContent.includes('demo://')")
            .await;

        // A long operation reports progress and is cancelled.
        b.fill("#tool-search", "long").await;
        b.click("#tool-list [data-tool=trigger-long-running-operation]")
            .await;
        b.fill("[data-arg=duration]", "60").await;
        b.fill("[data-arg=steps]", "60").await;
        b.click("#tool-call").await;
        b.wait_for("!document.getElementById('tool-progress').hidden && document.getElementById('tool-progress').value > 0")
            .await;
        b.click("#tool-cancel").await;
        b.wait_for("document.getElementById('tool-cancelled')").await;

        // An elicitation, answered in the page's form.
        b.fill("#tool-search", "elicitation").await;
        b.click("#tool-list [data-tool=trigger-elicitation-request]")
            .await;
        b.click("#tool-call").await;
        b.wait_for("document.querySelector('#asks [data-action=accept]')")
            .await;
        b.click("#asks [data-action=decline]").await;
        b.wait_for(&text_has("#tool-result", "User declined")).await;

        // Resources: a text document and a binary one.
        b.click("#tab-resources").await;
        b.wait_for("document.querySelector('#res-list [data-uri]')").await;
        let text_uri = b
            .run(
                "return [...document.querySelectorAll('#res-list [data-uri]')].map(e => e.dataset.uri).find(u => u.endsWith('.md'))",
                json!([]),
            )
            .await;
        let text_uri = text_uri.as_str().expect("a markdown document is listed");
        b.click(&format!("#res-list [data-uri='{text_uri}']")).await;
        b.wait_for("document.querySelector('#res-view pre.text')").await;
        let blob_form = b
            .run(
                "return [...document.querySelectorAll('#res-templates form')].findIndex(f => f.textContent.includes('/blob/'))",
                json!([]),
            )
            .await;
        let n = blob_form.as_i64().expect("a blob template") + 1;
        b.fill(
            &format!("#res-templates form:nth-of-type({n}) [data-var=resourceId]"),
            "2",
        )
        .await;
        b.click(&format!("#res-templates form:nth-of-type({n}) button[type=submit]"))
            .await;
        b.wait_for(&text_has("#res-view", "binary content")).await;
    })
    .await;
}
