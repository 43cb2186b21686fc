//! Tools for testing servers and clients built on Tessera.
//!
//! - [`faults`]: a pipe that drops, delays, duplicates, reorders and
//!   truncates messages and closes connections mid-message, seeded and
//!   deterministic.

pub mod faults;
