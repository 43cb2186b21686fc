//! [`PromptHandler`]: plain async functions as prompt handlers (implemented
//! in `crate::handler`, with the other kinds of handler).

use std::sync::Arc;

use tessera_runtime::BoxFuture;
use tessera_types::{ErrorObject, GetPromptResult, PromptArgument};

use crate::extract::HandlerInput;
use crate::prompt::extract::PromptGet;

/// An async function usable as a prompt handler: every parameter implements
/// [`FromRequest<S, PromptGet>`](crate::FromRequest) and the output implements
/// [`IntoPromptResult`](crate::IntoPromptResult).
///
/// `M` is a marker that keeps the implementations for different arities
/// apart; it is inferred.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a prompt handler",
    label = "not a prompt handler",
    note = "a prompt handler is an async fn (or a closure returning a future) whose parameters, at most 6, implement `FromRequest<S, PromptGet>`, whose output implements `IntoPromptResult`, and whose future is `Send + 'static`",
    note = "`#[tessera::macros::prompt]` on the function reports which parameter or return type is at fault"
)]
pub trait PromptHandler<M, S>: Clone + Send + Sync + 'static {
    /// Runs the handler on a request.
    fn call(
        &self,
        input: HandlerInput<S, PromptGet>,
    ) -> BoxFuture<'static, Result<GetPromptResult, ErrorObject>>;

    /// The arguments implied by the parameters (the first that reads them).
    fn arguments() -> Option<Vec<PromptArgument>>;
}

/// A prompt handler with its types erased.
pub(crate) type ErasedPromptHandler<S> = Arc<
    dyn Fn(HandlerInput<S, PromptGet>) -> BoxFuture<'static, Result<GetPromptResult, ErrorObject>>
        + Send
        + Sync,
>;
