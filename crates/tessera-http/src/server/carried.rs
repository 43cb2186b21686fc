//! Values an outer tower layer hands to the MCP handlers.
//!
//! A layer in front of [`McpHttp`](super::McpHttp) (an authentication layer,
//! for example) puts a [`tessera_runtime::Extensions`] into the HTTP
//! request's extensions; every value in it is copied into the runtime
//! [`Extensions`] that the handlers of that request see (next to the request's
//! [`http::HeaderMap`]). `tessera-auth`'s `BearerAuthLayer` carries the
//! verified `AuthInfo` and the [`tessera_runtime::Principal`] this way.
//!
//! The values travel in a task-local for the duration of the request, so the
//! request path needs no extra parameter.

use std::future::Future;

use tessera_runtime::Extensions;

tokio::task_local! {
    static CARRIED: Extensions;
}

/// Takes the carried extensions out of an HTTP request, if a layer put any.
pub(crate) fn take<B>(req: &mut http::Request<B>) -> Option<Extensions> {
    req.extensions_mut().remove::<Extensions>()
}

/// Runs `f` with `carried` visible to [`current`].
pub(crate) async fn scope<F: Future>(carried: Option<Extensions>, f: F) -> F::Output {
    match carried {
        Some(e) => CARRIED.scope(e, f).await,
        None => f.await,
    }
}

/// The extensions carried by the request being handled (empty if none).
pub(crate) fn current() -> Extensions {
    CARRIED.try_with(Extensions::clone).unwrap_or_default()
}

/// The principal of the request being handled, if an outer layer
/// authenticated one.
pub(crate) fn principal() -> Option<tessera_runtime::Principal> {
    CARRIED
        .try_with(|e| e.get::<tessera_runtime::Principal>().cloned())
        .ok()
        .flatten()
}

/// Whether the request being handled was made by `owner` (the principal that
/// opened a session; `None` for a session opened without authentication).
pub(crate) fn made_by(owner: Option<&tessera_runtime::Principal>) -> bool {
    CARRIED
        .try_with(|e| e.get::<tessera_runtime::Principal>() == owner)
        .unwrap_or(owner.is_none())
}
