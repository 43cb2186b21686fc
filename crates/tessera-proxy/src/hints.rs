//! The 2026-07-28 caching hints (`ttlMs`, `cacheScope`) of proxied results.
//!
//! A 2026-07-28 client must get both on every list and on `resources/read`.
//! A legacy upstream gives neither, so the proxy adds the cautious values:
//! `ttlMs: 0` (the result may be fetched again whenever it is needed; the
//! change notifications still arrive) and `cacheScope: "private"` (nothing
//! says the answer is the same for every user). An aggregated page takes the
//! shortest lifetime of the upstream pages it holds, and is `public` only
//! when every one of them is.

use tessera_types::methods;
use tessera_types::{CacheScope, JsonObject};

use crate::shapes::{Loose, ReadHints, WrittenHints, read, write};

/// The methods whose 2026-07-28 results carry caching hints.
const CACHEABLE: [&str; 5] = [
    methods::TOOLS_LIST,
    methods::PROMPTS_LIST,
    methods::RESOURCES_LIST,
    methods::RESOURCES_TEMPLATES_LIST,
    methods::RESOURCES_READ,
];

/// The caching hints of one or several results combined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Hints {
    /// The shortest `ttlMs` (0 where one was missing).
    pub ttl_ms: u64,
    /// Whether every result was `public`.
    pub public: bool,
}

impl Default for Hints {
    /// Nothing combined yet: unlimited and public, narrowed by [`Hints::add`].
    fn default() -> Self {
        Hints {
            ttl_ms: u64::MAX,
            public: true,
        }
    }
}

impl Hints {
    /// Narrows the hints by those of a result.
    pub fn add(&mut self, result: &ReadHints) {
        let ttl = result.ttl_ms.valid().copied().unwrap_or(0);
        self.ttl_ms = self.ttl_ms.min(ttl);
        self.public &= result.cache_scope.valid() == Some(&CacheScope::Public);
    }

    /// The hints as written on a result.
    pub fn written(self) -> WrittenHints {
        let ttl_ms = if self.ttl_ms == u64::MAX {
            0
        } else {
            self.ttl_ms
        };
        WrittenHints {
            ttl_ms,
            cache_scope: if self.public {
                CacheScope::Public
            } else {
                CacheScope::Private
            },
        }
    }
}

/// Whether a 2026-07-28 result of `method` carries caching hints (which
/// [`complete`] may have to add).
pub(crate) fn completes(method: &str) -> bool {
    CACHEABLE.contains(&method)
}

/// Completes the hints of a `method` result for a 2026-07-28 client: a
/// missing `ttlMs` is 0, a missing or unknown `cacheScope` is `private`.
pub(crate) fn complete(method: &str, result: &mut JsonObject) {
    if !completes(method) {
        return;
    }
    let found: ReadHints = read(result);
    if let (Loose::Valid(_), Loose::Valid(_)) = (&found.ttl_ms, &found.cache_scope) {
        return;
    }
    let hints = WrittenHints {
        ttl_ms: found.ttl_ms.valid().copied().unwrap_or(0),
        cache_scope: found
            .cache_scope
            .valid()
            .copied()
            .unwrap_or(CacheScope::Private),
    };
    if let Ok(members) = write(&hints) {
        result.extend(members);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn obj(v: Value) -> JsonObject {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn missing_hints_are_cautious_and_present_ones_kept() {
        let mut legacy = obj(json!({"tools": []}));
        complete(methods::TOOLS_LIST, &mut legacy);
        assert_eq!(legacy["ttlMs"], 0);
        assert_eq!(legacy["cacheScope"], "private");
        let mut modern = obj(json!({"tools": [], "ttlMs": 5000, "cacheScope": "public"}));
        complete(methods::TOOLS_LIST, &mut modern);
        assert_eq!(
            (modern["ttlMs"].clone(), modern["cacheScope"].clone()),
            (json!(5000), json!("public"))
        );
        let mut call = obj(json!({"content": []}));
        complete(methods::TOOLS_CALL, &mut call);
        assert!(!call.contains_key("ttlMs"));
    }

    #[test]
    fn combined_hints_take_the_shortest_and_the_narrowest() {
        let mut h = Hints::default();
        h.add(&read(&obj(json!({"ttlMs": 5000, "cacheScope": "public"}))));
        h.add(&read(&obj(json!({"ttlMs": 2000, "cacheScope": "public"}))));
        let out = write(&h.written()).unwrap();
        assert_eq!(
            Value::Object(out),
            json!({"ttlMs": 2000, "cacheScope": "public"})
        );
        h.add(&read(&obj(json!({}))));
        let out = write(&h.written()).unwrap();
        assert_eq!(
            Value::Object(out),
            json!({"ttlMs": 0, "cacheScope": "private"})
        );
        let none = write(&Hints::default().written()).unwrap();
        assert_eq!(none["ttlMs"], 0);
    }

    #[test]
    fn hints_of_other_shapes_are_replaced() {
        let mut odd = obj(json!({"tools": [], "ttlMs": -1, "cacheScope": "everyone"}));
        complete(methods::TOOLS_LIST, &mut odd);
        assert_eq!(
            Value::Object(odd),
            json!({"tools": [], "ttlMs": 0, "cacheScope": "private"})
        );
        let mut half = obj(json!({"ttlMs": 7}));
        complete(methods::RESOURCES_READ, &mut half);
        assert_eq!(
            Value::Object(half),
            json!({"ttlMs": 7, "cacheScope": "private"})
        );
    }
}
