//! The page: hand-written HTML, CSS and ES modules (no build step), embedded
//! in the binary and served with a strict Content-Security-Policy. The page
//! holds no secret: it reads the token from its own URL.

use axum::Router;
use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

/// One embedded file: its name under `/page/`, its type and its bytes.
struct Asset {
    name: &'static str,
    content_type: &'static str,
    body: &'static str,
}

macro_rules! asset {
    ($name:literal, $ty:expr) => {
        Asset {
            name: $name,
            content_type: $ty,
            body: include_str!(concat!("page/", $name)),
        }
    };
}

const JS: &str = "text/javascript; charset=utf-8";

/// Every file of the page.
const ASSETS: &[Asset] = &[
    asset!("index.html", "text/html; charset=utf-8"),
    asset!("style.css", "text/css; charset=utf-8"),
    asset!("main.js", JS),
    asset!("api.js", JS),
    asset!("dom.js", JS),
    asset!("servers.js", JS),
    asset!("tools.js", JS),
    asset!("schema_form.js", JS),
    asset!("content.js", JS),
    asset!("resources.js", JS),
    asset!("prompts.js", JS),
    asset!("logs.js", JS),
    asset!("protocol.js", JS),
    asset!("asks.js", JS),
    asset!("tasks.js", JS),
    asset!("completion.js", JS),
    asset!("console.js", JS),
    asset!("skills.js", JS),
    asset!("load.js", JS),
    asset!("sandbox.js", JS),
    asset!("apps.js", JS),
    asset!("signin.js", JS),
    asset!("network.js", JS),
    asset!("sampling_auto.js", JS),
];

/// The policy of every page response: scripts, styles and connections only
/// from the inspector itself; images and audio also from `data:` URLs (the
/// content of tool results); frames only from the app sandbox's port (any
/// host name: the page may be opened as `localhost` or `127.0.0.1`); no
/// plugins or form posts elsewhere.
fn policy(sandbox_port: u16) -> String {
    format!(
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; \
         img-src 'self' data:; media-src 'self' data:; frame-src http://*:{sandbox_port}; \
         base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    )
}

fn serve(name: &str, policy: &str) -> Response {
    match ASSETS.iter().find(|a| a.name == name) {
        Some(a) => (
            [
                (header::CONTENT_TYPE, a.content_type),
                (header::CONTENT_SECURITY_POLICY, policy),
                (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
                (header::REFERRER_POLICY, "no-referrer"),
                (header::CACHE_CONTROL, "no-store"),
            ],
            a.body,
        )
            .into_response(),
        None => (StatusCode::NOT_FOUND, "no such file").into_response(),
    }
}

/// The routes of the page: `/`, `/page/{file}` (and an empty
/// `/favicon.ico`, so browsers log no error); `sandbox_port` is the app
/// sandbox's, which the page may frame.
pub fn routes(sandbox_port: u16) -> Router {
    let csp: std::sync::Arc<str> = policy(sandbox_port).into();
    let index = csp.clone();
    Router::new()
        .route("/", get(move || async move { serve("index.html", &index) }))
        .route("/favicon.ico", get(|| async { StatusCode::NO_CONTENT }))
        .route(
            "/page/{file}",
            get(move |Path(file): Path<String>| async move { serve(&file, &csp) }),
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_module_the_page_imports_is_embedded() {
        for a in ASSETS {
            for line in a.body.lines() {
                let Some(rest) = line.split(" from \"./").nth(1) else {
                    continue;
                };
                let file = rest.split('"').next().unwrap();
                assert!(
                    ASSETS.iter().any(|b| b.name == file),
                    "{} imports {file}, which is not embedded",
                    a.name
                );
            }
        }
    }

    #[test]
    fn the_page_never_writes_html_from_data() {
        for a in ASSETS.iter().filter(|a| a.name.ends_with(".js")) {
            for bad in [
                "innerHTML",
                "outerHTML",
                "insertAdjacentHTML",
                "document.write",
                "eval(",
            ] {
                assert!(!a.body.contains(bad), "{} uses {bad}", a.name);
            }
        }
    }
}
