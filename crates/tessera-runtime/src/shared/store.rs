//! [`SessionStore`]: where session states live; [`MemorySessionStore`], the default.

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use foldhash::HashMap;
use tokio::time::Instant;

use super::state::SessionState;
use crate::BoxFuture;

/// What went wrong in a store or bus.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The store cannot be reached (connection refused or lost, timed out).
    /// Requests that need it get `503`; they may be retried later.
    #[error("the session store is unavailable: {0}")]
    Unavailable(String),
    /// The store answered with an error.
    #[error("the session store failed: {0}")]
    Backend(String),
    /// A stored record could not be read.
    #[error("a stored record could not be read: {0}")]
    Corrupt(String),
}

/// Keeps the [`SessionState`] of legacy sessions, by session id, each with a
/// time to live. Shared by every instance serving one endpoint when they must
/// serve each other's sessions.
///
/// Calls are asynchronous so that a networked store fits; each is expected to
/// cost at most one round trip. The rules every implementation keeps are
/// checked by `shared::session_contract` (feature `testing`):
///
/// - a state saved is loaded back equal, by any instance, until it expires or
///   is removed; a later save replaces it whole;
/// - a state is gone once its TTL has passed without a save or touch;
/// - `touch` of a missing id changes nothing and says so; `remove` of a
///   missing id is not an error.
pub trait SessionStore: Send + Sync + 'static {
    /// The state of session `id`, `None` when there is none (never saved,
    /// expired or removed).
    fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<SessionState>, StoreError>>;

    /// Stores `state` under `state.id`, replacing what was there, to expire
    /// after `ttl` unless saved or touched again.
    fn save<'a>(
        &'a self,
        state: &'a SessionState,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>>;

    /// Pushes the expiry of session `id` to `ttl` from now. `false` when
    /// there is no such session.
    fn touch<'a>(&'a self, id: &'a str, ttl: Duration) -> BoxFuture<'a, Result<bool, StoreError>>;

    /// Forgets session `id`.
    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), StoreError>>;

    /// Counts the new session `id` of `client` against caps that every
    /// instance sharing the store keeps (`client` is empty when unknown: no
    /// per-client cap then), for `ttl` unless touched. At a cap the least
    /// recently used session of the group is forgotten (its state removed):
    /// the ids returned, whose local copies the caller ends.
    ///
    /// The default counts nothing: a store of one process leaves the caps
    /// to the process's own table of sessions.
    fn admit<'a>(
        &'a self,
        id: &'a str,
        client: &'a str,
        caps: SessionCaps,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<Vec<String>, StoreError>> {
        let _ = (id, client, caps, ttl);
        Box::pin(async { Ok(Vec::new()) })
    }
}

/// The session caps a shared store keeps across instances
/// ([`SessionStore::admit`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionCaps {
    /// The most sessions in all.
    pub max: usize,
    /// The most sessions of one client.
    pub per_client: usize,
}

impl<S: SessionStore + ?Sized> SessionStore for std::sync::Arc<S> {
    fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<SessionState>, StoreError>> {
        (**self).load(id)
    }
    fn save<'a>(
        &'a self,
        state: &'a SessionState,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        (**self).save(state, ttl)
    }
    fn touch<'a>(&'a self, id: &'a str, ttl: Duration) -> BoxFuture<'a, Result<bool, StoreError>> {
        (**self).touch(id, ttl)
    }
    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        (**self).remove(id)
    }
    fn admit<'a>(
        &'a self,
        id: &'a str,
        client: &'a str,
        caps: SessionCaps,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<Vec<String>, StoreError>> {
        (**self).admit(id, client, caps, ttl)
    }
}

/// A bounded, expiring in-memory [`SessionStore`] for one process (the
/// default). It holds at most `capacity` sessions: when full, expired ones
/// are swept, then the one closest to expiry is dropped. States are kept
/// serialised (a few hundred bytes each; they are read back only when a
/// session is restored). Time is tokio's clock, so tests can run it on a
/// paused clock.
#[derive(Debug)]
pub struct MemorySessionStore {
    capacity: usize,
    entries: Mutex<HashMap<String, Entry>>,
}

#[derive(Debug)]
struct Entry {
    state: Box<[u8]>,
    expires: Instant,
}

impl MemorySessionStore {
    /// A store holding at most `capacity` sessions.
    pub fn new(capacity: usize) -> Self {
        MemorySessionStore {
            capacity: capacity.max(1),
            entries: Mutex::new(HashMap::default()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Entry>> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How many sessions are held (expired ones not yet swept included).
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no session is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn live(entries: &mut HashMap<String, Entry>, id: &str, now: Instant) -> bool {
        match entries.get(id) {
            Some(e) if e.expires > now => true,
            Some(_) => {
                entries.remove(id);
                false
            }
            None => false,
        }
    }
}

impl Default for MemorySessionStore {
    /// At most 65,536 sessions.
    fn default() -> Self {
        MemorySessionStore::new(65_536)
    }
}

fn ready<'a, T: Send + 'a>(v: T) -> BoxFuture<'a, T> {
    Box::pin(std::future::ready(v))
}

impl SessionStore for MemorySessionStore {
    fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<SessionState>, StoreError>> {
        let now = Instant::now();
        let mut g = self.lock();
        let out = match Self::live(&mut g, id, now) {
            true => SessionState::from_bytes(&g[id].state).map(Some),
            false => Ok(None),
        };
        ready(out)
    }

    fn save<'a>(
        &'a self,
        state: &'a SessionState,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let now = Instant::now();
        let expires = now + ttl;
        let bytes = state.to_bytes().into_boxed_slice();
        let mut g = self.lock();
        if let Some(e) = g.get_mut(state.id.as_str()) {
            e.state = bytes;
            e.expires = expires;
            return ready(Ok(()));
        }
        if g.len() >= self.capacity {
            g.retain(|_, e| e.expires > now);
            if g.len() >= self.capacity {
                let soonest = g
                    .iter()
                    .min_by_key(|(_, e)| e.expires)
                    .map(|(k, _)| k.clone());
                if let Some(k) = soonest {
                    g.remove(&k);
                }
            }
        }
        g.insert(
            state.id.clone(),
            Entry {
                state: bytes,
                expires,
            },
        );
        ready(Ok(()))
    }

    fn touch<'a>(&'a self, id: &'a str, ttl: Duration) -> BoxFuture<'a, Result<bool, StoreError>> {
        let now = Instant::now();
        let mut g = self.lock();
        let live = Self::live(&mut g, id, now);
        if let Some(e) = g.get_mut(id).filter(|_| live) {
            e.expires = now + ttl;
        }
        ready(Ok(live))
    }

    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        self.lock().remove(id);
        ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn meets_the_contract() {
        let store = MemorySessionStore::default();
        super::super::session_contract::run(&store).await;
        super::super::session_contract::expiry(&store, tokio::time::advance).await;
    }

    #[tokio::test(start_paused = true)]
    async fn stays_bounded() {
        let store = MemorySessionStore::new(2);
        let ttl = Duration::from_secs(10);
        for (i, id) in ["a", "b", "c"].into_iter().enumerate() {
            store
                .save(
                    &SessionState::new(id, tessera_types::ProtocolVersion::V2025_11_25),
                    ttl,
                )
                .await
                .unwrap();
            tokio::time::advance(Duration::from_secs(1 + i as u64)).await;
        }
        assert_eq!(store.len(), 2);
        // The one closest to expiry ("a") made room for "c".
        assert!(store.load("a").await.unwrap().is_none());
        assert!(store.load("c").await.unwrap().is_some());
    }
}
