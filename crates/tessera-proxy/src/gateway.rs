//! The `gateway` section of a proxy's configuration file, beside
//! `mcpServers`: the policy rules and the API keys.
//!
//! ```json
//! {"mcpServers": {"files": {"command": "files-server"}},
//!  "gateway": {
//!    "apiKeys": [{"keyEnv": "ALICE_KEY", "principal": {"sub": "alice", "groups": ["eng"]}}],
//!    "rules": [
//!      {"name": "eng reads", "when": {"groups": "eng"}, "upstreams": "files",
//!       "tools": ["read_*", "list_*"], "effect": "allow"},
//!      {"name": "nobody deletes", "tools": "delete_*", "effect": "deny"}
//!    ]}}
//! ```
//!
//! Every error names the field it is about (`gateway.rules[1].effect: …`).

use serde::Deserialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use tessera_types::JsonObject;

use crate::config::{UpstreamConfig, parse_servers_with};
use crate::error::ProxyError;
use crate::policy::{Effect, Glob, Policy, Rule, Selector};
use crate::ratelimit::{RateLimit, parse_limit};
use crate::shapes::{Loose, Subject, read};

/// A proxy's whole configuration: the upstreams and the gateway section.
#[derive(Debug, Clone)]
pub struct ProxyConfig {
    /// The upstreams (`mcpServers`).
    pub servers: Vec<UpstreamConfig>,
    /// The `gateway` section (empty when the file has none).
    pub gateway: Gateway,
}

impl ProxyConfig {
    /// Checks that an upstream reached with the caller's credentials
    /// (`auth` of type `forward` or `tokenExchange`) has a caller token to
    /// start from: `oauth_front` says whether the proxy verifies OAuth
    /// tokens (`--auth-issuer`). The error names the server and field.
    pub fn check_front(&self, oauth_front: bool) -> Result<(), ProxyError> {
        if oauth_front {
            return Ok(());
        }
        match self
            .servers
            .iter()
            .find_map(|s| Some((s, s.caller.as_ref()?)))
        {
            None => Ok(()),
            Some((s, c)) => Err(ProxyError::Config(format!(
                "server {:?}: auth.type: {:?} starts from the caller's OAuth token, and this \
                 proxy verifies none: give it an OAuth front (--auth-issuer, or \
                 tessera_auth::server::BearerAuthLayer in a program)",
                s.name,
                c.kind()
            ))),
        }
    }
}

/// The `gateway` section: who the callers are and what each may use.
#[derive(Debug, Clone, Default)]
pub struct Gateway {
    /// The rules over principal × upstream × item.
    pub policy: Policy,
    /// The API keys callers may present (`X-API-Key`).
    pub api_keys: Vec<ApiKey>,
    /// The rate limits, in order.
    pub rate_limits: Vec<RateLimit>,
}

/// One API key and the principal it stands for.
#[derive(Clone)]
pub struct ApiKey {
    /// The environment variable the key was read from (for messages).
    pub env: String,
    /// The claims of the caller presenting it (`sub` at least).
    pub principal: JsonObject,
    /// The SHA-256 of the key (the key itself is not kept).
    pub(crate) digest: [u8; 32],
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiKey")
            .field("env", &self.env)
            .field("principal", &self.principal)
            .finish_non_exhaustive()
    }
}

/// The SHA-256 of `key`.
pub(crate) fn digest(key: &[u8]) -> [u8; 32] {
    Sha256::digest(key).into()
}

/// The shortest API key accepted, in bytes.
pub const MIN_API_KEY_BYTES: usize = 16;

/// Reads a configuration file: `mcpServers` (see [`crate::parse_servers`]) and an
/// optional `gateway` section. API keys are read from the environment
/// variables the file names, through `env` (`std::env::var` in a program).
pub fn parse_config(
    text: &str,
    env: impl Fn(&str) -> Option<String>,
) -> Result<ProxyConfig, ProxyError> {
    let servers = parse_servers_with(text, &env)?;
    let doc: Document = serde_json::from_str(text)
        .map_err(|e| ProxyError::Config(format!("not a JSON document: {e}")))?;
    let gateway = match &doc.gateway {
        None => Gateway::default(),
        Some(g) => parse_gateway(g, &servers, &env)?,
    };
    Ok(ProxyConfig { servers, gateway })
}

pub(crate) fn bad(path: &str, why: impl std::fmt::Display) -> ProxyError {
    ProxyError::Config(format!("{path}: {why}"))
}

