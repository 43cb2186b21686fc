//! A middleware layer refusing every `tools/call` but the listed tools, before any handler runs:
//! `tessera call wipe '{}' -- cargo run -q -p tessera-examples --example tool_allow_list`

use tessera::runtime::middleware::{Next, from_fn};
use tessera::runtime::{ReplyResult, Request};
use tessera::server::{Server, tool};
use tessera::types::{ErrorObject, methods};
const ALLOWED: &[&str] = &["time"];

async fn allow_list(request: Request, next: Next) -> ReplyResult {
    let name = request.target().unwrap_or_default();
    if request.method == methods::TOOLS_CALL && !ALLOWED.contains(&name) {
        return Err(ErrorObject::invalid_params(format!(
            "{name} is not allowed"
        )));
    }
    next.run(request).await
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    Server::builder()
        .layer(from_fn(allow_list))
        .tool(tool("time").handler(|| async { "12:00".to_owned() }))
        .tool(tool("wipe").handler(|| async { "all gone".to_owned() }))
        .build()?
        .serve_stdio()
        .await?;
    Ok(())
}
