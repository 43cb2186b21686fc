//! How the proxy authenticates to an HTTP upstream: the `auth` key of an
//! `mcpServers` entry.
//!
//! - `{"type": "header", "header": "Authorization", "valueEnv": "VAR",
//!   "prefix": "Bearer "}`: a static header whose value (after the
//!   optional prefix) is read from an environment variable at start, so
//!   the secret never sits in the file.
//! - `{"type": "clientCredentials", "clientId": "…", "clientSecretEnv":
//!   "VAR", "scope": "…"}`: an OAuth 2.1 client credentials grant at the
//!   authorization server the upstream names in its protected resource
//!   metadata (RFC 9728). One token per upstream, shared by every
//!   connection to it, kept until it expires and then fetched again.
//! - `{"type": "forward", "acknowledgeTokenPassthrough": true, "audience":
//!   "…"}` and `{"type": "tokenExchange", "clientId": "…",
//!   "clientSecretEnv": "VAR", "tokenEndpoint": "…", "scope": "…",
//!   "audience": "…", "resource": "…"}`: credentials that depend on the
//!   caller ([`crate::caller_auth`], which says why `forward` needs the
//!   acknowledgement); they need the proxy's OAuth front
//!   ([`crate::ProxyConfig::check_front`]). The token exchange client
//!   authenticates with exactly one of: its secret (`clientSecretEnv`;
//!   `client_secret_basic`, or `client_secret_post` with `"clientAuth":
//!   "client_secret_post"`), a private key (`privateKeyEnv`, a PEM document
//!   in that variable, with `privateKeyAlg`, default `ES256`, and an
//!   optional `privateKeyId`; `private_key_jwt`), or nothing, as a public
//!   client, which must be said: `"clientAuth": "none"`.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;
use tessera_auth::client::{
    AuthMethod, ClientCredentials, ClientSigningKey, Grant, OAuthClient, TokenExchange,
};
use tessera_http::http::{HeaderMap, HeaderName, HeaderValue};

use crate::caller_auth::Kind;
use crate::error::ProxyError;
use crate::shapes::{Loose, read};

/// What an `auth` key asks for, ready to use.
pub(crate) enum Credentials {
    /// A header added to every request.
    Header(HeaderName, HeaderValue),
    /// An OAuth client for the upstream.
    OAuth(Arc<OAuthClient>),
    /// Credentials that depend on the caller.
    Caller(Kind),
}

/// The fields of an `auth` value, as written (each checked where it is
/// used, with its name in the error).
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct AuthFields {
    #[serde(rename = "type")]
    kind: Loose<String>,
    header: Loose<String>,
    value_env: Loose<String>,
    prefix: Loose<String>,
    client_id: Loose<String>,
    client_secret_env: Loose<String>,
    scope: Loose<String>,
    acknowledge_token_passthrough: Loose<bool>,
    audience: Loose<String>,
    token_endpoint: Loose<String>,
    resource: Loose<String>,
    client_auth: Loose<String>,
    private_key_env: Loose<String>,
    private_key_alg: Loose<String>,
    private_key_id: Loose<String>,
}

/// The required string field `key` (`field` its value).
fn required<'a>(
    field: &'a Loose<String>,
    key: &str,
    bad: &impl Fn(String) -> ProxyError,
) -> Result<&'a str, ProxyError> {
    text(field, key, bad)?.ok_or_else(|| bad(format!("auth.{key} is required")))
}

/// The optional string field `key` (`field` its value).
fn text<'a>(
    field: &'a Loose<String>,
    key: &str,
    bad: &impl Fn(String) -> ProxyError,
) -> Result<Option<&'a str>, ProxyError> {
    match field {
        Loose::Absent => Ok(None),
        Loose::Valid(s) => Ok(Some(s)),
        Loose::Malformed(_) => Err(bad(format!("auth.{key} must be a string"))),
    }
}

