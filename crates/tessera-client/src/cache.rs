//! The optional response cache (2026-07-28 caching hints).
//!
//! Results of `server/discover`, `tools/list`, `prompts/list`,
//! `resources/list`, `resources/templates/list` and `resources/read` that carry
//! `resultType: "complete"` and a positive `ttlMs` are kept for that long,
//! keyed by method and parameters (without `_meta`; each page of a list by its
//! cursor). Retries of multi round-trip requests (with `inputResponses` or
//! `requestState`) are never cached. A matching `list_changed` or
//! `resources/updated` notification makes entries stale at once; reconnecting
//! empties the cache (the new connection may be another server, or another
//! authorisation context for `private` entries). Results without hints (older
//! servers) count as immediately stale and are not kept.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tessera_types::methods;

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;
use tessera_types::{CacheScope, JsonObject, Loose, decode_object_params};

use crate::members::{UriOf, read};
use tokio::time::Instant;

/// Methods whose results may be cached.
pub const CACHEABLE_METHODS: [&str; 6] = [
    methods::SERVER_DISCOVER,
    methods::TOOLS_LIST,
    methods::PROMPTS_LIST,
    methods::RESOURCES_LIST,
    methods::RESOURCES_TEMPLATES_LIST,
    methods::RESOURCES_READ,
];

/// Counters of the response cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CacheStats {
    /// Requests answered from the cache.
    pub hits: u64,
    /// Cacheable requests sent to the server.
    pub misses: u64,
    /// Entries held (fresh or not yet noticed stale).
    pub entries: usize,
}

#[derive(Debug, Clone)]
struct Entry {
    method: String,
    uri: Option<String>,
    result: JsonObject,
    expires: Instant,
    scope: Option<CacheScope>,
}

/// Cached results by key.
#[derive(Debug, Default)]
pub(crate) struct ResponseCache {
    entries: Mutex<HashMap<String, Entry>>,
    hits: AtomicU64,
    misses: AtomicU64,
}

/// The cache key of a request, or `None` when it must not be cached.
pub(crate) fn key(method: &str, params: Option<&JsonObject>) -> Option<String> {
    if !CACHEABLE_METHODS.contains(&method) {
        return None;
    }
    let p: Keyed = params
        .map(|p| decode_object_params(Some(p)))
        .transpose()
        .ok()?
        .unwrap_or_default();
    if !p.input_responses.is_absent() || !p.request_state.is_absent() {
        return None;
    }
    // `JsonObject` keeps keys sorted, so this text is canonical.
    Some(format!("{method}\n{}", Value::Object(p.rest)))
}

/// A request's params as its cache key sees them: `_meta` left out, and
/// a multi round-trip retry never cached.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct Keyed {
    #[serde(rename = "_meta")]
    _meta: IgnoredAny,
    input_responses: Loose<Value>,
    request_state: Loose<Value>,
    #[serde(flatten)]
    rest: JsonObject,
}

/// What a result says of its caching.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct Hints {
    result_type: Loose<String>,
    ttl_ms: Loose<u64>,
    cache_scope: Loose<CacheScope>,
}

impl ResponseCache {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A fresh cached result.
    pub fn get(&self, key: &str) -> Option<JsonObject> {
        let mut entries = self.lock();
        let now = Instant::now();
        match entries.get(key) {
            Some(e) if now < e.expires => {
                self.hits.fetch_add(1, Ordering::Relaxed);
                Some(e.result.clone())
            }
            Some(_) => {
                entries.remove(key);
                self.misses.fetch_add(1, Ordering::Relaxed);
                None
            }
            None => {
                self.misses.fetch_add(1, Ordering::Relaxed);
                None
            }
        }
    }

    /// Keeps a result if it says it may be kept.
    pub fn store(
        &self,
        key: String,
        method: &str,
        params: Option<&JsonObject>,
        result: &JsonObject,
    ) {
        let hints: Hints = decode_object_params(Some(result)).unwrap_or_default();
        if hints.result_type.valid().map(String::as_str) != Some("complete") {
            return;
        }
        // A negative or missing ttlMs counts as 0: immediately stale.
        let Some(ttl) = hints.ttl_ms.into_valid().filter(|t| *t > 0) else {
            return;
        };
        let scope = hints.cache_scope.into_valid();
        let uri = read::<UriOf>(params).uri.into_valid();
        let expires = Instant::now()
            .checked_add(Duration::from_millis(ttl))
            .unwrap_or_else(|| Instant::now() + Duration::from_secs(86_400 * 365));
        self.lock().insert(
            key,
            Entry {
                method: method.to_owned(),
                uri,
                result: result.clone(),
                expires,
                scope,
            },
        );
    }

