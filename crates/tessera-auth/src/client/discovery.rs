//! Finding the authorization server of an MCP server.
//!
//! 1. Protected resource metadata (RFC 9728): the `resource_metadata` URL of
//!    the `WWW-Authenticate` challenge if there is one, then the path-aware
//!    well-known URL, then the root one.
//! 2. Its `resource` must name the MCP server (same origin, and the server's
//!    path at or under the resource's path); otherwise the client refuses.
//! 3. Authorization server metadata for the first listed issuer: RFC 8414
//!    and OpenID Connect discovery in the order the MCP specification gives
//!    (path insertion first for issuers with a path), and the document's
//!    `issuer` must be exactly the issuer asked for.
//! 4. Without protected resource metadata (a 2025-03-26 server): metadata at
//!    the MCP server's origin, else the default `/authorize`, `/token` and
//!    `/register` endpoints there.

use url::Url;

use super::error::OAuthError;
use super::fetch;
use crate::metadata::{AuthorizationServerMetadata, ProtectedResourceMetadata};

/// What discovery found for one MCP server.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Discovery {
    /// The protected resource metadata, if the server publishes it.
    pub resource_metadata: Option<ProtectedResourceMetadata>,
    /// The value to send as `resource` (RFC 8707): the metadata's
    /// `resource` exactly as published, or the server URL for old servers.
    pub resource: String,
    /// The issuer the authorization response's `iss` is compared with.
    pub issuer: String,
    /// The authorization server's metadata (synthesized from the default
    /// endpoints for a 2025-03-26 server without any).
    pub metadata: AuthorizationServerMetadata,
    /// Whether this came from the 2025-03-26 procedure (no resource metadata).
    pub legacy: bool,
}

fn parse_url(s: &str) -> Result<Url, OAuthError> {
    let u = Url::parse(s).map_err(|e| OAuthError::BadUrl {
        url: s.to_owned(),
        why: e.to_string(),
    })?;
    if !matches!(u.scheme(), "http" | "https") || u.host_str().is_none() {
        return Err(OAuthError::BadUrl {
            url: s.to_owned(),
            why: "not an http(s) URL with a host".into(),
        });
    }
    Ok(u)
}

/// `scheme://host[:port]` of a URL.
fn origin(u: &Url) -> String {
    u.origin().ascii_serialization()
}

/// The path of `u` without a trailing `/` (empty for the root).
fn trimmed_path(u: &Url) -> String {
    u.path().trim_end_matches('/').to_owned()
}

/// The protected resource metadata URLs to try, in order: the challenge's
/// `resource_metadata`, the path-aware well-known URL, the root one.
pub fn resource_metadata_candidates(
    server_url: &str,
    from_challenge: Option<&str>,
) -> Result<Vec<String>, OAuthError> {
    let u = parse_url(server_url)?;
    let mut out = Vec::new();
    if let Some(h) = from_challenge.filter(|h| !h.is_empty()) {
        // A relative reference is resolved against the server URL.
        if let Ok(abs) = u.join(h) {
            out.push(abs.to_string());
        }
    }
    let path = trimmed_path(&u);
    let base = origin(&u);
    if !path.is_empty() {
        out.push(format!("{base}/.well-known/oauth-protected-resource{path}"));
    }
    out.push(format!("{base}/.well-known/oauth-protected-resource"));
    out.dedup();
    Ok(out)
}

/// The authorization server metadata URLs to try for `issuer`, in the
/// order of the MCP specification.
pub fn authorization_server_metadata_candidates(issuer: &str) -> Result<Vec<String>, OAuthError> {
    let u = parse_url(issuer)?;
    let base = origin(&u);
    let path = trimmed_path(&u);
    Ok(if path.is_empty() {
        vec![
            format!("{base}/.well-known/oauth-authorization-server"),
            format!("{base}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{base}/.well-known/oauth-authorization-server{path}"),
            format!("{base}/.well-known/openid-configuration{path}"),
            format!("{base}{path}/.well-known/openid-configuration"),
        ]
    })
}

fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    }
}

