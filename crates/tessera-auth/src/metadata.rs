//! The metadata documents of MCP authorization.
//!
//! - [`ProtectedResourceMetadata`] (RFC 9728): what an MCP server publishes
//!   at `/.well-known/oauth-protected-resource[/path]` to name its
//!   authorization servers and scopes.
//! - [`AuthorizationServerMetadata`] (RFC 8414, and the OpenID Connect
//!   discovery document, which shares its fields): the endpoints and
//!   capabilities of an authorization server.
//!
//! Both keep the fields they do not model in `extra`, so a document read and
//! written again loses nothing.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// RFC 9728 protected resource metadata.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ProtectedResourceMetadata {
    /// The resource identifier: the MCP server's canonical URL.
    pub resource: String,
    /// Issuer identifiers of the authorization servers that can issue tokens for it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub authorization_servers: Vec<String>,
    /// The resource's own JWK Set URL, if it signs anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jwks_uri: Option<String>,
    /// Scopes a client may request for this resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    /// How bearer tokens may be sent (MCP allows only `header`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer_methods_supported: Option<Vec<String>>,
    /// A human-readable name of the resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_name: Option<String>,
    /// A page documenting the resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_documentation: Option<String>,
    /// DPoP signing algorithms the resource accepts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_signing_alg_values_supported: Option<Vec<String>>,
    /// Whether the resource requires DPoP-bound tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_bound_access_tokens_required: Option<bool>,
    /// Every other member, kept as it came.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ProtectedResourceMetadata {
    /// Metadata for `resource`, protected by the authorization server `issuer`.
    pub fn new(resource: impl Into<String>, issuer: impl Into<String>) -> Self {
        ProtectedResourceMetadata {
            resource: resource.into(),
            authorization_servers: vec![issuer.into()],
            bearer_methods_supported: Some(vec!["header".to_owned()]),
            ..Self::default()
        }
    }
}

/// RFC 8414 authorization server metadata (also the OpenID Connect
/// discovery document's shared fields).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AuthorizationServerMetadata {
    /// The issuer identifier; must equal the issuer the document was fetched for.
    pub issuer: String,
    /// Where the user agent is sent to authorize.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_endpoint: Option<String>,
    /// Where codes and grants are exchanged for tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint: Option<String>,
    /// The authorization server's JWK Set (for verifying its tokens).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jwks_uri: Option<String>,
    /// RFC 7591 dynamic client registration endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registration_endpoint: Option<String>,
    /// RFC 7662 token introspection endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub introspection_endpoint: Option<String>,
    /// RFC 7009 token revocation endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revocation_endpoint: Option<String>,
    /// Scopes the server knows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    /// `response_type` values supported (MCP needs `code`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_types_supported: Option<Vec<String>>,
    /// Grant types supported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_types_supported: Option<Vec<String>>,
    /// Client authentication methods at the token endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// Signing algorithms for `private_key_jwt` / `client_secret_jwt` assertions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_signing_alg_values_supported: Option<Vec<String>>,
    /// PKCE methods supported; MCP clients refuse a server without `S256`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_challenge_methods_supported: Option<Vec<String>>,
    /// Whether URL client ids (client ID metadata documents) are accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id_metadata_document_supported: Option<bool>,
    /// RFC 9207: whether the authorization response carries `iss`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_response_iss_parameter_supported: Option<bool>,
    /// DPoP signing algorithms supported (RFC 9449).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_signing_alg_values_supported: Option<Vec<String>>,
    /// OpenID Connect: the UserInfo endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub userinfo_endpoint: Option<String>,
    /// Every other member, kept as it came.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl AuthorizationServerMetadata {
    /// Whether `grant` is listed in `grant_types_supported`; RFC 8414's
    /// default, when the member is absent, is `authorization_code` and
    /// `implicit`.
    pub fn supports_grant(&self, grant: &str) -> bool {
        match &self.grant_types_supported {
            Some(list) => list.iter().any(|g| g == grant),
            None => grant == "authorization_code" || grant == "implicit",
        }
    }

    /// Whether PKCE with `S256` is advertised.
    pub fn supports_s256(&self) -> bool {
        self.code_challenge_methods_supported
            .as_ref()
            .is_some_and(|m| m.iter().any(|x| x == "S256"))
    }

    /// Whether `scope` is listed in `scopes_supported`.
    pub fn supports_scope(&self, scope: &str) -> bool {
        self.scopes_supported
            .as_ref()
            .is_some_and(|s| s.iter().any(|x| x == scope))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_members_survive_a_round_trip() {
        let text = r#"{"resource":"https://mcp.example.com/mcp","authorization_servers":["https://as.example.com"],"x_custom":{"a":1}}"#;
        let m: ProtectedResourceMetadata = serde_json::from_str(text).unwrap();
        assert_eq!(m.authorization_servers, ["https://as.example.com"]);
        let back: Value = serde_json::to_value(&m).unwrap();
        assert_eq!(back["x_custom"]["a"], 1);
    }

    #[test]
    fn grant_defaults_follow_rfc_8414() {
        let m: AuthorizationServerMetadata =
            serde_json::from_str(r#"{"issuer":"https://as.example.com"}"#).unwrap();
        assert!(m.supports_grant("authorization_code"));
        assert!(!m.supports_grant("client_credentials"));
        assert!(!m.supports_s256());
    }
}
