//! Plain async functions as handlers: [`ToolHandler`] here, and one macro
//! that implements it, [`PromptHandler`](crate::PromptHandler),
//! [`ResourceHandler`](crate::ResourceHandler) and
//! [`CompletionHandler`](crate::CompletionHandler) for functions of up to six
//! extractor parameters ([`FromRequest`]).

use std::future::Future;

use tessera_runtime::BoxFuture;
use tessera_types::{
    CallToolResult, CompleteResult, ErrorObject, GetPromptResult, JsonObject, PromptArgument,
    ReadResourceResult,
};

use crate::completion::{CompletionHandler, CompletionRequest, IntoCompletion};
use crate::extract::{FromRequest, HandlerInput, Rejection, ToolCall};
use crate::prompt::{IntoPromptResult, PromptGet, PromptHandler};
use crate::resource::{IntoResourceContents, ResourceError, ResourceHandler, ResourceRead};
use crate::response::IntoToolResult;

/// An async function usable as a tool handler: every parameter implements
/// [`FromRequest<S, ToolCall>`](FromRequest) and the output implements
/// [`IntoToolResult`].
///
/// `M` is a marker that keeps the implementations for different arities apart;
/// it is inferred.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool handler",
    label = "not a tool handler",
    note = "a tool handler is an async fn (or a closure returning a future) whose parameters, at most 6, implement `FromRequest<S, ToolCall>`, whose output implements `IntoToolResult`, and whose future is `Send + 'static`",
    note = "`#[tessera::macros::tool]` on the function reports which parameter or return type is at fault"
)]
pub trait ToolHandler<M, S>: Clone + Send + Sync + 'static {
    /// Runs the handler on a call.
    fn call(
        &self,
        input: HandlerInput<S, ToolCall>,
    ) -> BoxFuture<'static, Result<CallToolResult, ErrorObject>>;

    /// The `inputSchema` implied by the parameters (the first that reads the arguments).
    fn input_schema() -> Option<JsonObject>;

    /// Whether the parameter that declares the `inputSchema` refuses what
    /// breaks it when it decodes the arguments
    /// ([`FromRequest::decodes_declaration`]).
    fn input_decoded() -> bool;

    /// The `outputSchema` implied by the return type.
    fn output_schema() -> Option<JsonObject>;

    /// [`ToolHandler::input_schema`] with [`ToolHandler::input_decoded`],
    /// deriving the schema once: what a [`ToolRoute`](crate::ToolRoute)
    /// asks when its definition is first needed.
    fn input_declaration() -> Option<(JsonObject, bool)> {
        Self::input_schema().map(|s| (s, Self::input_decoded()))
    }
}

/// A rejected tool call: an `isError` result the model can read.
fn tool_rejection(r: Rejection) -> BoxFuture<'static, Result<CallToolResult, ErrorObject>> {
    Box::pin(std::future::ready(Ok(CallToolResult::error(
        r.message().to_owned(),
    ))))
}

/// A rejected prompt or completion request: its JSON-RPC error.
fn rpc_rejection<T: Send + 'static>(r: Rejection) -> BoxFuture<'static, Result<T, ErrorObject>> {
    Box::pin(std::future::ready(Err(r.into_error_object())))
}

/// A rejected resource read.
fn resource_rejection(
    r: Rejection,
) -> BoxFuture<'static, Result<ReadResourceResult, ResourceError>> {
    let e = match r {
        Rejection::InvalidParams(m) => ResourceError::InvalidParams(m),
        other => ResourceError::Internal(other.message().to_owned()),
    };
    Box::pin(std::future::ready(Err(e)))
}

/// Runs each parameter's extractor on `$input` in order, binding the values
/// to the parameters' type names; the first rejection returns `$reject(e)`.
macro_rules! extract {
    ($input:ident, $reject:expr, $($t:ident),*) => {
        $(
            #[allow(non_snake_case)]
            let $t = match $t::from_request(&mut $input) {
                Ok(v) => v,
                Err(e) => return $reject(e),
            };
        )*
    };
}

