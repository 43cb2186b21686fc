//! Tools for testing servers and clients built on Tessera.
//!
//! - [`faults`]: a pipe that drops, delays, duplicates, reorders and
//!   truncates messages and closes connections mid-message, seeded and
//!   deterministic.
//! - [`LineSession`]: a raw newline-delimited JSON-RPC client, for tests
//!   that check a server's exact answers.

pub mod faults;
mod lines;

pub use lines::LineSession;