    /// Drops every entry of `method`.
    pub fn invalidate_method(&self, method: &str) {
        self.lock().retain(|_, e| e.method != method);
    }

    /// Drops the `resources/read` entries of `uri`.
    pub fn invalidate_uri(&self, uri: &str) {
        self.lock()
            .retain(|_, e| !(e.method == methods::RESOURCES_READ && e.uri.as_deref() == Some(uri)));
    }

    /// Drops the entries marked `cacheScope: "private"`.
    pub fn invalidate_private(&self) {
        self.lock()
            .retain(|_, e| e.scope != Some(CacheScope::Private));
    }

    /// Drops everything.
    pub fn clear(&self) {
        self.lock().clear();
    }

    /// Applies a notification: list changes and resource updates invalidate.
    pub fn on_notification(&self, method: &str, params: Option<&JsonObject>) {
        match method {
            methods::NOTIFICATIONS_TOOLS_LIST_CHANGED => {
                self.invalidate_method(methods::TOOLS_LIST)
            }
            methods::NOTIFICATIONS_PROMPTS_LIST_CHANGED => {
                self.invalidate_method(methods::PROMPTS_LIST)
            }
            methods::NOTIFICATIONS_RESOURCES_LIST_CHANGED => {
                self.invalidate_method(methods::RESOURCES_LIST);
                self.invalidate_method(methods::RESOURCES_TEMPLATES_LIST);
            }
            methods::NOTIFICATIONS_RESOURCES_UPDATED => {
                if let Some(uri) = read::<UriOf>(params).uri.into_valid() {
                    self.invalidate_uri(&uri);
                }
            }
            _ => {}
        }
    }

    pub fn stats(&self) -> CacheStats {
        CacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            entries: self.lock().len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tessera_types::methods;

    fn obj(v: Value) -> JsonObject {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn keys_ignore_meta_and_refuse_retries() {
        let a = obj(json!({"cursor": "c", "_meta": {"x": 1}}));
        let b = obj(json!({"cursor": "c"}));
        assert_eq!(
            key(methods::TOOLS_LIST, Some(&a)),
            key(methods::TOOLS_LIST, Some(&b))
        );
        assert_ne!(
            key(methods::TOOLS_LIST, Some(&b)),
            key(methods::TOOLS_LIST, None)
        );
        assert!(key(methods::TOOLS_CALL, None).is_none());
        assert!(
            key(
                methods::RESOURCES_READ,
                Some(&obj(json!({"uri": "u", "requestState": "s"})))
            )
            .is_none()
        );
    }

    #[tokio::test(start_paused = true)]
    async fn ttl_scope_and_invalidation() {
        let c = ResponseCache::default();
        let p = obj(json!({"uri": "file:///a"}));
        let k = key(methods::RESOURCES_READ, Some(&p)).unwrap();
        c.store(k.clone(), methods::RESOURCES_READ, Some(&p), &obj(json!({"contents": [], "resultType": "complete", "ttlMs": 1000, "cacheScope": "private"})));
        assert!(c.get(&k).is_some());
        c.invalidate_uri("file:///b");
        assert!(c.get(&k).is_some());
        c.on_notification(
            methods::NOTIFICATIONS_RESOURCES_UPDATED,
            Some(&obj(json!({"uri": "file:///a"}))),
        );
        assert!(c.get(&k).is_none());
        // No hint, zero ttl, interim results: not kept.
        for r in [
            json!({"resultType": "complete"}),
            json!({"resultType": "complete", "ttlMs": 0}),
            json!({"resultType": "input_required", "ttlMs": 10}),
            json!({"ttlMs": 10}),
        ] {
            c.store(k.clone(), methods::RESOURCES_READ, Some(&p), &obj(r));
            assert!(c.get(&k).is_none());
        }
        c.store(
            k.clone(),
            methods::RESOURCES_READ,
            Some(&p),
            &obj(json!({"resultType": "complete", "ttlMs": 1000, "cacheScope": "private"})),
        );
        tokio::time::advance(Duration::from_millis(999)).await;
        assert!(c.get(&k).is_some());
        tokio::time::advance(Duration::from_millis(1)).await;
        assert!(c.get(&k).is_none());
        c.store(
            k.clone(),
            methods::RESOURCES_READ,
            Some(&p),
            &obj(json!({"resultType": "complete", "ttlMs": 1000, "cacheScope": "private"})),
        );
        c.invalidate_private();
        assert_eq!(c.stats().entries, 0);
    }
}
