//! The integration tests of `tessera-types`, one test binary: each module was
//! its own binary once (`cargo test -p tessera-types --test it MODULE::`).

mod examples;
mod schema_coverage;
mod schema_validation;
mod spec;