/// Reads the `auth` value of the entry for `url`; `bad` prefixes errors
/// with the server's name.
pub(crate) fn parse_auth(
    v: &Value,
    url: &str,
    env: &dyn Fn(&str) -> Option<String>,
    bad: &impl Fn(String) -> ProxyError,
) -> Result<Credentials, ProxyError> {
    let o = v
        .as_object()
        .ok_or_else(|| bad("auth must be an object".into()))?;
    let f: AuthFields = read(o);
    let secret = |field: &Loose<String>, key: &str| {
        let var = required(field, key, bad)?;
        env(var).ok_or_else(|| {
            bad(format!(
                "auth.{key}: the environment variable {var} is not set"
            ))
        })
    };
    let known: &[&str] = match f.kind.valid().map(String::as_str) {
        Some("header") => &["type", "header", "valueEnv", "prefix"],
        Some("clientCredentials") => &["type", "clientId", "clientSecretEnv", "scope"],
        Some("forward") => &["type", "acknowledgeTokenPassthrough", "audience"],
        Some("tokenExchange") => &[
            "type",
            "clientId",
            "clientAuth",
            "clientSecretEnv",
            "privateKeyEnv",
            "privateKeyAlg",
            "privateKeyId",
            "tokenEndpoint",
            "scope",
            "audience",
            "resource",
        ],
        _ => {
            return Err(bad(
                "auth.type must be \"header\", \"clientCredentials\", \"forward\" or \"tokenExchange\""
                    .into(),
            ));
        }
    };
    if let Some(k) = o.keys().find(|k| !known.contains(&k.as_str())) {
        return Err(bad(format!(
            "auth.{k}: unknown field (known: {})",
            known.join(", ")
        )));
    }
    match required(&f.kind, "type", bad)? {
        "header" => {
            let name = required(&f.header, "header", bad)?;
            let name = HeaderName::try_from(name)
                .map_err(|_| bad(format!("auth.header: bad header name {name:?}")))?;
            let value = format!(
                "{}{}",
                text(&f.prefix, "prefix", bad)?.unwrap_or(""),
                secret(&f.value_env, "valueEnv")?
            );
            let mut value = HeaderValue::try_from(value)
                .map_err(|_| bad("auth.valueEnv: the value is not a valid header value".into()))?;
            value.set_sensitive(true);
            Ok(Credentials::Header(name, value))
        }
        "forward" => {
            if f.acknowledge_token_passthrough.valid() != Some(&true) {
                return Err(bad(
                    "auth.acknowledgeTokenPassthrough: must be true for \"forward\": the MCP \
                     authorization specification forbids passing the caller's token on to \
                     another service unless it was issued for it, and the upstream could replay \
                     it here; the proxy forwards only tokens whose aud names the upstream \
                     (auth.audience, default its url). Prefer \"tokenExchange\""
                        .into(),
                ));
            }
            let audience = text(&f.audience, "audience", bad)?
                .unwrap_or(url)
                .to_owned();
            Ok(Credentials::Caller(Kind::Forward { audience }))
        }
        "tokenExchange" => {
            let mut b = exchange_client(&f, url, env, bad)?;
            if let Some(t) = text(&f.token_endpoint, "tokenEndpoint", bad)? {
                if !(t.starts_with("http://") || t.starts_with("https://")) {
                    return Err(bad(format!(
                        "auth.tokenEndpoint: must be an http:// or https:// URL, not {t:?}"
                    )));
                }
                b = b.token_endpoint(t);
            }
            if let Some(s) = text(&f.scope, "scope", bad)? {
                b = b.scope(s);
            }
            if let Some(a) = text(&f.audience, "audience", bad)? {
                b = b.audience(a);
            }
            if let Some(r) = text(&f.resource, "resource", bad)? {
                b = b.resource(r);
            }
            let x = b
                .build()
                .map_err(|e| bad(format!("auth: cannot set up the token exchange: {e}")))?;
            Ok(Credentials::Caller(Kind::Exchange(Box::new(x))))
        }
        _ => {
            let client = ClientCredentials::confidential(
                required(&f.client_id, "clientId", bad)?,
                secret(&f.client_secret_env, "clientSecretEnv")?,
            );
            let mut b = OAuthClient::builder(url, Grant::ClientCredentials).client(client);
            if let Some(scope) = text(&f.scope, "scope", bad)? {
                b = b.scope(scope);
            }
            let oauth = b
                .build()
                .map_err(|e| bad(format!("auth: cannot set up the OAuth client: {e}")))?;
            Ok(Credentials::OAuth(Arc::new(oauth)))
        }
    }
}

