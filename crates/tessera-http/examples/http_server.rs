//! A small Streamable HTTP server: `cargo run -p tessera-http --example http_server [ADDR]`.
//!
//! Serves `echo`, a `countdown` that streams progress, and `test_reconnection`,
//! which closes its SSE connection mid-call so the client resumes it with
//! `GET` + `Last-Event-ID` (SEP-1699; the conformance scenario
//! `server-sse-polling` calls it).

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use tessera_http::McpHttp;
use tessera_server::{Args, RequestContext, Server, tool};

#[derive(Deserialize, JsonSchema)]
struct Echo {
    /// The text to send back.
    text: String,
}

async fn countdown(ctx: RequestContext) -> String {
    for i in 1..=3 {
        ctx.progress(f64::from(i), Some(3.0), Some("counting"));
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    "lift-off".to_owned()
}

async fn test_reconnection(stream: tessera_runtime::StreamControl) -> String {
    // Ask the HTTP transport to close this request's SSE connection (after a
    // `retry: 500`) while the call goes on; the result arrives on the GET
    // stream the client opens with Last-Event-ID.
    stream.close_sse_stream(Some(Duration::from_millis(500)));
    tokio::time::sleep(Duration::from_millis(1000)).await;
    "Reconnection test completed".to_owned()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:8001".into());
    let server = Server::builder()
        .name_version("tessera-http-example", "1.0.0")
        .tool(
            tool("echo")
                .description("Sends the text back")
                .handler(|Args(e): Args<Echo>| async move { e.text }),
        )
        .tool(
            tool("countdown")
                .description("Streams progress, then answers")
                .handler(countdown),
        )
        .tool(
            tool("test_reconnection")
                .description(
                    "Closes the SSE stream mid-call to test client reconnection (SEP-1699)",
                )
                .handler(test_reconnection),
        )
        .build()?;
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    let local = listener.local_addr()?;
    let mcp = McpHttp::builder(server)
        .bind_address(local)
        .endpoint_path("/mcp")
        .build();
    eprintln!("listening on http://{local}/mcp");
    tessera_http::serve(listener, mcp, async {
        let _ = tokio::signal::ctrl_c().await;
    })
    .await?;
    Ok(())
}
