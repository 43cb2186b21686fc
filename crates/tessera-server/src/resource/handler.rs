//! [`ResourceHandler`]: plain async functions as resource handlers.

use std::future::Future;

use tessera_runtime::BoxFuture;
use tessera_types::ReadResourceResult;

use super::extract::{FromResourceRead, ResourceRead};
use super::response::{IntoResourceContents, ResourceError};

/// An async function usable as a resource handler: every parameter
/// implements [`FromResourceRead`] and the output implements
/// [`IntoResourceContents`].
///
/// `M` is a marker that keeps the implementations for different arities
/// apart; it is inferred.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a resource handler",
    label = "not a resource handler",
    note = "a resource handler is an async fn (or a closure returning a future) whose parameters, at most 6, implement `FromResourceRead<S>`, whose output implements `IntoResourceContents`, and whose future is `Send + 'static`",
    note = "`#[tessera::macros::resource]` on the function reports which parameter or return type is at fault"
)]
pub trait ResourceHandler<M, S>: Clone + Send + Sync + 'static {
    /// Runs the handler on a read.
    fn call(
        &self,
        read: ResourceRead<S>,
    ) -> BoxFuture<'static, Result<ReadResourceResult, ResourceError>>;
}

macro_rules! impl_resource_handler {
    ($($t:ident),*) => {
        impl<F, Fut, R, S, $($t,)*> ResourceHandler<(R, $($t,)*), S> for F
        where
            F: Fn($($t,)*) -> Fut + Clone + Send + Sync + 'static,
            Fut: Future<Output = R> + Send + 'static,
            R: IntoResourceContents,
            S: Send + Sync + 'static,
            $($t: FromResourceRead<S> + 'static,)*
        {
            #[allow(non_snake_case, unused_mut, unused_variables)]
            fn call(
                &self,
                mut read: ResourceRead<S>,
            ) -> BoxFuture<'static, Result<ReadResourceResult, ResourceError>> {
                $(
                    let $t = match $t::from_resource_read(&mut read) {
                        Ok(v) => v,
                        Err(e) => return Box::pin(async move { Err(e) }),
                    };
                )*
                let fut = (self)($($t,)*);
                let uri = read.uri;
                let mime = read.mime_type;
                Box::pin(async move { fut.await.into_contents(&uri, mime.as_deref()) })
            }
        }
    };
}

impl_resource_handler!();
impl_resource_handler!(T1);
impl_resource_handler!(T1, T2);
impl_resource_handler!(T1, T2, T3);
impl_resource_handler!(T1, T2, T3, T4);
impl_resource_handler!(T1, T2, T3, T4, T5);
impl_resource_handler!(T1, T2, T3, T4, T5, T6);
