//! Client identity: pre-registered credentials, client ID metadata
//! documents, and RFC 7591 dynamic client registration.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::OAuthError;
use super::fetch;
use super::token::ErrorResponse;
use crate::metadata::AuthorizationServerMetadata;
use tessera_types::loose::{lenient, view_or_default};

/// How the client authenticates at the token endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum AuthMethod {
    /// A public client: only `client_id` is sent.
    None,
    /// HTTP Basic with the form-encoded id and secret (RFC 6749 §2.3.1).
    ClientSecretBasic,
    /// `client_id` and `client_secret` in the form body.
    ClientSecretPost,
    /// A signed JWT assertion (RFC 7523 §2.2).
    PrivateKeyJwt,
}

impl AuthMethod {
    /// The registered name (`none`, `client_secret_basic`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            AuthMethod::None => "none",
            AuthMethod::ClientSecretBasic => "client_secret_basic",
            AuthMethod::ClientSecretPost => "client_secret_post",
            AuthMethod::PrivateKeyJwt => "private_key_jwt",
        }
    }

    /// Parses a registered name.
    pub fn parse(s: &str) -> Option<AuthMethod> {
        Some(match s {
            "none" => AuthMethod::None,
            "client_secret_basic" => AuthMethod::ClientSecretBasic,
            "client_secret_post" => AuthMethod::ClientSecretPost,
            "private_key_jwt" => AuthMethod::PrivateKeyJwt,
            _ => return None,
        })
    }
}

/// A client identity at one authorization server.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ClientCredentials {
    /// The client identifier (a URL for a client ID metadata document).
    pub client_id: String,
    /// The secret of a confidential client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// The token endpoint authentication method; chosen from the server's
    /// metadata when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_method: Option<AuthMethod>,
    /// The issuer these credentials belong to; `None` for a client ID
    /// metadata document (portable) or unbound pre-registered credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issuer: Option<String>,
}

impl std::fmt::Debug for ClientCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientCredentials")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "…"))
            .field("auth_method", &self.auth_method)
            .field("issuer", &self.issuer)
            .finish()
    }
}

impl ClientCredentials {
    /// A public client (`none`).
    pub fn public(client_id: impl Into<String>) -> Self {
        ClientCredentials {
            client_id: client_id.into(),
            client_secret: None,
            auth_method: None,
            issuer: None,
        }
    }

    /// A confidential client with a secret.
    pub fn confidential(client_id: impl Into<String>, secret: impl Into<String>) -> Self {
        ClientCredentials {
            client_secret: Some(secret.into()),
            ..Self::public(client_id)
        }
    }

    /// Binds the credentials to the authorization server `issuer`.
    pub fn for_issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// Sets the token endpoint authentication method.
    pub fn with_auth_method(mut self, m: AuthMethod) -> Self {
        self.auth_method = Some(m);
        self
    }

    /// The method to use with `metadata`: the configured one, else
    /// `private_key_jwt` when a signing key is at hand and allowed, else
    /// (with a secret) `client_secret_basic` unless only `_post` is
    /// offered, else `none`.
    pub fn method_for(&self, metadata: &AuthorizationServerMetadata, has_key: bool) -> AuthMethod {
        if let Some(m) = self.auth_method {
            return m;
        }
        let offered = metadata.token_endpoint_auth_methods_supported.as_deref();
        let allows = |m: AuthMethod| offered.is_none_or(|l| l.iter().any(|x| x == m.as_str()));
        if has_key && offered.is_some_and(|l| l.iter().any(|x| x == "private_key_jwt")) {
            return AuthMethod::PrivateKeyJwt;
        }
        if self.client_secret.is_some() {
            if allows(AuthMethod::ClientSecretBasic) {
                return AuthMethod::ClientSecretBasic;
            }
            if allows(AuthMethod::ClientSecretPost) {
                return AuthMethod::ClientSecretPost;
            }
        }
        if has_key {
            return AuthMethod::PrivateKeyJwt;
        }
        AuthMethod::None
    }
}

/// The client metadata sent in a registration request (RFC 7591 §2).
#[derive(Debug, Clone)]
pub(crate) struct RegistrationRequest {
    pub client_name: String,
    pub redirect_uris: Vec<String>,
    pub grant_types: Vec<String>,
    pub auth_method: AuthMethod,
    pub scope: Option<String>,
}

