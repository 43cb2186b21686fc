//! The live sessions and who may open one more.
//!
//! Two caps apply, the per-client one first: a client (the authenticated
//! principal, else the peer's IP address) may hold at most
//! `max_sessions_per_client` sessions, and the server at most `max_sessions`.
//! At either cap the least recently used *idle* session (no request in
//! progress, no open stream) in that group is evicted to make room; only when
//! every session in the group is busy is the newcomer refused. A client that
//! opens sessions and leaves them unused therefore cannot lock anyone out.
//!
//! At the server's cap with every session busy (clients holding open GET
//! streams), a newcomer is not refused while some client holds more
//! sessions than the newcomer would with this one: a session of the client
//! holding the most is reclaimed (ended, even though busy: its least
//! recently used one, so the oldest stream goes first). A few addresses
//! holding every session therefore cannot lock everyone else out; clients
//! holding equal shares do not take sessions from each other (the newcomer
//! gets `503` with `Retry-After` then).

use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use foldhash::HashMap;
use tessera_runtime::Principal;

use super::session::{EndReason, SessionHandle};

/// Who a session is counted against for the per-client cap.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum ClientKey {
    /// The authenticated principal.
    Principal(Principal),
    /// The peer's IP address (no authentication).
    Addr(IpAddr),
    /// Neither is known (the service was mounted without a peer address).
    Unknown,
}

impl ClientKey {
    /// The client as the shared session store counts it: `p:` and the
    /// principal, `a:` and the address, or empty when unknown.
    pub(crate) fn store_key(&self) -> String {
        match self {
            ClientKey::Principal(p) => format!("p:{}", p.0),
            ClientKey::Addr(a) => format!("a:{}", a.to_canonical()),
            ClientKey::Unknown => String::new(),
        }
    }

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
    /// `max_sessions` sessions are open, all of them are busy, and no
    /// client holds more than the newcomer would.
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
        if map.len() >= self.max
            && !evict_lru(&mut map, |_| true)
            && !reclaim_from_heaviest(&mut map, client)
        {
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
        h.terminate_as(EndReason::Evicted);
    }
    true
}

/// Ends the least recently used session (busy or not) of the client holding
/// the most sessions, when it holds more than `newcomer` would with one more;
/// `false` otherwise. Among clients holding as many, the one with the least
/// recently used session gives it up.
fn reclaim_from_heaviest(
    map: &mut HashMap<Arc<str>, Arc<SessionHandle>>,
    newcomer: &ClientKey,
) -> bool {
    // Per client: how many sessions, and its least recently used one.
    let mut held: HashMap<&ClientKey, (usize, &Arc<SessionHandle>, tokio::time::Instant)> =
        HashMap::default();
    for h in map.values() {
        let at = h.last_activity();
        held.entry(&h.client)
            .and_modify(|(n, oldest, oldest_at)| {
                *n += 1;
                if at < *oldest_at {
                    (*oldest, *oldest_at) = (h, at);
                }
            })
            .or_insert((1, h, at));
    }
    let mine = held.get(newcomer).map_or(0, |(n, ..)| *n);
    let heaviest = held
        .values()
        .max_by(|a, b| a.0.cmp(&b.0).then(b.2.cmp(&a.2)))
        .filter(|(n, ..)| *n > mine + 1)
        .map(|(n, h, _)| (*n, h.id.clone()));
    let Some((n, id)) = heaviest else {
        return false;
    };
    if let Some(h) = map.remove(&id) {
        tracing::warn!(
            session = %h.id,
            held = n,
            "every session is busy at the cap: a session of the client holding the most was ended \
             to make room for another client (least recently used first)"
        );
        h.terminate_as(EndReason::Evicted);
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
