//! Tool overrides per upstream (`toolOverrides` of an `mcpServers` entry):
//! a new name, a new description, hidden, and arguments fixed by the
//! operator that the caller can neither see nor change.
//!
//! ```json
//! "toolOverrides": {
//!   "search_issues": {"name": "search", "description": "Searches our tracker",
//!                     "arguments": {"repo": "acme/app"}},
//!   "delete_repo": {"hidden": true}
//! }
//! ```
//!
//! The gateway's rules and `allowTools`/`denyTools` speak of the upstream's
//! own names; callers only ever see and use the new ones.

use std::collections::BTreeMap;

use serde_json::Value;
use tessera_types::JsonObject;

use crate::shapes::{ListedItem, Loose};

/// What the proxy changes about one upstream tool.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolOverride {
    /// The name callers see (before the `NAME__` prefix).
    pub name: Option<String>,
    /// The description callers see.
    pub description: Option<String>,
    /// Not listed, and refused on use as an unknown tool.
    pub hidden: bool,
    /// Arguments set on every call, whatever the caller sent; they are
    /// taken out of the input schema callers see.
    pub arguments: JsonObject,
}

/// The overrides of one upstream, by the upstream's tool name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolOverrides {
    by_original: BTreeMap<String, ToolOverride>,
}

impl ToolOverrides {
    /// Reads a `toolOverrides` object; errors name the field.
    pub(crate) fn parse(v: &Value) -> Result<ToolOverrides, String> {
        let o = v
            .as_object()
            .ok_or("toolOverrides must be an object of tool name: override")?;
        let mut out = ToolOverrides::default();
        let mut new_names = BTreeMap::new();
        for (tool, ov) in o {
            let at = |f: &str| format!("toolOverrides.{tool}{f}");
            let ov = ov
                .as_object()
                .ok_or_else(|| format!("{} must be an object", at("")))?;
            let mut t = ToolOverride::default();
            for (k, v) in ov {
                match (k.as_str(), v) {
                    ("name", Value::String(n)) => {
                        if n.is_empty() || n.contains(crate::NAME_SEPARATOR) {
                            return Err(format!(
                                "{}: a name must be non-empty and hold no {:?}",
                                at(".name"),
                                crate::NAME_SEPARATOR
                            ));
                        }
                        if let Some(other) = new_names.insert(n.clone(), tool.clone()) {
                            return Err(format!("{}: {other:?} is renamed {n:?} too", at(".name")));
                        }
                        t.name = Some(n.clone());
                    }
                    ("description", Value::String(d)) => t.description = Some(d.clone()),
                    ("hidden", Value::Bool(h)) => t.hidden = *h,
                    ("arguments", Value::Object(a)) => t.arguments = a.clone(),
                    ("name" | "description" | "hidden" | "arguments", _) => {
                        return Err(format!(
                            "{}: must be {}",
                            at(&format!(".{k}")),
                            match k.as_str() {
                                "hidden" => "true or false",
                                "arguments" => "an object",
                                _ => "a string",
                            }
                        ));
                    }
                    _ => {
                        return Err(format!(
                            "{}: unknown field (known: name, description, hidden, arguments)",
                            at(&format!(".{k}"))
                        ));
                    }
                }
            }
            out.by_original.insert(tool.clone(), t);
        }
        Ok(out)
    }

    /// The name callers see for the upstream's tool `original`; `None`
    /// when it is hidden or shadowed (another tool is renamed to its name).
    pub fn offered<'a>(&'a self, original: &'a str) -> Option<&'a str> {
        match self.by_original.get(original) {
            Some(t) if t.hidden => None,
            Some(ToolOverride { name: Some(n), .. }) => Some(n),
            _ if self.renamed_to(original).is_some() => None,
            _ => Some(original),
        }
    }

    /// The upstream's name of the tool callers call `offered`; `None` when
    /// no tool is offered under that name.
    pub fn original<'a>(&'a self, offered: &'a str) -> Option<&'a str> {
        if let Some(o) = self.renamed_to(offered) {
            return Some(o);
        }
        self.offered(offered)
            .is_some_and(|n| n == offered)
            .then_some(offered)
    }

    fn renamed_to(&self, new: &str) -> Option<&str> {
        self.by_original
            .iter()
            .find(|(_, t)| !t.hidden && t.name.as_deref() == Some(new))
            .map(|(o, _)| o.as_str())
    }

