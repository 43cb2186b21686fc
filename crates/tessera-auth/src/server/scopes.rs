//! [`ScopeRules`]: which scopes a request needs.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use tessera_types::{JsonObject, decode_object_params, methods};

use tessera_types::loose::lenient;

/// The tool a `tools/call` names.
#[derive(Debug, Default, serde::Deserialize)]
struct ToolName {
    #[serde(default, deserialize_with = "lenient")]
    name: Option<String>,
}

type ToolScopes = Arc<dyn Fn(&str) -> Option<Vec<String>> + Send + Sync>;

/// The scopes requests need, checked by the layer after the token is
/// verified. A request needs the union of:
///
/// - the scopes every request needs ([`require`](Self::require));
/// - the scopes of its JSON-RPC method ([`method`](Self::method), e.g.
///   `resources/read` → `files:read`);
/// - for `tools/call`, the scopes of the tool called
///   ([`tool_scopes`](Self::tool_scopes), typically
///   `move |name| server.tool_scopes(name)` to use the scopes declared with
///   `tessera_server::tool("x").scopes([...])`).
///
/// A JSON-RPC batch needs the union over its messages, and a refusal names
/// every scope needed at once (the spec asks for one challenge, not one per
/// missing scope). A granted scope also grants what it
/// [`implies`](Self::implies) (scope hierarchies, e.g. `files` implies
/// `files:read` and `files:write`), transitively.
#[derive(Clone, Default)]
pub struct ScopeRules {
    required: Vec<String>,
    methods: HashMap<String, Vec<String>>,
    tools: Option<ToolScopes>,
    implies: HashMap<String, Vec<String>>,
}

impl std::fmt::Debug for ScopeRules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScopeRules")
            .field("required", &self.required)
            .field("methods", &self.methods)
            .field("tools", &self.tools.is_some())
            .field("implies", &self.implies)
            .finish()
    }
}

fn strings<I: IntoIterator<Item = T>, T: Into<String>>(i: I) -> Vec<String> {
    i.into_iter().map(Into::into).collect()
}

impl ScopeRules {
    /// No rules: any valid token will do.
    pub fn new() -> Self {
        Self::default()
    }

    /// Every request needs these scopes (announced on `401` challenges).
    pub fn require<I: IntoIterator<Item = T>, T: Into<String>>(mut self, scopes: I) -> Self {
        self.required.extend(strings(scopes));
        self
    }

    /// Requests of JSON-RPC method `method` need these scopes.
    pub fn method<I: IntoIterator<Item = T>, T: Into<String>>(
        mut self,
        method: impl Into<String>,
        scopes: I,
    ) -> Self {
        self.methods
            .entry(method.into())
            .or_default()
            .extend(strings(scopes));
        self
    }

    /// `tools/call` of tool `name` needs the scopes `f(name)` returns (`None`
    /// or empty: none beyond the others).
    pub fn tool_scopes<F>(mut self, f: F) -> Self
    where
        F: Fn(&str) -> Option<Vec<String>> + Send + Sync + 'static,
    {
        self.tools = Some(Arc::new(f));
        self
    }

    /// A token granted `broad` also has each of `narrower`.
    pub fn implies<I: IntoIterator<Item = T>, T: Into<String>>(
        mut self,
        broad: impl Into<String>,
        narrower: I,
    ) -> Self {
        self.implies
            .entry(broad.into())
            .or_default()
            .extend(strings(narrower));
        self
    }

    /// The scopes every request needs.
    pub fn required(&self) -> &[String] {
        &self.required
    }

    /// Whether some requests need scopes beyond the base ones (rules per
    /// method or per tool), which the [`ScopeLayer`](super::ScopeLayer)
    /// checks on each decoded request.
    pub fn per_request(&self) -> bool {
        !self.methods.is_empty() || self.tools.is_some()
    }

    /// The scopes a request of `method` with `params` needs beyond the base
    /// ones: those of its method, and for `tools/call` those of the tool.
    pub fn needed_for(&self, method: &str, params: Option<&JsonObject>) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut add = |scopes: &[String]| {
            for s in scopes {
                if !out.contains(s) {
                    out.push(s.clone());
                }
            }
        };
        if let Some(s) = self.methods.get(method) {
            add(s);
        }
        if method == methods::TOOLS_CALL {
            let name = params
                .and_then(|p| decode_object_params::<ToolName>(Some(p)).ok())
                .and_then(|p| p.name);
            if let (Some(f), Some(name)) = (&self.tools, name) {
                if let Some(s) = f(&name) {
                    add(&s);
                }
            }
        }
        out
    }

    /// Every scope `granted` amounts to, hierarchies applied.
    pub fn expand(&self, granted: &[String]) -> HashSet<String> {
        let mut all: HashSet<String> = HashSet::new();
        let mut todo: Vec<&str> = granted.iter().map(String::as_str).collect();
        while let Some(s) = todo.pop() {
            if all.insert(s.to_owned()) {
                if let Some(n) = self.implies.get(s) {
                    todo.extend(n.iter().map(String::as_str));
                }
            }
        }
        all
    }

    /// Whether `granted` covers every scope of `needed`.
    pub fn satisfied(&self, granted: &[String], needed: &[String]) -> bool {
        if needed.iter().all(|n| granted.contains(n)) {
            return true;
        }
        let all = self.expand(granted);
        needed.iter().all(|n| all.contains(n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_types::methods;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn needs_per_request() {
        let r = ScopeRules::new()
            .require(["mcp"])
            .method(methods::RESOURCES_READ, ["files:read"])
            .tool_scopes(|n| (n == "write").then(|| v(&["files:write"])));
        assert!(r.per_request());
        assert!(!ScopeRules::new().require(["mcp"]).per_request());
        let params = |v: serde_json::Value| v.as_object().cloned();
        assert!(r.needed_for(methods::PING, None).is_empty());
        assert_eq!(
            r.needed_for(
                methods::RESOURCES_READ,
                params(serde_json::json!({"uri": "x"})).as_ref()
            ),
            ["files:read"]
        );
        assert_eq!(
            r.needed_for(
                methods::TOOLS_CALL,
                params(serde_json::json!({"name": "write"})).as_ref()
            ),
            ["files:write"]
        );
        assert!(
            r.needed_for(
                methods::TOOLS_CALL,
                params(serde_json::json!({"name": "other"})).as_ref()
            )
            .is_empty()
        );
        assert!(r.needed_for(methods::TOOLS_CALL, None).is_empty());
    }

    #[test]
    fn hierarchies() {
        let r = ScopeRules::new()
            .implies("admin", ["files"])
            .implies("files", ["files:read", "files:write"]);
        assert!(r.satisfied(&v(&["admin"]), &v(&["files:write", "files:read"])));
        assert!(r.satisfied(&v(&["files:read"]), &v(&["files:read"])));
        assert!(!r.satisfied(&v(&["files:read"]), &v(&["files:write"])));
        assert!(r.satisfied(&[], &[]));
    }
}
