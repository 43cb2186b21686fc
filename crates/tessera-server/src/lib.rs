//! The server side of Tessera, the Model Context Protocol for Rust.
//!
//! Build a [`Server`] from tools whose handlers are plain async functions.
//! Each parameter of a handler is an extractor ([`Args<T>`] for the typed
//! arguments, [`RequestContext`] for progress, logs, cancellation and the
//! negotiated version, [`State<S>`] for shared state); the return value is
//! anything that converts into a tool result ([`IntoToolResult`]).
//!
//! ```no_run
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//! use tessera_server::{Args, Server, tool};
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct Echo {
//!     /// The text to send back.
//!     text: String,
//! }
//!
//! async fn echo(Args(a): Args<Echo>) -> String {
//!     a.text
//! }
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! Server::builder()
//!     .name_version("echo-server", "1.0.0")
//!     .tool(tool("echo").description("Sends the text back").handler(echo))
//!     .build()?
//!     .serve_stdio()
//!     .await?;
//! # Ok(()) }
//! ```
//!
//! The arguments are validated against the tool's `inputSchema` before the
//! handler runs: a mismatch is an `isError` result that names the field, so the
//! model can correct itself. Capabilities are derived from what is registered.

pub mod apps;
mod completion;
mod context;
pub mod elicit;
mod error;
mod extension;
mod extract;
mod handler;
pub mod hub;
mod listen;
pub mod mrtr;
pub mod pagination;
mod prompt;
mod reply;
mod resource;
mod response;
mod router;
pub mod schema;
mod server;
pub mod skills;
pub mod task;
mod tool;

pub use completion::{
    CompletionHandler, CompletionRequest, CompletionTarget, IntoCompletion, MAX_COMPLETION_VALUES,
    complete_from,
};
pub use context::RequestContext;
pub use elicit::Elicited;
pub use error::BuildError;
pub use extension::{ExtensionHost, ExtensionRequest, ExtensionRoutes, ServerExtension};
pub use extract::{
    Args, Extension, FromRequest, HandlerInput, RawArgs, Rejection, RequestBody, RequestParts,
    State, ToolCall,
};
pub use handler::ToolHandler;
pub use prompt::{
    IntoPromptResult, PromptArgs, PromptArgsMap, PromptBuilder, PromptGet, PromptHandler,
    PromptRoute, check_prompt_name, prompt,
};
pub use resource::{
    Blob, FsResources, IntoResourceContents, JsonContents, MAX_ECHOED_URI, MAX_MATCH_LEN,
    ResourceBuilder, ResourceError, ResourceHandler, ResourceProvider, ResourceRead, ResourceRoute,
    ResourceTemplateBuilder, ResourceTemplateRoute, SharedProvider, TemplateError, Uri,
    UriTemplate, UriVars, VarValue, Vars, guess_mime_type, resource, resource_template,
};
pub use response::{IntoToolResult, ProtocolError, Structured};
pub use server::{SUBSCRIPTIONS_KEY, Server, ServerBuilder};
pub use tessera_types::DeclaredSettings;
pub use tool::{ToolBuilder, ToolRoute, check_tool_name, tool};
