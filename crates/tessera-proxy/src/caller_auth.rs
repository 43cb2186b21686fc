//! Credentials of an HTTP upstream that depend on the caller: the `auth`
//! types `forward` and `tokenExchange` ([`crate::credentials`] reads them).
//!
//! Both start from the caller's own access token, the one the proxy's OAuth
//! front verified (`Authorization: Bearer …` with a
//! [`tessera_auth::server::AuthInfo`] beside it). A caller admitted by an API
//! key, or with no token, has none: its request is refused with a JSON-RPC
//! error and nothing is sent upstream.
//!
//! - **forward** sends that token upstream as it is. The MCP authorization
//!   specification (2025-11-25, "Access Token Privilege Restriction" and
//!   "Token Passthrough") says a server **MUST NOT** pass through the token
//!   it received to an upstream API: the upstream would see a token issued
//!   for someone else (the confused-deputy problem), and a token the proxy
//!   accepts would reach a third party able to replay it against the proxy.
//!   So `forward` is refused unless the file acknowledges the risk
//!   (`"acknowledgeTokenPassthrough": true`), and even then a token goes
//!   upstream only when its `aud` names the upstream (its `audience`, by
//!   default its URL): a token issued for the upstream too, which is what
//!   the specification allows. Anything else is refused before the upstream
//!   sees it. Prefer `tokenExchange`.
//! - **tokenExchange** trades the caller's token at the authorization server
//!   (RFC 8693, [`tessera_auth::client::TokenExchange`]) for one whose
//!   audience is the upstream, and sends that. Exchanged tokens are cached
//!   per caller, keyed by the SHA-256 of the caller's token (the token itself
//!   is never a key nor logged), until their expiry minus a minute, at most
//!   [`MAX_CACHED`] of them and [`MAX_CACHED_BYTES`] in all (the least
//!   recently used go first). A failed exchange answers the caller with a
//!   JSON-RPC error naming the upstream and the authorization server's
//!   refusal; the upstream sees nothing.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sha2::{Digest, Sha256};
use tessera_auth::client::TokenExchange;
use tessera_http::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use tessera_http::{ChallengeOutcome, HttpAuth, HttpClientTransport};
use tessera_runtime::Request;
use tessera_types::ErrorObject;
use tokio::time::Instant;

use crate::apikey::CallerClaims;
use crate::refusal::RefusalData;
use crate::upstream::UpstreamSpec;

/// The most exchanged tokens cached per upstream.
pub const MAX_CACHED: usize = 1024;
/// The most bytes of exchanged tokens cached per upstream.
pub const MAX_CACHED_BYTES: usize = 4 << 20;
/// A caller's token longer than this is refused (no front admits one).
const MAX_TOKEN_BYTES: usize = 16 * 1024;
/// An exchanged token is used until this long before it expires.
const SKEW: Duration = Duration::from_secs(60);
/// How long a token whose expiry the server did not say is kept.
const UNSAID_LIFETIME: Duration = Duration::from_secs(300);
/// After the upstream refused an exchanged token, how long until a refusal
/// makes the proxy exchange again rather than fail.
const RETRY_PAUSE: Duration = Duration::from_secs(30);

/// Seconds since the Unix epoch (token expiries are said in these).
fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs()
}

/// Which caller-dependent credentials an upstream takes.
pub(crate) enum Kind {
    /// The caller's token itself, when its audience names `audience`.
    Forward {
        /// What the caller's token must name in `aud`.
        audience: String,
    },
    /// A token exchanged for the caller's.
    Exchange(Box<TokenExchange>),
}

struct Inner {
    url: String,
    headers: HeaderMap,
    kind: Kind,
    cache: Mutex<Cache>,
}

/// The caller-dependent credentials of one HTTP upstream, read from its
/// `auth` key ([`crate::parse_config`]): `forward` (the caller's verified
/// token itself, only when its `aud` names the upstream and the file
/// acknowledges the passthrough risk) or `tokenExchange` (an RFC 8693
/// exchange of the caller's token for one issued for the upstream, cached
/// per caller). Such an upstream is reached on one connection per caller.
/// Cheap to clone.
#[derive(Clone)]
pub struct CallerCredentials(Arc<Inner>);

