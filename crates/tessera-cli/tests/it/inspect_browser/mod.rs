//! `tessera inspect` in a real browser: headless Chromium driven through
//! WebDriver (`chromedriver`), against `tessera serve --stdio`. Connect from
//! the Servers tab, search, fill and call a tool, cancel a long call, read a
//! resource, get a prompt, see the protocol log; the page without its
//! token; a deep link to an HTTP server, an elicitation answered in the
//! page, and a page of another origin that knows the token but is refused. A failing scenario leaves a screenshot and the browser console
//! under target/tmp/inspect-browser/. Without Chromium the test is skipped
//! (with a message) unless CI is set, where it must run.

mod apps;
use crate::common;
mod everything;
use crate::inspect_fixture as fixture;
mod network;
mod pdf;
mod signin;
mod webdriver;

use std::path::PathBuf;

use futures::FutureExt as _;
use serde_json::json;
use webdriver::{Driver, Session, which};

/// Where a run leaves its screenshots and console logs.
fn artifacts() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("inspect-browser");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Chromium and chromedriver, or `None` (after saying why) when the test
/// may be skipped.
fn browser() -> Option<(PathBuf, PathBuf)> {
    let chromium = which("chromium").or_else(|| which("chromium-browser"));
    let driver = which("chromedriver");
    match (chromium, driver) {
        (Some(c), Some(d)) => Some((c, d)),
        _ => {
            let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
            assert!(
                !ci,
                "CI is set but chromium or chromedriver is missing: install Debian's chromium and \
                 chromium-driver (.ci/run does)"
            );
            // Straight to stderr, past the test harness's capture: a skip must be seen.
            use std::io::Write as _;
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED: the browser tests of tessera inspect need chromium and chromedriver on PATH \
                 (Debian: apt-get install chromium chromium-driver); set CI=true to make this a failure"
            );
            None
        }
    }
}

