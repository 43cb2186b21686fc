//! Token buckets shared through Redis, so that every instance of a gateway
//! enforces one rate limit ([`Redis::take_token`]).
//!
//! A bucket is a hash `{prefix}rl:{name}` holding its tokens (`t`) and the
//! time they were counted (`at`, ms). One Lua script refills it at `rate`
//! tokens a second up to `burst`, by Redis's own clock (`TIME`, so the
//! instances' clocks need not agree), and takes a token when there is one:
//! atomic, one round trip. Each bucket expires once it would be full again,
//! so Redis holds only the buckets in use.

use std::sync::OnceLock;
use std::time::Duration;

use redis::Script;

use crate::connection::Redis;
use crate::error::Error;

/// ARGV: rate (tokens per second), burst. Returns {1, 0} when a token was
/// taken, {0, ms} when the bucket is empty and one comes in `ms`.
const TAKE: &str = r"
local now = redis.call('TIME')
now = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local b = redis.call('HMGET', KEYS[1], 't', 'at')
local tokens = tonumber(b[1])
local at = tonumber(b[2])
if tokens == nil or at == nil then
  tokens = burst
  at = now
end
if now > at then tokens = math.min(burst, tokens + (now - at) * rate / 1000) end
local taken = 0
local wait = 0
if tokens >= 1 then
  tokens = tokens - 1
  taken = 1
else
  wait = math.ceil((1 - tokens) * 1000 / rate)
end
redis.call('HSET', KEYS[1], 't', tostring(tokens), 'at', tostring(math.max(now, at)))
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) * 1000 / rate) + 1000)
return {taken, wait}
";

fn script() -> &'static Script {
    static SCRIPT: OnceLock<Script> = OnceLock::new();
    SCRIPT.get_or_init(|| Script::new(TAKE))
}

/// The longest bucket name taken, in bytes (names come from callers'
/// claims: hash longer ones first).
pub const MAX_BUCKET_NAME: usize = 512;

impl Redis {
    /// Takes one token from the bucket `name`, refilled at `rate` tokens a
    /// second up to `burst` (a new bucket starts full): `None` when taken,
    /// else how long until the next token. Every instance with this prefix
    /// shares the bucket.
    pub async fn take_token(
        &self,
        name: &str,
        rate: f64,
        burst: f64,
    ) -> Result<Option<Duration>, Error> {
        if name.len() > MAX_BUCKET_NAME {
            return Err(Error::Backend(format!(
                "a bucket name has at most {MAX_BUCKET_NAME} bytes"
            )));
        }
        if !(rate.is_finite() && rate > 0.0 && burst.is_finite() && burst >= 1.0) {
            return Err(Error::Backend(format!(
                "a bucket needs a positive rate and a burst of at least 1 (rate {rate}, burst \
                 {burst})"
            )));
        }
        let key = self.key(&format!("rl:{name}"));
        let (taken, wait): (i64, i64) = self
            .run(|mut c| async move {
                script()
                    .key(&key)
                    .arg(rate.to_string())
                    .arg(burst.to_string())
                    .invoke_async(&mut c)
                    .await
            })
            .await?;
        Ok((taken == 0).then(|| Duration::from_millis(wait.max(1) as u64)))
    }
}
