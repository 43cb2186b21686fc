//! The sandbox origin: a second loopback port, so a separate origin from the
//! inspector's page, that serves only the MCP Apps sandbox proxy (a static
//! page and its script). The page frames the proxy (`allow-scripts
//! allow-same-origin`), hands it a view's HTML in
//! `ui/notifications/sandbox-resource-ready`, and the proxy renders it in an
//! inner iframe without `allow-same-origin` (an opaque origin), then relays
//! JSON-RPC messages both ways. The proxy's Content-Security-Policy, which the
//! inner `srcdoc` frame inherits, is built from the view's declared
//! `_meta.ui.csp` by [`policy`]: the restrictive default of the Apps
//! specification, widened only by the origins the view declares and that
//! pass [`origin_ok`].

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{Path, Query};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tessera::types::UiCsp;

use super::guard;

/// The proxy page (no inline script: its script is `proxy.js`).
const PROXY_HTML: &str = include_str!("page/sandbox/proxy.html");
/// The proxy's script.
const PROXY_JS: &str = include_str!("page/sandbox/proxy.js");

/// The most origins of one kind a view may declare.
const MAX_ORIGINS: usize = 32;
/// The longest origin accepted.
const MAX_ORIGIN_LEN: usize = 256;

/// Whether `s` may go into a CSP source list: `scheme://host[:port]`,
/// `https://*.host`, no path, nothing a policy would read as a keyword,
/// separator or quote.
pub fn origin_ok(s: &str) -> bool {
    if s.is_empty() || s.len() > MAX_ORIGIN_LEN {
        return false;
    }
    let Some((scheme, rest)) = s.split_once("://") else {
        return false;
    };
    if !matches!(scheme, "http" | "https" | "ws" | "wss") || rest.is_empty() {
        return false;
    }
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    let (host, port) = match rest.rsplit_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (rest, None),
    };
    if port.is_some_and(|p| p.parse::<u16>().is_err() || !p.chars().all(|c| c.is_ascii_digit())) {
        return false;
    }
    let host = host.strip_prefix("*.").unwrap_or(host);
    !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-'))
        && !host.starts_with('.')
        && !host.ends_with('.')
}

/// The origins of `list` that may be used, and the ones refused.
fn keep(list: Option<&Vec<String>>, refused: &mut Vec<String>) -> Vec<String> {
    let mut kept = Vec::new();
    for (i, o) in list.into_iter().flatten().enumerate() {
        if i < MAX_ORIGINS && origin_ok(o) {
            kept.push(o.clone());
        } else {
            refused.push(o.chars().take(MAX_ORIGIN_LEN).collect());
        }
    }
    kept
}

/// The Content-Security-Policy of a view that declared `csp`, and the
/// declared origins left out (not an origin, or over the limit). Without a
/// declaration it is the Apps specification's restrictive default; declared
/// origins are added only where the specification maps them.
pub fn policy(csp: Option<&UiCsp>) -> (String, Vec<String>) {
    let mut refused = Vec::new();
    let empty = UiCsp::default();
    let csp = csp.unwrap_or(&empty);
    let resources = keep(csp.resource_domains.as_ref(), &mut refused).join(" ");
    let connect = keep(csp.connect_domains.as_ref(), &mut refused).join(" ");
    let frames = keep(csp.frame_domains.as_ref(), &mut refused).join(" ");
    let bases = keep(csp.base_uri_domains.as_ref(), &mut refused).join(" ");
    let or = |list: &str, none: &str| {
        if list.is_empty() {
            none.to_owned()
        } else {
            list.to_owned()
        }
    };
    let with = |base: &str| {
        if resources.is_empty() {
            base.to_owned()
        } else {
            format!("{base} {resources}")
        }
    };
    let policy = format!(
        "default-src 'none'; script-src {}; style-src {}; img-src {}; font-src {}; media-src {}; \
         connect-src {}; frame-src {}; object-src 'none'; base-uri {}; form-action 'none'",
        with("'self' 'unsafe-inline'"),
        with("'self' 'unsafe-inline'"),
        with("'self' data:"),
        with("'self'"),
        with("'self' data:"),
        or(&connect, "'none'"),
        or(&frames, "'none'"),
        or(&bases, "'self'"),
    );
    (policy, refused)
}

