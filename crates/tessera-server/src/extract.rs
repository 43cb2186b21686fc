//! Extractors: the parameters a handler function can take (see
//! [`FromRequest`]).

use std::sync::Arc;

use tessera_types::ErrorObject;

use crate::context::RequestContext;

mod parts;
mod tool;

pub use parts::{Extension, State};
pub(crate) use tool::Arguments;
pub use tool::{Args, RawArgs, ToolCall};

/// What every request carries, whatever its kind: the context (era,
/// version, peer, cancellation, progress, extensions), the shared state and
/// the server itself.
#[derive(Debug)]
pub struct RequestParts<S> {
    /// The request context.
    pub context: RequestContext,
    /// The server's shared state, as given to `Server::with_state`.
    pub state: Arc<S>,
    /// The server (to add or remove tools, prompts or resources while serving).
    pub server: crate::Server<S>,
}

impl<S> RequestParts<S> {
    /// The parts of a request `server` is answering.
    pub(crate) fn new(server: &crate::Server<S>, context: RequestContext) -> Self {
        RequestParts {
            context,
            state: server.inner.state.clone(),
            server: server.clone(),
        }
    }
}

/// One request as its handler's extractors see it: the [`RequestParts`]
/// every request has and the feature's body `B`.
#[derive(Debug)]
pub struct HandlerInput<S, B> {
    /// What every request has.
    pub parts: RequestParts<S>,
    /// What this kind of request carries (the tool's arguments, the prompt's
    /// name and arguments, the URI read, the argument completed).
    pub body: B,
}

/// The body of a kind of request a handler answers: [`ToolCall`],
/// [`PromptGet`](crate::PromptGet), [`ResourceRead`](crate::ResourceRead) or
/// [`CompletionRequest`](crate::CompletionRequest).
pub trait RequestBody: Send + 'static {
    /// What an extractor can declare about the handler it is a parameter
    /// of: a tool's `inputSchema`, a prompt's arguments; `()` for the others.
    type Declaration;
}

/// Something a handler can take as a parameter.
///
/// Every handler (tool, prompt, resource, completion) is an async function
/// whose parameters each implement one trait, [`FromRequest<S, B>`]: `S` is
/// the server's shared state and `B` the body of the request the handler
/// answers ([`ToolCall`], [`PromptGet`](crate::PromptGet),
/// [`ResourceRead`](crate::ResourceRead) or
/// [`CompletionRequest`](crate::CompletionRequest)).
///
/// - Extractors generic over `B` read only the [`RequestParts`] every request
///   has, so they work in every kind of handler: [`RequestContext`],
///   [`Peer`](tessera_runtime::Peer),
///   [`CancellationToken`](tokio_util::sync::CancellationToken), [`State<S>`],
///   [`Server<S>`](crate::Server) and [`Extension<T>`] (a value the transport
///   attached, such as the verified `tessera_auth::server::AuthInfo` of an
///   HTTP request).
/// - Each feature has its body extractors: [`Args<T>`] and [`RawArgs`] for
///   tools, [`PromptArgs<T>`](crate::PromptArgs) and
///   [`PromptArgsMap`](crate::PromptArgsMap) for prompts,
///   [`Uri`](crate::Uri), [`Vars<T>`](crate::Vars) and
///   [`UriVars`](crate::UriVars) for resources, and
///   [`CompletionRequest`](crate::CompletionRequest) itself for completions.
///
/// An extractor of your own implements `FromRequest<S, B>` for every `B` to
/// work everywhere (as the built-in part extractors do), or for one body to
/// read that feature's body:
///
/// ```
/// use tessera_server::{FromRequest, HandlerInput, Rejection, RequestBody};
///
/// struct Db { rows: u32 }
///
/// /// The row count of the server's database, in any handler.
/// struct Rows(u32);
///
/// impl<B: RequestBody> FromRequest<Db, B> for Rows {
///     fn from_request(input: &mut HandlerInput<Db, B>) -> Result<Self, Rejection> {
///         Ok(Rows(input.parts.state.rows))
///     }
/// }
/// ```
///
/// (One trait, generic over the body, rather than a separate parts trait
/// bridged by a blanket impl: the blanket impl would overlap with the body
/// extractors' impls unless a marker type parameter told them apart, and
/// with that marker a mistake such as `Args<T>` over a `T` without
/// `JsonSchema` would be reported as "`Args<T>` is not an extractor" instead
/// of naming the missing `JsonSchema`.)
///
/// An `Err` answers the request without running the handler: an `isError`
/// result for a tool call, a JSON-RPC error otherwise.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a parameter of a handler",
    label = "not an extractor",
    note = "every handler can take `RequestContext`, `State<S>`, `Peer`, `CancellationToken`, `Server<S>` or `Extension<T>`; a tool handler also `Args<T>` or `RawArgs`, a prompt handler `PromptArgs<T>` or `PromptArgsMap`, a resource handler `Uri`, `Vars<T>` or `UriVars`, a completion handler `CompletionRequest`",
    note = "to take a tool's arguments, put them in a struct that derives `Deserialize` and `JsonSchema` and take `Args<ThatStruct>`"
)]
pub trait FromRequest<S, B: RequestBody>: Sized + Send {
    /// Extracts the value.
    fn from_request(input: &mut HandlerInput<S, B>) -> Result<Self, Rejection>;

    /// What this extractor declares about its handler (a tool's
    /// `inputSchema`, a prompt's arguments), if it reads the body's
    /// arguments. The first parameter that declares something wins.
    fn declaration() -> Option<B::Declaration> {
        None
    }

    /// Whether reading the body with this extractor refuses whatever breaks
    /// its [`declaration`](FromRequest::declaration), so the server need not
    /// check the declaration itself first. [`Args<T>`] says so for a schema
    /// derived from `T` (the server still checks the schema keywords decoding
    /// cannot). Only asked of the parameter whose declaration the handler
    /// uses; the default is `false`.
    fn decodes_declaration() -> bool {
        false
    }
}

/// Why an extractor refused a request; the handler does not run.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Rejection {
    /// The request does not fit the handler (arguments of the wrong shape):
    /// `-32602`, or an `isError` result for a tool call.
    InvalidParams(String),
    /// The server cannot serve it (a value the handler needs is missing):
    /// `-32603`, or an `isError` result for a tool call.
    Internal(String),
}

impl Rejection {
    /// The message, without the kind.
    pub fn message(&self) -> &str {
        match self {
            Rejection::InvalidParams(m) | Rejection::Internal(m) => m,
        }
    }

    /// The JSON-RPC error of a prompt, resource or completion request.
    pub fn into_error_object(self) -> ErrorObject {
        match self {
            Rejection::InvalidParams(m) => ErrorObject::invalid_params(m),
            Rejection::Internal(m) => ErrorObject::internal(m),
        }
    }
}

impl std::fmt::Display for Rejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for Rejection {}
