//! The server list MCP clients share (`{"mcpServers": {NAME: …}}`), as the
//! upstreams of an aggregating proxy.
//!
//! ```json
//! {"mcpServers": {
//!   "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]},
//!   "remote": {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer …"},
//!              "timeout": 30, "allowTools": ["search"], "denyTools": []}
//! }}
//! ```
//!
//! Each entry is a stdio server (`command`, optional `args` and `env`) or a
//! Streamable HTTP one (`url`, optional `headers`). The proxy also reads
//! `timeout` (seconds per forwarded request), `allowTools` and `denyTools`
//! (exact tool names, before prefixing), `maxConcurrent` and
//! `circuitBreaker` ([`crate::resilience`]), `prefix` (`false`: the only
//! upstream's names are shown as its own, [`crate::Naming`]), and for a URL
//! `auth` (how the proxy authenticates to it, perhaps as the caller:
//! [`crate::credentials`]); other keys are ignored, so the file other
//! clients use works as it is.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;
use tessera_http::http::{HeaderMap, HeaderName, HeaderValue};

use crate::caller_auth::CallerCredentials;
use crate::credentials::{Installed, parse_auth};
use crate::error::ProxyError;
use crate::naming::Naming;
use crate::overrides::ToolOverrides;
use crate::resilience::{Breaker, DEFAULT_MAX_CONCURRENT, parse_breaker, parse_max_concurrent};
use crate::upstream::UpstreamSpec;
use tessera_http::HttpClientTransport;

#[derive(Deserialize)]
struct File {
    #[serde(rename = "mcpServers")]
    servers: BTreeMap<String, Entry>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Entry {
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    timeout: Option<f64>,
    allow_tools: Option<Vec<String>>,
    #[serde(default)]
    deny_tools: Vec<String>,
    auth: Option<serde_json::Value>,
    tool_overrides: Option<serde_json::Value>,
    max_concurrent: Option<serde_json::Value>,
    circuit_breaker: Option<serde_json::Value>,
    prefix: Option<serde_json::Value>,
}

/// One upstream of an aggregating proxy.
#[derive(Debug, Clone)]
pub struct UpstreamConfig {
    /// Its name: the prefix of its tools and prompts (`NAME__tool`) and of
    /// its resource URIs (`NAME+scheme:…`), unless `prefix` is `false`.
    pub name: String,
    /// Whether its names are shown prefixed with `name` (`true` by
    /// default); `false` shows them as the upstream's own, which only the
    /// sole upstream of an aggregator may do ([`crate::Naming`]).
    pub prefix: bool,
    /// How to reach it.
    pub spec: UpstreamSpec,
    /// The limit of each forwarded request (restarted by progress).
    pub timeout: Option<Duration>,
    /// Only these tools are offered (all when `None`).
    pub allow_tools: Option<Vec<String>>,
    /// These tools are never offered.
    pub deny_tools: Vec<String>,
    /// Renamed, re-described, hidden tools and fixed arguments.
    pub overrides: ToolOverrides,
    /// The most requests in flight to it at once; more wait for a place
    /// (at most the request timeout).
    pub max_concurrent: usize,
    /// Its circuit breaker (`None`: none).
    pub breaker: Option<Breaker>,
    /// Credentials that depend on the caller (`auth` of type `forward` or
    /// `tokenExchange`): the upstream is then reached on one connection per
    /// caller, never on a pooled one.
    pub caller: Option<CallerCredentials>,
}

impl UpstreamConfig {
    /// An upstream with no tool filter and the default timeout.
    pub fn new(name: impl Into<String>, spec: UpstreamSpec) -> Self {
        UpstreamConfig {
            name: name.into(),
            prefix: true,
            spec,
            timeout: None,
            allow_tools: None,
            deny_tools: Vec::new(),
            overrides: ToolOverrides::default(),
            max_concurrent: DEFAULT_MAX_CONCURRENT,
            breaker: Some(Breaker::default()),
            caller: None,
        }
    }

    /// How its names are shown to clients.
    pub fn naming(&self) -> Naming {
        if self.prefix {
            Naming::prefixed(&self.name)
        } else {
            Naming::unprefixed(&self.name)
        }
    }