/// The most documents kept for viewing at once.
const MAX_DOCS: usize = 8;
/// The most bytes of one document.
pub const MAX_DOC_BYTES: usize = 16 * 1024 * 1024;
/// The most bytes of every document kept.
const MAX_DOCS_BYTES: usize = 32 * 1024 * 1024;
/// How long a document stays viewable.
const DOC_LIFETIME: Duration = Duration::from_secs(600);

/// Documents the page shows in a frame of the sandbox origin (PDFs, which
/// a browser renders in its own viewer, never in the inspector's origin):
/// each under a random id, for ten minutes, within a count and a byte
/// budget (the oldest go first). Cheap to clone.
#[derive(Clone, Default)]
pub struct Documents {
    kept: Arc<Mutex<VecDeque<Kept>>>,
}

/// One document: its id, its bytes, when it was kept.
type Kept = (String, Arc<[u8]>, Instant);

impl Documents {
    fn kept(&self) -> std::sync::MutexGuard<'_, VecDeque<Kept>> {
        self.kept
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Keeps `bytes`; their id, or why not.
    pub fn put(&self, bytes: Vec<u8>) -> Result<String, String> {
        if bytes.len() > MAX_DOC_BYTES {
            return Err(format!(
                "the document has {} bytes, over the {MAX_DOC_BYTES} shown",
                bytes.len()
            ));
        }
        let id = super::guard::new_token();
        let mut kept = self.kept();
        kept.retain(|(_, _, at)| at.elapsed() < DOC_LIFETIME);
        kept.push_back((id.clone(), bytes.into(), Instant::now()));
        while kept.len() > MAX_DOCS
            || kept.iter().map(|(_, b, _)| b.len()).sum::<usize>() > MAX_DOCS_BYTES
        {
            kept.pop_front();
        }
        Ok(id)
    }

    /// The document `id`, while it is kept.
    pub fn get(&self, id: &str) -> Option<Arc<[u8]>> {
        self.kept()
            .iter()
            .find(|(i, _, at)| i == id && at.elapsed() < DOC_LIFETIME)
            .map(|(_, b, _)| b.clone())
    }
}

/// The rules of the sandbox listener: who may frame it.
#[derive(Debug)]
pub struct Framing {
    /// `frame-ancestors` sources: the inspector page's origins.
    pub ancestors: String,
}

/// The query of `/proxy.html`: the view's declared CSP (JSON).
#[derive(Debug, serde::Deserialize)]
struct ProxyQuery {
    #[serde(default)]
    csp: Option<String>,
}

fn proxy_page(framing: &Framing, q: &ProxyQuery) -> Response {
    let declared: Option<UiCsp> = q
        .csp
        .as_deref()
        .filter(|s| s.len() <= 64 * 1024)
        .and_then(|s| serde_json::from_str(s).ok());
    let (policy, _) = policy(declared.as_ref());
    let policy = format!("{policy}; frame-ancestors {}", framing.ancestors);
    let Ok(policy) = HeaderValue::from_str(&policy) else {
        return axum::http::StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/html; charset=utf-8"),
            ),
            (header::CONTENT_SECURITY_POLICY, policy),
            (
                header::X_CONTENT_TYPE_OPTIONS,
                HeaderValue::from_static("nosniff"),
            ),
            (
                header::REFERRER_POLICY,
                HeaderValue::from_static("no-referrer"),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
        ],
        PROXY_HTML,
    )
        .into_response()
}

fn proxy_script() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        PROXY_JS,
    )
        .into_response()
}

fn document(framing: &Framing, docs: &Documents, id: &str) -> Response {
    let Some(bytes) = docs.get(id) else {
        return (axum::http::StatusCode::NOT_FOUND, "no such document").into_response();
    };
    // Only who may frame it: the browser's own PDF viewer renders it, in
    // this origin, not the inspector's.
    let policy = format!("frame-ancestors {}", framing.ancestors);
    let Ok(policy) = HeaderValue::from_str(&policy) else {
        return axum::http::StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/pdf"),
            ),
            (header::CONTENT_SECURITY_POLICY, policy),
            (
                header::X_CONTENT_TYPE_OPTIONS,
                HeaderValue::from_static("nosniff"),
            ),
            (
                header::CONTENT_DISPOSITION,
                HeaderValue::from_static("inline; filename=\"resource.pdf\""),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
        ],
        bytes.to_vec(),
    )
        .into_response()
}

