//! The integration tests of `tessera-auth`, one test binary: each module was
//! its own binary once (`cargo test -p tessera-auth --test it MODULE::`).

mod client;
mod client_end_to_end;
mod client_support;
mod common;
mod dpop;
mod dpop_client;
mod end_to_end;
mod introspection;
mod jwt;
mod principal_binding;
mod refresh_race;
mod scopes;
mod token_exchange;
