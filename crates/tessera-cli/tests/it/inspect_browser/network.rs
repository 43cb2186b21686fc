//! The Network tab against `tessera serve --http` in the 2026-07-28 era:
//! each HTTP exchange with its status, the `Mcp-*` headers highlighted and
//! each checked against the Streamable HTTP rules, credentials masked.

use serde_json::json;

use super::webdriver::Session;
use super::{common, fixture, in_browser, text_has};

#[tokio::test]
async fn the_network_tab_shows_each_exchange_and_checks_its_mcp_headers() {
    let (_server, url) = fixture::serve_http();
    let inspector = common::start_inspect(
        &[
            "--era",
            "modern",
            "-H",
            "Authorization: Bearer secret-token-123",
            &url,
        ],
        super::fixture::START,
    );
    in_browser("network", async |b: &Session| {
        b.goto(&inspector.url).await;
        b.wait_for("document.querySelector('#tool-list [data-tool=echo]')")
            .await;
        b.click("#tool-list [data-tool=echo]").await;
        b.fill("[data-arg=text]", "over http <b id=net-pwn>markup</b>")
            .await;
        b.click("#tool-call").await;
        b.wait_for(&text_has("#tool-result pre.text", "over http")).await;

        b.click("#tab-network").await;
        let row = "#net-list li[data-status='200']";
        b.wait_for(&format!(
            "[...document.querySelectorAll(\"{row}\")].some(li => li.querySelector('.label').textContent.startsWith('tools/call '))"
        ))
        .await;
        let verdicts = b
            .run(
                "const li = [...document.querySelectorAll(arguments[0])]
                   .find(li => li.querySelector('.label').textContent.startsWith('tools/call '));
                 li.querySelector('details').open = true;
                 return Object.fromEntries([...li.querySelectorAll('.checks li')]
                   .map(c => [c.dataset.header + ' ' + c.textContent.slice(2, 40), c.dataset.ok]));",
                json!([row]),
            )
            .await;
        let verdicts = verdicts.as_object().unwrap();
        for header in ["accept", "mcp-protocol-version", "mcp-method", "mcp-name", "content-type"] {
            assert!(
                verdicts.iter().any(|(k, v)| k.starts_with(header) && v == "true"),
                "{header} not checked and kept: {verdicts:?}"
            );
        }
        assert!(verdicts.values().all(|v| v == "true"), "{verdicts:?}");
        // The Mcp-* headers are highlighted; the credential is masked.
        let shown = b
            .run(
                "const li = [...document.querySelectorAll(arguments[0])]
                   .find(li => li.querySelector('.label').textContent.startsWith('tools/call '));
                 return [[...li.querySelectorAll('table.headers tr.mcp th')].map(t => t.textContent),
                         li.textContent.includes('secret-token-123'),
                         li.textContent.includes('Bearer … (23 characters, masked)')];",
                json!([row]),
            )
            .await;
        let highlighted: Vec<&str> = shown[0]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|h| h.as_str())
            .collect();
        for h in ["mcp-protocol-version", "mcp-method", "mcp-name"] {
            assert!(highlighted.contains(&h), "{h} not highlighted: {highlighted:?}");
        }
        assert_eq!(shown[1], false, "the token must not be shown");
        assert_eq!(shown[2], true);
        // The exchange carries the request body: the JSON-RPC request.
        b.wait_for(&text_has("#net-list", "\"over http <b id=net-pwn>")).await;
        // And the answer's body, read to its end: the server's markup shown
        // as the characters it is, never made into elements.
        let body = b
            .wait_for(
                "(() => { const li = [...document.querySelectorAll('#net-list li[data-status=\"200\"]')]
                   .find(li => li.querySelector('.label').textContent.startsWith('tools/call '));
                 const end = li && li.querySelector('.body-state');
                 return end && end.dataset.state === 'complete'
                   && [li.querySelector('pre.body').textContent, end.textContent]; })()",
            )
            .await;
        let text = body[0].as_str().unwrap();
        assert!(text.contains("over http <b id=net-pwn>markup</b>"), "{text}");
        assert!(body[1].as_str().unwrap().contains(" bytes"), "{body}");
        let made = b
            .run("return document.getElementById('net-pwn') === null", json!([]))
            .await;
        assert_eq!(made, true, "the server's markup became an element");
    })
    .await;
}
