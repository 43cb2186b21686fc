//! [`SessionStore`]: where session states live; [`MemorySessionStore`], the default.

use std::future::{Future, ready};
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
///
/// Implement it with `async fn`s (the library boxes the futures where it
/// holds the store behind a trait object):
///
/// ```
/// use std::collections::HashMap;
/// use std::time::Duration;
/// use tessera_runtime::{SessionState, SessionStore, StoreError};
/// use tokio::sync::Mutex;
///
/// /// Never expires anything: a sketch, not a store to deploy.
/// #[derive(Default)]
/// struct Forever(Mutex<HashMap<String, SessionState>>);
///
/// impl SessionStore for Forever {
///     async fn load(&self, id: &str) -> Result<Option<SessionState>, StoreError> {
///         Ok(self.0.lock().await.get(id).cloned())
///     }
///     async fn save(&self, state: &SessionState, _ttl: Duration) -> Result<(), StoreError> {
///         self.0.lock().await.insert(state.id.clone(), state.clone());
///         Ok(())
///     }
///     async fn touch(&self, id: &str, _ttl: Duration) -> Result<bool, StoreError> {
///         Ok(self.0.lock().await.contains_key(id))
///     }
///     async fn remove(&self, id: &str) -> Result<(), StoreError> {
///         self.0.lock().await.remove(id);
///         Ok(())
///     }
/// }
/// # tokio_test_block_on(async {
/// # let store = Forever::default();
/// # assert_eq!(store.load("nope").await, Ok(None));
/// # });
/// # fn tokio_test_block_on(f: impl std::future::Future<Output = ()>) {
/// #     tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
/// # }
/// ```
pub trait SessionStore: Send + Sync + 'static {
    /// The state of session `id`, `None` when there is none (never saved,
    /// expired or removed).
    fn load(
        &self,
        id: &str,
    ) -> impl Future<Output = Result<Option<SessionState>, StoreError>> + Send;

    /// Stores `state` under `state.id`, replacing what was there, to expire
    /// after `ttl` unless saved or touched again.
    fn save(
        &self,
        state: &SessionState,
        ttl: Duration,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Pushes the expiry of session `id` to `ttl` from now. `false` when
    /// there is no such session.
    fn touch(
        &self,
        id: &str,
        ttl: Duration,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Forgets session `id`.
    fn remove(&self, id: &str) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Counts the new session `id` of `client` against caps that every
    /// instance sharing the store keeps (`client` is empty when unknown: no
    /// per-client cap then), for `ttl` unless touched. At a cap the least
    /// recently used session of the group is forgotten (its state removed):
    /// the ids returned, whose local copies the caller ends.
    ///
    /// The default counts nothing: a store of one process leaves the caps
    /// to the process's own table of sessions.
    fn admit(
        &self,
        id: &str,
        client: &str,
        caps: SessionCaps,
        ttl: Duration,
    ) -> impl Future<Output = Result<Vec<String>, StoreError>> + Send {
        let _ = (id, client, caps, ttl);
        std::future::ready(Ok(Vec::new()))
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
    fn load(
        &self,
        id: &str,
    ) -> impl Future<Output = Result<Option<SessionState>, StoreError>> + Send {
        (**self).load(id)
    }
    fn save(
        &self,
        state: &SessionState,
        ttl: Duration,
    ) -> impl Future<Output = Result<(), StoreError>> + Send {
        (**self).save(state, ttl)
    }
    fn touch(
        &self,
        id: &str,
        ttl: Duration,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send {
        (**self).touch(id, ttl)
    }
    fn remove(&self, id: &str) -> impl Future<Output = Result<(), StoreError>> + Send {
        (**self).remove(id)
    }
    fn admit(
        &self,
        id: &str,
        client: &str,
        caps: SessionCaps,
        ttl: Duration,
    ) -> impl Future<Output = Result<Vec<String>, StoreError>> + Send {
        (**self).admit(id, client, caps, ttl)
    }
}

/// The object-safe form of [`SessionStore`] that the library holds
/// (`Arc<dyn DynSessionStore>`): every `SessionStore` is one. Not for
/// implementing or naming in user code; implement [`SessionStore`].
#[doc(hidden)]
pub trait DynSessionStore: Send + Sync + 'static {
    /// [`SessionStore::load`], boxed.
    fn load_boxed<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<SessionState>, StoreError>>;
    /// [`SessionStore::save`], boxed.
    fn save_boxed<'a>(
        &'a self,
        state: &'a SessionState,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>>;
    /// [`SessionStore::touch`], boxed.
    fn touch_boxed<'a>(
        &'a self,
        id: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<bool, StoreError>>;
    /// [`SessionStore::remove`], boxed.
    fn remove_boxed<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), StoreError>>;
    /// [`SessionStore::admit`], boxed.
    fn admit_boxed<'a>(
        &'a self,
        id: &'a str,
        client: &'a str,
        caps: SessionCaps,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<Vec<String>, StoreError>>;
}

impl<S: SessionStore> DynSessionStore for S {
    fn load_boxed<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<SessionState>, StoreError>> {
        Box::pin(self.load(id))
    }
    fn save_boxed<'a>(
        &'a self,
        state: &'a SessionState,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(self.save(state, ttl))
    }
    fn touch_boxed<'a>(
        &'a self,
        id: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(self.touch(id, ttl))
    }
    fn remove_boxed<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(self.remove(id))
    }
    fn admit_boxed<'a>(
        &'a self,
        id: &'a str,
        client: &'a str,
        caps: SessionCaps,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<Vec<String>, StoreError>> {
        Box::pin(self.admit(id, client, caps, ttl))
    }
}

