//! The OAuth debugger: each step of a sign-in from the page — metadata
//! discovery, client registration, the authorization request, the token
//! request, the MCP requests (challenged, then sent with the new token) — recorded as `http` events
//! (labelled with the sign-in and the phase, secrets masked), each held to
//! the rules of the specifications it answers to ([`step_checks`],
//! [`authorize_checks`]).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tessera_auth::client::{OAuthExchange, OAuthObserver, OAuthPhase};
use tessera_http::{HttpExchange, HttpObserver, http};

use super::journal::Journal;
use super::network::{self, Checks, HttpEvent, Label};
use tessera::types::loose;

/// Form fields and JSON members whose values are secrets.
const SECRETS: &[&str] = &[
    "code",
    "code_verifier",
    "client_secret",
    "refresh_token",
    "access_token",
    "id_token",
    "client_assertion",
    "assertion",
    "subject_token",
    "registration_access_token",
];

/// The most bytes of an answer's body kept.
const MAX_BODY: usize = 64 * 1024;

/// A secret shown as its length.
fn mask(v: &str) -> String {
    format!("… ({} characters, masked)", v.len())
}

/// `v` with the values of [`SECRETS`] members masked, at any depth.
fn masked(v: &Value) -> Value {
    match v {
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| match v {
                    Value::String(s) if SECRETS.contains(&k.as_str()) => {
                        (k.clone(), Value::String(mask(s)))
                    }
                    other => (k.clone(), masked(other)),
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(masked).collect()),
        other => other.clone(),
    }
}

/// One rule a sign-in step was held to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rule {
    /// The rule, as the specification words it.
    pub rule: String,
    /// Whether the step keeps it.
    pub ok: bool,
    /// What was seen.
    pub detail: String,
}

/// One rule: the text, whether it is kept, what was seen.
fn rule(rule: &str, ok: bool, detail: impl Into<String>) -> Rule {
    Rule {
        rule: rule.to_owned(),
        ok,
        detail: detail.into(),
    }
}

/// The members of an authorization server's answers the rules read
/// (metadata, a registration, a token): each as sent, read as text or a
/// list where a rule needs one.
#[derive(Debug, Default, Deserialize)]
struct Answered {
    #[serde(default)]
    resource: Option<Value>,
    #[serde(default)]
    authorization_servers: Option<Value>,
    #[serde(default)]
    issuer: Option<Value>,
    #[serde(default)]
    authorization_endpoint: Option<Value>,
    #[serde(default)]
    token_endpoint: Option<Value>,
    #[serde(default)]
    code_challenge_methods_supported: Option<Value>,
    #[serde(default)]
    client_id: Option<Value>,
    #[serde(default)]
    access_token: Option<Value>,
    #[serde(default)]
    token_type: Option<Value>,
}

/// The member of a registration request the rules read.
#[derive(Debug, Default, Deserialize)]
struct Registration {
    #[serde(default)]
    redirect_uris: Option<Value>,
}

/// The query of an authorization request (the last of a repeated field).
#[derive(Debug, Default, Deserialize)]
struct AuthorizeQuery {
    #[serde(default)]
    response_type: Option<String>,
    #[serde(default)]
    code_challenge: Option<String>,
    #[serde(default)]
    code_challenge_method: Option<String>,
    #[serde(default)]
    state: Option<String>,
    #[serde(default)]
    resource: Option<String>,
    #[serde(default)]
    redirect_uri: Option<String>,
}

/// A member as text, when it is a string.
fn text(v: &Option<Value>) -> Option<&str> {
    v.as_ref().and_then(Value::as_str)
}