/// Whether the protected resource `published` covers the MCP server at
/// `server`: same scheme, host and port, and the server's path equal to or
/// under the resource's path (segment-wise).
pub fn resource_matches(published: &str, server: &str) -> bool {
    let (Ok(p), Ok(s)) = (Url::parse(published), Url::parse(server)) else {
        return false;
    };
    if p.scheme() != s.scheme()
        || p.host_str().map(str::to_ascii_lowercase) != s.host_str().map(str::to_ascii_lowercase)
        || p.port().or(default_port(p.scheme())) != s.port().or(default_port(s.scheme()))
    {
        return false;
    }
    let pp = trimmed_path(&p);
    let sp = trimmed_path(&s);
    pp.is_empty() || sp == pp || sp.starts_with(&format!("{pp}/"))
}

/// Fetches the protected resource metadata, trying `candidates` in order.
/// `Ok(None)` when no candidate has a usable document.
pub async fn fetch_resource_metadata(
    http: &reqwest::Client,
    candidates: &[String],
) -> Result<Option<ProtectedResourceMetadata>, OAuthError> {
    fetch_resource_metadata_via(&super::fetch::Http::plain(http.clone()), candidates).await
}

/// [`fetch_resource_metadata`] on the flow's own client (observed).
pub(crate) async fn fetch_resource_metadata_via(
    http: &super::fetch::Http,
    candidates: &[String],
) -> Result<Option<ProtectedResourceMetadata>, OAuthError> {
    for url in candidates {
        let Some(doc) = fetch::get_document(http, url).await? else {
            continue;
        };
        match serde_json::from_value::<ProtectedResourceMetadata>(doc) {
            Ok(m) if !m.resource.is_empty() => return Ok(Some(m)),
            Ok(_) => tracing::debug!(%url, "protected resource metadata without `resource`"),
            Err(e) => tracing::debug!(%url, "unusable protected resource metadata: {e}"),
        }
    }
    Ok(None)
}

/// Fetches and validates the metadata of `issuer`: the first candidate
/// URL with a document whose `issuer` is exactly `issuer`.
pub async fn fetch_authorization_server_metadata(
    http: &reqwest::Client,
    issuer: &str,
) -> Result<AuthorizationServerMetadata, OAuthError> {
    fetch_authorization_server_metadata_via(&super::fetch::Http::plain(http.clone()), issuer).await
}

/// [`fetch_authorization_server_metadata`] on the flow's own client.
pub(crate) async fn fetch_authorization_server_metadata_via(
    http: &super::fetch::Http,
    issuer: &str,
) -> Result<AuthorizationServerMetadata, OAuthError> {
    let mut mismatch = None;
    for url in authorization_server_metadata_candidates(issuer)? {
        let Some(doc) = fetch::get_document(http, &url).await? else {
            continue;
        };
        let m: AuthorizationServerMetadata = match serde_json::from_value(doc) {
            Ok(m) => m,
            Err(e) => {
                tracing::debug!(%url, "unusable authorization server metadata: {e}");
                continue;
            }
        };
        if m.issuer != issuer {
            // RFC 8414 §3.3: never use it; another candidate may still be good.
            mismatch = Some(OAuthError::IssuerMismatch {
                url,
                expected: issuer.to_owned(),
                found: m.issuer,
            });
            continue;
        }
        return Ok(m);
    }
    Err(mismatch.unwrap_or_else(|| {
        OAuthError::Discovery(format!(
            "no authorization server metadata for issuer {issuer}"
        ))
    }))
}

/// The 2025-03-26 procedure for a server without resource metadata:
/// metadata at the server's origin, else the default endpoints there.
async fn legacy(http: &super::fetch::Http, server_url: &Url) -> Result<Discovery, OAuthError> {
    let base = origin(server_url);
    let url = format!("{base}/.well-known/oauth-authorization-server");
    let found = fetch::get_document(http, &url)
        .await?
        .and_then(|doc| serde_json::from_value::<AuthorizationServerMetadata>(doc).ok());
    // The issuer was never an input here (the 2025-03-26 revision derives
    // the metadata URL from the server), so it is not compared.
    let metadata = found.unwrap_or_else(|| AuthorizationServerMetadata {
        issuer: base.clone(),
        authorization_endpoint: Some(format!("{base}/authorize")),
        token_endpoint: Some(format!("{base}/token")),
        registration_endpoint: Some(format!("{base}/register")),
        response_types_supported: Some(vec!["code".into()]),
        code_challenge_methods_supported: Some(vec!["S256".into()]),
        ..AuthorizationServerMetadata::default()
    });
    let mut resource = server_url.clone();
    resource.set_fragment(None);
    Ok(Discovery {
        resource_metadata: None,
        resource: resource.to_string(),
        issuer: metadata.issuer.clone(),
        metadata,
        legacy: true,
    })
}

