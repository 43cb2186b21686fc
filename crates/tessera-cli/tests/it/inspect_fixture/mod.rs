//! What the inspector's API and browser tests share: the MCP servers they
//! inspect (`tessera serve --http` as a child process, or a server built in
//! the test with the library and served in process).
#![allow(dead_code)] // each test binary uses a part of it

use std::time::Duration;

use tessera::server::Server;
use tessera_http::McpHttp;

use crate::common::{Running, spawn_serving};

/// How long a `tessera` child process may take to start.
pub const START: Duration = Duration::from_secs(30);

/// `tessera serve --http` (the reference server) on a free loopback port:
/// the process (stopped when dropped) and its `/mcp` URL.
pub fn serve_http() -> (Running, String) {
    let mut serve = std::process::Command::new(env!("CARGO_BIN_EXE_tessera"));
    serve.args(["serve", "--http", "127.0.0.1:0"]);
    let (child, port) = spawn_serving(&mut serve, START);
    (Running(child), format!("http://127.0.0.1:{port}/mcp"))
}

/// Serves `server` over Streamable HTTP on a free loopback port, on the
/// caller's runtime (a multi-threaded one when the test also blocks), for
/// as long as the runtime lives: its `/mcp` URL.
pub async fn serve_in_process(server: Server) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let local = listener.local_addr().unwrap();
    let mcp = McpHttp::builder(server).bind_address(local).build();
    let app = axum::Router::new().route_service("/mcp", mcp);
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    format!("http://{local}/mcp")
}
