//! The extractors every handler can take: they read the [`RequestParts`]
//! and work whatever the request's body.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::{FromRequest, HandlerInput, Rejection, RequestBody};
use crate::context::RequestContext;

/// The server's shared state, as given to `Server::with_state`.
#[derive(Debug)]
pub struct State<S>(pub Arc<S>);

impl<S> Clone for State<S> {
    fn clone(&self) -> Self {
        State(self.0.clone())
    }
}

impl<S> std::ops::Deref for State<S> {
    type Target = S;
    fn deref(&self) -> &S {
        &self.0
    }
}

impl<S: Send + Sync, B: RequestBody> FromRequest<S, B> for State<S> {
    fn from_request(input: &mut HandlerInput<S, B>) -> Result<Self, Rejection> {
        Ok(State(input.parts.state.clone()))
    }
}

impl<S, B: RequestBody> FromRequest<S, B> for RequestContext {
    fn from_request(input: &mut HandlerInput<S, B>) -> Result<Self, Rejection> {
        Ok(input.parts.context.clone())
    }
}

impl<S, B: RequestBody> FromRequest<S, B> for tessera_runtime::Peer {
    fn from_request(input: &mut HandlerInput<S, B>) -> Result<Self, Rejection> {
        Ok(input.parts.context.peer().clone())
    }
}

/// Stream control for the request (SEP-1699): over Streamable HTTP with
/// resumable streams, close the request's SSE connection while it goes on.
impl<S, B: RequestBody> FromRequest<S, B> for tessera_runtime::StreamControl {
    fn from_request(input: &mut HandlerInput<S, B>) -> Result<Self, Rejection> {
        Ok(input.parts.context.stream_control())
    }
}

impl<S, B: RequestBody> FromRequest<S, B> for CancellationToken {
    fn from_request(input: &mut HandlerInput<S, B>) -> Result<Self, Rejection> {
        Ok(input.parts.context.cancellation().clone())
    }
}

impl<S: Send + Sync + 'static, B: RequestBody> FromRequest<S, B> for crate::Server<S> {
    fn from_request(input: &mut HandlerInput<S, B>) -> Result<Self, Rejection> {
        Ok(input.parts.server.clone())
    }
}

/// A value of type `T` that the transport attached to the request (see
/// [`RequestContext::extension`]), cloned. Over HTTP behind
/// `tessera_auth::server::BearerAuthLayer`, `Extension<AuthInfo>` is the
/// verified access token's claims and scopes.
///
/// A request without one is refused before the handler runs (an `isError`
/// result for a tool call, `-32603` otherwise); take `Option<Extension<T>>`
/// to accept both.
#[derive(Debug, Clone, PartialEq)]
pub struct Extension<T>(pub T);

impl<S, B, T> FromRequest<S, B> for Extension<T>
where
    B: RequestBody,
    T: Clone + Send + Sync + 'static,
{
    fn from_request(input: &mut HandlerInput<S, B>) -> Result<Self, Rejection> {
        input
            .parts
            .context
            .extension::<T>()
            .cloned()
            .map(Extension)
            .ok_or_else(|| {
                Rejection::Internal(format!(
                    "This request needs information that is missing ({})",
                    std::any::type_name::<T>()
                ))
            })
    }
}

impl<S, B, T> FromRequest<S, B> for Option<Extension<T>>
where
    B: RequestBody,
    T: Clone + Send + Sync + 'static,
{
    fn from_request(input: &mut HandlerInput<S, B>) -> Result<Self, Rejection> {
        Ok(input.parts.context.extension::<T>().cloned().map(Extension))
    }
}
