//! The integration tests of `tessera-server`, one test binary: each module was
//! its own binary once (`cargo test -p tessera-server --test it MODULE::`).

mod completion;
mod extractors;
mod flooding_peer;
mod middleware;
mod middleware_notifications;
mod mrtr;
mod prompts;
mod resources;
mod resources_fs;
mod routes;
mod shaped;
mod skills;
mod stream_control;
mod task_limits;
mod task_relay;
mod task_store;
mod tasks;
mod tasks_extension;
mod tools;
mod tools_lazy;