/// The handler impls for functions of the given parameter types: the one
/// place the four kinds of handler are made from functions.
macro_rules! impl_handlers {
    ($($t:ident),*) => {
        impl<F, Fut, R, S, $($t,)*> ToolHandler<(R, $($t,)*), S> for F
        where
            F: Fn($($t,)*) -> Fut + Clone + Send + Sync + 'static,
            Fut: Future<Output = R> + Send + 'static,
            R: IntoToolResult,
            S: Send + Sync + 'static,
            $($t: FromRequest<S, ToolCall> + 'static,)*
        {
            #[allow(unused_mut, unused_variables)]
            fn call(
                &self,
                mut input: HandlerInput<S, ToolCall>,
            ) -> BoxFuture<'static, Result<CallToolResult, ErrorObject>> {
                extract!(input, tool_rejection, $($t),*);
                let fut = (self)($($t,)*);
                Box::pin(async move { fut.await.into_outcome() })
            }

            fn input_schema() -> Option<JsonObject> {
                None$(.or_else(<$t as FromRequest<S, ToolCall>>::declaration))*
            }

            fn input_decoded() -> bool {
                None$(.or_else(|| {
                    <$t as FromRequest<S, ToolCall>>::declaration()
                        .map(|_| <$t as FromRequest<S, ToolCall>>::decodes_declaration())
                }))*
                .unwrap_or(false)
            }

            fn output_schema() -> Option<JsonObject> {
                R::output_schema()
            }

            fn input_declaration() -> Option<(JsonObject, bool)> {
                None$(.or_else(|| {
                    <$t as FromRequest<S, ToolCall>>::declaration()
                        .map(|s| (s, <$t as FromRequest<S, ToolCall>>::decodes_declaration()))
                }))*
            }
        }

        impl<F, Fut, R, S, $($t,)*> PromptHandler<(R, $($t,)*), S> for F
        where
            F: Fn($($t,)*) -> Fut + Clone + Send + Sync + 'static,
            Fut: Future<Output = R> + Send + 'static,
            R: IntoPromptResult,
            S: Send + Sync + 'static,
            $($t: FromRequest<S, PromptGet> + 'static,)*
        {
            #[allow(unused_mut, unused_variables)]
            fn call(
                &self,
                mut input: HandlerInput<S, PromptGet>,
            ) -> BoxFuture<'static, Result<GetPromptResult, ErrorObject>> {
                extract!(input, rpc_rejection, $($t),*);
                let fut = (self)($($t,)*);
                Box::pin(async move { fut.await.into_prompt_result() })
            }

            fn arguments() -> Option<Vec<PromptArgument>> {
                None$(.or_else(<$t as FromRequest<S, PromptGet>>::declaration))*
            }
        }

        impl<F, Fut, R, S, $($t,)*> ResourceHandler<(R, $($t,)*), S> for F
        where
            F: Fn($($t,)*) -> Fut + Clone + Send + Sync + 'static,
            Fut: Future<Output = R> + Send + 'static,
            R: IntoResourceContents,
            S: Send + Sync + 'static,
            $($t: FromRequest<S, ResourceRead> + 'static,)*
        {
            #[allow(unused_mut, unused_variables)]
            fn call(
                &self,
                mut input: HandlerInput<S, ResourceRead>,
            ) -> BoxFuture<'static, Result<ReadResourceResult, ResourceError>> {
                extract!(input, resource_rejection, $($t),*);
                let fut = (self)($($t,)*);
                let ResourceRead { uri, mime_type, .. } = input.body;
                Box::pin(async move { fut.await.into_contents(&uri, mime_type.as_deref()) })
            }
        }

        impl<F, Fut, R, S, $($t,)*> CompletionHandler<(R, $($t,)*), S> for F
        where
            F: Fn($($t,)*) -> Fut + Clone + Send + Sync + 'static,
            Fut: Future<Output = R> + Send + 'static,
            R: IntoCompletion,
            S: Send + Sync + 'static,
            $($t: FromRequest<S, CompletionRequest> + 'static,)*
        {
            #[allow(unused_mut, unused_variables)]
            fn call(
                &self,
                mut input: HandlerInput<S, CompletionRequest>,
            ) -> BoxFuture<'static, Result<CompleteResult, ErrorObject>> {
                extract!(input, rpc_rejection, $($t),*);
                let fut = (self)($($t,)*);
                Box::pin(async move { fut.await.into_completion() })
            }
        }
    };
}

impl_handlers!();
impl_handlers!(T1);
impl_handlers!(T1, T2);
impl_handlers!(T1, T2, T3);
impl_handlers!(T1, T2, T3, T4);
impl_handlers!(T1, T2, T3, T4, T5);
impl_handlers!(T1, T2, T3, T4, T5, T6);
