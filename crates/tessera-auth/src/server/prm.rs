//! Serving RFC 9728 protected resource metadata.

use bytes::Bytes;
use http::{HeaderValue, Method, Response, StatusCode, header};
use http_body_util::Full;

use crate::metadata::ProtectedResourceMetadata;

/// The well-known path prefix of RFC 9728 §3.
pub const METADATA_WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// The path-aware metadata URL of `resource` (RFC 9728 §3.1): the well-known
/// prefix inserted between the origin and the path, so
/// `https://h/public/mcp` → `https://h/.well-known/oauth-protected-resource/public/mcp`.
/// `None` if `resource` is not an absolute URL.
pub fn metadata_url(resource: &str) -> Option<String> {
    let u = url::Url::parse(resource).ok()?;
    let origin = u.origin().ascii_serialization();
    let path = u.path().trim_end_matches('/');
    Some(format!("{origin}{METADATA_WELL_KNOWN}{path}"))
}

/// The paths at which the metadata of `resource` is served: the path-aware
/// one (`/.well-known/oauth-protected-resource/mcp`) and the root one
/// (`/.well-known/oauth-protected-resource`), which is the only one for a
/// resource without a path.
pub fn metadata_paths(resource: &str) -> Vec<String> {
    let path = url::Url::parse(resource)
        .map(|u| u.path().trim_end_matches('/').to_owned())
        .unwrap_or_default();
    let mut paths = Vec::with_capacity(2);
    if !path.is_empty() {
        paths.push(format!("{METADATA_WELL_KNOWN}{path}"));
    }
    paths.push(METADATA_WELL_KNOWN.to_owned());
    paths
}

/// The HTTP answer to a request for the metadata document: `200` JSON to a
/// `GET` or `HEAD` (with `Access-Control-Allow-Origin: *`, so browser-based
/// clients can read it), `204` to a CORS preflight `OPTIONS`, `405` to
/// anything else.
pub fn metadata_document(
    metadata: &ProtectedResourceMetadata,
    method: &Method,
) -> Response<Full<Bytes>> {
    let mut r = match *method {
        Method::GET | Method::HEAD => {
            let body = serde_json::to_vec(metadata).unwrap_or_default();
            let body = if *method == Method::HEAD {
                Bytes::new()
            } else {
                Bytes::from(body)
            };
            let mut r = Response::new(Full::new(body));
            r.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            r.headers_mut().insert(
                header::CACHE_CONTROL,
                HeaderValue::from_static("max-age=3600"),
            );
            r
        }
        Method::OPTIONS => {
            let mut r = Response::new(Full::new(Bytes::new()));
            *r.status_mut() = StatusCode::NO_CONTENT;
            r
        }
        _ => {
            let mut r = Response::new(Full::new(Bytes::from_static(
                b"Method Not Allowed: the metadata document is read with GET",
            )));
            *r.status_mut() = StatusCode::METHOD_NOT_ALLOWED;
            r.headers_mut().insert(
                header::ALLOW,
                HeaderValue::from_static("GET, HEAD, OPTIONS"),
            );
            r
        }
    };
    let h = r.headers_mut();
    h.insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    h.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET, HEAD, OPTIONS"),
    );
    h.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static("*"),
    );
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_paths() {
        assert_eq!(
            metadata_url("https://example.com/public/mcp").as_deref(),
            Some("https://example.com/.well-known/oauth-protected-resource/public/mcp")
        );
        assert_eq!(
            metadata_url("http://127.0.0.1:9000").as_deref(),
            Some("http://127.0.0.1:9000/.well-known/oauth-protected-resource")
        );
        assert_eq!(
            metadata_paths("http://h/mcp"),
            [
                "/.well-known/oauth-protected-resource/mcp",
                "/.well-known/oauth-protected-resource"
            ]
        );
        assert_eq!(
            metadata_paths("http://h/"),
            ["/.well-known/oauth-protected-resource"]
        );
    }

    #[test]
    fn document_answers() {
        let m = ProtectedResourceMetadata::new("https://h/mcp", "https://as");
        let r = metadata_document(&m, &Method::GET);
        assert_eq!(r.status(), StatusCode::OK);
        assert_eq!(r.headers()[header::ACCESS_CONTROL_ALLOW_ORIGIN], "*");
        assert_eq!(r.headers()[header::CONTENT_TYPE], "application/json");
        assert_eq!(
            metadata_document(&m, &Method::OPTIONS).status(),
            StatusCode::NO_CONTENT
        );
        assert_eq!(
            metadata_document(&m, &Method::POST).status(),
            StatusCode::METHOD_NOT_ALLOWED
        );
    }
}
