//! [`ResourceHandler`]: plain async functions as resource handlers
//! (implemented in `crate::handler`, with the other kinds of handler).

use tessera_runtime::BoxFuture;
use tessera_types::ReadResourceResult;

use super::extract::ResourceRead;
use super::response::ResourceError;
use crate::extract::HandlerInput;

/// An async function usable as a resource handler: every parameter
/// implements [`FromRequest<S, ResourceRead>`](crate::FromRequest) and the
/// output implements [`IntoResourceContents`](crate::IntoResourceContents).
///
/// `M` is a marker that keeps the implementations for different arities
/// apart; it is inferred.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a resource handler",
    label = "not a resource handler",
    note = "a resource handler is an async fn (or a closure returning a future) whose parameters, at most 6, implement `FromRequest<S, ResourceRead>`, whose output implements `IntoResourceContents`, and whose future is `Send + 'static`",
    note = "`#[tessera::macros::resource]` on the function reports which parameter or return type is at fault"
)]
pub trait ResourceHandler<M, S>: Clone + Send + Sync + 'static {
    /// Runs the handler on a read.
    fn call(
        &self,
        input: HandlerInput<S, ResourceRead>,
    ) -> BoxFuture<'static, Result<ReadResourceResult, ResourceError>>;
}
