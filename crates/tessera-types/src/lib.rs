//! Model Context Protocol types for every released protocol version.
//!
//! (Crate documentation is completed with the rest of the types.)

pub mod jsonrpc;
pub mod version;

pub use jsonrpc::*;
pub use version::{Era, ProtocolVersion, UnknownVersion};

/// A JSON object: the shape of every `params` and `result`.
pub type JsonObject = serde_json::Map<String, serde_json::Value>;
