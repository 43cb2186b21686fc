//! A guide to Tessera, to read top to bottom. Every example in it is
//! compiled by the test suite.
//!
//! 1. [`concepts`]: eras, sessions and multi round-trip requests.
//! 2. [`server`]: tools, resources, prompts and extractors.
//! 3. [`client`]: connecting to any server and calling it.
//! 4. [`http`]: Streamable HTTP, on its own or inside axum.
//! 5. [`authorization`]: OAuth 2.1 on both sides.
//! 6. [`tasks`]: tool calls that run long, in both designs.
//! 7. [`extensions`]: adding to the protocol; skills and MCP Apps.
//! 8. [`scaling`]: several instances behind one endpoint, their state in
//!    Redis (the `redis` feature).
//!
//! The repository's `examples/` folder holds the same ideas as programs
//! (`cargo run -p tessera-examples --example NAME`).

#[doc = include_str!("../guide/concepts.md")]
pub mod concepts {}

#[doc = include_str!("../guide/server.md")]
pub mod server {}

#[doc = include_str!("../guide/client.md")]
pub mod client {}

#[doc = include_str!("../guide/http.md")]
pub mod http {}

#[doc = include_str!("../guide/authorization.md")]
pub mod authorization {}

#[doc = include_str!("../guide/tasks.md")]
pub mod tasks {}

#[doc = include_str!("../guide/extensions.md")]
pub mod extensions {}

#[doc = include_str!("../guide/scaling.md")]
pub mod scaling {}
