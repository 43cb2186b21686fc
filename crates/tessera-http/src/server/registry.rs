//! The live sessions and who may open one more.
//!
//! Two caps apply, the per-client one first: a client (the authenticated
//! principal, else the peer's IP address) may hold at most
//! `max_sessions_per_client` sessions, and the server at most `max_sessions`.
//! At either cap the least recently used *idle* session (no request in
//! progress, no open stream) in that group is evicted to make room; only when
//! every session in the group is busy is the newcomer refused. A client that
//! opens sessions and leaves them unused therefore cannot lock anyone out.

use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use foldhash::HashMap;
use tessera_runtime::Principal;

use super::session::SessionHandle;

/// Who a session is counted against for the per-client cap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ClientKey {
    /// The authenticated principal.
    Principal(Principal),
    /// The peer's IP address (no authentication).
    Addr(IpAddr),
    /// Neither is known (the service was mounted without a peer address).
    Unknown,
}

impl ClientKey {
    /// The key of the request being handled: its principal, else `addr`.
    pub(crate) fn of(principal: Option<Principal>, addr: Option<IpAddr>) -> Self {
        match (principal, addr) {
            (Some(p), _) => ClientKey::Principal(p),
            (None, Some(a)) => ClientKey::Addr(a),
            (None, None) => ClientKey::Unknown,
        }
    }
}

/// Why no session could be opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Full {
    /// `max_sessions` sessions are open and all of them are busy.
    Global(usize),
    /// This client holds `max_sessions_per_client` busy sessions.
    Client(usize),
}

/// The live sessions.
pub(crate) struct Registry {
    sessions: Mutex<HashMap<Arc<str>, Arc<SessionHandle>>>,
    max: usize,
    per_client: usize,
}

impl Registry {
    pub(crate) fn new(max: usize, per_client: usize) -> Self {
        Registry {
            sessions: Mutex::new(HashMap::default()),
            max,
            per_client,
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<Arc<str>, Arc<SessionHandle>>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn get(&self, id: &str) -> Option<Arc<SessionHandle>> {
        self.lock().get(id).cloned()
    }

    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }

    pub(crate) fn all(&self) -> Vec<Arc<SessionHandle>> {
        self.lock().values().cloned().collect()
    }

    /// Removes session `id` if it is still `handle` (a newer copy restored
    /// under the same id stays).
    pub(crate) fn remove_if(&self, id: &str, handle: &std::sync::Weak<SessionHandle>) {
        let mut map = self.lock();
        if map
            .get(id)
            .is_some_and(|h| std::ptr::eq(Arc::as_ptr(h), handle.as_ptr()))
        {
            map.remove(id);
        }
    }

    /// Like [`Registry::admit`] for a session with a known id: when one is
    /// already registered under `id`, it is returned and `make` does not run.
    pub(crate) fn admit_as(
        &self,
        id: &str,
        client: &ClientKey,
        make: impl FnOnce() -> Arc<SessionHandle>,
    ) -> Result<Arc<SessionHandle>, Full> {
        if let Some(h) = self.lock().get(id) {
            if !h.ended.is_cancelled() {
                return Ok(h.clone());
            }
        }
        self.admit(client, make)
    }

    /// Makes room for one more session of `client` (evicting idle sessions
    /// as described in the module documentation), then inserts what `make`
    /// builds. `make` runs under the registry lock only when there is room.
    pub(crate) fn admit(
        &self,
        client: &ClientKey,
        make: impl FnOnce() -> Arc<SessionHandle>,
    ) -> Result<Arc<SessionHandle>, Full> {
        let mut map = self.lock();
        if *client != ClientKey::Unknown {
            let mine = map.values().filter(|h| h.client == *client).count();
            if mine >= self.per_client && !evict_lru(&mut map, |h| h.client == *client) {
                return Err(Full::Client(self.per_client));
            }
        }
        if map.len() >= self.max && !evict_lru(&mut map, |_| true) {
            return Err(Full::Global(self.max));
        }
        let handle = make();
        map.insert(handle.id.clone(), handle.clone());
        Ok(handle)
    }
}

/// Ends the least recently used idle session among those `pick` selects;
/// `false` when none is idle.
fn evict_lru(
    map: &mut HashMap<Arc<str>, Arc<SessionHandle>>,
    pick: impl Fn(&SessionHandle) -> bool,
) -> bool {
    let victim = map
        .values()
        .filter(|h| pick(h) && h.is_idle())
        .min_by_key(|h| h.last_activity())
        .map(|h| h.id.clone());
    let Some(id) = victim else {
        return false;
    };
    if let Some(h) = map.remove(&id) {
        tracing::info!(session = %h.id, "session evicted to make room for a new one (least recently used, idle)");
        h.terminate();
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn principal_wins_over_the_address() {
        let p = Principal("alice".into());
        let a: IpAddr = "127.0.0.1".parse().unwrap();
        assert_eq!(
            ClientKey::of(Some(p.clone()), Some(a)),
            ClientKey::Principal(p)
        );
        assert_eq!(ClientKey::of(None, Some(a)), ClientKey::Addr(a));
        assert_eq!(ClientKey::of(None, None), ClientKey::Unknown);
    }
}
