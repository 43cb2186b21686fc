//! [`RedisReplayCache`]: the DPoP replay cache (RFC 9449 §11.1) shared by
//! every instance of an endpoint, so a proof used on one instance is refused
//! on all the others.
//!
//! Each used proof is one key `{prefix}dpop:jti:<hex digest>` set with
//! `SET NX EX`: the first instance to set it accepts the proof, any later
//! one finds it there. The key expires when the proof's `iat` window ends,
//! so Redis holds at most the proofs of one window (64-byte keys).
//!
//! [`Redis::dpop_nonce_secret`] gives every instance the same secret for
//! its DPoP nonces, so a nonce handed out by one is accepted by the others.

use tessera_auth::server::dpop::{ReplayCache, ReplayError};

use crate::connection::Redis;
use crate::error::Error;

/// A [`ReplayCache`] in Redis ([`Redis::dpop_replay_cache`]).
#[derive(Debug, Clone)]
pub struct RedisReplayCache {
    redis: Redis,
}

impl Redis {
    /// The DPoP replay cache shared through this Redis, for
    /// `tessera_auth::server::DpopSettings::replay_cache`.
    pub fn dpop_replay_cache(&self) -> RedisReplayCache {
        RedisReplayCache {
            redis: self.clone(),
        }
    }
}

impl Redis {
    /// The secret DPoP nonces are derived from, shared by every instance
    /// with this prefix: the first instance stores a random one (`SET NX`,
    /// no expiry: nonces only rotate by period), the others read it.
    pub async fn dpop_nonce_secret(&self) -> Result<[u8; 32], Error> {
        let k = self.key("dpop:nonce-secret");
        let mine = hex(&rand::random::<[u8; 32]>());
        let stored: String = self
            .run(|mut c| async move {
                let _: Option<String> = redis::cmd("SET")
                    .arg(&k)
                    .arg(&mine)
                    .arg("NX")
                    .query_async(&mut c)
                    .await?;
                redis::cmd("GET").arg(&k).query_async(&mut c).await
            })
            .await?;
        unhex(&stored).ok_or_else(|| {
            Error::Corrupt(format!(
                "the DPoP nonce secret in Redis is not 64 hex digits: {}",
                self.key("dpop:nonce-secret")
            ))
        })
    }
}

fn unhex(s: &str) -> Option<[u8; 32]> {
    let b = s.as_bytes();
    if b.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, o) in out.iter_mut().enumerate() {
        let pair = std::str::from_utf8(&b[2 * i..2 * i + 2]).ok()?;
        *o = u8::from_str_radix(pair, 16).ok()?;
    }
    Some(out)
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    s
}

impl ReplayCache for RedisReplayCache {
    async fn first_use(
        &self,
        key: &[u8; 32],
        expires_at: u64,
        now: u64,
    ) -> Result<bool, ReplayError> {
        let k = self.redis.key(&format!("dpop:jti:{}", hex(key)));
        let ttl = expires_at.saturating_sub(now).max(1);
        let set: Option<String> = self
            .redis
            .run(|mut c| async move {
                redis::cmd("SET")
                    .arg(&k)
                    .arg(1)
                    .arg("NX")
                    .arg("EX")
                    .arg(ttl)
                    .query_async(&mut c)
                    .await
            })
            .await
            .map_err(|e| ReplayError::Unavailable(e.to_string()))?;
        Ok(set.is_some())
    }
}
