//! The 2026-07-28 caching hints (`ttlMs`, `cacheScope`) of proxied results.
//!
//! A 2026-07-28 client must get both on every list and on `resources/read`.
//! A legacy upstream gives neither, so the proxy adds the cautious values:
//! `ttlMs: 0` (the result may be fetched again whenever it is needed; the
//! change notifications still arrive) and `cacheScope: "private"` (nothing
//! says the answer is the same for every user). An aggregated page takes the
//! shortest lifetime of the upstream pages it holds, and is `public` only
//! when every one of them is.

use serde_json::{Value, json};
use tessera_types::JsonObject;
use tessera_types::methods;

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
    /// Narrows the hints by those of `result`.
    pub fn add(&mut self, result: &JsonObject) {
        let ttl = result.get("ttlMs").and_then(Value::as_u64).unwrap_or(0);
        self.ttl_ms = self.ttl_ms.min(ttl);
        self.public &= result.get("cacheScope").and_then(Value::as_str) == Some("public");
    }

    /// Writes the hints on `result`.
    pub fn write(self, result: &mut JsonObject) {
        let ttl = if self.ttl_ms == u64::MAX {
            0
        } else {
            self.ttl_ms
        };
        result.insert("ttlMs".into(), json!(ttl));
        result.insert(
            "cacheScope".into(),
            json!(if self.public { "public" } else { "private" }),
        );
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
    if !result.get("ttlMs").is_some_and(Value::is_u64) {
        result.insert("ttlMs".into(), json!(0));
    }
    if !matches!(
        result.get("cacheScope").and_then(Value::as_str),
        Some("public" | "private")
    ) {
        result.insert("cacheScope".into(), json!("private"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_types::methods;

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
        h.add(&obj(json!({"ttlMs": 5000, "cacheScope": "public"})));
        h.add(&obj(json!({"ttlMs": 2000, "cacheScope": "public"})));
        let mut out = JsonObject::new();
        h.write(&mut out);
        assert_eq!(
            (out["ttlMs"].clone(), out["cacheScope"].clone()),
            (json!(2000), json!("public"))
        );
        h.add(&obj(json!({})));
        h.write(&mut out);
        assert_eq!(
            (out["ttlMs"].clone(), out["cacheScope"].clone()),
            (json!(0), json!("private"))
        );
        let mut none = JsonObject::new();
        Hints::default().write(&mut none);
        assert_eq!(none["ttlMs"], 0);
    }
}
