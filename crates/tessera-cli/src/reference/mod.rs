//! The reference server: `echo`, `add`, and every tool, resource and prompt
//! the official conformance suite expects, written with the public API only,
//! so that it reads as the example of everything.

mod media;
mod mrtr;
mod prompts;
mod resources;
mod tools;

use tessera::server::{BuildError, Server};

/// Builds the reference server.
pub fn server() -> Result<Server, BuildError> {
    let b = Server::builder()
        .name_version("tessera-reference", env!("CARGO_PKG_VERSION"))
        .instructions("The Tessera reference server: echo, add, and the conformance fixtures.");
    let b = tools::register(b);
    let b = mrtr::register(b);
    let b = resources::register(b);
    prompts::register(b).build()
}