/// The sandbox origin's routes (`/proxy.html`, `/proxy.js`, `/doc/{id}`),
/// behind the same `Host`/`Origin` rules as the inspector (`access`).
pub fn routes(framing: Framing, docs: Documents, access: Arc<guard::Access>) -> Router {
    let framing = Arc::new(framing);
    let for_docs = framing.clone();
    Router::new()
        .route(
            "/doc/{id}",
            get(move |Path(id): Path<String>| {
                let (framing, docs) = (for_docs.clone(), docs.clone());
                async move { document(&framing, &docs, &id) }
            }),
        )
        .route(
            "/proxy.html",
            get(move |Query(q): Query<ProxyQuery>| {
                let framing = framing.clone();
                async move { proxy_page(&framing, &q) }
            }),
        )
        .route("/proxy.js", get(|| async { proxy_script() }))
        .layer(axum::middleware::from_fn_with_state(access, guard::enforce))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_policy_is_the_specifications() {
        let (p, refused) = policy(None);
        assert!(refused.is_empty());
        for part in [
            "default-src 'none'",
            "script-src 'self' 'unsafe-inline';",
            "style-src 'self' 'unsafe-inline';",
            "img-src 'self' data:;",
            "media-src 'self' data:;",
            "connect-src 'none'",
            "frame-src 'none'",
            "object-src 'none'",
            "base-uri 'self'",
        ] {
            assert!(p.contains(part), "{part} missing from {p}");
        }
    }

    #[test]
    fn declared_origins_widen_only_their_directives_and_bad_ones_are_left_out() {
        let csp = UiCsp {
            connect_domains: Some(vec![
                "https://api.example.com".into(),
                "https://x.example; script-src *".into(),
            ]),
            resource_domains: Some(vec![
                "https://*.cdn.example:8443".into(),
                "'unsafe-eval'".into(),
            ]),
            frame_domains: None,
            base_uri_domains: Some(vec!["javascript://x".into()]),
        };
        let (p, refused) = policy(Some(&csp));
        assert!(p.contains("connect-src https://api.example.com;"), "{p}");
        assert!(
            p.contains("script-src 'self' 'unsafe-inline' https://*.cdn.example:8443;"),
            "{p}"
        );
        assert!(p.contains("frame-src 'none'"), "{p}");
        assert!(p.contains("base-uri 'self'"), "{p}");
        assert!(
            !p.contains("unsafe-eval") && !p.contains("script-src *"),
            "{p}"
        );
        assert_eq!(refused.len(), 3, "{refused:?}");
    }

    #[test]
    fn the_proxy_never_gives_a_view_its_origin() {
        let granted = PROXY_JS
            .lines()
            .find(|l| l.contains("const ALLOWED"))
            .expect("proxy.js names what it grants");
        assert!(granted.contains("allow-scripts"), "{granted}");
        assert!(!granted.contains("allow-same-origin"), "{granted}");
        assert!(!PROXY_HTML.contains("<script>"), "no inline script");
        assert!(PROXY_HTML.contains("src=\"/proxy.js\""));
    }

    #[test]
    fn documents_are_kept_within_their_budget() {
        let d = Documents::default();
        let first = d.put(vec![1; 10]).unwrap();
        assert_eq!(&*d.get(&first).unwrap(), &[1; 10][..]);
        assert!(d.get("nope").is_none());
        assert!(d.put(vec![0; MAX_DOC_BYTES + 1]).is_err());
        for _ in 0..MAX_DOCS {
            d.put(vec![2; 10]).unwrap();
        }
        assert!(d.get(&first).is_none(), "the oldest goes first");
        let big: Vec<String> = (0..3)
            .map(|_| d.put(vec![3; MAX_DOC_BYTES]).unwrap())
            .collect();
        assert!(d.get(&big[0]).is_none() && d.get(&big[2]).is_some());
    }

    #[test]
    fn origins() {
        for ok in [
            "https://a.b",
            "http://127.0.0.1:8000",
            "wss://rt.example.com",
            "https://*.example.com",
            "https://a.b/",
        ] {
            assert!(origin_ok(ok), "{ok}");
        }
        for bad in [
            "",
            "a.b",
            "*",
            "https://",
            "https://a.b/path",
            "https://a b",
            "data://x",
            "https://a.b:99999999",
            "https://a.b:",
            "https://.a",
            "https://a;b",
            "'self'",
        ] {
            assert!(!origin_ok(bad), "{bad}");
        }
    }
}
