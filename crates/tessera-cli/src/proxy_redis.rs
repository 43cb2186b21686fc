//! `tessera proxy --redis URL`: the gateway's rate-limit buckets in Redis,
//! so that every instance using it holds one limit.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use tessera_proxy::{RateLimit, RateLimits, SharedBuckets};

use crate::Failure;

/// [`SharedBuckets`] in Redis ([`tessera_redis::Redis::take_token`]).
pub struct RedisBuckets(tessera_redis::Redis);

impl SharedBuckets for RedisBuckets {
    async fn take(&self, name: &str, rate: f64, burst: f64) -> Result<Option<Duration>, String> {
        self.0
            .take_token(name, rate, burst)
            .await
            .map_err(|e| e.to_string())
    }
}

/// Connects to Redis for `--redis URL`.
pub async fn connect(url: &str, prefix: &str) -> Result<Arc<RedisBuckets>, Failure> {
    let redis = tessera_redis::Redis::options(url)
        .prefix(prefix)
        .connect()
        .await
        .with_context(|| "connecting to Redis (--redis / TESSERA_REDIS_URL)")?;
    Ok(Arc::new(RedisBuckets(redis)))
}

/// `limits`, with their buckets in `shared` when given.
pub fn limits(limits: Vec<RateLimit>, shared: Option<&Arc<RedisBuckets>>) -> RateLimits {
    let limits = RateLimits::new(limits);
    match shared {
        Some(s) => limits.shared(s.clone()),
        None => limits,
    }
}
