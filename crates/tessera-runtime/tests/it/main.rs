//! The integration tests of `tessera-runtime`, one test binary: each module was
//! its own binary once (`cargo test -p tessera-runtime --test it MODULE::`).

mod child;
mod coalesce;
mod core;
mod raw;
mod restore;
