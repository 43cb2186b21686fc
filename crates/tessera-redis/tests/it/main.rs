//! The integration tests of `tessera-redis`, one test binary: each module was
//! its own binary once (`cargo test -p tessera-redis --test it MODULE::`).

mod bus;
mod dpop_replay;
mod event_store;
mod key_ring;
mod outage;
mod session_caps;
mod session_store;
mod task_caps;
mod task_store;
mod token_bucket;
