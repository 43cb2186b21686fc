//! [`Access`]: who may use the inspector. Every request must name a host the
//! inspector is served as (a DNS-rebinding page names its own), must not come
//! from a foreign `Origin`, and every API and event-stream request must carry
//! the per-launch token (`Authorization: Bearer TOKEN`, or `?token=TOKEN`
//! where a browser cannot set headers, as for `EventSource`).

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// The rules for one launch.
#[derive(Debug)]
pub struct Access {
    /// The token.
    pub token: String,
    /// The `Host` values accepted (`127.0.0.1:PORT`, `localhost:PORT`,
    /// `[::1]:PORT`); empty accepts any (`--dangerously-bind-all`).
    pub hosts: Vec<String>,
}

/// A fresh random token: 32 hex digits (128 bits).
pub fn new_token() -> String {
    let bytes: [u8; 16] = rand::random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The `Host` values a loopback listener on `port` answers to.
pub fn loopback_hosts(port: u16) -> Vec<String> {
    vec![
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("[::1]:{port}"),
    ]
}

/// Compares without stopping at the first difference.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

impl Access {
    /// Why the request is refused, if it is: its status and a message that
    /// says what to change.
    pub fn check(
        &self,
        headers: &HeaderMap,
        path: &str,
        query: Option<&str>,
    ) -> Result<(), (StatusCode, String)> {
        let host = headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .unwrap_or("");
        if !self.hosts.is_empty() && !self.hosts.iter().any(|h| h.eq_ignore_ascii_case(host)) {
            return Err((
                StatusCode::FORBIDDEN,
                format!(
                    "Host {host:?} refused: the inspector answers only as {} (DNS rebinding protection)",
                    self.hosts.join(", ")
                ),
            ));
        }
        if let Some(origin) = headers.get(header::ORIGIN) {
            let origin = origin.to_str().unwrap_or("");
            let expected = format!("http://{host}");
            if !origin.eq_ignore_ascii_case(&expected) {
                return Err((
                    StatusCode::FORBIDDEN,
                    format!(
                        "Origin {origin:?} refused: only the inspector's own page ({expected}) may call its API"
                    ),
                ));
            }
        }
        if !path.starts_with("/api/") {
            return Ok(());
        }
        let from_header = headers
            .get(header::AUTHORIZATION)
            .and_then(|h| h.to_str().ok())
            .and_then(|h| h.strip_prefix("Bearer "));
        let from_query = query.and_then(|q| q.split('&').find_map(|kv| kv.strip_prefix("token=")));
        match from_header.or(from_query) {
            None => Err((
                StatusCode::UNAUTHORIZED,
                "missing token: open the URL `tessera inspect` printed (it carries ?token=…), \
                 or send Authorization: Bearer TOKEN"
                    .into(),
            )),
            Some(t) if same(t.as_bytes(), self.token.as_bytes()) => Ok(()),
            Some(_) => Err((
                StatusCode::UNAUTHORIZED,
                "wrong token: each launch of `tessera inspect` prints a new one; use the latest URL"
                    .into(),
            )),
        }
    }
}

/// The middleware applying [`Access::check`] to every request.
pub async fn enforce(State(access): State<Arc<Access>>, request: Request, next: Next) -> Response {
    let uri = request.uri().clone();
    match access.check(request.headers(), uri.path(), uri.query()) {
        Ok(()) => next.run(request).await,
        Err((status, message)) => (
            status,
            axum::Json(super::problem::ProblemBody::message(message)),
        )
            .into_response(),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use axum::http::HeaderValue;

    /// A header map of `pairs` (shared with the other modules' tests).
    pub(crate) fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn token_host_and_origin_rules() {
        let a = Access {
            token: "abc".into(),
            hosts: loopback_hosts(8000),
        };
        let ok = headers(&[("host", "127.0.0.1:8000"), ("authorization", "Bearer abc")]);
        assert!(a.check(&ok, "/api/connections", None).is_ok());
        let q = headers(&[("host", "localhost:8000")]);
        assert!(a.check(&q, "/api/events", Some("x=1&token=abc")).is_ok());
        assert_eq!(a.check(&q, "/api/events", None).unwrap_err().0, 401);
        assert!(
            a.check(&q, "/api/events", None)
                .unwrap_err()
                .1
                .contains("missing token")
        );
        let wrong = headers(&[("host", "127.0.0.1:8000"), ("authorization", "Bearer abd")]);
        assert!(
            a.check(&wrong, "/api/x", None)
                .unwrap_err()
                .1
                .contains("wrong token")
        );
        // The page itself needs no token, but the right host.
        assert!(a.check(&q, "/", None).is_ok());
        let rebound = headers(&[("host", "evil.example:8000")]);
        assert_eq!(a.check(&rebound, "/", None).unwrap_err().0, 403);
        let foreign = headers(&[
            ("host", "127.0.0.1:8000"),
            ("origin", "http://evil.example"),
            ("authorization", "Bearer abc"),
        ]);
        assert!(
            a.check(&foreign, "/api/x", None)
                .unwrap_err()
                .1
                .contains("Origin")
        );
        let own = headers(&[
            ("host", "127.0.0.1:8000"),
            ("origin", "http://127.0.0.1:8000"),
            ("authorization", "Bearer abc"),
        ]);
        assert!(a.check(&own, "/api/x", None).is_ok());
    }

    #[test]
    fn tokens_differ_per_launch() {
        let (a, b) = (new_token(), new_token());
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
    }
}
