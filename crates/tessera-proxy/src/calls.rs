//! The downstream requests in flight on one upstream connection: where the
//! upstream's own requests, logs and stream-control notifications go, since
//! over stdio nothing in those messages says which request they belong to.

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use tessera_types::methods;

use tessera_runtime::{Peer, Request, StreamControl};
use tessera_types::{Era, RequestId};

/// One forwarded request.
#[derive(Debug, Clone)]
pub(crate) struct Call {
    key: u64,
    /// The downstream connection.
    pub peer: Peer,
    /// The request's id downstream.
    pub id: RequestId,
    /// The downstream request's era.
    pub era: Era,
    /// Whether it is a `subscriptions/listen` (which stays open and causes no
    /// server-to-client requests).
    pub listen: bool,
    /// The downstream request's stream control (SEP-1699).
    pub stream: StreamControl,
}

/// The requests in flight on one upstream connection.
#[derive(Debug, Default)]
pub(crate) struct Calls {
    next: AtomicU64,
    list: Mutex<Vec<Call>>,
}

/// Removes its call from the registry when dropped.
pub(crate) struct CallGuard {
    calls: Arc<Calls>,
    key: u64,
}

impl CallGuard {
    /// The call's tag: sent upstream in the request's `_meta`
    /// ([`tessera_proto::meta_keys::REQUEST_TAG`]), it comes back on the
    /// upstream's traffic about that request.
    pub fn tag(&self) -> u64 {
        self.key
    }
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        if let Ok(mut l) = self.calls.list.lock() {
            l.retain(|c| c.key != self.key);
        }
    }
}

impl Calls {
    /// Registers a downstream request for as long as the guard lives.
    pub fn enter(self: &Arc<Self>, r: &Request) -> CallGuard {
        let key = self.next.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut l) = self.list.lock() {
            l.push(Call {
                key,
                peer: r.peer.clone(),
                id: r.id.clone(),
                era: r.context.era,
                listen: r.method == methods::SUBSCRIPTIONS_LISTEN,
                stream: StreamControl::of(r),
            });
        }
        CallGuard {
            calls: self.clone(),
            key,
        }
    }

    fn snapshot(&self) -> Vec<Call> {
        self.list.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// The request in flight with this tag ([`CallGuard::tag`]).
    pub fn tagged(&self, tag: u64) -> Option<Call> {
        let l = self.list.lock().ok()?;
        l.iter().find(|c| c.key == tag).cloned()
    }

    /// The oldest request in flight that can cause server-to-client traffic
    /// (anything but `subscriptions/listen`, which stays open).
    pub fn oldest(&self) -> Option<Call> {
        self.snapshot().into_iter().find(|c| !c.listen)
    }

    /// The only request in flight that can cause server-to-client traffic,
    /// or how many there are when it is not exactly one.
    pub fn sole(&self) -> Result<Call, usize> {
        let mut v: Vec<Call> = self.snapshot().into_iter().filter(|c| !c.listen).collect();
        if v.len() == 1 {
            Ok(v.remove(0))
        } else {
            Err(v.len())
        }
    }
}
