//! The integration tests of `tessera-http`, one test binary: each module was
//! its own binary once (`cargo test -p tessera-http --test it MODULE::`).

mod axum;
mod batch_refusal;
mod client_h2;
mod client_share;
mod client_streams;
mod cluster;
mod common;
mod connections;
mod echo_bounds;
mod event_store;
mod legacy_sse;
mod limits;
mod modern;
mod session_loss;
mod streamable;
