//! The integration tests of `tessera-client`, one test binary: each module was
//! its own binary once (`cargo test -p tessera-client --test it MODULE::`).

mod apps;
mod events;
mod extensions;
mod faults;
mod legacy;
mod listen;
mod lists;
mod mrtr;
mod probe_exit;
mod skills;
mod task_receiver;
mod tasks;
mod timing;
mod typed;
