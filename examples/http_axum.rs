//! An MCP endpoint inside an axum application, next to the application's own
//! routes. `McpHttp` is a tower `Service`, so it mounts like any other.
//!
//! `cargo run -p tessera-examples --example http_axum -- 127.0.0.1:8000`, then
//! `curl http://127.0.0.1:8000/health` and
//! `tessera call add '{"a":2,"b":3}' http://127.0.0.1:8000/mcp`.

use schemars::JsonSchema;
use serde::Deserialize;
use tessera::server::{Args, Server, tool};
use tessera_http::McpHttp;

#[derive(Deserialize, JsonSchema)]
struct Add {
    a: i64,
    b: i64,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr = std::env::args().nth(1).unwrap_or("127.0.0.1:8000".into());
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    let local = listener.local_addr()?;

    let server = Server::builder()
        .name_version("axum-example", "1.0.0")
        .tool(
            tool("add")
                .description("Adds two integers")
                .handler(|Args(x): Args<Add>| async move { (x.a + x.b).to_string() }),
        )
        .build()?;
    // The bind address decides which Host and Origin headers are accepted
    // (DNS-rebinding protection); behind a proxy, list the public names with
    // `.allowed_hosts(..)` instead.
    let mcp = McpHttp::builder(server).bind_address(local).build();

    let app = axum::Router::new()
        .route("/health", axum::routing::get(|| async { "ok" }))
        .route_service("/mcp", mcp);
    println!("serving MCP at http://{local}/mcp and a health check at /health");
    axum::serve(listener, app).await?;
    Ok(())
}
