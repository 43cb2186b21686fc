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

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tessera_types::{ErrorObject, JsonObject};

use crate::policy::{ItemKind, Selector};

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

/// The limits and their buckets.
#[derive(Debug, Default)]
pub struct RateLimits {
    limits: Vec<RateLimit>,
    buckets: Mutex<HashMap<(usize, String, String, String), Bucket>>,
    max_buckets: usize,
}

impl RateLimits {
    /// These limits, with no bucket used yet.
    pub fn new(limits: Vec<RateLimit>) -> Self {
        RateLimits {
            limits,
            buckets: Mutex::default(),
            max_buckets: MAX_BUCKETS,
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
        let Some((index, limit)) = self
            .limits
            .iter()
            .enumerate()
            .find(|(_, l)| l.selector.reasons(claims, upstream, kind, name).is_some())
        else {
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
                .with_data(json!({"retryAfterMs": 1000, "limit": "rate-limit-buckets"})));
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
        let ms = wait.as_millis().max(1) as u64;
        Err(ErrorObject::internal(format!(
            "rate limit {} reached for {upstream:?}; retry in {:.1} s",
            limit.selector.name,
            ms as f64 / 1000.0
        ))
        .with_data(json!({"retryAfterMs": ms, "limit": limit.selector.name})))
    }
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

/// Reads `gateway.rateLimits[i]` (the selector fields and `requests`,
/// `perSeconds`, `burst`, `perItem`).
pub(crate) fn parse_limit(
    path: &str,
    index: usize,
    v: &Value,
    servers: &[crate::UpstreamConfig],
) -> Result<RateLimit, crate::ProxyError> {
    use crate::gateway::{bad, parse_selector};
    let o = v
        .as_object()
        .ok_or_else(|| bad(path, "must be an object"))?;
    let selector = parse_selector(
        path,
        &format!("rateLimits[{index}]"),
        o,
        servers,
        &["requests", "perSeconds", "burst", "perItem"],
    )?;
    let positive = |k: &str, default: Option<f64>| match (o.get(k), default) {
        (None, Some(d)) => Ok(d),
        (Some(Value::Number(n)), _) if n.as_f64().is_some_and(|f| f > 0.0 && f.is_finite()) => {
            Ok(n.as_f64().unwrap_or(1.0))
        }
        _ => Err(bad(&format!("{path}.{k}"), "must be a positive number")),
    };
    let requests = positive("requests", None)?;
    let per = positive("perSeconds", Some(1.0))?;
    let burst = positive("burst", Some(requests))?;
    if burst < 1.0 {
        return Err(bad(&format!("{path}.burst"), "must be at least 1"));
    }
    let per_item = match o.get("perItem") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(bad(&format!("{path}.perItem"), "must be true or false")),
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
