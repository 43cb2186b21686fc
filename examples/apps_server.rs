//! An MCP App: a tool whose results a host renders with a small HTML page,
//! and an app-only tool the page calls (hidden from the model, and from
//! clients that render no views). Served on stdin/stdout.
//!
//! Try it with the `tessera` binary:
//! `tessera call roll_dice '{}' -- cargo run -q -p tessera-examples --example apps_server`

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::json;
use tessera::server::apps::{Apps, UiView};
use tessera::server::{Server, tool};
use tessera::types::{CallToolResult, ToolUiMeta, UiResourceMeta, UiVisibility};

const VIEW: &str = "ui://dice/board";

/// The page: shows the last roll, and a button that asks the host to call
/// the app-only `reroll` tool (JSON-RPC over postMessage).
const PAGE: &str = r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Dice</title></head>
<body>
<output id="roll">?</output>
<button id="again" type="button">Roll again</button>
<script>
  let nextId = 1;
  const waiting = new Map();
  addEventListener("message", (e) => {
    const m = e.data;
    if (m && m.id !== undefined && waiting.has(m.id)) { waiting.get(m.id)(m.result); waiting.delete(m.id); }
    if (m && m.method === "ui/notifications/tool-result") show(m.params);
  });
  function call(method, params) {
    const id = nextId++;
    parent.postMessage({ jsonrpc: "2.0", id, method, params }, "*");
    return new Promise((resolve) => waiting.set(id, resolve));
  }
  function show(r) { if (r && r.structuredContent) document.getElementById("roll").textContent = r.structuredContent.roll; }
  document.getElementById("again").onclick = async () => show(await call("tools/call", { name: "reroll", arguments: {} }));
</script>
</body></html>"#;

static SEED: AtomicU64 = AtomicU64::new(7);

/// A die roll from a small linear congruential generator (no dependency).
fn roll() -> CallToolResult {
    let s = SEED.fetch_add(0x9E37_79B9, Ordering::Relaxed);
    let n = (s.wrapping_mul(6_364_136_223_846_793_005) >> 33) % 6 + 1;
    let mut r = CallToolResult::text(format!("You rolled a {n}."));
    r.structured_content = Some(json!({ "roll": n }));
    r
}

async fn roll_dice() -> CallToolResult {
    roll()
}

async fn reroll() -> CallToolResult {
    roll()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let view = UiView::new(VIEW, "dice board", PAGE).meta(UiResourceMeta {
        prefers_border: Some(true),
        ..UiResourceMeta::default()
    });
    Server::builder()
        .name_version("dice-app", "1.0.0")
        .extension(Apps::new().view(view))
        .tool(
            tool("roll_dice")
                .description("Rolls a die; hosts that render apps show it on a board")
                .ui(ToolUiMeta::view(VIEW))
                .handler(roll_dice),
        )
        .tool(
            tool("reroll")
                .description("Rolls again (called by the board, not by the model)")
                .ui(ToolUiMeta::view(VIEW).visible_to([UiVisibility::App]))
                .handler(reroll),
        )
        .build()?
        .serve_stdio()
        .await?;
    Ok(())
}