/// Runs discovery for the MCP server at `server_url`, starting from the
/// `resource_metadata` URL of a challenge if there was one.
pub async fn discover(
    http: &reqwest::Client,
    server_url: &str,
    from_challenge: Option<&str>,
) -> Result<Discovery, OAuthError> {
    discover_via(
        &super::fetch::Http::plain(http.clone()),
        server_url,
        from_challenge,
    )
    .await
}

/// [`discover`] on the flow's own client (observed).
pub(crate) async fn discover_via(
    http: &super::fetch::Http,
    server_url: &str,
    from_challenge: Option<&str>,
) -> Result<Discovery, OAuthError> {
    let server = parse_url(server_url)?;
    let candidates = resource_metadata_candidates(server_url, from_challenge)?;
    let Some(prm) = fetch_resource_metadata_via(http, &candidates).await? else {
        return legacy(http, &server).await;
    };
    if !resource_matches(&prm.resource, server_url) {
        return Err(OAuthError::ResourceMismatch {
            published: prm.resource.clone(),
            server: server_url.to_owned(),
        });
    }
    let Some(issuer) = prm.authorization_servers.first().cloned() else {
        return Err(OAuthError::Discovery(
            "the protected resource metadata lists no authorization server".into(),
        ));
    };
    let metadata = fetch_authorization_server_metadata_via(http, &issuer).await?;
    Ok(Discovery {
        resource: prm.resource.clone(),
        resource_metadata: Some(prm),
        issuer,
        metadata,
        legacy: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_metadata_order() {
        let c = resource_metadata_candidates(
            "http://h:1/public/mcp",
            Some("http://h:1/custom/prm.json"),
        )
        .unwrap();
        assert_eq!(
            c,
            [
                "http://h:1/custom/prm.json",
                "http://h:1/.well-known/oauth-protected-resource/public/mcp",
                "http://h:1/.well-known/oauth-protected-resource",
            ]
        );
        let root = resource_metadata_candidates("https://h/", None).unwrap();
        assert_eq!(root, ["https://h/.well-known/oauth-protected-resource"]);
    }

    #[test]
    fn metadata_order_with_and_without_path() {
        assert_eq!(
            authorization_server_metadata_candidates("https://a.example/tenant1").unwrap(),
            [
                "https://a.example/.well-known/oauth-authorization-server/tenant1",
                "https://a.example/.well-known/openid-configuration/tenant1",
                "https://a.example/tenant1/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            authorization_server_metadata_candidates("https://a.example").unwrap(),
            [
                "https://a.example/.well-known/oauth-authorization-server",
                "https://a.example/.well-known/openid-configuration",
            ]
        );
    }

    #[test]
    fn resource_matching() {
        assert!(resource_matches("http://h:1/mcp", "http://h:1/mcp"));
        assert!(resource_matches("http://h:1", "http://h:1/mcp"));
        assert!(resource_matches("http://H:1/", "http://h:1/mcp/"));
        assert!(resource_matches("https://h", "https://h:443/x"));
        assert!(!resource_matches(
            "https://evil.example.com/mcp",
            "http://h:1/mcp"
        ));
        assert!(!resource_matches("http://h:1/mcp", "http://h:1/mcpx"));
        assert!(!resource_matches("http://h:1/other", "http://h:1/mcp"));
        assert!(!resource_matches("http://h:2/mcp", "http://h:1/mcp"));
        assert!(!resource_matches("not a url", "http://h:1/mcp"));
    }
}
