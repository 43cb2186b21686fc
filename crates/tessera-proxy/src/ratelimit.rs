//! Rate limits per principal × upstream (optionally × item): token buckets
//! kept in memory, bounded in number.
//!
//! Each limit of the `gateway.rateLimits` list selects callers and items as
//! a policy rule does ([`Selector`]) and allows `requests` every
//! `perSeconds` seconds with bursts of `burst` (default `requests`). A
//! request addressed to one upstream (`tools/call`, `prompts/get`,
//! `resources/read`, completions, subscriptions) takes a token from the
//! bucket of the first limit that matches it; with none left it is refused
//! with a JSON-RPC error whose `data` carries `retryAfterMs`.
//!
//! The buckets live in this process by default; with
//! [`RateLimits::shared`] they live in a [`SharedBuckets`] store (Redis, for
//! `tessera proxy --redis`), so that several instances hold one limit.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tessera_runtime::BoxFuture;

use serde::Deserialize;
use serde_json::Value;
use tessera_types::{ErrorObject, JsonObject};

use crate::policy::{ItemKind, Selector};
use crate::refusal::RefusalData;
use crate::shapes::Loose;

/// The most buckets kept at once; beyond it the full ones (which hold no
/// state) are dropped first, and a new caller is refused only when every
/// bucket is in use.
pub const MAX_BUCKETS: usize = 65_536;

/// One limit: which requests, and how many.
#[derive(Debug, Clone)]
pub struct RateLimit {
    /// Which callers and items it applies to.
    pub selector: Selector,
    /// Tokens added per second.
    pub rate: f64,
    /// The most tokens a bucket holds.
    pub burst: f64,
    /// Whether each item has a bucket of its own (else one per principal ×
    /// upstream).
    pub per_item: bool,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

impl Bucket {
    fn refilled(self, now: Instant, limit: &RateLimit) -> Bucket {
        let gained = now.saturating_duration_since(self.at).as_secs_f64() * limit.rate;
        Bucket {
            tokens: (self.tokens + gained).min(limit.burst),
            at: now,
        }
    }
}

/// A store of token buckets shared by several proxy instances (Redis, in
/// `tessera proxy --redis`: `tessera_redis::Redis::take_token` does this).
///
/// Implement it with an `async fn`:
///
/// ```
/// use std::time::Duration;
/// use tessera_proxy::{RateLimits, SharedBuckets};
///
/// /// Never limits (a stand-in for a store being set up).
/// struct Unlimited;
///
/// impl SharedBuckets for Unlimited {
///     async fn take(&self, _name: &str, _rate: f64, _burst: f64) -> Result<Option<Duration>, String> {
///         Ok(None)
///     }
/// }
///
/// let limits = RateLimits::new(Vec::new()).shared(Unlimited);
/// # let _ = limits;
/// ```
pub trait SharedBuckets: Send + Sync + 'static {
    /// Takes one token from the bucket `name` (at most 512 bytes), refilled
    /// at `rate` tokens a second up to `burst` and full when new: `None`
    /// when taken, else how long until the next token; an error when the
    /// store cannot be reached.
    fn take(
        &self,
        name: &str,
        rate: f64,
        burst: f64,
    ) -> impl Future<Output = Result<Option<Duration>, String>> + Send;
}

impl<T: SharedBuckets + ?Sized> SharedBuckets for Arc<T> {
    fn take(
        &self,
        name: &str,
        rate: f64,
        burst: f64,
    ) -> impl Future<Output = Result<Option<Duration>, String>> + Send {
        (**self).take(name, rate, burst)
    }
}

/// [`SharedBuckets`] as the limits hold it (behind a trait object, one box
/// per call).
trait HeldBuckets: Send + Sync + 'static {
    fn take_boxed<'a>(
        &'a self,
        name: &'a str,
        rate: f64,
        burst: f64,
    ) -> BoxFuture<'a, Result<Option<Duration>, String>>;
}

impl<T: SharedBuckets> HeldBuckets for T {
    fn take_boxed<'a>(
        &'a self,
        name: &'a str,
        rate: f64,
        burst: f64,
    ) -> BoxFuture<'a, Result<Option<Duration>, String>> {
        Box::pin(self.take(name, rate, burst))
    }
}

/// The limits and their buckets.
#[derive(Default)]
pub struct RateLimits {
    limits: Vec<RateLimit>,
    buckets: Mutex<HashMap<(usize, String, String, String), Bucket>>,
    max_buckets: usize,
    shared: Option<Arc<dyn HeldBuckets>>,
}

impl std::fmt::Debug for RateLimits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RateLimits")
            .field("limits", &self.limits)
            .field("shared", &self.shared.is_some())
            .finish_non_exhaustive()
    }
}

impl RateLimits {
    /// These limits, with no bucket used yet.
    pub fn new(limits: Vec<RateLimit>) -> Self {
        RateLimits {
            limits,
            buckets: Mutex::default(),
            max_buckets: MAX_BUCKETS,
            shared: None,
        }
    }

