//! The client side of Tessera, the Model Context Protocol for Rust.
//!
//! A [`Client`] connects to a server (a child process over stdio, or any
//! reader/writer pair), detects its era with the `server/discover` probe and
//! falls back to the `initialize` handshake for legacy servers, then lists and
//! calls tools.
//!
//! ```no_run
//! use tessera_client::Client;
//! use tessera_runtime::ChildCommand;
//!
//! # async fn run() -> Result<(), tessera_client::ClientError> {
//! let client = Client::builder("my-app", "0.1")
//!     .connect_child(&ChildCommand::new("tessera", ["serve", "--stdio"]))
//!     .await?;
//! println!("{:?} {}", client.era(), client.protocol_version());
//! for tool in client.list_tools().await? {
//!     println!("{}", tool.name);
//! }
//! # Ok(()) }
//! ```

mod client;
mod error;

pub use client::{Client, ClientBuilder};
pub use error::ClientError;
pub use tessera_proto::ConnectMode;
pub use tessera_runtime::ChildCommand;
