//! [`RedisSessionStore`]: the stored state of legacy sessions in Redis, so
//! that a session opened on one instance is served by every other.
//!
//! One string key per session, `{prefix}sess:{id}`, holding the state's JSON
//! ([`SessionState::to_bytes`]) with the session's TTL: every operation is one
//! command, so one round trip.

use std::time::Duration;

use tessera_runtime::BoxFuture;
use tessera_runtime::{SessionState, SessionStore, StoreError};

use crate::connection::Redis;

/// Legacy session states in Redis (see the module documentation).
#[derive(Debug, Clone)]
pub struct RedisSessionStore {
    redis: Redis,
}

impl Redis {
    /// The session store of this instance.
    pub fn session_store(&self) -> RedisSessionStore {
        RedisSessionStore {
            redis: self.clone(),
        }
    }
}

impl RedisSessionStore {
    fn key(&self, id: &str) -> String {
        self.redis.key(&format!("sess:{id}"))
    }
}

/// Milliseconds for `PX`/`PEXPIRE`: at least 1 (0 is refused by Redis).
fn px(ttl: Duration) -> u64 {
    u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1)
}

impl SessionStore for RedisSessionStore {
    fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<SessionState>, StoreError>> {
        Box::pin(async move {
            let key = self.key(id);
            let bytes: Option<Vec<u8>> = self
                .redis
                .run(|mut c| async move { redis::cmd("GET").arg(&key).query_async(&mut c).await })
                .await?;
            bytes.map(|b| SessionState::from_bytes(&b)).transpose()
        })
    }

    fn save<'a>(
        &'a self,
        state: &'a SessionState,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let key = self.key(&state.id);
            let bytes = state.to_bytes();
            self.redis
                .run(|mut c| async move {
                    redis::cmd("SET")
                        .arg(&key)
                        .arg(bytes)
                        .arg("PX")
                        .arg(px(ttl))
                        .exec_async(&mut c)
                        .await
                })
                .await?;
            Ok(())
        })
    }

    fn touch<'a>(&'a self, id: &'a str, ttl: Duration) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            let key = self.key(id);
            let n: i64 = self
                .redis
                .run(|mut c| async move {
                    redis::cmd("PEXPIRE")
                        .arg(&key)
                        .arg(px(ttl))
                        .query_async(&mut c)
                        .await
                })
                .await?;
            Ok(n == 1)
        })
    }

    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let key = self.key(id);
            self.redis
                .run(|mut c| async move { redis::cmd("DEL").arg(&key).exec_async(&mut c).await })
                .await?;
            Ok(())
        })
    }
}