    /// The same limits with their buckets in `store`, shared with every
    /// instance using it (the buckets in this process are not used). An
    /// `Arc` of a store is a store too, to share one.
    pub fn shared(mut self, store: impl SharedBuckets) -> Self {
        self.shared = Some(Arc::new(store));
        self
    }

    /// The first limit that matches a request.
    fn matching(
        &self,
        claims: &JsonObject,
        upstream: &str,
        kind: ItemKind,
        name: &str,
    ) -> Option<(usize, &RateLimit)> {
        self.limits
            .iter()
            .enumerate()
            .find(|(_, l)| l.selector.reasons(claims, upstream, kind, name).is_some())
    }

    /// Takes a token for a request, as [`RateLimits::take`] does, from the
    /// shared store when there is one: a store that cannot be reached
    /// refuses the request (the limit is not silently lifted).
    pub async fn spend(
        &self,
        who: &str,
        claims: &JsonObject,
        upstream: &str,
        kind: ItemKind,
        name: &str,
    ) -> Result<(), ErrorObject> {
        let Some(store) = &self.shared else {
            return self.take(who, claims, upstream, kind, name, Instant::now());
        };
        let Some((index, limit)) = self.matching(claims, upstream, kind, name) else {
            return Ok(());
        };
        // The bucket changes with the limit's rate and burst (a reload that
        // changes them starts new buckets, as in memory).
        let mut bucket = format!(
            "{index}:{}:{}:{}:{}",
            limit.rate,
            limit.burst,
            compact(who),
            compact(upstream)
        );
        if limit.per_item {
            bucket.push(':');
            bucket.push_str(&compact(&format!("{}:{name}", kind.word())));
        }
        match store.take_boxed(&bucket, limit.rate, limit.burst).await {
            Ok(None) => Ok(()),
            Ok(Some(wait)) => Err(exceeded(limit, upstream, wait)),
            Err(e) => Err(ErrorObject::internal(format!(
                "the gateway's shared rate limiter cannot be reached ({e}); retry in a second"
            ))
            .with_data(
                RefusalData::default()
                    .retry_after_ms(1000)
                    .limit("shared-rate-limiter")
                    .to_value(),
            )),
        }
    }

    /// Whether there is no limit.
    pub fn is_empty(&self) -> bool {
        self.limits.is_empty()
    }

    /// Takes a token for a request of the caller `who` (with `claims`) to
    /// `name` (a `kind`) of `upstream`, or says when to retry.
    pub fn take(
        &self,
        who: &str,
        claims: &JsonObject,
        upstream: &str,
        kind: ItemKind,
        name: &str,
        now: Instant,
    ) -> Result<(), ErrorObject> {
        let Some((index, limit)) = self.matching(claims, upstream, kind, name) else {
            return Ok(());
        };
        let item = if limit.per_item {
            compact(&format!("{}:{name}", kind.word()))
        } else {
            String::new()
        };
        let key = (index, compact(who), compact(upstream), item);
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        if !buckets.contains_key(&key) && buckets.len() >= self.max_buckets {
            let limits = &self.limits;
            buckets.retain(|k, b| b.refilled(now, &limits[k.0]).tokens < limits[k.0].burst);
            if buckets.len() >= self.max_buckets {
                return Err(ErrorObject::internal(format!(
                    "the gateway's rate limiter tracks its most callers ({}) and all are \
                     limited now; retry in a second",
                    self.max_buckets
                ))
                .with_data(
                    RefusalData::default()
                        .retry_after_ms(1000)
                        .limit("rate-limit-buckets")
                        .to_value(),
                ));
            }
        }
        let fresh = Bucket {
            tokens: limit.burst,
            at: now,
        };
        let b = buckets.entry(key).or_insert(fresh);
        *b = b.refilled(now, limit);
        if b.tokens >= 1.0 {
            b.tokens -= 1.0;
            return Ok(());
        }
        let wait = Duration::from_secs_f64((1.0 - b.tokens) / limit.rate);
        Err(exceeded(limit, upstream, wait))
    }
}

/// The refusal of a request over `limit` (the next token in `wait`).
fn exceeded(limit: &RateLimit, upstream: &str, wait: Duration) -> ErrorObject {
    let ms = wait.as_millis().max(1) as u64;
    ErrorObject::internal(format!(
        "rate limit {} reached for {upstream:?}; retry in {:.1} s",
        limit.selector.name,
        ms as f64 / 1000.0
    ))
    .with_data(
        RefusalData::default()
            .retry_after_ms(ms)
            .limit(&limit.selector.name)
            .to_value(),
    )
}

/// A bucket key part of bounded size: `s` itself when short, else its
/// SHA-256 (names and subjects come from peers).
fn compact(s: &str) -> String {
    use sha2::Digest;
    if s.len() <= 64 {
        return s.to_owned();
    }
    let d = sha2::Sha256::digest(s.as_bytes());
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// The fields of a rate limit.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct LimitFields {
    requests: Loose<f64>,
    per_seconds: Loose<f64>,
    burst: Loose<f64>,
    per_item: Loose<bool>,
    #[serde(flatten)]
    selector: crate::gateway::SelectorFields,
}

