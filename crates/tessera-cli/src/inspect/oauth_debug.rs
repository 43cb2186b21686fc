//! The OAuth debugger: each step of a sign-in from the page — metadata
//! discovery, client registration, the authorization request, the token
//! request, the MCP requests (challenged, then sent with the new token) — recorded as `http` events
//! (labelled with the sign-in and the phase, secrets masked), each held to
//! the rules of the specifications it answers to ([`step_checks`],
//! [`authorize_checks`]).

use serde_json::{Map, Value, json};
use tessera_auth::client::{OAuthExchange, OAuthObserver, OAuthPhase};
use tessera_http::{HttpExchange, HttpObserver};

use super::journal::Journal;
use super::network;

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
                        (k.clone(), json!(mask(s)))
                    }
                    other => (k.clone(), masked(other)),
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(masked).collect()),
        other => other.clone(),
    }
}

/// One rule: the text, whether it is kept, what was seen.
fn rule(rule: &str, ok: bool, detail: impl Into<String>) -> Value {
    json!({"rule": rule, "ok": ok, "detail": detail.into()})
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
) -> Vec<Value> {
    let field = |name: &str| {
        form.iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    let member = |name: &str| body.and_then(|b| b.get(name));
    let text = |name: &str| member(name).and_then(Value::as_str);
    let mut out = Vec::new();
    match phase {
        OAuthPhase::Discovery if status != 200 => {}
        OAuthPhase::Discovery if url.contains("/.well-known/oauth-protected-resource") => {
            out.push(rule(
                "RFC 9728: the protected resource metadata names its resource",
                text("resource").is_some_and(|r| !r.is_empty()),
                format!("resource {:?}", text("resource")),
            ));
            let servers = member("authorization_servers").and_then(Value::as_array);
            out.push(rule(
                "MCP: the protected resource metadata lists at least one authorization server",
                servers.is_some_and(|s| !s.is_empty()),
                format!("authorization_servers {}", servers.map_or(0, Vec::len)),
            ));
        }
        OAuthPhase::Discovery => {
            out.push(rule(
                "RFC 8414: the metadata names its issuer",
                text("issuer").is_some(),
                format!("issuer {:?}", text("issuer")),
            ));
            out.push(rule(
                "RFC 8414: it names the authorization and token endpoints",
                text("authorization_endpoint").is_some() && text("token_endpoint").is_some(),
                format!(
                    "authorization_endpoint {:?}, token_endpoint {:?}",
                    text("authorization_endpoint"),
                    text("token_endpoint")
                ),
            ));
            let methods: Vec<&str> = member("code_challenge_methods_supported")
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
                text("client_id").is_some(),
                format!("client_id {:?}", text("client_id")),
            ));
            let sent: Option<Value> = field("json").and_then(|j| serde_json::from_str(j).ok());
            out.push(rule(
                "RFC 7591: the client registers its redirect URIs",
                sent.as_ref()
                    .and_then(|s| s.get("redirect_uris"))
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
                    text("access_token").is_some() && text("token_type").is_some(),
                    format!("token_type {:?}", text("token_type")),
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
pub fn authorize_checks(url: &str) -> Vec<Value> {
    let Ok(u) = url::Url::parse(url) else {
        return vec![rule("the authorization URL parses", false, url.to_owned())];
    };
    let q: Map<String, Value> = u
        .query_pairs()
        .map(|(k, v)| (k.into_owned(), json!(v.into_owned())))
        .collect();
    let get = |k: &str| q.get(k).and_then(Value::as_str);
    let loopback = get("redirect_uri")
        .and_then(|r| url::Url::parse(r).ok())
        .is_some_and(|r| matches!(r.host_str(), Some("127.0.0.1" | "localhost" | "[::1]")));
    vec![
        rule(
            "OAuth 2.1: response_type=code",
            get("response_type") == Some("code"),
            format!("response_type {:?}", get("response_type")),
        ),
        rule(
            "OAuth 2.1: PKCE with code_challenge_method=S256",
            get("code_challenge").is_some() && get("code_challenge_method") == Some("S256"),
            format!("code_challenge_method {:?}", get("code_challenge_method")),
        ),
        rule(
            "OAuth 2.1: a state to check on the way back",
            get("state").is_some_and(|s| !s.is_empty()),
            "state sent",
        ),
        rule(
            "MCP (RFC 8707): the authorization request names the resource",
            get("resource").is_some(),
            format!("resource {:?}", get("resource")),
        ),
        rule(
            "RFC 8252: the redirect goes to a loopback address",
            loopback,
            format!("redirect_uri {:?}", get("redirect_uri")),
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
                    serde_json::from_str::<Value>(v).map_or_else(|_| json!(v), |j| masked(&j))
                } else if SECRETS.contains(&k.as_str()) {
                    json!(mask(v))
                } else {
                    json!(v)
                };
                (k.clone(), v)
            })
            .collect();
        let mut event = json!({
            "connection": null,
            "login": self.login,
            "oauth": e.phase.as_str(),
            "method": e.method,
            "url": e.url,
            "attempt": 1,
            "ms": (e.elapsed.as_secs_f64() * 10_000.0).round() / 10.0,
            "requestHeaders": network::headers_json(e.request_headers),
            "requestBody": if form.is_empty() { Value::Null } else { Value::Object(form) },
        });
        match &e.outcome {
            Ok((status, headers, body)) => {
                let parsed: Option<Value> = serde_json::from_slice(body).ok();
                let cache = headers.get("cache-control").and_then(|v| v.to_str().ok());
                event["status"] = json!(status);
                event["responseHeaders"] = network::headers_json(headers);
                event["responseBody"] = match &parsed {
                    Some(v) => masked(v),
                    None if body.is_empty() => Value::Null,
                    None => json!(String::from_utf8_lossy(&body[..body.len().min(MAX_BODY)])),
                };
                event["checks"] = Value::Array(step_checks(
                    e.phase,
                    e.url,
                    e.request_body,
                    *status,
                    cache,
                    parsed.as_ref(),
                ));
            }
            Err(why) => {
                event["error"] = json!(why);
                event["checks"] = json!([]);
            }
        }
        self.journal.record("http", event);
    }
}

impl HttpObserver for Steps {
    fn exchange(&self, e: &HttpExchange<'_>) {
        // The MCP requests of the sign-in: the one the server challenges
        // (which starts the flow) and the ones sent with the new token.
        let mut event = network::describe(e);
        event["connection"] = Value::Null;
        event["login"] = json!(self.login);
        event["oauth"] = json!("mcp request");
        network::record_exchange(&self.journal, &self.bodies, e, event);
    }

    fn response_body(&self, id: u64, chunk: &[u8]) {
        let label = json!({"connection": null, "login": self.login});
        network::record_body(&self.journal, &self.bodies, label, id, chunk);
    }

    fn response_end(&self, id: u64, outcome: Result<(), &str>) {
        let label = json!({"connection": null, "login": self.login});
        network::record_end(&self.journal, &self.bodies, label, id, outcome);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(v: &[Value]) -> Vec<String> {
        v.iter()
            .filter(|c| c["ok"] == false)
            .map(|c| c["rule"].as_str().unwrap().to_owned())
            .collect()
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
