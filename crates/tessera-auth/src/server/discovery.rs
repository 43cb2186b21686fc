//! Finding an authorization server's endpoints from its issuer identifier
//! (RFC 8414 §3, OpenID Connect Discovery 1.0 §4).

use std::time::Duration;

use super::error::VerifyError;
use crate::metadata::AuthorizationServerMetadata;

/// The metadata URLs to try for `issuer`, in order: RFC 8414 (path-aware),
/// OpenID Connect with the path inserted, OpenID Connect with the path
/// appended. `https://as/tenant` →
/// `https://as/.well-known/oauth-authorization-server/tenant`,
/// `https://as/.well-known/openid-configuration/tenant`,
/// `https://as/tenant/.well-known/openid-configuration`.
pub fn metadata_urls(issuer: &str) -> Vec<String> {
    let Ok(u) = url::Url::parse(issuer) else {
        return Vec::new();
    };
    let origin = u.origin().ascii_serialization();
    let path = u.path().trim_end_matches('/');
    let mut urls = vec![
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{origin}/.well-known/openid-configuration{path}"),
    ];
    if !path.is_empty() {
        urls.push(format!("{origin}{path}/.well-known/openid-configuration"));
    }
    urls
}

/// An HTTP client for talking to an authorization server: a timeout, and no
/// redirects (a metadata, key or introspection URL is used as configured).
pub(crate) fn http_client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap_or_else(|_| reqwest::Client::new())
}

/// Fetches the metadata of `issuer`, trying [`metadata_urls`] in order, and
/// checks that the document's `issuer` is exactly `issuer` (a document naming
/// another issuer is refused).
pub async fn discover(
    client: &reqwest::Client,
    issuer: &str,
) -> Result<AuthorizationServerMetadata, VerifyError> {
    let urls = metadata_urls(issuer);
    if urls.is_empty() {
        return Err(VerifyError::Unavailable(format!(
            "the issuer {issuer:?} is not an absolute URL"
        )));
    }
    let mut last = String::new();
    for url in urls {
        let resp = match client
            .get(&url)
            .header(http::header::ACCEPT, "application/json")
            .send()
            .await
        {
            Ok(r) => r,
            Err(e) => {
                last = format!("{url}: {e}");
                continue;
            }
        };
        if !resp.status().is_success() {
            last = format!("{url}: HTTP {}", resp.status());
            continue;
        }
        let meta: AuthorizationServerMetadata = match resp.json().await {
            Ok(m) => m,
            Err(e) => {
                last = format!("{url}: not a metadata document: {e}");
                continue;
            }
        };
        if meta.issuer != issuer {
            return Err(VerifyError::Unavailable(format!(
                "{url} names the issuer {:?}, not {issuer:?}",
                meta.issuer
            )));
        }
        return Ok(meta);
    }
    Err(VerifyError::Unavailable(format!(
        "no authorization server metadata for {issuer}: {last}"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_in_order() {
        assert_eq!(
            metadata_urls("https://as.example.com/tenant1"),
            [
                "https://as.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://as.example.com/.well-known/openid-configuration/tenant1",
                "https://as.example.com/tenant1/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            metadata_urls("https://as.example.com"),
            [
                "https://as.example.com/.well-known/oauth-authorization-server",
                "https://as.example.com/.well-known/openid-configuration",
            ]
        );
        assert!(metadata_urls("nope").is_empty());
    }
}
