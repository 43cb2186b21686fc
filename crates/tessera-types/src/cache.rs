//! Caching hints on results (2026-07-28): `ttlMs` and `cacheScope`.
//!
//! The results of `tools/list`, `prompts/list`, `resources/list`,
//! `resources/templates/list`, `resources/read` and `server/discover` carry
//! both members in 2026-07-28 (they are required there) and never in earlier
//! versions. The Rust result types hold them as `Option`s; [`Cacheable`]
//! sets them generically.

use serde::{Deserialize, Serialize};

use crate::JsonObject;
use crate::result::ResultType;

/// Who may cache a result (`cacheScope`), like HTTP `Cache-Control`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheScope {
    /// `"public"`: no user-specific data; shared caches may serve it to anyone.
    Public,
    /// `"private"`: cacheable only within the same authorisation context.
    Private,
}

/// The `CacheableResult` base shape (2026-07-28): a result with caching hints.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CacheableResult {
    /// Reserved metadata (`_meta`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// The result type. 2026-07-28.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// How long, in milliseconds, the client may cache the result. 2026-07-28.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Who may cache the result. 2026-07-28.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
}

/// Results that carry caching hints (`ttlMs`, `cacheScope`; 2026-07-28).
pub trait Cacheable {
    /// The `ttlMs` and `cacheScope` members.
    fn cache_fields_mut(&mut self) -> (&mut Option<u64>, &mut Option<CacheScope>);

    /// Sets both hints.
    fn set_cache_hint(&mut self, ttl_ms: u64, scope: CacheScope) {
        let (ttl, sc) = self.cache_fields_mut();
        *ttl = Some(ttl_ms);
        *sc = Some(scope);
    }

    /// Removes both hints (for versions before 2026-07-28).
    fn clear_cache_hint(&mut self) {
        let (ttl, sc) = self.cache_fields_mut();
        *ttl = None;
        *sc = None;
    }

    /// Sets both hints, builder style.
    fn with_cache_hint(mut self, ttl_ms: u64, scope: CacheScope) -> Self
    where
        Self: Sized,
    {
        self.set_cache_hint(ttl_ms, scope);
        self
    }
}

/// Implements [`Cacheable`] for structs with `ttl_ms` and `cache_scope`.
macro_rules! impl_cacheable {
    ($($t:ty),+ $(,)?) => {
        $(
            impl $crate::cache::Cacheable for $t {
                fn cache_fields_mut(
                    &mut self,
                ) -> (&mut Option<u64>, &mut Option<$crate::cache::CacheScope>) {
                    (&mut self.ttl_ms, &mut self.cache_scope)
                }
            }
        )+
    };
}
pub(crate) use impl_cacheable;

impl_cacheable!(CacheableResult);
crate::result::impl_result_fields!(CacheableResult);