impl std::fmt::Debug for CallerCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallerCredentials")
            .field("kind", &self.kind())
            .field("url", &self.0.url)
            .finish_non_exhaustive()
    }
}

/// The caller's verified token, as the front received it.
#[derive(Clone)]
pub(crate) struct CallerToken {
    token: Arc<str>,
    /// The SHA-256 of the token: the caller's key in caches and pools.
    pub key: [u8; 32],
}

impl CallerToken {
    /// A caller known by `token` alone, for tests of what keeps its
    /// connections.
    #[cfg(test)]
    pub(crate) fn of(token: &str) -> CallerToken {
        CallerToken {
            key: Sha256::digest(token.as_bytes()).into(),
            token: token.into(),
        }
    }
}

fn refusal(upstream: &str, kind: &str, why: String) -> ErrorObject {
    let mut e = ErrorObject::internal(format!("upstream {upstream}: {why}"));
    e.data = Some(
        RefusalData {
            credentials: Some(kind.to_owned()),
            ..RefusalData::upstream(upstream)
        }
        .to_value(),
    );
    e
}

impl CallerCredentials {
    /// Credentials of `kind` for the upstream at `url`, whose transports
    /// also carry `headers`.
    pub(crate) fn new(url: String, headers: HeaderMap, kind: Kind) -> Self {
        CallerCredentials(Arc::new(Inner {
            url,
            headers,
            kind,
            cache: Mutex::new(Cache::default()),
        }))
    }