fn parse_gateway(
    g: &Value,
    servers: &[UpstreamConfig],
    env: &impl Fn(&str) -> Option<String>,
) -> Result<Gateway, ProxyError> {
    let g = GatewaySection::deserialize(g).map_err(|_| bad("gateway", "must be an object"))?;
    if let Some(k) = g.others.keys().next() {
        return Err(bad(
            &format!("gateway.{k}"),
            "unknown field (known: rules, apiKeys, rateLimits)",
        ));
    }
    let array = |v: &Loose<Vec<Value>>, path: &str| match v {
        Loose::Absent => Ok(None),
        Loose::Valid(a) => Ok(Some(a.clone())),
        Loose::Malformed(_) => Err(bad(path, "must be an array")),
    };
    let mut out = Gateway::default();
    if let Some(rules) = array(&g.rules, "gateway.rules")? {
        for (i, r) in rules.iter().enumerate() {
            out.policy
                .rules
                .push(parse_rule(&format!("gateway.rules[{i}]"), i, r, servers)?);
        }
    }
    if let Some(limits) = array(&g.rate_limits, "gateway.rateLimits")? {
        for (i, l) in limits.iter().enumerate() {
            out.rate_limits.push(parse_limit(
                &format!("gateway.rateLimits[{i}]"),
                i,
                l,
                servers,
            )?);
        }
    }
    if let Some(keys) = array(&g.api_keys, "gateway.apiKeys")? {
        for (i, k) in keys.iter().enumerate() {
            let path = format!("gateway.apiKeys[{i}]");
            let key = parse_key(&path, k, env)?;
            if out.api_keys.iter().any(|o| o.digest == key.digest) {
                return Err(bad(&path, "the same key is given twice"));
            }
            out.api_keys.push(key);
        }
    }
    Ok(out)
}

/// The configuration document, as far as the gateway reads it.
#[derive(Debug, Deserialize)]
struct Document {
    /// The `gateway` section (absent or `null`: none).
    #[serde(default)]
    gateway: Option<Value>,
    /// The other sections (`mcpServers`, read by [`parse_servers_with`]).
    #[serde(flatten)]
    _others: JsonObject,
}

/// The `gateway` section's fields.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct GatewaySection {
    rules: Loose<Vec<Value>>,
    rate_limits: Loose<Vec<Value>>,
    api_keys: Loose<Vec<Value>>,
    /// Unknown fields (refused).
    #[serde(flatten)]
    others: JsonObject,
}

/// The fields of a rule.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RuleFields {
    effect: Loose<String>,
    #[serde(flatten)]
    selector: SelectorFields,
}

/// The fields a rule and a rate limit share (see [`parse_selector`]).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct SelectorFields {
    name: Loose<String>,
    when: Loose<JsonObject>,
    // `null` is a value here (refused as not a glob), hence `Option<Value>`
    // read with `present`.
    #[serde(deserialize_with = "present")]
    upstreams: Option<Value>,
    #[serde(deserialize_with = "present")]
    tools: Option<Value>,
    #[serde(deserialize_with = "present")]
    prompts: Option<Value>,
    #[serde(deserialize_with = "present")]
    resources: Option<Value>,
    /// Fields of neither (refused).
    #[serde(flatten)]
    others: JsonObject,
}

/// A member that is present, whatever its value (`null` included).
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// The fields of an API key.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct KeyFields {
    key_env: Loose<String>,
    principal: Loose<JsonObject>,
    /// Unknown fields (refused).
    #[serde(flatten)]
    others: JsonObject,
}

/// A glob or an array of them.
fn globs(path: &str, v: &Value) -> Result<Vec<Glob>, ProxyError> {
    let one = |p: &str, v: &Value| match v {
        Value::String(s) => Glob::new(s).map_err(|e| bad(p, e)),
        _ => Err(bad(p, "must be a string (a glob)")),
    };
    match v {
        Value::Array(a) if a.is_empty() => Err(bad(path, "an empty list matches nothing")),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .map(|(i, v)| one(&format!("{path}[{i}]"), v))
            .collect(),
        v => Ok(vec![one(path, v)?]),
    }
}

fn parse_rule(
    path: &str,
    index: usize,
    r: &Value,
    servers: &[UpstreamConfig],
) -> Result<Rule, ProxyError> {
    let r = RuleFields::deserialize(r).map_err(|_| bad(path, "must be an object"))?;
    let selector = parse_selector(
        path,
        &format!("rules[{index}]"),
        &r.selector,
        servers,
        &["effect"],
    )?;
    let effect = match r.effect.valid().map(String::as_str) {
        Some("allow") => Effect::Allow,
        Some("deny") => Effect::Deny,
        _ => {
            return Err(bad(
                &format!("{path}.effect"),
                "must be \"allow\" or \"deny\"",
            ));
        }
    };
    Ok(Rule { selector, effect })
}

