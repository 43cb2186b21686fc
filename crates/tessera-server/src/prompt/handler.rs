//! [`PromptHandler`]: plain async functions as prompt handlers.

use std::future::Future;
use std::sync::Arc;

use tessera_runtime::BoxFuture;
use tessera_types::{ErrorObject, GetPromptResult, PromptArgument};

use crate::prompt::extract::{FromPromptGet, PromptGet};
use crate::prompt::response::IntoPromptResult;

/// An async function usable as a prompt handler: every parameter implements
/// [`FromPromptGet`] and the output implements [`IntoPromptResult`].
///
/// `M` is a marker that keeps the implementations for different arities
/// apart; it is inferred.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a prompt handler",
    label = "not a prompt handler",
    note = "a prompt handler is an async fn (or a closure returning a future) whose parameters, at most 6, implement `FromPromptGet<S>`, whose output implements `IntoPromptResult`, and whose future is `Send + 'static`",
    note = "`#[tessera::macros::prompt]` on the function reports which parameter or return type is at fault"
)]
pub trait PromptHandler<M, S>: Clone + Send + Sync + 'static {
    /// Runs the handler on a request.
    fn call(&self, get: PromptGet<S>) -> BoxFuture<'static, Result<GetPromptResult, ErrorObject>>;

    /// The arguments implied by the parameters (the first that reads them).
    fn arguments() -> Option<Vec<PromptArgument>>;
}

macro_rules! impl_prompt_handler {
    ($($t:ident),*) => {
        impl<F, Fut, R, S, $($t,)*> PromptHandler<(R, $($t,)*), S> for F
        where
            F: Fn($($t,)*) -> Fut + Clone + Send + Sync + 'static,
            Fut: Future<Output = R> + Send + 'static,
            R: IntoPromptResult,
            S: Send + Sync + 'static,
            $($t: FromPromptGet<S> + 'static,)*
        {
            #[allow(non_snake_case, unused_mut, unused_variables)]
            fn call(
                &self,
                mut get: PromptGet<S>,
            ) -> BoxFuture<'static, Result<GetPromptResult, ErrorObject>> {
                $(
                    let $t = match $t::from_prompt_get(&mut get) {
                        Ok(v) => v,
                        Err(e) => return Box::pin(async move { Err(e) }),
                    };
                )*
                let fut = (self)($($t,)*);
                Box::pin(async move { fut.await.into_prompt_result() })
            }

            fn arguments() -> Option<Vec<PromptArgument>> {
                None$(.or_else($t::arguments))*
            }
        }
    };
}

impl_prompt_handler!();
impl_prompt_handler!(T1);
impl_prompt_handler!(T1, T2);
impl_prompt_handler!(T1, T2, T3);
impl_prompt_handler!(T1, T2, T3, T4);
impl_prompt_handler!(T1, T2, T3, T4, T5);
impl_prompt_handler!(T1, T2, T3, T4, T5, T6);

/// A prompt handler with its types erased.
pub(crate) type ErasedPromptHandler<S> = Arc<
    dyn Fn(PromptGet<S>) -> BoxFuture<'static, Result<GetPromptResult, ErrorObject>> + Send + Sync,
>;
