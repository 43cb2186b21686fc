//! The reference server's MCP App: `app_counter`, whose view
//! (`ui://tessera/counter`, `text/html;profile=mcp-app`) shows the count and
//! calls the tool again from a button. Clients that render no views get the
//! text result.

use std::sync::atomic::{AtomicU64, Ordering};

use tessera::server::apps::{Apps, UiView};
use tessera::server::{ServerBuilder, tool};
use tessera::types::{CallToolResult, ToolUiMeta, UiResourceMeta};

/// The view's URI.
pub const COUNTER_VIEW: &str = "ui://tessera/counter";

static COUNT: AtomicU64 = AtomicU64::new(0);

async fn app_counter() -> CallToolResult {
    let n = COUNT.fetch_add(1, Ordering::Relaxed) + 1;
    // The text is what clients without views (and the model) see.
    let mut r = CallToolResult::text(format!("The counter is at {n}."));
    /// The tool's structured result.
    #[derive(serde::Serialize)]
    struct Count {
        count: u64,
    }
    r.structured_content = serde_json::to_value(Count { count: n }).ok();
    r
}

/// Registers the view and the tool.
pub fn register(b: ServerBuilder<()>) -> ServerBuilder<()> {
    let view = UiView::new(COUNTER_VIEW, "counter", include_str!("assets/counter.html"))
        .description("Shows the app_counter count and counts once more on a click")
        .meta(UiResourceMeta {
            prefers_border: Some(true),
            ..UiResourceMeta::default()
        });
    b.extension(Apps::new().view(view)).tool(
        tool("app_counter")
            .description("Counts once more and returns the count (an MCP App renders it)")
            .ui(ToolUiMeta::view(COUNTER_VIEW))
            .handler(app_counter),
    )
}
