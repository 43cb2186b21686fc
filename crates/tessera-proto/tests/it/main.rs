//! The integration tests of `tessera-proto`, one test binary: each module was
//! its own binary once (`cargo test -p tessera-proto --test it MODULE::`).

mod capabilities;
mod decode;
mod harness;
mod lifecycle;
mod modern;
mod notices;
mod properties;
mod raw;
mod requests;
mod shaped;
mod snapshot;
