//! [`ExtensionRequest`]: a request routed to an extension, with what the
//! server knows about it.

use tessera_runtime::Request;
use tessera_types::{CacheScope, Cacheable, Era, ErrorObject};

use crate::context::RequestContext;
use crate::pagination::Pager;

/// A request for one of an extension's routes, with what the server knows
/// about it. The typed params are the route handler's second argument.
#[derive(Debug)]
pub struct ExtensionRequest {
    pub(crate) request: Request,
    pub(crate) context: RequestContext,
    pub(crate) pager: Pager,
    pub(crate) cache_ttl_ms: u64,
    pub(crate) cache_scope: CacheScope,
}

impl ExtensionRequest {
    /// The method.
    pub fn method(&self) -> &str {
        &self.request.method
    }

    /// The request as the connection delivered it (id, raw params, peer,
    /// what the transport attached).
    pub fn request(&self) -> &Request {
        &self.request
    }

    /// What a handler knows about the request: era, version, client
    /// capabilities, progress, logs, cancellation.
    pub fn context(&self) -> &RequestContext {
        &self.context
    }

    /// One page of `items` after `cursor` (the server's page size; sealed
    /// cursors that name `list`, so a cursor of another list is refused),
    /// and the next cursor.
    pub fn page<T: Clone>(
        &self,
        list: &str,
        items: &[T],
        cursor: Option<&str>,
    ) -> Result<(Vec<T>, Option<String>), ErrorObject> {
        self.pager.page(list, items, cursor)
    }

    /// Sets `ttlMs` and `cacheScope` (the server's settings) on a cacheable
    /// 2026-07-28 result; earlier versions get nothing.
    pub fn cache_hints<T: Cacheable>(&self, result: &mut T) {
        if self.context.era() == Era::Modern {
            result.set_cache_hint(self.cache_ttl_ms, self.cache_scope);
        }
    }
}