    /// Rewrites a listed tool (upstream name `original`) as callers see it.
    pub(crate) fn present(&self, original: &str, tool: &mut ListedItem) {
        let Some(t) = self.by_original.get(original) else {
            return;
        };
        if let Some(d) = &t.description {
            tool.description = Loose::Valid(d.clone());
        }
        if t.arguments.is_empty() {
            return;
        }
        if let Loose::Valid(schema) = &mut tool.input_schema {
            if let Loose::Valid(props) = &mut schema.properties {
                props.retain(|k, _| !t.arguments.contains_key(k));
            }
            if let Loose::Valid(req) = &mut schema.required {
                req.retain(|r| r.as_str().is_none_or(|r| !t.arguments.contains_key(r)));
            }
        }
    }

    /// Sets the fixed arguments of `original` into a call's arguments
    /// (which become an object if they were not one).
    pub(crate) fn fix_arguments(&self, original: &str, arguments: &mut Loose<JsonObject>) {
        let Some(t) = self.by_original.get(original) else {
            return;
        };
        if t.arguments.is_empty() {
            return;
        }
        if !matches!(arguments, Loose::Valid(_)) {
            *arguments = Loose::Valid(JsonObject::new());
        }
        if let Loose::Valid(a) = arguments {
            for (k, v) in &t.arguments {
                a.insert(k.clone(), v.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shapes::{read, write};
    use serde_json::json;

    #[test]
    fn renames_hides_and_fixes() {
        let o = ToolOverrides::parse(&json!({
            "search_issues": {"name": "search", "description": "Ours", "arguments": {"repo": "a/b"}},
            "delete_repo": {"hidden": true}
        }))
        .unwrap();
        assert_eq!(o.offered("search_issues"), Some("search"));
        assert_eq!(o.offered("delete_repo"), None);
        assert_eq!(o.offered("other"), Some("other"));
        assert_eq!(o.original("search"), Some("search_issues"));
        assert_eq!(o.original("search_issues"), None, "only the new name");
        assert_eq!(o.original("delete_repo"), None);
        assert_eq!(o.original("other"), Some("other"));
        let sent = json!({"name": "search_issues", "description": "theirs", "inputSchema": {
            "type": "object", "properties": {"q": {}, "repo": {}}, "required": ["q", "repo"]}});
        let mut tool: ListedItem = read(sent.as_object().unwrap());
        o.present("search_issues", &mut tool);
        assert_eq!(
            Value::Object(write(&tool).unwrap()),
            json!({"name": "search_issues", "description": "Ours", "inputSchema": {
                "type": "object", "properties": {"q": {}}, "required": ["q"]}})
        );
        let mut args = Loose::Valid(
            json!({"q": "bug", "repo": "evil/x"})
                .as_object()
                .cloned()
                .unwrap(),
        );
        o.fix_arguments("search_issues", &mut args);
        assert_eq!(
            args,
            Loose::Valid(
                json!({"q": "bug", "repo": "a/b"})
                    .as_object()
                    .cloned()
                    .unwrap()
            )
        );
        let mut missing = Loose::Absent;
        o.fix_arguments("search_issues", &mut missing);
        assert_eq!(
            missing,
            Loose::Valid(json!({"repo": "a/b"}).as_object().cloned().unwrap())
        );
    }

    #[test]
    fn a_renamed_tool_shadows_the_upstream_tool_of_that_name() {
        let o = ToolOverrides::parse(&json!({"a": {"name": "b"}})).unwrap();
        assert_eq!(o.offered("b"), None);
        assert_eq!(o.original("b"), Some("a"));
    }

    #[test]
    fn errors_name_the_field() {
        for (v, why) in [
            (json!([]), "toolOverrides must be an object"),
            (json!({"a": {"name": "x__y"}}), "toolOverrides.a.name"),
            (
                json!({"a": {"name": "n"}, "b": {"name": "n"}}),
                "toolOverrides.b.name",
            ),
            (
                json!({"a": {"hidden": "yes"}}),
                "toolOverrides.a.hidden: must be true or false",
            ),
            (
                json!({"a": {"rename": "x"}}),
                "toolOverrides.a.rename: unknown field",
            ),
        ] {
            let e = ToolOverrides::parse(&v).unwrap_err();
            assert!(e.contains(why), "{v}: {e}");
        }
    }
}
