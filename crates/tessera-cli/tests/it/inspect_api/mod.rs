//! The HTTP + SSE API of `tessera inspect` (crates/tessera/guide/inspector.md), against a real
//! `tessera inspect` holding a real `tessera serve --stdio`, and its
//! security rules: the token, the Host and Origin checks, loopback binding.

use crate::common;

mod apps;
mod auth;
mod client;
mod connections;
use crate::inspect_fixture as fixture;
mod network;
mod sampling_auto;
mod security;
mod server_features;
mod url_elicitation;
