//! The smallest useful MCP server: one tool, served on stdin/stdout.
//!
//! Try it with the `tessera` binary as the client:
//! `tessera call echo '{"text":"hi"}' -- cargo run -q -p tessera-examples --example echo_stdio`

use schemars::JsonSchema;
use serde::Deserialize;
use tessera::server::{Args, Server, tool};

/// The tool's arguments; their JSON Schema becomes the tool's `inputSchema`.
#[derive(Deserialize, JsonSchema)]
struct Echo {
    /// The text to send back.
    text: String,
}

/// A handler is a plain async function whose parameters are extractors.
async fn echo(Args(a): Args<Echo>) -> String {
    a.text
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    Server::builder()
        .name_version("echo-server", "1.0.0")
        .tool(
            tool("echo")
                .description("Sends the text back")
                .handler(echo),
        )
        .build()?
        .serve_stdio()
        .await?;
    Ok(())
}