/// The token exchange of `tokenExchange` fields `f` for the upstream at
/// `url`, its client authentication set: a secret, a private key, or none.
fn exchange_client(
    f: &AuthFields,
    url: &str,
    env: &dyn Fn(&str) -> Option<String>,
    bad: &impl Fn(String) -> ProxyError,
) -> Result<tessera_auth::client::TokenExchangeBuilder, ProxyError> {
    let id = required(&f.client_id, "clientId", bad)?;
    let from_env = |key: &str, var: &str| {
        env(var).ok_or_else(|| {
            bad(format!(
                "auth.{key}: the environment variable {var} is not set"
            ))
        })
    };
    let secret_var = text(&f.client_secret_env, "clientSecretEnv", bad)?;
    let key_var = text(&f.private_key_env, "privateKeyEnv", bad)?;
    let said = text(&f.client_auth, "clientAuth", bad)?;
    let method = match said {
        None => None,
        Some(m) => match AuthMethod::parse(m) {
            Some(m) => Some(m),
            None => {
                return Err(bad(format!(
                    "auth.clientAuth: {m:?} is not one of client_secret_basic, \
                     client_secret_post, private_key_jwt, none"
                )));
            }
        },
    };
    let client = match (secret_var, key_var, method) {
        (Some(_), Some(_), _) => {
            return Err(bad(
                "auth: give clientSecretEnv or privateKeyEnv, not both".into()
            ));
        }
        (
            Some(var),
            None,
            None | Some(AuthMethod::ClientSecretBasic | AuthMethod::ClientSecretPost),
        ) => {
            let c = ClientCredentials::confidential(id, from_env("clientSecretEnv", var)?);
            match method {
                Some(m) => c.with_auth_method(m),
                None => c,
            }
        }
        (None, Some(var), None | Some(AuthMethod::PrivateKeyJwt)) => {
            let pem = from_env("privateKeyEnv", var)?;
            let alg = text(&f.private_key_alg, "privateKeyAlg", bad)?.unwrap_or("ES256");
            let mut key = ClientSigningKey::from_pem(&pem, alg)
                .map_err(|e| bad(format!("auth.privateKeyEnv: {e}")))?;
            if let Some(kid) = text(&f.private_key_id, "privateKeyId", bad)? {
                key = key.with_kid(kid);
            }
            let c = ClientCredentials::public(id).with_auth_method(AuthMethod::PrivateKeyJwt);
            return Ok(TokenExchange::builder(url, c).signing_key(key));
        }
        (None, None, Some(AuthMethod::None)) => {
            ClientCredentials::public(id).with_auth_method(AuthMethod::None)
        }
        (None, None, _) => {
            return Err(bad(
                "auth: the token exchange client authenticates with clientSecretEnv (a \
                 secret), privateKeyEnv (private_key_jwt), or, as a public client, says \
                 \"clientAuth\": \"none\""
                    .into(),
            ));
        }
        (_, _, Some(m)) => {
            return Err(bad(format!(
                "auth.clientAuth: {} does not go with {}",
                m.as_str(),
                if secret_var.is_some() {
                    "clientSecretEnv"
                } else {
                    "privateKeyEnv"
                }
            )));
        }
    };
    if key_var.is_none()
        && (f.private_key_alg != Loose::Absent || f.private_key_id != Loose::Absent)
    {
        return Err(bad(
            "auth.privateKeyAlg and auth.privateKeyId go with privateKeyEnv".into(),
        ));
    }
    Ok(TokenExchange::builder(url, client))
}

/// How the transports to an upstream authenticate, once the `auth` key
/// is installed.
pub(crate) enum Installed {
    /// Nothing more than the headers.
    Headers,
    /// Through this OAuth client.
    OAuth(Arc<OAuthClient>),
    /// With the caller's credentials.
    Caller(Kind),
}

