//! [`JwksCache`]: an authorization server's signing keys, fetched over HTTP
//! and cached.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use jsonwebtoken::Algorithm;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, KeyAlgorithm, PublicKeyUse};
use serde_json::Value;

use super::discovery::{discover, http_client};
use super::error::VerifyError;

/// Where the keys come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JwksSource {
    /// A JWK Set URL.
    Url(String),
    /// The issuer identifier: the JWK Set URL is the `jwks_uri` of its RFC
    /// 8414 (or OpenID Connect) metadata, discovered on first use.
    Issuer(String),
}

#[derive(Default)]
struct Keys {
    keys: Arc<Vec<Jwk>>,
    /// When the keys were last fetched successfully.
    fetched: Option<Instant>,
    /// When a fetch was last tried (successful or not).
    attempted: Option<Instant>,
    /// The JWK Set URL, once known.
    url: Option<String>,
}

/// The signing keys of an authorization server (a JWK Set), cached.
///
/// A key is looked up by the token's `kid`. An unknown `kid` (the server has
/// rotated its keys) makes the cache fetch the set again — but never more
/// often than the minimum refresh interval (default 30 s), so a stream of
/// tokens with made-up `kid`s cannot make this server hammer the
/// authorization server. The set is also refetched when older than the
/// maximum age (default one hour). Concurrent lookups share one fetch.
pub struct JwksCache {
    source: JwksSource,
    client: reqwest::Client,
    min_refresh: Duration,
    max_age: Duration,
    keys: RwLock<Keys>,
    refresh: tokio::sync::Mutex<()>,
    fetches: AtomicU64,
}

impl std::fmt::Debug for JwksCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwksCache")
            .field("source", &self.source)
            .field("min_refresh", &self.min_refresh)
            .field("max_age", &self.max_age)
            .finish_non_exhaustive()
    }
}

impl JwksCache {
    /// A cache for the keys at `source`; nothing is fetched until needed.
    pub fn new(source: JwksSource) -> Self {
        JwksCache {
            source,
            client: http_client(),
            min_refresh: Duration::from_secs(30),
            max_age: Duration::from_secs(3600),
            keys: RwLock::new(Keys::default()),
            refresh: tokio::sync::Mutex::new(()),
            fetches: AtomicU64::new(0),
        }
    }

    /// Uses this HTTP client.
    pub fn with_client(mut self, client: reqwest::Client) -> Self {
        self.client = client;
        self
    }

    /// The least time between two fetches (default 30 s).
    pub fn min_refresh_interval(mut self, d: Duration) -> Self {
        self.min_refresh = d;
        self
    }

    /// Refetches keys older than this (default one hour).
    pub fn max_age(mut self, d: Duration) -> Self {
        self.max_age = d;
        self
    }

    /// How many times the JWK Set has been requested.
    pub fn fetch_count(&self) -> u64 {
        self.fetches.load(Ordering::Relaxed)
    }

    /// The keys that may have signed a token with this `kid` and `alg`: the
    /// key named `kid`, or, for a token without `kid`, every key fit for
    /// `alg`. Fetches the set first if it is missing, stale, or lacks the key
    /// (within the refresh limits). An empty answer means no key fits.
    pub async fn keys_for(
        &self,
        kid: Option<&str>,
        alg: Algorithm,
    ) -> Result<Vec<Jwk>, VerifyError> {
        let (found, stale) = self.lookup(kid, alg);
        if !found.is_empty() && !stale {
            return Ok(found);
        }
        match self.refresh_if_allowed().await {
            Ok(()) => {}
            // Keep serving the keys we have if the server is unreachable.
            Err(e) if found.is_empty() => return Err(e),
            Err(e) => tracing::warn!(%e, "could not refresh the JWK Set; using cached keys"),
        }
        Ok(self.lookup(kid, alg).0)
    }

    fn lookup(&self, kid: Option<&str>, alg: Algorithm) -> (Vec<Jwk>, bool) {
        let k = self.keys.read().unwrap_or_else(|e| e.into_inner());
        let stale = k.fetched.is_none_or(|t| t.elapsed() >= self.max_age);
        let found = k
            .keys
            .iter()
            .filter(|j| match kid {
                Some(kid) => j.common.key_id.as_deref() == Some(kid),
                None => true,
            })
            .filter(|j| key_fits(j, alg))
            .cloned()
            .collect();
        (found, stale)
    }

    async fn refresh_if_allowed(&self) -> Result<(), VerifyError> {
        let before = self
            .keys
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .attempted;
        let _one = self.refresh.lock().await;
        let (attempted, url) = {
            let k = self.keys.read().unwrap_or_else(|e| e.into_inner());
            (k.attempted, k.url.clone())
        };
        if attempted != before {
            // Someone else fetched while we waited: use their result.
            return Ok(());
        }
        if attempted.is_some_and(|t| t.elapsed() < self.min_refresh) {
            return Ok(());
        }
        self.keys
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .attempted = Some(Instant::now());
        let url = match (url, &self.source) {
            (Some(u), _) => u,
            (None, JwksSource::Url(u)) => u.clone(),
            (None, JwksSource::Issuer(iss)) => {
                let meta = discover(&self.client, iss).await?;
                meta.jwks_uri.ok_or_else(|| {
                    VerifyError::Unavailable(format!("the metadata of {iss} has no jwks_uri"))
                })?
            }
        };
        let keys = self.fetch(&url).await?;
        let mut k = self.keys.write().unwrap_or_else(|e| e.into_inner());
        k.keys = Arc::new(keys);
        k.fetched = Some(Instant::now());
        k.url = Some(url);
        Ok(())
    }

