//! OAuth 2.1 authorization for Tessera, the Model Context Protocol for Rust.
//!
//! - [`metadata`]: the documents both halves exchange — RFC 9728 protected
//!   resource metadata and RFC 8414 / OpenID Connect authorization server
//!   metadata.
//! - [`challenge`]: the `WWW-Authenticate: Bearer …` challenge (RFC 6750 §3,
//!   RFC 9728 §5.1), built by servers and parsed by clients.
//! - With the `server` feature: the resource-server half.
//! - With the `client` feature: the client half.
//! - With the `testing` feature: `testing::TestAuthorizationServer`, a
//!   small in-process authorization server for tests.

#![forbid(unsafe_code)]

pub mod challenge;
#[cfg(any(feature = "client", feature = "server"))]
pub mod metadata;

#[cfg(feature = "client")]
pub mod client;
#[cfg(feature = "server")]
pub mod server;
#[cfg(feature = "testing")]
pub mod testing;
