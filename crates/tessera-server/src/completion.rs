//! Argument completion (`completion/complete`): suggestions for the
//! arguments of prompts and the variables of resource templates.
//!
//! A provider is a plain async function taking a [`CompletionRequest`] (and
//! any other [`FromRequest`](crate::FromRequest) extractor) and returning the matching
//! values, usually a `Vec<String>` ([`IntoCompletion`]). Filtering by what the
//! user typed is the provider's job ([`complete_from`] does the common prefix
//! match); the server sends at most 100 values and sets `total` and `hasMore`.
//!
//! ```
//! use tessera_server::{CompletionRequest, Server, prompt};
//!
//! async fn review(code: tessera_server::PromptArgsMap) -> String {
//!     format!("Please review: {}", code.0.get("code").cloned().unwrap_or_default())
//! }
//!
//! async fn languages(req: CompletionRequest) -> Vec<String> {
//!     req.complete_from(["python", "rust", "ruby"])
//! }
//!
//! let server = Server::builder()
//!     .prompt(
//!         prompt("code_review")
//!             .argument("code", "The code to review", true)
//!             .argument("language", "Its language", false)
//!             .handler(review)
//!             .complete("language", languages),
//!     )
//!     .build()
//!     .unwrap();
//! assert!(server.capabilities().completions.is_some());
//! ```
//!
//! The `completions` capability (and the method) is offered when some prompt
//! has arguments, some resource template exists, or some provider is
//! registered. A prompt argument or template variable that exists but has no
//! provider is answered with an empty list.

mod handler;
mod registry;
mod request;

pub use handler::{CompletionHandler, IntoCompletion, MAX_COMPLETION_VALUES};
pub use request::{CompletionRequest, CompletionTarget, complete_from};

pub(crate) use handler::{ErasedCompleter, erase};
pub(crate) use registry::CompletionRegistry;

use crate::error::BuildError;

/// The build error of a completion provider registered for something that
/// does not exist (or twice).
pub(crate) fn completion_error(target: &str, problem: &str) -> BuildError {
    BuildError::InvalidCompletion {
        target: target.to_owned(),
        problem: problem.to_owned(),
    }
}