/// Reads `gateway.rateLimits[i]` (the selector fields and `requests`,
/// `perSeconds`, `burst`, `perItem`).
pub(crate) fn parse_limit(
    path: &str,
    index: usize,
    v: &Value,
    servers: &[crate::UpstreamConfig],
) -> Result<RateLimit, crate::ProxyError> {
    use crate::gateway::{bad, parse_selector};
    let o = LimitFields::deserialize(v).map_err(|_| bad(path, "must be an object"))?;
    let selector = parse_selector(
        path,
        &format!("rateLimits[{index}]"),
        &o.selector,
        servers,
        &["requests", "perSeconds", "burst", "perItem"],
    )?;
    let positive = |v: &Loose<f64>, k: &str, default: Option<f64>| match (v, default) {
        (Loose::Absent, Some(d)) => Ok(d),
        (Loose::Valid(f), _) if *f > 0.0 && f.is_finite() => Ok(*f),
        _ => Err(bad(&format!("{path}.{k}"), "must be a positive number")),
    };
    let requests = positive(&o.requests, "requests", None)?;
    let per = positive(&o.per_seconds, "perSeconds", Some(1.0))?;
    let burst = positive(&o.burst, "burst", Some(requests))?;
    if burst < 1.0 {
        return Err(bad(&format!("{path}.burst"), "must be at least 1"));
    }
    let per_item = match o.per_item {
        Loose::Absent => false,
        Loose::Valid(b) => b,
        Loose::Malformed(_) => {
            return Err(bad(&format!("{path}.perItem"), "must be true or false"));
        }
    };
    Ok(RateLimit {
        selector,
        rate: requests / per,
        burst,
        per_item,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn limits(doc: Value) -> RateLimits {
        let servers = crate::parse_servers(
            r#"{"mcpServers": {"a": {"command": "x"}, "b": {"command": "y"}}}"#,
        )
        .unwrap();
        let list = doc
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
            .map(|(i, v)| parse_limit(&format!("rateLimits[{i}]"), i, v, &servers).unwrap())
            .collect();
        RateLimits::new(list)
    }

    #[test]
    fn buckets_refill_at_the_rate_and_name_the_delay() {
        let l = limits(json!([
            {"name": "slow b", "upstreams": "b", "requests": 2, "perSeconds": 10},
            {"when": {"sub": "*"}, "requests": 1, "perSeconds": 1, "burst": 3, "perItem": true}
        ]));
        let alice = json!({"sub": "alice"}).as_object().cloned().unwrap();
        let t0 = Instant::now();
        let take = |who: &str, up: &str, name: &str, at: Duration| {
            l.take(who, &alice, up, ItemKind::Tool, name, t0 + at)
        };
        // b: two, then wait 5 s for the next.
        assert!(take("alice", "b", "x", Duration::ZERO).is_ok());
        assert!(take("alice", "b", "y", Duration::ZERO).is_ok());
        let e = take("alice", "b", "x", Duration::ZERO).unwrap_err();
        assert_eq!(e.data.as_ref().unwrap()["retryAfterMs"], 5000);
        assert!(e.message.contains("\"slow b\""), "{}", e.message);
        // Another principal has a bucket of its own.
        assert!(take("bob", "b", "x", Duration::ZERO).is_ok());
        assert!(take("alice", "b", "x", Duration::from_secs(5)).is_ok());
        // a: three per item, then one a second.
        for _ in 0..3 {
            assert!(take("alice", "a", "t1", Duration::ZERO).is_ok());
        }
        assert!(take("alice", "a", "t1", Duration::ZERO).is_err());
        assert!(take("alice", "a", "t2", Duration::ZERO).is_ok(), "per item");
        assert!(take("alice", "a", "t1", Duration::from_millis(1000)).is_ok());
    }

    #[test]
    fn buckets_are_bounded() {
        let mut l = limits(json!([{"requests": 1, "perSeconds": 60}]));
        l.max_buckets = 4;
        let none = JsonObject::new();
        let t0 = Instant::now();
        for who in ["a", "b", "c", "d"] {
            assert!(l.take(who, &none, "a", ItemKind::Tool, "t", t0).is_ok());
        }
        let e = l
            .take("e", &none, "a", ItemKind::Tool, "t", t0)
            .unwrap_err();
        assert_eq!(e.data.as_ref().unwrap()["limit"], "rate-limit-buckets");
        // A minute later every bucket is full again: they are dropped for the newcomer.
        let later = t0 + Duration::from_secs(60);
        assert!(l.take("e", &none, "a", ItemKind::Tool, "t", later).is_ok());
        assert_eq!(l.buckets.lock().unwrap().len(), 1);
    }
}