impl Credentials {
    /// Adds these credentials to what every transport to the upstream
    /// carries: a header into `headers`, or what else they need.
    pub(crate) fn install(self, headers: &mut HeaderMap) -> Installed {
        match self {
            Credentials::Header(n, v) => {
                headers.insert(n, v);
                Installed::Headers
            }
            Credentials::OAuth(a) => Installed::OAuth(a),
            Credentials::Caller(k) => Installed::Caller(k),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::gateway::parse_config;

    fn with_auth(auth: serde_json::Value) -> Result<crate::ProxyConfig, crate::ProxyError> {
        let doc = json!({"mcpServers": {
            "files": {"command": "f"},
            "web": {"url": "http://127.0.0.1:1/mcp", "auth": auth}
        }});
        parse_config(&doc.to_string(), |var| {
            (var != "UNSET").then(|| format!("{var}-secret"))
        })
    }

    #[test]
    fn caller_credentials_are_read_and_need_an_oauth_front() {
        for (auth, kind) in [
            (
                json!({"type": "forward", "acknowledgeTokenPassthrough": true}),
                "forward",
            ),
            (
                json!({"type": "tokenExchange", "clientId": "gw", "clientSecretEnv": "S",
                       "tokenEndpoint": "http://127.0.0.1:2/token", "scope": "mcp",
                       "audience": "web", "resource": "http://127.0.0.1:1/mcp"}),
                "tokenExchange",
            ),
            (
                json!({"type": "tokenExchange", "clientId": "gw", "clientAuth": "none"}),
                "tokenExchange",
            ),
            (
                json!({"type": "tokenExchange", "clientId": "gw", "clientSecretEnv": "S",
                       "clientAuth": "client_secret_post"}),
                "tokenExchange",
            ),
        ] {
            let c = with_auth(auth).expect("a good file");
            let web = c.servers.iter().find(|s| s.name == "web").unwrap();
            assert_eq!(web.caller.as_ref().map(|c| c.kind()), Some(kind));
            assert!(
                c.servers
                    .iter()
                    .find(|s| s.name == "files")
                    .unwrap()
                    .caller
                    .is_none()
            );
            c.check_front(true).expect("with an OAuth front");
            let e = c.check_front(false).unwrap_err().to_string();
            assert!(
                e.contains("server \"web\": auth.type")
                    && e.contains(kind)
                    && e.contains("--auth-issuer"),
                "{e}"
            );
        }
        // Static credentials need no front.
        let c = with_auth(json!({"type": "header", "header": "X-Key", "valueEnv": "K"})).unwrap();
        c.check_front(false).expect("no caller credentials");
    }

    #[test]
    fn caller_credential_errors_name_the_field() {
        for (auth, path) in [
            (
                json!({"type": "forward"}),
                "server \"web\": auth.acknowledgeTokenPassthrough: must be true",
            ),
            (
                json!({"type": "forward", "acknowledgeTokenPassthrough": "yes"}),
                "auth.acknowledgeTokenPassthrough: must be true",
            ),
            (
                json!({"type": "forward", "acknowledgeTokenPassthrough": true, "audience": 3}),
                "auth.audience must be a string",
            ),
            (
                json!({"type": "forward", "acknowledgeTokenPassthrough": true, "scope": "x"}),
                "auth.scope: unknown field",
            ),
            (
                json!({"type": "tokenExchange", "clientSecretEnv": "S"}),
                "auth.clientId is required",
            ),
            (
                json!({"type": "tokenExchange", "clientId": "gw"}),
                "authenticates with clientSecretEnv (a secret), privateKeyEnv",
            ),
            (
                json!({"type": "tokenExchange", "clientId": "gw", "clientSecretEnv": "S",
                       "privateKeyEnv": "K"}),
                "auth: give clientSecretEnv or privateKeyEnv, not both",
            ),
            (
                json!({"type": "tokenExchange", "clientId": "gw", "clientSecretEnv": "S",
                       "clientAuth": "none"}),
                "auth.clientAuth: none does not go with clientSecretEnv",
            ),
            (
                json!({"type": "tokenExchange", "clientId": "gw", "privateKeyEnv": "K",
                       "clientAuth": "client_secret_post"}),
                "auth.clientAuth: client_secret_post does not go with privateKeyEnv",
            ),
            (
                json!({"type": "tokenExchange", "clientId": "gw", "clientAuth": "mtls"}),
                "auth.clientAuth: \"mtls\" is not one of",
            ),
            (
                json!({"type": "tokenExchange", "clientId": "gw", "privateKeyEnv": "K"}),
                "auth.privateKeyEnv: ",
            ),
            (
                json!({"type": "tokenExchange", "clientId": "gw", "clientAuth": "none",
                       "privateKeyAlg": "ES256"}),
                "auth.privateKeyAlg and auth.privateKeyId go with privateKeyEnv",
            ),
            (
                json!({"type": "tokenExchange", "clientId": "gw", "clientSecretEnv": "UNSET"}),
                "auth.clientSecretEnv: the environment variable UNSET is not set",
            ),
            (
                json!({"type": "tokenExchange", "clientId": "gw", "clientSecretEnv": "S",
                       "tokenEndpoint": "ftp://x/token"}),
                "auth.tokenEndpoint: must be an http:// or https:// URL",
            ),
            (
                json!({"type": "tokenExchange", "clientId": "gw", "clientSecretEnv": "S",
                       "clientSecret": "inline"}),
                "auth.clientSecret: unknown field",
            ),
            (json!({"type": "passthrough"}), "auth.type must be"),
        ] {
            let e = with_auth(auth.clone())
                .expect_err(&auth.to_string())
                .to_string();
            assert!(e.contains(path), "{auth}: {e}");
        }
    }
}
