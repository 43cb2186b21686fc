//! The reference server: `echo`, `add`, and every tool, resource and prompt
//! the official conformance suite expects, written with the public API only,
//! so that it reads as the example of everything.

mod apps;
mod media;
mod mrtr;
mod notify;
mod prompts;
mod resources;
mod tasks;
mod tools;

use std::sync::Arc;

use tessera::server::skills::Skills;
use tessera::server::{BuildError, Server};

/// What `tessera serve` adds to the reference server.
#[derive(Default)]
pub struct Options {
    /// The Skills extension, when `--skills DIR` is given.
    pub skills: Option<Arc<Skills>>,
    /// Where tasks live (`--task-store`; in memory when `None`).
    pub task_store: Option<Arc<dyn tessera::server::task::DynTaskStore>>,
    /// Shared state on Redis (`--redis`): tasks and the requestState key ring.
    pub redis: Option<tessera_redis::Redis>,
    /// The telemetry recording the requests served, when telemetry is on.
    pub telemetry: Option<tessera_telemetry::Telemetry>,
    /// The caps on tasks (`--max-tasks` and the like); the defaults when `None`.
    pub task_caps: Option<TaskCaps>,
    /// Derive and compile every tool's JSON Schema while building (a bad one
    /// fails the build) rather than on first use. `tessera serve` does it on
    /// first use (its first `tools/list` or tool call): its schemas are
    /// fixed, and a test builds them all this way.
    pub compile_schemas_at_build: bool,
}

/// The caps on tasks `tessera serve` was given (see `TaskSettings`).
#[derive(Debug, Clone, Copy)]
pub struct TaskCaps {
    /// `TaskSettings::max_running_per_owner`.
    pub running_per_owner: usize,
    /// `TaskSettings::max_running`.
    pub running: usize,
    /// `TaskSettings::max_stored_per_owner`.
    pub stored_per_owner: usize,
    /// `TaskSettings::max_stored`.
    pub stored: usize,
    /// `TaskSettings::max_result_bytes`.
    pub result_bytes: usize,
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("skills", &self.skills)
            .field("task_store", &self.task_store.is_some())
            .field("redis", &self.redis)
            .field("telemetry", &self.telemetry.is_some())
            .field("task_caps", &self.task_caps)
            .field("compile_schemas_at_build", &self.compile_schemas_at_build)
            .finish()
    }
}

/// Builds the reference server.
pub fn server(options: Options) -> Result<Server, BuildError> {
    let mut b = Server::builder()
        .name_version("tessera-reference", env!("CARGO_PKG_VERSION"))
        .instructions("The Tessera reference server: echo, add, and the conformance fixtures.");
    // Building JSON Schema's meta-schema validator for the first schema
    // compiled was half of what `tessera serve --stdio` did before answering
    // `initialize`; most sessions call none of those tools. Deriving the
    // tools' schemas from their Rust types (schemars) waits for the first
    // `tools/list` or call too.
    if !options.compile_schemas_at_build {
        b = b.compile_schemas_on_first_use();
    }
    if let Some(skills) = options.skills {
        b = b.extension_arc(skills);
    }
    if let Some(store) = options.task_store {
        b = b.configure_tasks(|t| t.store = store);
    }
    if let Some(redis) = &options.redis {
        b = redis.install(b);
    }
    if let Some(t) = &options.telemetry {
        b = b.middleware(|s| t.install(s));
    }
    if let Some(c) = options.task_caps {
        b = b.configure_tasks(|t| {
            t.max_running_per_owner = c.running_per_owner;
            t.max_running = c.running;
            t.max_stored_per_owner = c.stored_per_owner;
            t.max_stored = c.stored;
            t.max_result_bytes = c.result_bytes;
        });
    }
    let b = tools::register(b);
    let b = apps::register(b);
    let b = mrtr::register(b);
    let b = tasks::register(b);
    let b = resources::register(b);
    let b = notify::register(b);
    prompts::register(b).build()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `tessera serve` compiles its tools' schemas on first use: each of
    /// them must compile, which building with every schema compiled checks
    /// (a bad one would fail the build with `InvalidSchema`).
    #[test]
    fn every_schema_compiles_at_build() {
        let built = server(Options {
            compile_schemas_at_build: true,
            ..Options::default()
        });
        assert!(built.is_ok(), "{:?}", built.err());
    }
}