    /// Whether the tool `name` (unprefixed) may be offered.
    pub fn allows(&self, tool: &str) -> bool {
        self.allow_tools
            .as_ref()
            .is_none_or(|a| a.iter().any(|t| t == tool))
            && !self.deny_tools.iter().any(|t| t == tool)
    }
}

/// Whether `name` can prefix names and URI schemes: a letter, then letters,
/// digits and `-`.
pub(crate) fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-')
}

/// Checks that an upstream shown without prefix is the only one (two
/// upstreams' names could collide otherwise); the error names the field.
pub(crate) fn check_prefixes<'a>(
    servers: impl IntoIterator<Item = &'a UpstreamConfig>,
) -> Result<(), ProxyError> {
    let servers: Vec<&UpstreamConfig> = servers.into_iter().collect();
    match servers.iter().find(|s| !s.prefix) {
        Some(s) if servers.len() > 1 => Err(ProxyError::Config(format!(
            "server {:?}: prefix: false is allowed only for the only server (its names are \
             shown as its own, and could collide with another server's); there are {} servers: \
             remove the others or the \"prefix\" field",
            s.name,
            servers.len()
        ))),
        _ => Ok(()),
    }
}

/// Reads an `mcpServers` document (secrets named by `auth` keys are read
/// from this process's environment).
pub fn parse_servers(text: &str) -> Result<Vec<UpstreamConfig>, ProxyError> {
    parse_servers_with(text, &|var| std::env::var(var).ok())
}

