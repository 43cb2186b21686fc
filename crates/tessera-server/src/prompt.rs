//! Prompts: message templates the user picks (as slash commands, say),
//! filled in with arguments.
//!
//! Describe a prompt with [`prompt`], attach an async handler whose
//! parameters are extractors ([`FromRequest`](crate::FromRequest): [`PromptArgs<T>`],
//! [`PromptArgsMap`], [`RequestContext`](crate::RequestContext),
//! [`State<S>`](crate::State), …) and whose return value converts into the
//! messages ([`IntoPromptResult`]), then register it with
//! [`ServerBuilder::prompt`](crate::ServerBuilder::prompt) or, while serving,
//! [`Server::add_prompt`](crate::Server::add_prompt).
//!
//! ```
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//! use tessera_server::{PromptArgs, Server, prompt};
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct Review {
//!     /// The code to review.
//!     code: String,
//!     /// What to focus on.
//!     focus: Option<String>,
//! }
//!
//! async fn review(PromptArgs(r): PromptArgs<Review>) -> String {
//!     let focus = r.focus.unwrap_or_else(|| "anything".into());
//!     format!("Review this code, focusing on {focus}:\n{}", r.code)
//! }
//!
//! let server = Server::builder()
//!     .prompt(prompt("code_review").description("Review code").handler(review))
//!     .build()
//!     .unwrap();
//! assert!(server.capabilities().prompts.is_some());
//! ```
//!
//! Before a handler runs, `prompts/get` checks the request: an unknown prompt,
//! a missing required argument or an argument the prompt does not declare is
//! refused with `-32602` (Invalid params) naming it. Undeclared arguments can
//! be let through with [`PromptBuilder::allow_undeclared_arguments`]. A
//! handler's failure is `-32603` (Internal error) unless it returns a
//! [`ProtocolError`](crate::ProtocolError). The messages are checked too
//! (base64 data, MIME types, URIs) and fitted to the client's protocol
//! version (a resource link becomes text before 2025-06-18).
//!
//! A handler may ask the client for input through its
//! [`RequestContext`](crate::RequestContext) (`elicit`, `sample`, `roots`):
//! in 2026-07-28 `prompts/get` is then answered with an `InputRequiredResult`
//! and the handler runs again when the client retries with the answers (see
//! [the `mrtr` module](crate::mrtr)).
//!
//! `prompts/list` is paginated with sealed cursors, in registration order,
//! with cache hints in 2026-07-28; adding or removing a prompt while serving
//! sends `notifications/prompts/list_changed`.

mod builder;
mod extract;
mod handler;
mod message;
mod registry;
mod response;

pub use builder::{PromptBuilder, PromptRoute, prompt};
pub use extract::{PromptArgs, PromptArgsMap, PromptGet};
pub use handler::PromptHandler;
pub use registry::check_prompt_name;
pub use response::IntoPromptResult;

pub(crate) use registry::PromptRegistry;

use crate::error::BuildError;

/// The build error of a prompt definition.
pub(crate) fn prompt_error(prompt: &str, problem: &str) -> BuildError {
    BuildError::InvalidPrompt {
        prompt: prompt.to_owned(),
        problem: problem.to_owned(),
    }
}