/// The rules an exchange of `phase` is held to, from what it sent (`form`:
/// the form fields, or `json` with a registration's body) and what came
/// back.
pub fn step_checks(
    phase: OAuthPhase,
    url: &str,
    form: &[(String, String)],
    status: u16,
    cache_control: Option<&str>,
    body: Option<&Value>,
) -> Vec<Rule> {
    let field = |name: &str| {
        form.iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    let b: Answered = body.map(loose::view_or_default).unwrap_or_default();
    let mut out = Vec::new();
    match phase {
        OAuthPhase::Discovery if status != 200 => {}
        OAuthPhase::Discovery if url.contains("/.well-known/oauth-protected-resource") => {
            out.push(rule(
                "RFC 9728: the protected resource metadata names its resource",
                text(&b.resource).is_some_and(|r| !r.is_empty()),
                format!("resource {:?}", text(&b.resource)),
            ));
            let servers = b.authorization_servers.as_ref().and_then(Value::as_array);
            out.push(rule(
                "MCP: the protected resource metadata lists at least one authorization server",
                servers.is_some_and(|s| !s.is_empty()),
                format!("authorization_servers {}", servers.map_or(0, Vec::len)),
            ));
        }
        OAuthPhase::Discovery => {
            out.push(rule(
                "RFC 8414: the metadata names its issuer",
                text(&b.issuer).is_some(),
                format!("issuer {:?}", text(&b.issuer)),
            ));
            out.push(rule(
                "RFC 8414: it names the authorization and token endpoints",
                text(&b.authorization_endpoint).is_some() && text(&b.token_endpoint).is_some(),
                format!(
                    "authorization_endpoint {:?}, token_endpoint {:?}",
                    text(&b.authorization_endpoint),
                    text(&b.token_endpoint)
                ),
            ));
            let methods: Vec<&str> = b
                .code_challenge_methods_supported
                .as_ref()
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            out.push(rule(
                "MCP: the authorization server supports PKCE with S256 (clients must refuse one that does not say so)",
                methods.contains(&"S256"),
                format!("code_challenge_methods_supported {methods:?}"),
            ));
        }
        OAuthPhase::Registration => {
            out.push(rule(
                "RFC 7591: a registration is answered 201 Created",
                status == 201,
                format!("status {status}"),
            ));
            out.push(rule(
                "RFC 7591: the answer carries the client_id",
                text(&b.client_id).is_some(),
                format!("client_id {:?}", text(&b.client_id)),
            ));
            let sent: Option<Value> = field("json").and_then(|j| serde_json::from_str(j).ok());
            let sent: Option<Registration> = sent.as_ref().and_then(loose::view);
            out.push(rule(
                "RFC 7591: the client registers its redirect URIs",
                sent.and_then(|s| s.redirect_uris)
                    .as_ref()
                    .and_then(Value::as_array)
                    .is_some_and(|a| !a.is_empty()),
                "redirect_uris sent",
            ));
        }
        OAuthPhase::Token => {
            out.push(rule(
                "RFC 6749: a successful token request is answered 200",
                status == 200,
                format!("status {status}"),
            ));
            if status == 200 {
                out.push(rule(
                    "RFC 6749: the answer carries access_token and token_type",
                    text(&b.access_token).is_some() && text(&b.token_type).is_some(),
                    format!("token_type {:?}", text(&b.token_type)),
                ));
                out.push(rule(
                    "RFC 6749: the answer is sent with Cache-Control: no-store",
                    cache_control.is_some_and(|c| c.to_ascii_lowercase().contains("no-store")),
                    format!("Cache-Control {cache_control:?}"),
                ));
            }
            if field("grant_type") == Some("authorization_code") {
                out.push(rule(
                    "OAuth 2.1: the code is exchanged with its PKCE code_verifier",
                    field("code_verifier").is_some(),
                    "code_verifier sent",
                ));
            }
            out.push(rule(
                "MCP (RFC 8707): the token request names the resource",
                field("resource").is_some(),
                format!("resource {:?}", field("resource")),
            ));
        }
        _ => {}
    }
    out
}

/// The rules of the authorization request (the URL the user opens).
pub fn authorize_checks(url: &str) -> Vec<Rule> {
    let Ok(u) = url::Url::parse(url) else {
        return vec![rule("the authorization URL parses", false, url.to_owned())];
    };
    let q: Map<String, Value> = u
        .query_pairs()
        .map(|(k, v)| (k.into_owned(), Value::String(v.into_owned())))
        .collect();
    let q: AuthorizeQuery = AuthorizeQuery::deserialize(Value::Object(q)).unwrap_or_default();
    fn get(v: &Option<String>) -> Option<&str> {
        v.as_deref()
    }
    let loopback = get(&q.redirect_uri)
        .and_then(|r| url::Url::parse(r).ok())
        .is_some_and(|r| matches!(r.host_str(), Some("127.0.0.1" | "localhost" | "[::1]")));
    vec![
        rule(
            "OAuth 2.1: response_type=code",
            get(&q.response_type) == Some("code"),
            format!("response_type {:?}", get(&q.response_type)),
        ),
        rule(
            "OAuth 2.1: PKCE with code_challenge_method=S256",
            get(&q.code_challenge).is_some() && get(&q.code_challenge_method) == Some("S256"),
            format!("code_challenge_method {:?}", get(&q.code_challenge_method)),
        ),
        rule(
            "OAuth 2.1: a state to check on the way back",
            get(&q.state).is_some_and(|s| !s.is_empty()),
            "state sent",
        ),
        rule(
            "MCP (RFC 8707): the authorization request names the resource",
            get(&q.resource).is_some(),
            format!("resource {:?}", get(&q.resource)),
        ),
        rule(
            "RFC 8252: the redirect goes to a loopback address",
            loopback,
            format!("redirect_uri {:?}", get(&q.redirect_uri)),
        ),
    ]
}

/// Records the OAuth exchanges and the first call of sign-in `login`.
pub struct Steps {
    /// Where they go.
    pub journal: Journal,
    /// The sign-in's id.
    pub login: u64,
    /// The bodies of the MCP requests' answers being read.
    pub bodies: super::response_body::ResponseBodies,
}

impl OAuthObserver for Steps {
    fn exchange(&self, e: &OAuthExchange<'_>) {
        let form: Map<String, Value> = e
            .request_body
            .iter()
            .map(|(k, v)| {
                let v = if k == "json" {
                    serde_json::from_str::<Value>(v)
                        .map_or_else(|_| Value::String(v.clone()), |j| masked(&j))
                } else if SECRETS.contains(&k.as_str()) {
                    Value::String(mask(v))
                } else {
                    Value::String(v.clone())
                };
                (k.clone(), v)
            })
            .collect();
        let mut event = HttpEvent {
            label: self.label(),
            oauth: Some(e.phase.as_str()),
            method: e.method.to_owned(),
            url: e.url.to_owned(),
            attempt: 1,
            ms: network::tenths_of_ms(e.elapsed),
            request_headers: network::headers_json(e.request_headers),
            request_body: (!form.is_empty()).then_some(Value::Object(form)),
            checks: Checks::Rules(Vec::new()),
            status: None,
            response_headers: None,
            response_body: None,
            auth: None,
            error: None,
            exchange: None,
        };
        match &e.outcome {
            Ok((status, headers, body)) => {
                let parsed: Option<Value> = serde_json::from_slice(body).ok();
                let cache = headers
                    .get(http::header::CACHE_CONTROL)
                    .and_then(|v| v.to_str().ok());
                event.status = Some(*status);
                event.response_headers = Some(network::headers_json(headers));
                event.response_body = Some(match &parsed {
                    Some(v) => masked(v),
                    None if body.is_empty() => Value::Null,
                    None => Value::String(
                        String::from_utf8_lossy(&body[..body.len().min(MAX_BODY)]).into_owned(),
                    ),
                });
                event.checks = Checks::Rules(step_checks(
                    e.phase,
                    e.url,
                    e.request_body,
                    *status,
                    cache,
                    parsed.as_ref(),
                ));
            }
            Err(why) => event.error = Some(why.clone()),
        }
        self.journal.record("http", event);
    }
}

impl Steps {
    /// The label of the sign-in's events: no connection, its id.
    fn label(&self) -> Label {
        Label {
            connection: None,
            login: Some(self.login),
        }
    }
}

impl HttpObserver for Steps {
    fn exchange(&self, e: &HttpExchange<'_>) {
        // The MCP requests of the sign-in: the one the server challenges
        // (which starts the flow) and the ones sent with the new token.
        let mut event = network::describe(e);
        event.label = self.label();
        event.oauth = Some("mcp request");
        network::record_exchange(&self.journal, &self.bodies, e, event);
    }

    fn response_body(&self, id: u64, chunk: &[u8]) {
        network::record_body(&self.journal, &self.bodies, self.label(), id, chunk);
    }

    fn response_end(&self, id: u64, outcome: Result<(), &str>) {
        network::record_end(&self.journal, &self.bodies, self.label(), id, outcome);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn failed(v: &[Rule]) -> Vec<String> {
        v.iter().filter(|c| !c.ok).map(|c| c.rule.clone()).collect()
    }

    #[test]
    fn each_phase_is_held_to_its_rules() {
        let prm = json!({"resource": "http://x/mcp", "authorization_servers": ["http://as"]});
        let v = step_checks(
            OAuthPhase::Discovery,
            "http://x/.well-known/oauth-protected-resource/mcp",
            &[],
            200,
            None,
            Some(&prm),
        );
        assert_eq!((v.len(), failed(&v).len()), (2, 0), "{v:?}");
        let asm = json!({"issuer": "http://as", "authorization_endpoint": "a", "token_endpoint": "t",
            "code_challenge_methods_supported": ["plain"]});
        let v = step_checks(
            OAuthPhase::Discovery,
            "http://as/.well-known/oauth-authorization-server",
            &[],
            200,
            None,
            Some(&asm),
        );
        assert_eq!(failed(&v).len(), 1);
        assert!(failed(&v)[0].contains("S256"));
        // A candidate that is not there is no failure.
        assert!(step_checks(OAuthPhase::Discovery, "http://as/x", &[], 404, None, None).is_empty());
        let form = vec![
            ("grant_type".to_owned(), "authorization_code".to_owned()),
            ("code".to_owned(), "c".to_owned()),
        ];
        let token = json!({"access_token": "t", "token_type": "Bearer"});
        let v = step_checks(
            OAuthPhase::Token,
            "http://as/token",
            &form,
            200,
            Some("no-store"),
            Some(&token),
        );
        let f = failed(&v);
        assert_eq!(f.len(), 2, "{f:?}");
        assert!(
            f.iter().any(|r| r.contains("code_verifier"))
                && f.iter().any(|r| r.contains("resource"))
        );
        let reg = vec![(
            "json".to_owned(),
            r#"{"redirect_uris":["http://127.0.0.1:1/cb"]}"#.to_owned(),
        )];
        let v = step_checks(
            OAuthPhase::Registration,
            "http://as/register",
            &reg,
            200,
            None,
            Some(&json!({"client_id": "c"})),
        );
        assert_eq!(
            failed(&v),
            vec!["RFC 7591: a registration is answered 201 Created"]
        );
    }

    #[test]
    fn the_authorization_url_and_masking() {
        let good = "http://as/authorize?response_type=code&client_id=c&code_challenge=x&code_challenge_method=S256&state=s&resource=http%3A%2F%2Fx%2Fmcp&redirect_uri=http%3A%2F%2F127.0.0.1%3A5%2Fcallback";
        assert!(failed(&authorize_checks(good)).is_empty());
        let bad =
            "http://as/authorize?response_type=token&redirect_uri=https%3A%2F%2Fevil.example%2F";
        assert_eq!(failed(&authorize_checks(bad)).len(), 5);
        let m = masked(
            &json!({"access_token": "abc", "nested": [{"refresh_token": "r"}], "token_type": "Bearer"}),
        );
        assert_eq!(m["access_token"], "… (3 characters, masked)");
        assert_eq!(m["nested"][0]["refresh_token"], "… (1 characters, masked)");
        assert_eq!(m["token_type"], "Bearer");
    }
}