/// The fields a rule and a rate limit share; `more` names the caller's own.
pub(crate) fn parse_selector(
    path: &str,
    label: &str,
    r: &SelectorFields,
    servers: &[UpstreamConfig],
    more: &[&str],
) -> Result<Selector, ProxyError> {
    const KNOWN: [&str; 6] = ["name", "when", "upstreams", "tools", "prompts", "resources"];
    if let Some(k) = r.others.keys().next() {
        let all: Vec<&str> = KNOWN.iter().chain(more).copied().collect();
        return Err(bad(
            &format!("{path}.{k}"),
            format!("unknown field (known: {})", all.join(", ")),
        ));
    }
    let name = match &r.name {
        Loose::Absent => label.to_owned(),
        Loose::Valid(s) => format!("{label} {s:?}"),
        Loose::Malformed(_) => return Err(bad(&format!("{path}.name"), "must be a string")),
    };
    let mut when = Vec::new();
    match &r.when {
        Loose::Absent => {}
        Loose::Valid(m) => {
            for (claim, v) in m {
                when.push((claim.clone(), globs(&format!("{path}.when.{claim}"), v)?));
            }
        }
        Loose::Malformed(_) => {
            return Err(bad(
                &format!("{path}.when"),
                "must be an object of claim: glob (or [globs])",
            ));
        }
    }
    let upstreams = match &r.upstreams {
        None => None,
        Some(v) => {
            let p = format!("{path}.upstreams");
            let g = globs(&p, v)?;
            for (i, one) in g.iter().enumerate() {
                if one.is_literal() && !servers.iter().any(|s| s.name == one.text()) {
                    return Err(bad(
                        &if g.len() > 1 {
                            format!("{p}[{i}]")
                        } else {
                            p.clone()
                        },
                        format!("no server is named {:?} in mcpServers", one.text()),
                    ));
                }
            }
            Some(g)
        }
    };
    let kind = |v: &Option<Value>, k: &str| {
        v.as_ref()
            .map(|v| globs(&format!("{path}.{k}"), v))
            .transpose()
    };
    Ok(Selector {
        name,
        when,
        upstreams,
        tools: kind(&r.tools, "tools")?,
        prompts: kind(&r.prompts, "prompts")?,
        resources: kind(&r.resources, "resources")?,
    })
}

