//! The authorization request (PKCE, `state`, `resource`, `scope`) and the
//! validation of the authorization response: RFC 9207 `iss` first, then
//! `state`, then `error` or `code`.

use url::Url;

use super::error::OAuthError;
use super::pkce::{Pkce, random_token};
use super::user_agent::CallbackParams;

/// One authorization request in flight: what is needed to check the
/// response and redeem the code.
#[derive(Debug, Clone)]
pub struct PendingAuthorization {
    /// The URL to send the user to.
    pub url: String,
    /// The `state` sent.
    pub state: String,
    /// The PKCE pair (the verifier goes to the token request).
    pub pkce: Pkce,
    /// The `redirect_uri` sent (repeated in the token request).
    pub redirect_uri: String,
    /// The issuer recorded before redirecting (compared with `iss`).
    pub issuer: String,
    /// Whether the server advertised `authorization_response_iss_parameter_supported`.
    pub iss_required: bool,
}

/// The parameters of an authorization request.
#[derive(Debug, Clone)]
pub struct AuthorizationParams<'a> {
    /// The authorization endpoint.
    pub endpoint: &'a str,
    /// The client identifier.
    pub client_id: &'a str,
    /// The redirect URI.
    pub redirect_uri: &'a str,
    /// The scopes, space separated (omitted when `None`).
    pub scope: Option<&'a str>,
    /// The RFC 8707 resource.
    pub resource: &'a str,
    /// The authorization server's issuer.
    pub issuer: &'a str,
    /// Whether it advertises RFC 9207 `iss`.
    pub iss_required: bool,
}

/// Builds an authorization request with a fresh PKCE pair and `state`.
pub fn begin(p: &AuthorizationParams<'_>) -> Result<PendingAuthorization, OAuthError> {
    let mut url = Url::parse(p.endpoint).map_err(|e| OAuthError::BadUrl {
        url: p.endpoint.to_owned(),
        why: e.to_string(),
    })?;
    let pkce = Pkce::generate();
    let state = random_token(24);
    {
        let mut q = url.query_pairs_mut();
        q.append_pair("response_type", "code")
            .append_pair("client_id", p.client_id)
            .append_pair("redirect_uri", p.redirect_uri)
            .append_pair("code_challenge", &pkce.challenge)
            .append_pair("code_challenge_method", Pkce::METHOD)
            .append_pair("state", &state)
            .append_pair("resource", p.resource);
        if let Some(s) = p.scope.filter(|s| !s.is_empty()) {
            q.append_pair("scope", s);
        }
    }
    Ok(PendingAuthorization {
        url: url.to_string(),
        state,
        pkce,
        redirect_uri: p.redirect_uri.to_owned(),
        issuer: p.issuer.to_owned(),
        iss_required: p.iss_required,
    })
}

/// The single value of parameter `name`; an error when it is repeated.
fn single<'a>(params: &'a CallbackParams, name: &str) -> Result<Option<&'a str>, OAuthError> {
    let mut it = params.iter().filter(|(k, _)| k == name);
    let first = it.next().map(|(_, v)| v.as_str());
    if it.next().is_some() {
        return Err(OAuthError::AuthorizationResponse(format!(
            "parameter {name} appears more than once"
        )));
    }
    Ok(first)
}

impl PendingAuthorization {
    /// Checks an authorization response and returns the code.
    ///
    /// `iss` (RFC 9207 §2.4, as the MCP specification applies it): when
    /// present it must equal the recorded issuer as a plain string (no URL
    /// normalisation); when absent the response is refused if the server
    /// advertised support. Only then are `state`, `error` and `code` read.
    pub fn validate(&self, params: &CallbackParams) -> Result<String, OAuthError> {
        match single(params, "iss")? {
            Some(iss) if iss != self.issuer => {
                return Err(OAuthError::AuthorizationResponse(format!(
                    "iss {iss:?} is not the issuer {:?} the request was sent to",
                    self.issuer
                )));
            }
            None if self.iss_required => {
                return Err(OAuthError::AuthorizationResponse(
                    "the server advertises iss but the response has none".into(),
                ));
            }
            _ => {}
        }
        if single(params, "state")? != Some(self.state.as_str()) {
            return Err(OAuthError::AuthorizationResponse(
                "state does not match the request".into(),
            ));
        }
        if let Some(error) = single(params, "error")? {
            return Err(OAuthError::AuthorizationDenied {
                error: error.to_owned(),
                description: single(params, "error_description")?.map(str::to_owned),
            });
        }
        match single(params, "code")? {
            Some(c) if !c.is_empty() => Ok(c.to_owned()),
            _ => Err(OAuthError::AuthorizationResponse(
                "no authorization code".into(),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending(iss_required: bool) -> PendingAuthorization {
        begin(&AuthorizationParams {
            endpoint: "https://as.example/authorize?x=1",
            client_id: "c",
            redirect_uri: "http://127.0.0.1:1/callback",
            scope: Some("a b"),
            resource: "https://mcp.example/mcp",
            issuer: "https://as.example",
            iss_required,
        })
        .unwrap()
    }

    fn params(p: &[(&str, &str)]) -> CallbackParams {
        p.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn request_carries_everything() {
        let p = pending(false);
        let u = Url::parse(&p.url).unwrap();
        let q: std::collections::HashMap<_, _> = u.query_pairs().into_owned().collect();
        assert_eq!(q["x"], "1");
        assert_eq!(q["response_type"], "code");
        assert_eq!(q["code_challenge_method"], "S256");
        assert_eq!(q["code_challenge"], p.pkce.challenge);
        assert_eq!(q["state"], p.state);
        assert_eq!(q["resource"], "https://mcp.example/mcp");
        assert_eq!(q["scope"], "a b");
    }

    #[test]
    fn iss_rules() {
        let p = pending(true);
        let ok = params(&[
            ("code", "x"),
            ("state", &p.state),
            ("iss", "https://as.example"),
        ]);
        assert_eq!(p.validate(&ok).unwrap(), "x");
        let missing = params(&[("code", "x"), ("state", &p.state)]);
        assert!(p.validate(&missing).is_err());
        let slash = params(&[
            ("code", "x"),
            ("state", &p.state),
            ("iss", "https://as.example/"),
        ]);
        assert!(p.validate(&slash).is_err());
        let q = pending(false);
        assert!(
            q.validate(&params(&[("code", "x"), ("state", &q.state)]))
                .is_ok()
        );
        let wrong = params(&[("code", "x"), ("state", &q.state), ("iss", "https://evil")]);
        assert!(q.validate(&wrong).is_err());
    }

    #[test]
    fn state_and_errors() {
        let p = pending(false);
        assert!(
            p.validate(&params(&[("code", "x"), ("state", "other")]))
                .is_err()
        );
        assert!(p.validate(&params(&[("code", "x")])).is_err());
        let twice = params(&[("code", "x"), ("state", &p.state), ("state", &p.state)]);
        assert!(p.validate(&twice).is_err());
        let denied = params(&[("error", "access_denied"), ("state", &p.state)]);
        assert!(matches!(
            p.validate(&denied),
            Err(OAuthError::AuthorizationDenied { .. })
        ));
    }
}
