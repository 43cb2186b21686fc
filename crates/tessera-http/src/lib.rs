//! Streamable HTTP for Tessera, the Model Context Protocol for Rust.
//!
//! - [`sse`]: the Server-Sent Events codec (encoder and incremental decoder).
//! - [`headers`]: the MCP HTTP header names and the `=?base64?…?=` value encoding.
//! - With the `server` feature (default): [`McpHttp`], a tower `Service` that
//!   serves MCP on one endpoint for every protocol version at once
//!   (2025-03-26 … 2025-11-25 with sessions, 2026-07-28 stateless, and the
//!   2024-11-05 HTTP+SSE pair), and [`serve`] to run it on hyper.
//!
//! ```no_run
//! use tessera_http::McpHttp;
//! use tessera_server::{Server, tool};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let server = Server::builder()
//!     .name_version("demo", "1.0.0")
//!     .tool(tool("hello").description("Says hello").handler(|| async { "hello" }))
//!     .build()?;
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8001").await?;
//! let mcp = McpHttp::builder(server)
//!     .bind_address(listener.local_addr()?)
//!     .endpoint_path("/mcp")
//!     .build();
//! eprintln!("listening on http://{}/mcp", listener.local_addr()?);
//! tessera_http::serve(listener, mcp, async { let _ = tokio::signal::ctrl_c().await; }).await?;
//! # Ok(()) }
//! ```
//!
//! Security defaults: the `Host` and `Origin` headers are checked against an
//! allow-list derived from the bind address (DNS-rebinding protection),
//! bodies are limited (4 MiB), sessions are capped and expire when idle, and
//! every outbound queue is bounded.

#![forbid(unsafe_code)]

pub mod headers;
pub mod sse;

/// The `http` crate, for reading the [`http::HeaderMap`] that the server
/// attaches to every request as an extension.
pub use http;

#[cfg(feature = "client")]
mod client;
#[cfg(feature = "client")]
pub mod client_auth;
#[cfg(feature = "client")]
pub mod client_observe;
#[cfg(feature = "server")]
mod server;

#[cfg(feature = "client")]
pub use client::{
    DEFAULT_MAX_MESSAGE_BYTES, HttpClientBuilder, HttpClientError, HttpClientTransport,
    HttpTransportKind, HttpTransportMode, LegacySseClientTransport, TRANSPORT_FAILURE_KEY,
    TransportFailure, known_transport,
};
#[cfg(feature = "client")]
pub use client_auth::{ChallengeOutcome, HttpAuth};
#[cfg(feature = "client")]
pub use client_observe::{HttpExchange, HttpObserver};

#[cfg(feature = "server")]
pub use server::{
    BadEventId, DEFAULT_EVENT_BYTES_PER_SESSION, DEFAULT_EVENT_BYTES_TOTAL, DangerousSettings,
    EventId, EventStore, HostGuard, HostGuardRefusal, HostPolicy, HttpStats, InMemoryEventStore,
    LayeredFactory, LegacySsePaths, McpBody, McpHttp, McpHttpBuilder, OriginPolicy, RemoteAddr,
    ResponseMode, ServiceFactory, StoredEvent, ToolHeaders, limit, serve, serve_with,
};
