//! [`ToolHandler`]: plain async functions as tool handlers.

use std::future::Future;

use tessera_runtime::BoxFuture;
use tessera_types::{CallToolResult, ErrorObject, JsonObject};

use crate::extract::{FromToolCall, ToolCall};
use crate::response::IntoToolResult;

/// An async function usable as a tool handler: every parameter implements
/// [`FromToolCall`] and the output implements [`IntoToolResult`].
///
/// `M` is a marker that keeps the implementations for different arities apart;
/// it is inferred.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool handler",
    label = "not a tool handler",
    note = "a tool handler is an async fn (or a closure returning a future) whose parameters, at most 6, implement `FromToolCall<S>`, whose output implements `IntoToolResult`, and whose future is `Send + 'static`",
    note = "`#[tessera::macros::tool]` on the function reports which parameter or return type is at fault"
)]
pub trait ToolHandler<M, S>: Clone + Send + Sync + 'static {
    /// Runs the handler on a call.
    fn call(&self, call: ToolCall<S>) -> BoxFuture<'static, Result<CallToolResult, ErrorObject>>;

    /// The `inputSchema` implied by the parameters (the first that reads the arguments).
    fn input_schema() -> Option<JsonObject>;

    /// The `outputSchema` implied by the return type.
    fn output_schema() -> Option<JsonObject>;
}

macro_rules! impl_handler {
    ($($t:ident),*) => {
        impl<F, Fut, R, S, $($t,)*> ToolHandler<(R, $($t,)*), S> for F
        where
            F: Fn($($t,)*) -> Fut + Clone + Send + Sync + 'static,
            Fut: Future<Output = R> + Send + 'static,
            R: IntoToolResult,
            S: Send + Sync + 'static,
            $($t: FromToolCall<S> + 'static,)*
        {
            #[allow(non_snake_case, unused_mut, unused_variables)]
            fn call(&self, mut call: ToolCall<S>) -> BoxFuture<'static, Result<CallToolResult, ErrorObject>> {
                $(
                    let $t = match $t::from_tool_call(&mut call) {
                        Ok(v) => v,
                        Err(e) => return Box::pin(async move { Ok(e) }),
                    };
                )*
                let fut = (self)($($t,)*);
                Box::pin(async move { fut.await.into_outcome() })
            }

            fn input_schema() -> Option<JsonObject> {
                None$(.or_else($t::input_schema))*
            }

            fn output_schema() -> Option<JsonObject> {
                R::output_schema()
            }
        }
    };
}

impl_handler!();
impl_handler!(T1);
impl_handler!(T1, T2);
impl_handler!(T1, T2, T3);
impl_handler!(T1, T2, T3, T4);
impl_handler!(T1, T2, T3, T4, T5);
impl_handler!(T1, T2, T3, T4, T5, T6);
