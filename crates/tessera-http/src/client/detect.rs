//! Which transport an HTTP URL speaks, as the 2025-11-25 backwards
//! compatibility rules find it: POST to the URL first (Streamable HTTP); if
//! that fails with 400, 404 or 405, GET it and look for an `endpoint` event
//! (the 2024-11-05 HTTP+SSE transport). The verdict is kept per URL for the
//! life of the process, so later connections skip the probe.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use http::{StatusCode, Uri};

use super::shared::lock;

/// The transport an endpoint was found to speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HttpTransportKind {
    /// Streamable HTTP (2025-03-26 and later).
    Streamable,
    /// The HTTP+SSE transport of 2024-11-05.
    LegacySse,
}

fn verdicts() -> &'static Mutex<HashMap<String, HttpTransportKind>> {
    static VERDICTS: OnceLock<Mutex<HashMap<String, HttpTransportKind>>> = OnceLock::new();
    VERDICTS.get_or_init(Default::default)
}

/// The key of a URL: scheme, authority and path (the query and fragment do
/// not change the server).
fn key(url: &Uri) -> String {
    format!(
        "{}://{}{}",
        url.scheme_str().unwrap_or(""),
        url.authority()
            .map_or("", |a| a.as_str())
            .to_ascii_lowercase(),
        url.path()
    )
}

/// What an earlier connection found `url` to speak.
pub(crate) fn cached(url: &Uri) -> Option<HttpTransportKind> {
    lock(verdicts()).get(&key(url)).copied()
}

/// Keeps the verdict for `url`.
pub(crate) fn remember(url: &Uri, kind: HttpTransportKind) {
    lock(verdicts()).insert(key(url), kind);
}

/// Drops the verdict for `url` (it no longer holds).
pub(crate) fn forget(url: &Uri) {
    lock(verdicts()).remove(&key(url));
}

/// Whether a refused POST calls for the HTTP+SSE probe.
pub(crate) fn suggests_legacy(status: StatusCode) -> bool {
    matches!(
        status,
        StatusCode::BAD_REQUEST | StatusCode::NOT_FOUND | StatusCode::METHOD_NOT_ALLOWED
    )
}

/// What this process found the server at `url` to speak, if it connected
/// there before.
pub fn known_transport(url: &str) -> Option<HttpTransportKind> {
    url.parse().ok().as_ref().and_then(cached)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_are_kept_per_url() {
        let a: Uri = "http://Example.test:1/sse?x=1".parse().unwrap();
        let b: Uri = "http://example.test:1/sse".parse().unwrap();
        assert_eq!(cached(&a), None);
        remember(&a, HttpTransportKind::LegacySse);
        assert_eq!(cached(&b), Some(HttpTransportKind::LegacySse));
        assert_eq!(
            known_transport("http://example.test:1/sse"),
            Some(HttpTransportKind::LegacySse)
        );
        forget(&b);
        assert_eq!(cached(&a), None);
        assert!(suggests_legacy(StatusCode::METHOD_NOT_ALLOWED));
        assert!(!suggests_legacy(StatusCode::UNAUTHORIZED));
    }
}