/// The calls of a held store, as [`SessionStore`]'s (no import needed).
impl dyn DynSessionStore {
    /// [`SessionStore::load`].
    pub fn load<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<SessionState>, StoreError>> {
        self.load_boxed(id)
    }
    /// [`SessionStore::save`].
    pub fn save<'a>(
        &'a self,
        state: &'a SessionState,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        self.save_boxed(state, ttl)
    }
    /// [`SessionStore::touch`].
    pub fn touch<'a>(
        &'a self,
        id: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        self.touch_boxed(id, ttl)
    }
    /// [`SessionStore::remove`].
    pub fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        self.remove_boxed(id)
    }
    /// [`SessionStore::admit`].
    pub fn admit<'a>(
        &'a self,
        id: &'a str,
        client: &'a str,
        caps: SessionCaps,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<Vec<String>, StoreError>> {
        self.admit_boxed(id, client, caps, ttl)
    }
}

/// A held store is used through [`SessionStore`] like any other (one box
/// per call, made by [`DynSessionStore`]).
impl SessionStore for dyn DynSessionStore {
    async fn load(&self, id: &str) -> Result<Option<SessionState>, StoreError> {
        self.load_boxed(id).await
    }
    async fn save(&self, state: &SessionState, ttl: Duration) -> Result<(), StoreError> {
        self.save_boxed(state, ttl).await
    }
    async fn touch(&self, id: &str, ttl: Duration) -> Result<bool, StoreError> {
        self.touch_boxed(id, ttl).await
    }
    async fn remove(&self, id: &str) -> Result<(), StoreError> {
        self.remove_boxed(id).await
    }
    async fn admit(
        &self,
        id: &str,
        client: &str,
        caps: SessionCaps,
        ttl: Duration,
    ) -> Result<Vec<String>, StoreError> {
        self.admit_boxed(id, client, caps, ttl).await
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

impl SessionStore for MemorySessionStore {
    fn load(
        &self,
        id: &str,
    ) -> impl Future<Output = Result<Option<SessionState>, StoreError>> + Send {
        let now = Instant::now();
        let mut g = self.lock();
        let out = match Self::live(&mut g, id, now) {
            true => SessionState::from_bytes(&g[id].state).map(Some),
            false => Ok(None),
        };
        ready(out)
    }

    fn save(
        &self,
        state: &SessionState,
        ttl: Duration,
    ) -> impl Future<Output = Result<(), StoreError>> + Send {
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

    fn touch(
        &self,
        id: &str,
        ttl: Duration,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send {
        let now = Instant::now();
        let mut g = self.lock();
        let live = Self::live(&mut g, id, now);
        if let Some(e) = g.get_mut(id).filter(|_| live) {
            e.expires = now + ttl;
        }
        ready(Ok(live))
    }

    fn remove(&self, id: &str) -> impl Future<Output = Result<(), StoreError>> + Send {
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
