//! Who may use what behind an aggregating proxy: rules over the caller's
//! claims × upstream × tool, prompt or resource name, each allowing or
//! denying. The first rule that matches decides; when rules exist and none
//! matches, the answer is no; without rules everything is allowed.
//!
//! A rule matches an item when every claim it names matches (a string
//! claim by glob, an array claim when any element does, a number or a
//! boolean by its JSON text; a missing claim never matches), the item's
//! upstream matches one of its `upstreams` globs (all when absent), and the
//! item's name matches one of the globs given for its kind. A rule that names
//! no kind (`tools`, `prompts`, `resources`) applies to every item; one that
//! names some kinds applies to those kinds only. Globs are shell-style:
//! `*` any run of characters, `?` one, `[abc]` a class.

use serde_json::Value;
use tessera_types::JsonObject;

/// What kind of item a decision is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemKind {
    /// A tool, by its upstream name (unprefixed).
    Tool,
    /// A prompt, by its upstream name (unprefixed).
    Prompt,
    /// A resource or resource template, by its upstream URI (unprefixed).
    Resource,
}

impl ItemKind {
    /// The word for messages: `tool`, `prompt`, `resource`.
    pub fn word(self) -> &'static str {
        match self {
            ItemKind::Tool => "tool",
            ItemKind::Prompt => "prompt",
            ItemKind::Resource => "resource",
        }
    }
}

/// Allow or deny.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// The item is listed and may be used.
    Allow,
    /// The item is not listed and is refused on use.
    Deny,
}

/// A glob with its text (for explanations).
#[derive(Debug, Clone)]
pub(crate) struct Glob {
    text: String,
    pattern: glob::Pattern,
}

impl Glob {
    /// Compiles `text`; the error says why it is not a glob.
    pub(crate) fn new(text: &str) -> Result<Glob, String> {
        let pattern = glob::Pattern::new(text).map_err(|e| format!("bad glob {text:?}: {e}"))?;
        Ok(Glob {
            text: text.to_owned(),
            pattern,
        })
    }

    fn matches(&self, s: &str) -> bool {
        self.pattern.matches(s)
    }

    /// Whether the text holds no glob character (so it must name something).
    pub(crate) fn is_literal(&self) -> bool {
        !self.text.contains(['*', '?', '['])
    }

    /// The glob's text.
    pub(crate) fn text(&self) -> &str {
        &self.text
    }
}

/// Which callers and items a rule (or a rate limit) is about.
#[derive(Debug, Clone)]
pub struct Selector {
    /// Its name in explanations (`rules[N]` when the file gives none).
    pub name: String,
    pub(crate) when: Vec<(String, Vec<Glob>)>,
    pub(crate) upstreams: Option<Vec<Glob>>,
    pub(crate) tools: Option<Vec<Glob>>,
    pub(crate) prompts: Option<Vec<Glob>>,
    pub(crate) resources: Option<Vec<Glob>>,
}

/// One rule of a [`Policy`].
#[derive(Debug, Clone)]
pub struct Rule {
    /// Which callers and items it is about.
    pub selector: Selector,
    /// What it decides.
    pub effect: Effect,
}

/// The texts of `globs`, joined for messages.
fn texts(globs: &[Glob]) -> String {
    globs.iter().map(Glob::text).collect::<Vec<_>>().join(", ")
}

/// The strings a claim value offers to a glob: a string itself, each
/// element of an array, a number or boolean by its JSON text.
fn claim_texts(v: &Value) -> Vec<String> {
    match v {
        Value::String(s) => vec![s.clone()],
        Value::Array(a) => a.iter().flat_map(claim_texts).collect(),
        Value::Number(_) | Value::Bool(_) => vec![v.to_string()],
        Value::Null | Value::Object(_) => Vec::new(),
    }
}

impl Selector {
    /// Why the selector matches the item, or `None` when it does not.
    pub(crate) fn reasons(
        &self,
        claims: &JsonObject,
        upstream: &str,
        kind: ItemKind,
        name: &str,
    ) -> Option<Vec<String>> {
        let mut why = Vec::new();
        for (claim, globs) in &self.when {
            let values = claims.get(claim).map(claim_texts).unwrap_or_default();
            let hit = values.iter().find(|v| globs.iter().any(|g| g.matches(v)))?;
            why.push(format!("claim {claim} = {hit:?} matches {}", texts(globs)));
        }
        match &self.upstreams {
            Some(globs) if !globs.iter().any(|g| g.matches(upstream)) => return None,
            Some(globs) => why.push(format!("upstream {upstream:?} matches {}", texts(globs))),
            None => why.push("any upstream".into()),
        }
        let kinds = [
            (ItemKind::Tool, &self.tools),
            (ItemKind::Prompt, &self.prompts),
            (ItemKind::Resource, &self.resources),
        ];
        if kinds.iter().all(|(_, g)| g.is_none()) {
            why.push(format!("every {}", kind.word()));
        } else {
            let globs = kinds
                .iter()
                .find(|(k, _)| *k == kind)
                .and_then(|(_, g)| g.as_ref())?;
            if !globs.iter().any(|g| g.matches(name)) {
                return None;
            }
            why.push(format!("{} {name:?} matches {}", kind.word(), texts(globs)));
        }
        Some(why)
    }
}

/// The answer of a [`Policy`] for one item, with its explanation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// Allowed or denied.
    pub effect: Effect,
    /// The index of the deciding rule (`None`: no rule decided).
    pub rule: Option<usize>,
    /// Which rule decided and why, in one line.
    pub explanation: String,
}

/// Rules over principal × upstream × item (see the module documentation).
#[derive(Debug, Clone, Default)]
pub struct Policy {
    pub(crate) rules: Vec<Rule>,
}

impl Policy {
    /// Whether the policy has no rules (everything is allowed).
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The rules, in order.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Whether the caller with `claims` may see and use `name` (a `kind`)
    /// of `upstream`.
    pub fn allows(&self, claims: &JsonObject, upstream: &str, kind: ItemKind, name: &str) -> bool {
        if self.rules.is_empty() {
            return true;
        }
        self.rules
            .iter()
            .find(|r| r.selector.reasons(claims, upstream, kind, name).is_some())
            .is_some_and(|r| r.effect == Effect::Allow)
    }

    /// [`Policy::allows`] with the deciding rule and why it matched.
    pub fn decide(
        &self,
        claims: &JsonObject,
        upstream: &str,
        kind: ItemKind,
        name: &str,
    ) -> Decision {
        if self.rules.is_empty() {
            return Decision {
                effect: Effect::Allow,
                rule: None,
                explanation: "allowed: the gateway has no rules, so everything is allowed".into(),
            };
        }
        for (i, r) in self.rules.iter().enumerate() {
            if let Some(why) = r.selector.reasons(claims, upstream, kind, name) {
                let verb = match r.effect {
                    Effect::Allow => "allowed",
                    Effect::Deny => "denied",
                };
                return Decision {
                    effect: r.effect,
                    rule: Some(i),
                    explanation: format!(
                        "{verb} by rule {} (the first that matches): {}",
                        r.selector.name,
                        why.join("; ")
                    ),
                };
            }
        }
        Decision {
            effect: Effect::Deny,
            rule: None,
            explanation: format!(
                "denied: none of the {} rules matches {} {name:?} of upstream {upstream:?} for \
                 this principal, and with rules what none allows is denied",
                self.rules.len(),
                kind.word()
            ),
        }
    }
}
