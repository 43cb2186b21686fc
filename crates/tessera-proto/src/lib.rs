//! The sans-IO engine of Tessera, the Model Context Protocol for Rust.
//!
//! An [`Engine`] is one MCP conversation as a value: it takes bytes or
//! messages together with an explicit `now`, and hands back messages to send
//! ([`Engine::poll_transmit`]), work for the application
//! ([`Engine::poll_event`]) and the next deadline ([`Engine::poll_timeout`]).
//! It has no sockets, no tasks and no clock, so it is tested deterministically:
//! two engines wired back to back on a virtual clock.
//!
//! It does what every MCP implementation must do the same way, whatever the
//! transport:
//!
//! - decodes JSON-RPC 2.0 with the right error for every bad input (see [`decode`]);
//! - runs the legacy lifecycle (`initialize`, version negotiation,
//!   `notifications/initialized`, `ping`) and the modern per-request checks of
//!   2026-07-28 (`_meta` protocol version and client capabilities,
//!   `UnsupportedProtocolVersion`, `server/discover`, `resultType`);
//! - as a client, probes the server's era with `server/discover` and falls back
//!   to `initialize`;
//! - allocates request ids, matches responses, routes progress, raises timeouts
//!   (restarted by progress, bounded by a hard maximum), sends and honours
//!   cancellation, and drops answers that arrive after it.
//!
//! ```
//! use std::time::Instant;
//! use tessera_proto::{Engine, EngineConfig, Event, ServerIdentity};
//!
//! let mut server = Engine::new(EngineConfig::server(ServerIdentity::default()).with_methods(["tools/list"]));
//! let now = Instant::now();
//! server.handle_bytes(now, br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#);
//! let answer = server.poll_transmit().unwrap();
//! assert!(String::from_utf8(answer.message.to_bytes()).unwrap().contains("2025-11-25"));
//! server.handle_bytes(now, br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
//! assert!(matches!(server.poll_event(), Some(Event::Request(r)) if r.method == "tools/list"));
//! ```

mod config;
mod connect;
pub mod decode;
mod engine;
mod envelope;
mod error;
mod event;
pub mod mirror;
mod peer;
mod pending;
mod raw;
mod serve;
mod session;

pub use config::{ClientIdentity, EngineConfig, ServerIdentity, Side, Timeouts};
pub use decode::MAX_ID_BYTES;
pub use engine::{ConnectMode, Engine, MAX_REQUEST_TAG, meta_keys};
pub use error::{CallError, SendError};
pub use event::{Connected, Event, IncomingRequest, Outbound, RequestInfo, Transmit};
pub use peer::{PeerCapabilities, PeerInfo};
pub use pending::RequestOptions;
pub use raw::{RawResponse, RawResult, Reply, ResultShape};
pub use serve::MAX_PROGRESS_TOKEN;
pub use session::{SessionSnapshot, level_passes, level_rank};
pub use tessera_types::{Era, ProtocolVersion};
