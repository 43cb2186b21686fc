//! Test support shared by the Tessera crates' tests (a dev-dependency only,
//! `publish = false`: it never reaches a release build).
//!
//! - [`pair`]: a client connected to a server in the same process over an
//!   in-memory pipe, and a server scripted by one function;
//! - [`deadline`]: a failure bound for anything a test awaits;
//! - [`port`]: free loopback ports;
//! - [`process`]: child processes killed when dropped, and servers started
//!   as children whose listening port is read from their output;
//! - [`mod@reference`]: the reference server (`tessera serve`) as a fixture,
//!   given the binary (tests in `tessera-cli` pass
//!   `env!("CARGO_BIN_EXE_tessera")`);
//! - [`handlers`]: client-side handlers (sampling, elicitation, roots) with
//!   known answers;
//! - [`json`]: small helpers for `serde_json` values and tool results;
//! - [`layers`]: `tower` layers that report or refuse messages.
//!
//! ```
//! use tessera_client::Client;
//! use tessera_server::{Server, tool};
//! use tessera_testkit::prelude::*;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let server = Server::builder()
//!     .tool(tool("hello").handler(|| async { "hi" }))
//!     .build()
//!     .unwrap();
//! let client = in_process(&server, Client::builder("doc", "1")).await;
//! let answer = bounded("the call", client.call_tool("hello", serde_json::json!({}))).await;
//! assert_eq!(text(&answer.unwrap()), "hi");
//! # }
//! ```

#![forbid(unsafe_code)]

pub mod deadline;
pub mod handlers;
pub mod json;
pub mod layers;
pub mod pair;
pub mod port;
pub mod process;
pub mod reference;

pub use deadline::{BOUND, bounded};
pub use port::free_port;
pub use process::Running;

/// What most tests import: `use tessera_testkit::prelude::*;`.
pub mod prelude {
    pub use crate::deadline::{BOUND, bounded};
    pub use crate::handlers::{builder, fill_required, full_builder, paris, two_roots};
    pub use crate::json::{obj, text};
    pub use crate::pair::{ERAS, Notes, in_process, scripted, serve_raw};
    pub use crate::port::free_port;
    pub use crate::process::Running;
}