    async fn fetch(&self, url: &str) -> Result<Vec<Jwk>, VerifyError> {
        self.fetches.fetch_add(1, Ordering::Relaxed);
        let unavailable = |e: String| VerifyError::Unavailable(format!("JWK Set {url}: {e}"));
        let resp = self
            .client
            .get(url)
            .header(http::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| unavailable(e.to_string()))?;
        if !resp.status().is_success() {
            return Err(unavailable(format!("HTTP {}", resp.status())));
        }
        let set: Value = resp.json().await.map_err(|e| unavailable(e.to_string()))?;
        let Some(keys) = tessera_types::loose::view_or_default::<KeySet>(&set).keys else {
            return Err(unavailable("not a JWK Set (no \"keys\" array)".into()));
        };
        // Keys of kinds we do not know are skipped, not fatal.
        Ok(keys
            .iter()
            .filter_map(|k| serde_json::from_value::<Jwk>(k.clone()).ok())
            .collect())
    }
}

/// Whether `jwk` may verify a signature made with `alg`: a signing key
/// (`use` absent or `sig`), whose `alg` (if given) is `alg`, of the key type
/// and curve `alg` needs. This is what stops a public key from being used as
/// an HMAC secret.
fn key_fits(jwk: &Jwk, alg: Algorithm) -> bool {
    if matches!(&jwk.common.public_key_use, Some(u) if *u != PublicKeyUse::Signature) {
        return false;
    }
    if let Some(ka) = jwk.common.key_algorithm {
        if key_algorithm(alg) != Some(ka) {
            return false;
        }
    }
    match (&jwk.algorithm, alg) {
        (
            AlgorithmParameters::RSA(_),
            Algorithm::RS256
            | Algorithm::RS384
            | Algorithm::RS512
            | Algorithm::PS256
            | Algorithm::PS384
            | Algorithm::PS512,
        ) => true,
        (AlgorithmParameters::EllipticCurve(p), Algorithm::ES256) => p.curve == EllipticCurve::P256,
        (AlgorithmParameters::EllipticCurve(p), Algorithm::ES384) => p.curve == EllipticCurve::P384,
        (AlgorithmParameters::OctetKeyPair(p), Algorithm::EdDSA) => {
            p.curve == EllipticCurve::Ed25519
        }
        _ => false,
    }
}

fn key_algorithm(alg: Algorithm) -> Option<KeyAlgorithm> {
    Some(match alg {
        Algorithm::RS256 => KeyAlgorithm::RS256,
        Algorithm::RS384 => KeyAlgorithm::RS384,
        Algorithm::RS512 => KeyAlgorithm::RS512,
        Algorithm::PS256 => KeyAlgorithm::PS256,
        Algorithm::PS384 => KeyAlgorithm::PS384,
        Algorithm::PS512 => KeyAlgorithm::PS512,
        Algorithm::ES256 => KeyAlgorithm::ES256,
        Algorithm::ES384 => KeyAlgorithm::ES384,
        Algorithm::EdDSA => KeyAlgorithm::EdDSA,
        Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512 => return None,
    })
}

/// A JWK Set (RFC 7517 §5): its keys, each read on its own.
#[derive(Debug, Default, serde::Deserialize)]
struct KeySet {
    #[serde(default, deserialize_with = "tessera_types::loose::lenient")]
    keys: Option<Vec<Value>>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_fit_only_their_algorithms() {
        let rsa: Jwk =
            serde_json::from_value(json!({"kty":"RSA","n":"AQAB","e":"AQAB","kid":"r"})).unwrap();
        let ec: Jwk = serde_json::from_value(
            json!({"kty":"EC","crv":"P-256","x":"AA","y":"AA","alg":"ES256","use":"sig"}),
        )
        .unwrap();
        let enc: Jwk =
            serde_json::from_value(json!({"kty":"RSA","n":"AQAB","e":"AQAB","use":"enc"})).unwrap();
        let pinned: Jwk =
            serde_json::from_value(json!({"kty":"RSA","n":"AQAB","e":"AQAB","alg":"PS256"}))
                .unwrap();
        assert!(key_fits(&rsa, Algorithm::RS256));
        assert!(!key_fits(&rsa, Algorithm::HS256));
        assert!(!key_fits(&rsa, Algorithm::ES256));
        assert!(key_fits(&ec, Algorithm::ES256));
        assert!(!key_fits(&ec, Algorithm::ES384));
        assert!(!key_fits(&enc, Algorithm::RS256));
        assert!(!key_fits(&pinned, Algorithm::RS256));
        assert!(key_fits(&pinned, Algorithm::PS256));
    }
}