/// Runs `scenario` in a fresh browser; on failure saves a screenshot and
/// the console log named after `name`, then fails.
async fn in_browser<F>(name: &str, scenario: F)
where
    F: AsyncFnOnce(&Session),
{
    let Some((chromium, chromedriver)) = browser() else {
        return;
    };
    let driver = Driver::start(&chromedriver);
    let profile = artifacts().join(format!("profile-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&profile);
    let session = Session::start(&driver, &chromium, &profile).await;
    let outcome = std::panic::AssertUnwindSafe(scenario(&session))
        .catch_unwind()
        .await;
    if outcome.is_err() {
        let dir = artifacts();
        if let Some(png) = session.screenshot().await {
            let _ = std::fs::write(dir.join(format!("{name}-failure.png")), png);
        }
        let console = session.console().await;
        let _ = std::fs::write(
            dir.join(format!("{name}-console.json")),
            serde_json::to_string_pretty(&console).unwrap_or_default(),
        );
        eprintln!(
            "the browser scenario {name} failed: screenshot and console log in {}",
            dir.display()
        );
    }
    session.quit().await;
    drop(driver);
    let _ = std::fs::remove_dir_all(&profile);
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}

/// Waits for the image or audio element matching `css` to be decoded (an
/// event, not a change of the document, so not [`Session::wait_for`]):
/// `[naturalWidth, naturalHeight]` of an image, `[readyState, duration]` of
/// audio; fails when the browser cannot decode it.
async fn media_loaded(b: &Session, css: &str) -> serde_json::Value {
    b.wait_for(&format!("document.querySelector({css:?})"))
        .await;
    let v = b
        .run_async(
            "const [css, done] = arguments;
             const m = document.querySelector(css);
             const audio = m.tagName === 'AUDIO';
             const ok = () => done(audio ? [m.readyState, m.duration] : [m.naturalWidth, m.naturalHeight]);
             const bad = () => done({error: String(m.error && m.error.code)});
             if (audio ? m.readyState >= 1 : m.complete && m.naturalWidth > 0) ok();
             else if (audio && m.error || !audio && m.complete) bad();
             else { m.addEventListener(audio ? 'loadedmetadata' : 'load', ok); m.addEventListener('error', bad); }",
            json!([css]),
        )
        .await;
    assert!(v.is_array(), "{css} not decoded: {v}");
    v
}

/// The text of the first element matching `css`, once it contains `needle`.
fn text_has(css: &str, needle: &str) -> String {
    format!(
        "(document.querySelector({css:?})?.textContent || '').includes({needle:?}) && document.querySelector({css:?}).textContent"
    )
}

#[tokio::test]
async fn connect_call_cancel_read_get_and_follow_the_protocol() {
    let inspector = common::start_inspect(&[], fixture::START);
    let bin = env!("CARGO_BIN_EXE_tessera");
    in_browser("scenario", async |b: &Session| {
        // Without the token the page says what to do, and calls nothing.
        b.goto(&format!("{}/", inspector.base)).await;
        b.wait_for(&text_has("#status", "No token")).await;

        // With it: not connected yet, so the Servers tab.
        b.goto(&inspector.url).await;
        b.wait_for("document.body.dataset.ready === 'true'").await;
        b.wait_for("!document.getElementById('panel-servers').hidden")
            .await;
        b.fill("#srv-target", bin).await;
        b.fill("#srv-args", "serve\n--stdio").await;
        // A client extension of the user's own, declared with the others.
        b.fill("#srv-extensions", r#"{"io.example/probe": {"level": 2}}"#)
            .await;
        b.click("#srv-connect").await;

        // Connected: the Tools tab lists the reference server's tools.
        b.wait_for("document.querySelector('#tool-list [data-tool=echo]')")
            .await;
        b.wait_for(&text_has("#conn-badges", "modern")).await;
        b.fill("#tool-search", "ech").await;
        let shown = b
            .run(
                "return [...document.querySelectorAll('#tool-list [data-tool]')].map(e => e.dataset.tool)",
                json!([]),
            )
            .await;
        assert!(shown.as_array().unwrap().iter().all(|t| t.as_str().unwrap().contains("ech")), "{shown}");
        b.click("#tool-list [data-tool=echo]").await;
        // The form comes from the inputSchema: a labelled field per property.
        let label = b
            .run(
                "const i = document.querySelector('[data-arg=text]'); return document.querySelector(`label[for='${i.id}']`).textContent",
                json!([]),
            )
            .await;
        assert_eq!(label, "text *");
        // Peer data is shown as text, never as markup.
        b.fill("[data-arg=text]", "<b>hello</b> browser").await;
        b.click("#tool-call").await;
        b.wait_for(&text_has("#tool-result pre.text", "<b>hello</b> browser"))
            .await;
        let bold = b
            .run("return document.querySelectorAll('#tool-result b').length", json!([]))
            .await;
        assert_eq!(bold, 0);

        // A long call shows progress and can be cancelled.
        b.fill("#tool-search", "sleep").await;
        b.click("#tool-list [data-tool=sleep]").await;
        b.fill("[data-arg=ms]", "60000").await;
        b.click("#tool-call").await;
        b.wait_for("!document.getElementById('tool-progress').hidden && document.getElementById('tool-progress').value > 0")
            .await;
        b.click("#tool-cancel").await;
        b.wait_for("document.getElementById('tool-cancelled')").await;

        // Resources: read one.
        b.click("#tab-resources").await;
        b.click("#res-list [data-uri='test://static-text']").await;
        b.wait_for(&text_has("#res-view", "test://static-text"))
            .await;
        b.wait_for("document.querySelector('#res-view pre.text')").await;
        // An image resource as an image; a JSON one (from the template) as
        // JSON.
        b.click("#res-list [data-uri='test://static-binary']").await;
        let size = media_loaded(b, "#res-view img.media").await;
        assert_eq!(size, json!([16, 16]));
        b.fill("#res-templates form [data-var=id]", "7").await;
        b.click("#res-templates form button[type=submit]").await;
        b.wait_for(&text_has("#res-view pre.json", "\"id\""))
            .await;

        // Results by content type: audio that the browser decodes, and text,
        // an image and an embedded resource together.
        b.click("#tab-tools").await;
        b.fill("#tool-search", "content").await;
        b.click("#tool-list [data-tool=test_audio_content]").await;
        b.click("#tool-call").await;
        let audio = media_loaded(b, "#tool-result audio").await;
        let seconds = audio[1].as_f64().unwrap();
        assert!((0.05..0.5).contains(&seconds), "{audio}");
        b.click("#tool-list [data-tool=test_multiple_content_types]")
            .await;
        b.click("#tool-call").await;
        b.wait_for("document.querySelector('#tool-result pre.text') && document.querySelector('#tool-result img.media') && document.querySelector('#tool-result .embedded pre.text')")
            .await;
        b.click("#tab-resources").await;

        // Subscribe to a resource; its update shows with the time.
        b.click("#res-list [data-uri='test://watched-resource']").await;
        b.click("#res-subscribe").await;
        b.wait_for(&text_has("#res-subscribe", "Unsubscribe")).await;
        let conn = b
            .run("return document.getElementById('conn-select').value", json!([]))
            .await;
        let trigger = reqwest::Client::new()
            .post(format!(
                "{}/api/connections/{}/tools/call",
                inspector.base,
                conn.as_str().unwrap()
            ))
            .bearer_auth(&inspector.token)
            .json(&json!({"name": "test_trigger_resource_update"}))
            .send()
            .await
            .unwrap();
        assert_eq!(trigger.status(), 200);
        b.wait_for(&text_has("#res-updated", "Updated at")).await;

        // Prompts: fill the arguments and get the messages.
        b.click("#tab-prompts").await;
        b.click("#prompt-list [data-prompt=test_prompt_with_arguments]")
            .await;
        // The server's suggestions (completion/complete) as the user types.
        b.fill("[data-arg=arg1]", "pa").await;
        b.wait_for(
            "[...document.querySelectorAll('#prompt-detail datalist option')].some(o => o.value === 'paris')",
        )
        .await;
        b.fill("[data-arg=arg1]", "first").await;
        b.fill("[data-arg=arg2]", "second").await;
        b.click("#prompt-get").await;
        b.wait_for(&text_has("#prompt-view .message", "arg2='second'"))
            .await;

        // A JSON-RPC error (an unknown tool), to see its class in the list.
        let unknown = reqwest::Client::new()
            .post(format!(
                "{}/api/connections/{}/tools/call",
                inspector.base,
                conn.as_str().unwrap()
            ))
            .bearer_auth(&inspector.token)
            .json(&json!({"name": "no_such_tool"}))
            .send()
            .await
            .unwrap();
        assert_eq!(unknown.status(), 502);

        // Protocol: every message, the requests paired with their answers.
        b.click("#tab-protocol").await;
        b.wait_for(&text_has("#proto-list li[data-kind=error]", "invalid params"))
            .await;
        b.wait_for(
            "[...document.querySelectorAll('#proto-list li')].some(li => li.dataset.method === 'prompts/get ✓')",
        )
        .await;
        let kinds = b
            .run(
                "return [...document.querySelectorAll('#proto-list li')].map(li => li.dataset.method)",
                json!([]),
            )
            .await;
        let kinds: Vec<&str> = kinds.as_array().unwrap().iter().filter_map(|k| k.as_str()).collect();
        for m in ["server/discover", "tools/list", "tools/call", "tools/call ✓", "notifications/progress", "notifications/cancelled", "resources/read ✓"] {
            assert!(kinds.contains(&m), "{m} missing from {kinds:?}");
        }
        // The requests declare the extension given on the Servers tab, beside the inspector's own.
        let declared = b
            .run(
                "const li = document.querySelector(\"#proto-list li[data-method='tools/list']\");
                 const caps = JSON.parse(li.querySelector('pre.json').textContent).params._meta['io.modelcontextprotocol/clientCapabilities'];
                 return Object.keys(caps.extensions || {}).sort()",
                json!([]),
            )
            .await;
        assert_eq!(declared, json!(["io.example/probe", "io.modelcontextprotocol/ui"]));
        // Replay a request from the list: the answer shows under it.
        b.run(
            "document.querySelector(\"#proto-list li[data-method='tools/call'] details\").open = true",
            json!([]),
        )
        .await;
        b.click("#proto-list li[data-method='tools/call'] [data-action=replay]")
            .await;
        b.wait_for(&text_has(
            "#proto-list li[data-method='tools/call'] .replayed",
            "hello</b> browser",
        ))
        .await;

        // Export the transcript (what the page's Export link downloads),
        // replay it with `tessera replay` against a fresh server: the same
        // answers, exit 0; then import it: its messages show apart.
        let transcript = b
            .run_async(
                "const done = arguments[0];
                 fetch(document.getElementById('proto-export').href)
                   .then(r => r.text()).then(done, e => done('failed: ' + e));",
                json!([]),
            )
            .await;
        let transcript = transcript.as_str().unwrap().to_owned();
        let file = artifacts().join(format!("transcript-{}.json", std::process::id()));
        std::fs::write(&file, transcript).unwrap();
        let replayed = std::process::Command::new(bin)
            .arg("replay")
            .arg(&file)
            .args(["--", bin, "serve", "--stdio"])
            .output()
            .unwrap();
        assert_eq!(
            replayed.status.code(),
            Some(0),
            "{}{}",
            String::from_utf8_lossy(&replayed.stdout),
            String::from_utf8_lossy(&replayed.stderr)
        );
        b.keys("#proto-import", file.to_str().unwrap()).await;
        b.wait_for("document.querySelector(\"#proto-imported li[data-method='prompts/get ✓']\")")
            .await;
        let _ = std::fs::remove_file(&file);

        // Keyboard: the arrow keys move between tabs.
        b.keys("#tab-protocol", "\u{E012}").await;
        b.wait_for("document.activeElement.id === 'tab-logs' && !document.getElementById('panel-logs').hidden")
            .await;

        // The screenshot of the README: the Tools tab after a call.
        b.click("#tab-tools").await;
        b.fill("#tool-search", "add").await;
        b.click("#tool-list [data-tool=add]").await;
        b.fill("[data-arg=a]", "2").await;
        b.fill("[data-arg=b]", "40").await;
        b.click("#tool-call").await;
        b.wait_for(&text_has("#tool-result pre.text", "42")).await;
        let png = b.screenshot().await.expect("a screenshot");
        std::fs::write(artifacts().join("tools.png"), &png).unwrap();
        if std::env::var_os("TESSERA_UPDATE_SCREENSHOT").is_some() {
            let docs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/images");
            std::fs::create_dir_all(&docs).unwrap();
            std::fs::write(docs.join("inspect-tools.png"), &png).unwrap();
        }
    })
    .await;
}

#[tokio::test]
async fn a_deep_link_an_elicitation_and_a_foreign_page() {
    let (_server, mcp) = fixture::serve_http();
    let inspector = common::start_inspect(&[], fixture::START);
    in_browser("elicitation", async |b: &Session| {
        let link = format!("{}&url={}&era=legacy", inspector.url, url_escape(&mcp));
        b.goto(&link).await;
        // Connected by the link, on the Tools tab; the token left the address bar.
        b.wait_for("document.querySelector('#tool-list [data-tool=test_elicitation]')")
            .await;
        b.wait_for(&text_has("#conn-badges", "legacy")).await;
        b.wait_for(&text_has("#conn-badges", "http")).await;
        let address = b.run("return location.href", json!([])).await;
        assert!(!address.as_str().unwrap().contains("token"), "{address}");

        b.click("#tool-list [data-tool=test_elicitation]").await;
        b.fill("[data-arg=message]", "Who are you?").await;
        b.click("#tool-call").await;
        // The question shows above the tabs, its form built from requestedSchema.
        b.wait_for(&text_has("#asks", "Who are you?")).await;
        // Accepting with a required field empty is refused on the page.
        b.fill("#asks [data-arg=username]", "ada").await;
        b.click("#asks [data-action=accept]").await;
        b.wait_for(&text_has("#asks [role=alert]", "email is required"))
            .await;
        b.fill("#asks [data-arg=email]", "ada@example.com").await;
        b.click("#asks [data-action=accept]").await;
        b.wait_for(&text_has("#tool-result pre.text", "action=accept"))
            .await;
        b.wait_for("document.getElementById('asks').hidden").await;
        let text = b
            .run(
                "return document.querySelector('#tool-result pre.text').textContent",
                json!([]),
            )
            .await;
        assert!(text.as_str().unwrap().contains("ada@example.com"), "{text}");

        // Sampling: the page replies as the model, with the text edited.
        b.fill("#tool-search", "sampling").await;
        b.click("#tool-list [data-tool=test_sampling]").await;
        b.fill("[data-arg=prompt]", "Name a colour").await;
        b.click("#tool-call").await;
        b.wait_for(&text_has("#asks [data-kind=sampling]", "Name a colour"))
            .await;
        b.fill("#asks [data-role=reply]", "Blue.").await;
        b.click("#asks [data-action=send]").await;
        b.wait_for(&text_has("#tool-result pre.text", "LLM response: Blue."))
            .await;

        // Or at once with a fixed reply, chosen on the Servers tab.
        b.click("#tab-servers").await;
        b.fill("#sampling-auto-text", "Green, at once.").await;
        b.click("#sampling-auto").await;
        b.wait_for("document.getElementById('sampling-auto-state').dataset.auto === 'on'")
            .await;
        b.click("#tab-tools").await;
        b.click("#tool-call").await;
        b.wait_for(&text_has(
            "#tool-result pre.text",
            "LLM response: Green, at once.",
        ))
        .await;
        b.click("#tab-servers").await;
        b.click("#sampling-auto").await;
        b.wait_for("document.getElementById('sampling-auto-state').dataset.auto === 'off'")
            .await;
        b.click("#tab-tools").await;

        // Logs: set the level (logging/setLevel, legacy); a tool's log shows.
        b.click("#tab-logs").await;
        b.click("#log-level").await;
        b.run(
            "const s = document.getElementById('log-level'); s.value = 'debug'; s.dispatchEvent(new Event('change'))",
            json!([]),
        )
        .await;
        b.click("#log-set").await;
        b.wait_for(&text_has("#status", "set to debug")).await;
        b.click("#tab-tools").await;
        b.fill("#tool-search", "test_tool_with_logging").await;
        b.click("#tool-list [data-tool=test_tool_with_logging]").await;
        b.click("#tool-call").await;
        b.wait_for("document.querySelector('#tool-result pre.text')").await;
        b.click("#tab-logs").await;
        b.wait_for(&text_has("#log-rows", "Tool execution started")).await;

        // A call as a task (2025-11-25 here), followed on the Tasks tab.
        b.click("#tab-tools").await;
        b.fill("#tool-search", "sleep").await;
        b.click("#tool-list [data-tool=sleep]").await;
        b.fill("[data-arg=ms]", "300").await;
        b.click("#tool-as-task").await;
        b.click("#tool-call").await;
        b.click("#tool-task-started button").await;
        b.wait_for("!document.getElementById('panel-tasks').hidden")
            .await;
        b.wait_for(&text_has(
            "#task-list [data-status=completed]",
            "slept 300 ms",
        ))
        .await;

        // A page of another origin (the MCP server's) that knows the token
        // still cannot use the API: its requests carry its Origin.
        b.goto(&mcp.replace("/mcp", "/")).await;
        let outcome = b
            .run_async(
                "const [url, token, done] = arguments;
                 fetch(url, {headers: {Authorization: `Bearer ${token}`}})
                   .then(r => done(`status ${r.status}`), e => done(`refused: ${e.name}`));",
                json!([
                    format!("{}/api/connections", inspector.base),
                    inspector.token
                ]),
            )
            .await;
        assert!(
            outcome.as_str().unwrap().starts_with("refused"),
            "{outcome}"
        );
        let outcome = b
            .run_async(
                "const [url, done] = arguments;
                 fetch(url, {method: 'POST', mode: 'no-cors', body: '{}'})
                   .then(r => done(`sent ${r.type}`), e => done(`refused: ${e.name}`));",
                json!([format!(
                    "{}/api/connections?token={}",
                    inspector.base, inspector.token
                )]),
            )
            .await;
        // An opaque answer: the page learns nothing, and the server refused it.
        assert_eq!(outcome, "sent opaque");
        let count = reqwest::Client::new()
            .get(format!("{}/api/connections", inspector.base))
            .bearer_auth(&inspector.token)
            .send()
            .await
            .unwrap()
            .json::<serde_json::Value>()
            .await
            .unwrap()["connections"]
            .as_array()
            .unwrap()
            .len();
        assert_eq!(
            count, 1,
            "the foreign page's POST must not connect anything"
        );
    })
    .await;
}

/// Percent-encodes a URL for a query parameter.
fn url_escape(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[tokio::test]
async fn a_launch_target_opens_on_the_tools_tab_and_fits_a_narrow_window() {
    let bin = env!("CARGO_BIN_EXE_tessera");
    let config = artifacts().join(format!("mcp-{}.json", std::process::id()));
    std::fs::write(
        &config,
        json!({"mcpServers": {"reference": {"command": bin, "args": ["serve", "--stdio"]}}})
            .to_string(),
    )
    .unwrap();
    let skills = artifacts().join(format!("skills-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&skills);
    std::fs::create_dir_all(skills.join("pdf")).unwrap();
    std::fs::write(
        skills.join("pdf/SKILL.md"),
        "---\nname: pdf\ndescription: Fill PDFs\n---\nFill them.\n",
    )
    .unwrap();
    let inspector = common::start_inspect_env(
        &[
            "--",
            bin,
            "serve",
            "--stdio",
            "--skills",
            skills.to_str().unwrap(),
        ],
        &[("TESSERA_CONFIG", config.to_str().unwrap())],
        fixture::START,
    );
    in_browser("launch", async |b: &Session| {
        b.goto(&inspector.url).await;
        b.wait_for("!document.getElementById('panel-tools').hidden && document.querySelector('#tool-list [data-tool=echo]')")
            .await;
        let selected = b
            .run(
                "return document.querySelector('[role=tab][aria-selected=true]').id",
                json!([]),
            )
            .await;
        assert_eq!(selected, "tab-tools");
        // The load panel: a short run of echo, plotted, then summed up.
        b.click("#tool-list [data-tool=echo]").await;
        b.fill("[data-arg=text]", "load").await;
        b.click("details.load summary").await;
        b.fill("#load-seconds", "1").await;
        b.click("#load-start").await;
        b.wait_for(&text_has("#load-done", "requests in")).await;
        let plotted = b
            .run(
                "return document.querySelector('#load-charts polyline').getAttribute('points').split(' ').length",
                json!([]),
            )
            .await;
        assert!(plotted.as_u64().unwrap() >= 1, "{plotted}");

        // Skills: the entry's files, each verified.
        b.click("#tab-skills").await;
        b.click("#skill-list [data-skill]").await;
        b.click("#skill-verify").await;
        b.wait_for(&text_has("#skill-detail tbody .verdict", "ok")).await;

        // A server of the configuration file, connected from the Servers tab.
        b.click("#tab-servers").await;
        b.click("#srv-config [data-server=reference] [data-action=connect-named]")
            .await;
        b.wait_for("document.querySelectorAll('#conn-select option').length === 2 && !document.getElementById('panel-tools').hidden")
            .await;
        // The form saved to the configuration file under a name, then removed.
        b.click("#tab-servers").await;
        b.fill("#srv-target", bin).await;
        b.fill("#srv-args", "serve\n--stdio").await;
        b.fill("#srv-save-name", "saved").await;
        b.click("#srv-save").await;
        b.wait_for("document.querySelector('#srv-config [data-server=saved]')")
            .await;
        b.click("#srv-config [data-server=saved] [data-action=remove-named]")
            .await;
        b.wait_for("!document.querySelector('#srv-config [data-server=saved]') && document.querySelector('#srv-config [data-server=reference]')")
            .await;
        // Every tab's panel fits a narrow window: nothing wider than it.
        b.resize(480, 800).await;
        for tab in [
            "servers", "tools", "apps", "resources", "prompts", "tasks", "skills", "logs", "protocol",
            "network",
            "console",
        ] {
            b.click(&format!("#tab-{tab}")).await;
            let overflow = b
                .run(
                    "return document.documentElement.scrollWidth - document.documentElement.clientWidth",
                    json!([]),
                )
                .await;
            assert!(overflow.as_i64().unwrap() <= 0, "{tab} overflows by {overflow} px");
        }
        // Every control has a label.
        let unlabelled = b
            .run(
                "return [...document.querySelectorAll('input, select, textarea')]
                   .filter(e => !e.labels?.length && !e.getAttribute('aria-label'))
                   .map(e => e.id || e.outerHTML.slice(0, 80))",
                json!([]),
            )
            .await;
        assert_eq!(unlabelled, json!([]));
    })
    .await;
    let _ = std::fs::remove_file(&config);
    let _ = std::fs::remove_dir_all(&skills);
}
