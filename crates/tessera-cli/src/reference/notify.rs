//! The reference server's tools that send notifications on demand: `count`
//! (a long run of numbered progress notifications, to watch a stream being
//! resumed) and `test_trigger_resource_update` (an update of a resource,
//! announced to its subscribers on every instance of a cluster).

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use tessera::server::{Args, RequestContext, Server, ServerBuilder, tool};

/// The most notifications one `count` call sends.
const MAX_COUNT: u32 = 10_000;

/// The longest pause between two of them.
const MAX_INTERVAL_MS: u64 = 1_000;

/// Arguments of `count`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct CountArgs {
    /// How many notifications to send (1 to 10000).
    #[schemars(range(min = 1, max = 10000))]
    to: u32,
    /// The pause before each one, in milliseconds (0 to 1000; default 0).
    #[serde(default)]
    #[schemars(range(min = 0, max = 1000))]
    interval_ms: u64,
}

/// Sends progress 1, 2, … `to` (of `to`), each with the message `n`.
async fn count(ctx: RequestContext, Args(a): Args<CountArgs>) -> Result<String, String> {
    if a.to == 0 || a.to > MAX_COUNT {
        return Err(format!(
            "to must be between 1 and {MAX_COUNT}, got {}",
            a.to
        ));
    }
    if a.interval_ms > MAX_INTERVAL_MS {
        return Err(format!(
            "intervalMs must be at most {MAX_INTERVAL_MS}, got {}",
            a.interval_ms
        ));
    }
    if !ctx.wants_progress() {
        return Err("count reports through progress: give a progressToken in _meta".into());
    }
    let total = f64::from(a.to);
    for n in 1..=a.to {
        if a.interval_ms > 0 {
            tokio::time::sleep(Duration::from_millis(a.interval_ms)).await;
        } else {
            // Let the notifications out as they are made.
            tokio::task::yield_now().await;
        }
        ctx.progress(f64::from(n), Some(total), Some(&n.to_string()));
    }
    Ok(format!("counted to {}", a.to))
}

/// Arguments of `test_trigger_resource_update`.
#[derive(Debug, Deserialize, JsonSchema)]
struct UpdateArgs {
    /// The resource whose subscribers are told it changed (default
    /// `test://watched-resource`).
    #[serde(default = "watched")]
    uri: String,
}

fn watched() -> String {
    "test://watched-resource".into()
}

/// Announces that a resource changed: every session subscribed to it, and
/// every `subscriptions/listen` stream that names it, on any instance sharing
/// this one's bus, gets `notifications/resources/updated`.
async fn trigger_resource_update(server: Server, Args(a): Args<UpdateArgs>) -> String {
    server.notify_resource_updated(&a.uri);
    format!("Announced an update of {}", a.uri)
}

/// Registers the tools.
pub fn register(b: ServerBuilder<()>) -> ServerBuilder<()> {
    b.tool(
        tool("count")
            .description(
                "Sends progress notifications 1, 2, … up to `to` (needs a progressToken), \
                 `intervalMs` apart",
            )
            .handler(count),
    )
    .tool(
        tool("test_trigger_resource_update")
            .description("Announces an update of a resource to its subscribers")
            .handler(trigger_resource_update),
    )
}