    /// `forward` or `tokenExchange`.
    pub fn kind(&self) -> &'static str {
        match self.0.kind {
            Kind::Forward { .. } => "forward",
            Kind::Exchange(_) => "tokenExchange",
        }
    }

    /// The token of the caller of `r`, for `upstream`; refused (with the
    /// error its caller gets) when there is none, or when `forward` may not
    /// send it.
    pub(crate) fn caller(&self, r: &Request, upstream: &str) -> Result<CallerToken, ErrorObject> {
        let kind = self.kind();
        let no = |why: &str| refusal(upstream, kind, why.to_owned());
        let info = match (
            r.extensions.get::<CallerClaims>(),
            r.extensions.get::<tessera_auth::server::AuthInfo>(),
        ) {
            (None, Some(info)) => info,
            _ => {
                return Err(no(
                    "it is reached with the caller's own OAuth token, and this request carries \
                     none the proxy verified (an API key or no authentication names the caller)",
                ));
            }
        };
        let value = r
            .extensions
            .get::<HeaderMap>()
            .and_then(|h| h.get(header::AUTHORIZATION))
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        let (scheme, token) = value.split_once(' ').unwrap_or(("", ""));
        let token = token.trim();
        if token.is_empty() || token.len() > MAX_TOKEN_BYTES {
            return Err(no(
                "it is reached with the caller's own OAuth token, and none was found in this \
                 request's Authorization header",
            ));
        }
        if let Kind::Forward { audience } = &self.0.kind {
            if !scheme.eq_ignore_ascii_case("bearer") {
                return Err(no(
                    "the caller's token is bound to the caller's DPoP key: it cannot be forwarded \
                     (use tokenExchange)",
                ));
            }
            if !info.audience.iter().any(|a| a == audience) {
                return Err(refusal(
                    upstream,
                    kind,
                    format!(
                        "the caller's token was not issued for this upstream (its aud does not \
                         name {audience:?}), and the proxy passes on only tokens issued for the \
                         upstream"
                    ),
                ));
            }
        }
        Ok(CallerToken {
            key: Sha256::digest(token.as_bytes()).into(),
            token: token.into(),
        })
    }

    /// The token to send upstream for `caller`: its own (`forward`), or
    /// the cached exchanged one, exchanged now when there is none.
    pub(crate) async fn upstream_token(
        &self,
        caller: &CallerToken,
        upstream: &str,
    ) -> Result<Arc<str>, ErrorObject> {
        let exchange = match &self.0.kind {
            Kind::Forward { .. } => return Ok(caller.token.clone()),
            Kind::Exchange(x) => x,
        };
        if let Some(t) = self.cache().get(&caller.key, Instant::now()) {
            return Ok(t);
        }
        let tokens = exchange.exchange(&caller.token).await.map_err(|e| {
            refusal(
                upstream,
                "tokenExchange",
                format!("the token exchange for this caller failed: {e}"),
            )
        })?;
        let token: Arc<str> = tokens.access_token.into();
        let lifetime = match tokens.expires_at {
            Some(at) => Duration::from_secs(at.saturating_sub(unix_now())),
            None => UNSAID_LIFETIME,
        };
        if let Some(fresh) = lifetime.checked_sub(SKEW).filter(|d| !d.is_zero()) {
            self.cache()
                .put(caller.key, token.clone(), Instant::now() + fresh);
        }
        tracing::debug!(upstream, "exchanged a caller's token");
        Ok(token)
    }

    /// Forgets the exchanged token of the caller `key`.
    fn forget(&self, key: &[u8; 32]) {
        self.cache().remove(key);
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, Cache> {
        self.0.cache.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How many exchanged tokens are cached, and their bytes.
    #[cfg(test)]
    fn cached(&self) -> (usize, usize) {
        let c = self.cache();
        (c.map.len(), c.bytes)
    }

    /// How to reach the upstream as `caller`: its transports send the
    /// caller's upstream token on every request.
    pub(crate) fn spec_for(&self, caller: CallerToken, upstream: &str) -> UpstreamSpec {
        let auth = Arc::new(CallerAuth {
            creds: self.clone(),
            caller,
            upstream: upstream.to_owned(),
            refused_at: Mutex::new(None),
        });
        let url = self.0.url.clone();
        let headers = self.0.headers.clone();
        UpstreamSpec::http_with(self.0.url.clone(), move || {
            Ok(HttpClientTransport::with_headers(&url, headers.clone())?.with_auth(auth.clone()))
        })
    }
}

/// The `HttpAuth` of one caller's connection to the upstream.
struct CallerAuth {
    creds: CallerCredentials,
    caller: CallerToken,
    upstream: String,
    /// When the upstream last refused an exchanged token.
    refused_at: Mutex<Option<Instant>>,
}

impl HttpAuth for CallerAuth {
    async fn authorize(
        &self,
        _method: &Method,
        _uri: &Uri,
        headers: &mut HeaderMap,
    ) -> Result<(), String> {
        let token = self
            .creds
            .upstream_token(&self.caller, &self.upstream)
            .await
            .map_err(|e| e.message)?;
        let mut v = HeaderValue::try_from(format!("Bearer {token}"))
            .map_err(|_| "the upstream token is not a valid header value".to_owned())?;
        v.set_sensitive(true);
        headers.insert(header::AUTHORIZATION, v);
        Ok(())
    }

    async fn challenge(
        &self,
        _uri: &Uri,
        status: StatusCode,
        _headers: &HeaderMap,
    ) -> ChallengeOutcome {
        if status != StatusCode::UNAUTHORIZED || self.creds.kind() == "forward" {
            return ChallengeOutcome::Pass;
        }
        // The exchanged token was refused (revoked, say): exchange
        // again once, not in a loop.
        let now = Instant::now();
        let mut last = self.refused_at.lock().unwrap_or_else(|e| e.into_inner());
        if last.is_some_and(|t| now.duration_since(t) < RETRY_PAUSE) {
            return ChallengeOutcome::Fail(format!(
                "upstream {} refused the exchanged token twice in a row",
                self.upstream
            ));
        }
        *last = Some(now);
        self.creds.forget(&self.caller.key);
        ChallengeOutcome::Retry
    }
}

/// Exchanged tokens by caller key, bounded in count and bytes.
#[derive(Default)]
struct Cache {
    map: HashMap<[u8; 32], Cached>,
    bytes: usize,
    tick: u64,
}

struct Cached {
    token: Arc<str>,
    fresh_until: Instant,
    used: u64,
}

impl Cache {
    fn get(&mut self, key: &[u8; 32], now: Instant) -> Option<Arc<str>> {
        self.tick += 1;
        let tick = self.tick;
        match self.map.get_mut(key) {
            Some(c) if c.fresh_until > now => {
                c.used = tick;
                Some(c.token.clone())
            }
            Some(_) => {
                self.remove(key);
                None
            }
            None => None,
        }
    }

    fn remove(&mut self, key: &[u8; 32]) {
        if let Some(c) = self.map.remove(key) {
            self.bytes -= c.token.len();
        }
    }

    fn put(&mut self, key: [u8; 32], token: Arc<str>, fresh_until: Instant) {
        if token.len() > MAX_CACHED_BYTES / 16 {
            return;
        }
        self.remove(&key);
        let now = Instant::now();
        self.map.retain(|_, c| c.fresh_until > now);
        self.bytes = self.map.values().map(|c| c.token.len()).sum();
        while self.map.len() >= MAX_CACHED || self.bytes + token.len() > MAX_CACHED_BYTES {
            let Some(oldest) = self.map.iter().min_by_key(|(_, c)| c.used).map(|(k, _)| *k) else {
                break;
            };
            self.remove(&oldest);
        }
        self.tick += 1;
        self.bytes += token.len();
        self.map.insert(
            key,
            Cached {
                token,
                fresh_until,
                used: self.tick,
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(i: usize) -> [u8; 32] {
        Sha256::digest(i.to_le_bytes()).into()
    }

    #[tokio::test(start_paused = true)]
    async fn cached_until_fresh_then_gone() {
        let mut c = Cache::default();
        let now = Instant::now();
        c.put(key(1), "t1".into(), now + Duration::from_secs(10));
        assert_eq!(c.get(&key(1), now).as_deref(), Some("t1"));
        tokio::time::advance(Duration::from_secs(10)).await;
        assert_eq!(c.get(&key(1), Instant::now()), None, "expired");
        assert_eq!((c.map.len(), c.bytes), (0, 0));
    }

    #[tokio::test(start_paused = true)]
    async fn bounded_in_count_and_bytes_least_recently_used_first() {
        let mut c = Cache::default();
        let later = Instant::now() + Duration::from_secs(3600);
        for i in 0..MAX_CACHED + 10 {
            c.put(key(i), format!("token-{i}").into(), later);
            if i == MAX_CACHED - 1 {
                // Used again: kept over older ones.
                assert!(c.get(&key(0), Instant::now()).is_some());
            }
        }
        assert_eq!(c.map.len(), MAX_CACHED);
        assert!(c.map.contains_key(&key(0)), "recently used, kept");
        assert!(!c.map.contains_key(&key(1)), "least recently used, dropped");
        let big: Arc<str> = "x".repeat(MAX_CACHED_BYTES / 16).into();
        for i in 0..40 {
            c.put(key(10_000 + i), big.clone(), later);
        }
        assert!(c.bytes <= MAX_CACHED_BYTES, "{} bytes", c.bytes);
        assert_eq!(
            c.bytes,
            c.map.values().map(|x| x.token.len()).sum::<usize>()
        );
        let huge: Arc<str> = "x".repeat(MAX_CACHED_BYTES).into();
        c.put(key(99_999), huge, later);
        assert!(!c.map.contains_key(&key(99_999)), "too big to cache");
    }

    #[test]
    fn the_debug_form_shows_no_token() {
        let creds = CallerCredentials::new(
            "http://127.0.0.1:1/mcp".into(),
            HeaderMap::new(),
            Kind::Forward {
                audience: "http://127.0.0.1:1/mcp".into(),
            },
        );
        assert_eq!(creds.cached(), (0, 0));
        let shown = format!("{creds:?}");
        assert!(shown.contains("forward"), "{shown}");
    }
}