/// [`parse_servers`] with the environment given.
pub(crate) fn parse_servers_with(
    text: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<UpstreamConfig>, ProxyError> {
    let file: File = serde_json::from_str(text)
        .map_err(|e| ProxyError::Config(format!("not an mcpServers document: {e}")))?;
    if file.servers.is_empty() {
        return Err(ProxyError::Config("mcpServers lists no server".into()));
    }
    let mut out = Vec::new();
    for (name, e) in file.servers {
        let bad = |why: String| ProxyError::Config(format!("server {name:?}: {why}"));
        if !valid_name(&name) {
            return Err(bad(
                "a name must start with a letter and hold only letters, digits and '-' \
                 (it prefixes tool names and URI schemes)"
                    .into(),
            ));
        }
        let mut caller = None;
        let spec = match (e.command, e.url) {
            (Some(_), None) if e.auth.is_some() => {
                return Err(bad(
                    "auth applies to a url (HTTP) server; give a stdio server its secrets in env"
                        .into(),
                ));
            }
            (Some(command), None) => {
                let mut c = tessera_runtime::ChildCommand::new(command, e.args);
                c.env = e
                    .env
                    .into_iter()
                    .map(|(k, v)| (k.into(), v.into()))
                    .collect();
                UpstreamSpec::Stdio(c)
            }
            (None, Some(url)) => {
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return Err(bad(format!("url must be http:// or https://, not {url:?}")));
                }
                let mut headers = HeaderMap::new();
                for (k, v) in e.headers {
                    let n = HeaderName::try_from(k.as_str())
                        .map_err(|_| bad(format!("bad header name {k:?}")))?;
                    let v = HeaderValue::try_from(v.as_str())
                        .map_err(|_| bad(format!("bad value for header {k:?}")))?;
                    headers.append(n, v);
                }
                let auth = match &e.auth {
                    Some(a) => parse_auth(a, &url, env, &bad)?.install(&mut headers),
                    None => Installed::Headers,
                };
                match auth {
                    Installed::Headers => UpstreamSpec::http(url, headers),
                    Installed::OAuth(auth) => {
                        let u = url.clone();
                        UpstreamSpec::http_with(url, move || {
                            Ok(HttpClientTransport::with_headers(&u, headers.clone())?
                                .with_auth(auth.clone()))
                        })
                    }
                    Installed::Caller(kind) => {
                        caller = Some(CallerCredentials::new(url.clone(), headers.clone(), kind));
                        UpstreamSpec::http(url, headers)
                    }
                }
            }
            (Some(_), Some(_)) => return Err(bad("give command or url, not both".into())),
            (None, None) => return Err(bad("needs a command (stdio) or a url (HTTP)".into())),
        };
        let timeout = match e.timeout {
            None => None,
            Some(t) if t.is_finite() && t > 0.0 => Some(Duration::from_secs_f64(t)),
            Some(t) => {
                return Err(bad(format!(
                    "timeout must be a positive number of seconds, not {t}"
                )));
            }
        };
        let overrides = match &e.tool_overrides {
            None => ToolOverrides::default(),
            Some(v) => ToolOverrides::parse(v).map_err(bad)?,
        };
        let max_concurrent = parse_max_concurrent(e.max_concurrent.as_ref())
            .map_err(bad)?
            .unwrap_or(DEFAULT_MAX_CONCURRENT);
        let breaker = parse_breaker(e.circuit_breaker.as_ref()).map_err(bad)?;
        let prefix = match e.prefix {
            None => true,
            Some(serde_json::Value::Bool(b)) => b,
            Some(other) => {
                return Err(bad(format!(
                    "prefix: must be true or false (whether names are shown as NAME__tool), \
                     not {other}"
                )));
            }
        };
        out.push(UpstreamConfig {
            name,
            prefix,
            spec,
            timeout,
            allow_tools: e.allow_tools,
            deny_tools: e.deny_tools,
            overrides,
            max_concurrent,
            breaker,
            caller,
        });
    }
    check_prefixes(&out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_kinds_and_the_proxy_keys() {
        let s = parse_servers(
            r#"{"mcpServers": {
                "files": {"command": "srv", "args": ["-v"], "env": {"A": "1"}},
                "web": {"url": "http://127.0.0.1:1/mcp", "headers": {"X-Key": "k"},
                        "timeout": 2.5, "allowTools": ["a", "b"], "denyTools": ["b"], "type": "http"}
            }}"#,
        )
        .expect("parses");
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].name, "files");
        match &s[0].spec {
            UpstreamSpec::Stdio(c) => {
                assert_eq!(c.program, "srv");
                assert_eq!(c.args, ["-v"]);
                assert_eq!(c.env, [("A".into(), "1".into())]);
            }
            other => panic!("not stdio: {other:?}"),
        }
        assert!(
            matches!(&s[1].spec, UpstreamSpec::Http { url, .. } if url == "http://127.0.0.1:1/mcp")
        );
        assert_eq!(s[1].timeout, Some(Duration::from_millis(2500)));
        assert!(s[1].allows("a"));
        assert!(!s[1].allows("b"), "deny wins");
        assert!(!s[1].allows("c"), "not in the allow list");
        assert!(s[0].allows("anything"));
        assert!(s[0].prefix && s[1].prefix, "prefixed by default");
    }

    #[test]
    fn the_only_server_may_go_unprefixed() {
        let s = parse_servers(r#"{"mcpServers": {"a": {"command": "x", "prefix": false}}}"#)
            .expect("parses");
        assert!(!s[0].prefix);
        assert_eq!(s[0].naming(), Naming::unprefixed("a"));
        let s = parse_servers(
            r#"{"mcpServers": {"a": {"command": "x", "prefix": true}, "b": {"command": "y"}}}"#,
        )
        .expect("parses");
        assert_eq!(s[0].naming(), Naming::prefixed("a"));
    }

    #[test]
    fn refuses_what_it_cannot_use() {
        for (doc, why) in [
            (r#"{"mcpServers": {}}"#, "no server"),
            (r#"{"servers": {}}"#, "not an mcpServers"),
            (
                r#"{"mcpServers": {"a__b": {"command": "x"}}}"#,
                "must start with a letter",
            ),
            (
                r#"{"mcpServers": {"1x": {"command": "x"}}}"#,
                "must start with a letter",
            ),
            (r#"{"mcpServers": {"a": {}}}"#, "needs a command"),
            (
                r#"{"mcpServers": {"a": {"command": "x", "url": "http://h/"}}}"#,
                "not both",
            ),
            (
                r#"{"mcpServers": {"a": {"url": "ftp://h/"}}}"#,
                "http:// or https://",
            ),
            (
                r#"{"mcpServers": {"a": {"url": "http://h/", "headers": {"Bad Name": "v"}}}}"#,
                "bad header name",
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x", "timeout": -1}}}"#,
                "positive",
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x", "prefix": "no"}}}"#,
                "server \"a\": prefix: must be true or false",
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x", "prefix": false}, "b": {"command": "y"}}}"#,
                "server \"a\": prefix: false is allowed only for the only server",
            ),
        ] {
            let e = parse_servers(doc).expect_err(doc).to_string();
            assert!(e.contains(why), "{doc}: {e}");
        }
    }
}