fn parse_key(
    path: &str,
    k: &Value,
    env: &impl Fn(&str) -> Option<String>,
) -> Result<ApiKey, ProxyError> {
    let k = KeyFields::deserialize(k).map_err(|_| bad(path, "must be an object"))?;
    if let Some(f) = k.others.keys().next() {
        return Err(bad(
            &format!("{path}.{f}"),
            "unknown field (known: keyEnv, principal; the key itself is read from the \
             environment, never from the file)",
        ));
    }
    let var = k.key_env.valid().ok_or_else(|| {
        bad(
            &format!("{path}.keyEnv"),
            "must name the environment variable that holds the key",
        )
    })?;
    let key = env(var).ok_or_else(|| {
        bad(
            &format!("{path}.keyEnv"),
            format!("the environment variable {var} is not set"),
        )
    })?;
    if key.len() < MIN_API_KEY_BYTES {
        return Err(bad(
            &format!("{path}.keyEnv"),
            format!("the key in {var} is shorter than {MIN_API_KEY_BYTES} bytes"),
        ));
    }
    let principal = match k.principal {
        Loose::Valid(p) if read::<Subject>(&p).sub.valid().is_some() => p,
        _ => {
            return Err(bad(
                &format!("{path}.principal"),
                "must be an object of claims with a string \"sub\"",
            ));
        }
    };
    Ok(ApiKey {
        env: var.to_owned(),
        principal,
        digest: digest(key.as_bytes()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::ItemKind;
    use serde_json::json;

    fn env(var: &str) -> Option<String> {
        (var != "UNSET").then(|| format!("{var}-0123456789abcdef"))
    }

    fn config(gateway: Value) -> Result<ProxyConfig, ProxyError> {
        let doc = json!({"mcpServers": {
            "files": {"command": "f"}, "web": {"url": "http://127.0.0.1:1/mcp"}
        }, "gateway": gateway});
        parse_config(&doc.to_string(), env)
    }

    fn claims(v: Value) -> JsonObject {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn first_match_wins_and_default_deny() {
        let c = config(json!({"rules": [
            {"name": "no deletes", "tools": "delete_*", "effect": "deny"},
            {"when": {"groups": ["eng", "ops"]}, "upstreams": "files", "effect": "allow"},
            {"when": {"sub": "bob"}, "tools": ["echo"], "prompts": "greet", "effect": "allow"},
            {"when": {"admin": "true"}, "effect": "allow"}
        ]}))
        .unwrap();
        let p = &c.gateway.policy;
        let alice = claims(json!({"sub": "alice", "groups": ["eng"]}));
        let bob = claims(json!({"sub": "bob"}));
        let root = claims(json!({"sub": "root", "admin": true}));
        let none = JsonObject::new();
        let t = ItemKind::Tool;
        assert!(p.allows(&alice, "files", t, "read"));
        assert!(!p.allows(&alice, "files", t, "delete_all"), "rule 0 first");
        assert!(!p.allows(&alice, "web", t, "read"), "no rule for web");
        assert!(p.allows(&alice, "files", ItemKind::Resource, "file:///a"));
        assert!(p.allows(&bob, "web", t, "echo"));
        assert!(p.allows(&bob, "web", ItemKind::Prompt, "greet"));
        assert!(
            !p.allows(&bob, "web", ItemKind::Resource, "test://x"),
            "rule 2 names tools and prompts only"
        );
        assert!(
            p.allows(&root, "web", t, "x"),
            "a boolean claim by its JSON text"
        );
        assert!(!p.allows(&none, "files", t, "read"));
        let d = p.decide(&alice, "files", t, "delete_all");
        assert_eq!(d.rule, Some(0));
        assert!(
            d.explanation.contains("\"no deletes\""),
            "{}",
            d.explanation
        );
        let d = p.decide(&none, "files", t, "read");
        assert_eq!((d.effect, d.rule), (Effect::Deny, None));
        assert!(
            d.explanation.contains("none of the 4 rules"),
            "{}",
            d.explanation
        );
        // No rules: everything allowed.
        let open = config(json!({})).unwrap().gateway.policy;
        assert!(open.allows(&none, "web", t, "anything"));
    }

    #[test]
    fn errors_name_the_field() {
        for (g, path) in [
            (json!([]), "gateway: must be an object"),
            (json!({"rule": []}), "gateway.rule: unknown field"),
            (
                json!({"rules": [{"effect": "maybe"}]}),
                "gateway.rules[0].effect",
            ),
            (
                json!({"rules": [{"effect": "allow", "upstreams": ["files", "nope"]}]}),
                "gateway.rules[0].upstreams[1]: no server is named \"nope\"",
            ),
            (
                json!({"rules": [{"effect": "allow", "tools": ["a", 3]}]}),
                "gateway.rules[0].tools[1]: must be a string",
            ),
            (
                json!({"rules": [{"effect": "allow", "tools": "[a"}]}),
                "gateway.rules[0].tools: bad glob",
            ),
            (
                json!({"rules": [{"effect": "allow", "when": {"sub": []}}]}),
                "gateway.rules[0].when.sub: an empty list",
            ),
            (
                json!({"rules": [{"effect": "allow", "tool": "a"}]}),
                "gateway.rules[0].tool: unknown field",
            ),
            (
                json!({"apiKeys": [{"keyEnv": "UNSET", "principal": {"sub": "a"}}]}),
                "gateway.apiKeys[0].keyEnv: the environment variable UNSET is not set",
            ),
            (
                json!({"apiKeys": [{"keyEnv": "A", "principal": {"name": "a"}}]}),
                "gateway.apiKeys[0].principal",
            ),
            (
                json!({"apiKeys": [{"key": "inline", "keyEnv": "A", "principal": {"sub": "a"}}]}),
                "gateway.apiKeys[0].key: unknown field",
            ),
            (
                json!({"apiKeys": [
                    {"keyEnv": "A", "principal": {"sub": "a"}},
                    {"keyEnv": "A", "principal": {"sub": "b"}}
                ]}),
                "gateway.apiKeys[1]: the same key is given twice",
            ),
        ] {
            let e = config(g.clone()).expect_err(&g.to_string()).to_string();
            assert!(e.contains(path), "{g}: {e}");
        }
    }

    #[test]
    fn short_keys_are_refused() {
        let doc = json!({"mcpServers": {"a": {"command": "x"}},
            "gateway": {"apiKeys": [{"keyEnv": "K", "principal": {"sub": "a"}}]}});
        let e = parse_config(&doc.to_string(), |_| Some("short".into()))
            .unwrap_err()
            .to_string();
        assert!(e.contains("shorter than 16 bytes"), "{e}");
    }
}