/// The method to ask for at registration: `none` (a native public client)
/// when offered, else a secret-based one the server lists.
pub(crate) fn registration_auth_method(metadata: &AuthorizationServerMetadata) -> AuthMethod {
    let Some(list) = metadata.token_endpoint_auth_methods_supported.as_deref() else {
        return AuthMethod::None;
    };
    for m in [
        AuthMethod::None,
        AuthMethod::ClientSecretBasic,
        AuthMethod::ClientSecretPost,
    ] {
        if list.iter().any(|x| x == m.as_str()) {
            return m;
        }
    }
    AuthMethod::None
}

/// A client registration request (RFC 7591 §2).
#[derive(Debug, Serialize)]
struct RegistrationBody<'a> {
    client_name: &'a str,
    redirect_uris: &'a [String],
    grant_types: &'a [String],
    response_types: &'a [&'a str],
    token_endpoint_auth_method: &'a str,
    application_type: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    scope: Option<&'a str>,
}

/// A client information response (RFC 7591 §3.2.1), its members read
/// leniently; the others are kept.
#[derive(Debug, Default, Deserialize)]
struct Registered {
    #[serde(default, deserialize_with = "lenient")]
    client_id: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    client_secret: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    token_endpoint_auth_method: Option<String>,
    #[serde(flatten)]
    _extra: serde_json::Map<String, Value>,
}

/// Registers a client at `endpoint` (RFC 7591).
pub(crate) async fn register(
    http: &super::fetch::Http,
    endpoint: &str,
    issuer: &str,
    req: &RegistrationRequest,
) -> Result<ClientCredentials, OAuthError> {
    let body = RegistrationBody {
        client_name: &req.client_name,
        redirect_uris: &req.redirect_uris,
        grant_types: &req.grant_types,
        response_types: &["code"],
        token_endpoint_auth_method: req.auth_method.as_str(),
        // A CLI or desktop client with a loopback redirect (SEP-837).
        application_type: "native",
        scope: req.scope.as_deref(),
    };
    let body = serde_json::to_value(&body)
        .map_err(|e| OAuthError::Registration(format!("cannot write the request: {e}")))?;
    let a = fetch::post_json(http, endpoint, &body).await?;
    let doc = a.json().unwrap_or(Value::Null);
    if !a.status.is_success() {
        let refused: ErrorResponse = view_or_default(&doc);
        let err = refused.error.unwrap_or_default();
        let desc = refused.error_description.unwrap_or_default();
        return Err(OAuthError::Registration(format!(
            "{endpoint} answered {}: {err} {desc}",
            a.status
        )));
    }
    let registered: Registered = view_or_default(&doc);
    let Some(client_id) = registered.client_id else {
        return Err(OAuthError::Registration(format!(
            "{endpoint} returned no client_id"
        )));
    };
    let client_secret = registered.client_secret;
    let granted = registered
        .token_endpoint_auth_method
        .as_deref()
        .and_then(AuthMethod::parse);
    // RFC 7591 §2: without a returned method, a client given a secret
    // authenticates with client_secret_basic.
    let auth_method = match (granted, &client_secret) {
        (Some(m), _) => m,
        (None, Some(_)) if req.auth_method == AuthMethod::None => AuthMethod::ClientSecretBasic,
        (None, _) => req.auth_method,
    };
    Ok(ClientCredentials {
        client_id,
        client_secret,
        auth_method: Some(auth_method),
        issuer: Some(issuer.to_owned()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(methods: &[&str]) -> AuthorizationServerMetadata {
        AuthorizationServerMetadata {
            issuer: "https://as".into(),
            token_endpoint_auth_methods_supported: Some(
                methods.iter().map(|s| (*s).to_owned()).collect(),
            ),
            ..Default::default()
        }
    }

    #[test]
    fn method_choice_follows_the_server() {
        let c = ClientCredentials::confidential("a", "s");
        assert_eq!(
            c.method_for(&meta(&["client_secret_post"]), false),
            AuthMethod::ClientSecretPost
        );
        assert_eq!(
            c.method_for(&meta(&["client_secret_basic", "client_secret_post"]), false),
            AuthMethod::ClientSecretBasic
        );
        assert_eq!(
            ClientCredentials::public("a").method_for(&meta(&["none"]), false),
            AuthMethod::None
        );
        assert_eq!(
            ClientCredentials::public("a").method_for(&meta(&["private_key_jwt"]), true),
            AuthMethod::PrivateKeyJwt
        );
        assert_eq!(
            registration_auth_method(&meta(&["client_secret_post"])),
            AuthMethod::ClientSecretPost
        );
    }

    #[test]
    fn debug_hides_the_secret() {
        let c = ClientCredentials::confidential("a", "very-secret");
        assert!(!format!("{c:?}").contains("very-secret"));
    }
}
