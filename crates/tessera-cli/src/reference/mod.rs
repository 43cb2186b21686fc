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
    pub task_store: Option<Arc<dyn tessera::server::task::TaskStore>>,
    /// Shared state on Redis (`--redis`): tasks and the requestState key ring.
    pub redis: Option<tessera_redis::Redis>,
    /// Telemetry's middleware layer, when telemetry is on.
    pub layer: Option<tessera_telemetry::TelemetryLayer>,
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("skills", &self.skills)
            .field("task_store", &self.task_store.is_some())
            .field("redis", &self.redis)
            .field("telemetry", &self.layer.is_some())
            .finish()
    }
}

/// Builds the reference server.
pub fn server(options: Options) -> Result<Server, BuildError> {
    let mut b = Server::builder()
        .name_version("tessera-reference", env!("CARGO_PKG_VERSION"))
        .instructions("The Tessera reference server: echo, add, and the conformance fixtures.");
    if let Some(skills) = options.skills {
        b = b.extension_arc(skills);
    }
    if let Some(store) = options.task_store {
        b = b.task_store(store);
    }
    if let Some(redis) = &options.redis {
        b = redis.install(b);
    }
    if let Some(layer) = options.layer {
        b = b.layer(layer);
    }
    let b = tools::register(b);
    let b = apps::register(b);
    let b = mrtr::register(b);
    let b = tasks::register(b);
    let b = resources::register(b);
    let b = notify::register(b);
    prompts::register(b).build()
}
