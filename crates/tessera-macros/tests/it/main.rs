//! The integration tests of `tessera-macros`, one test binary: each module was
//! its own binary once (`cargo test -p tessera-macros --test it MODULE::`).

mod routes;
mod ui;
