//! Tessera: the Model Context Protocol for Rust.
//!
//! New here? Read the [`guide`], the user manual: concepts, a server,
//! middleware, a client, HTTP, authorization, tasks, extensions, scaling out,
//! telemetry, limits, and the `tessera` command (its client verbs, the
//! inspector, the proxy), each example compiled.
//!
//! This facade re-exports the Tessera crates behind additive features:
//!
//! | module | crate | feature |
//! |---|---|---|
//! | [`types`] | `tessera-types`: protocol types for every version | always |
//! | [`proto`] | `tessera-proto`: the sans-IO engine | always |
//! | [`runtime`] | `tessera-runtime`: tokio driver, stdio and child-process transports | always |
//! | [`server`] | `tessera-server`: the server builder, extractors, tools | `server` |
//! | [`client`] | `tessera-client`: the client | `client` |
//! | [`http`] | `tessera-http`: Streamable HTTP server and client, legacy HTTP+SSE | `http` |
//! | [`macros`] | `tessera-macros`: `#[tool]`, `#[prompt]`, `#[resource]`, `#[tools]` | `macros` |
//! | `auth` | `tessera-auth`: OAuth 2.1 resource server and client | `auth` |
//! | `server::task::SqliteTaskStore` | the SQLite task store of `tessera-server`: tasks that survive a restart | `sqlite` |
//! | `redis` | `tessera-redis`: sessions, resumable streams, tasks, MRTR keys and the bus between instances in Redis, so several instances serve one endpoint ([`guide::scaling`]) | `redis` |
//! | `telemetry` | `tessera-telemetry`: OpenTelemetry spans and metrics following the MCP semantic conventions, as one middleware layer ([`guide::telemetry`]) | `telemetry` |
//!
//! ```no_run
//! use tessera::server::{Args, Server, tool};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Echo { text: String }
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! Server::builder()
//!     .tool(tool("echo").description("Echo").handler(|Args(e): Args<Echo>| async move { e.text }))
//!     .build()?
//!     .serve_stdio()
//!     .await?;
//! # Ok(()) }
//! ```

#[cfg(all(feature = "server", feature = "client", feature = "http"))]
pub mod guide;

/// The README's examples, compiled as doc tests.
#[cfg(all(doctest, feature = "server", feature = "client"))]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;

pub use tessera_proto as proto;
pub use tessera_runtime as runtime;
pub use tessera_types as types;

#[cfg(feature = "auth")]
pub use tessera_auth as auth;
#[cfg(feature = "client")]
pub use tessera_client as client;
#[cfg(feature = "http")]
pub use tessera_http as http;
#[cfg(feature = "macros")]
pub use tessera_macros as macros;
#[cfg(feature = "redis")]
pub use tessera_redis as redis;
#[cfg(feature = "server")]
pub use tessera_server as server;
#[cfg(feature = "telemetry")]
pub use tessera_telemetry as telemetry;
