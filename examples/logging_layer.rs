//! A middleware layer logging each request (method, tool, duration, outcome) to stderr:
//! `tessera call hello '{}' -- cargo run -q -p tessera-examples --example logging_layer`

use std::time::Instant;
use tessera::runtime::middleware::{Next, from_fn};
use tessera::runtime::{ReplyResult, Request};
use tessera::server::{Server, tool};

async fn log(request: Request, next: Next) -> ReplyResult {
    let what = format!("{} {}", request.method, request.target().unwrap_or(""));
    let started = Instant::now();
    let result = next.run(request).await;
    let outcome = result
        .as_ref()
        .map_or_else(|e| e.message.clone(), |_| "ok".into());
    eprintln!("{what} took {:?}: {outcome}", started.elapsed());
    result
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    Server::builder()
        .layer(from_fn(log))
        .tool(tool("hello").handler(|| async { "hello".to_owned() }))
        .build()?
        .serve_stdio()
        .await?;
    Ok(())
}
