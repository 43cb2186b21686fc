//! Who hears about an aggregating proxy's changes: its legacy sessions and
//! `subscriptions/listen` streams, and the upstream resource subscriptions
//! they hold, counted so that each upstream is asked once per URI.

use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;

use tessera_runtime::Peer;
use tessera_types::{JsonObject, RequestId, ResourceUpdatedNotificationParams, methods};

use crate::aggregate::URI_SEPARATOR;
use crate::listen::tag;
use crate::shapes::{UriOf, read, write};

/// The list-change notifications.
const LIST_KINDS: [&str; 3] = [
    methods::NOTIFICATIONS_TOOLS_LIST_CHANGED,
    methods::NOTIFICATIONS_PROMPTS_LIST_CHANGED,
    methods::NOTIFICATIONS_RESOURCES_LIST_CHANGED,
];

/// A `subscriptions/listen` stream served by the aggregator.
pub(crate) struct Listener {
    pub key: u64,
    pub peer: Peer,
    pub id: RequestId,
    pub lists: bool,
    pub uris: BTreeSet<String>,
}

/// Who hears about changes: legacy sessions and listen streams.
#[derive(Default)]
pub(crate) struct Hub {
    pub next: std::sync::atomic::AtomicU64,
    pub sessions: Mutex<Vec<(Peer, BTreeSet<String>)>>,
    pub listeners: Mutex<Vec<Listener>>,
    /// Upstream resource subscriptions, counted by prefixed URI.
    pub subscribed: Mutex<HashMap<String, usize>>,
}

impl Hub {
    /// Tells every session and listener that the lists may have changed.
    pub(crate) fn lists_changed(&self) {
        for m in LIST_KINDS {
            self.announce_list(m);
        }
    }

    fn announce_list(&self, method: &str) {
        let mut s = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        s.retain(|(p, _)| p.is_open());
        for (p, _) in s.iter() {
            let _ = p.notify(method, None, None);
        }
        drop(s);
        let l = self.listeners.lock().unwrap_or_else(|e| e.into_inner());
        for x in l.iter().filter(|x| x.lists) {
            let _ = x
                .peer
                .notify(method, Some(tag(&x.id, None)), Some(x.id.clone()));
        }
    }

    fn resource_updated(&self, uri: &str) {
        let Ok(p) = write(&ResourceUpdatedNotificationParams::new(uri)) else {
            return;
        };
        let s = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        for (peer, subs) in s.iter().filter(|(_, subs)| subs.contains(uri)) {
            let _ = subs;
            let _ = peer.notify(
                methods::NOTIFICATIONS_RESOURCES_UPDATED,
                Some(p.clone()),
                None,
            );
        }
        drop(s);
        let l = self.listeners.lock().unwrap_or_else(|e| e.into_inner());
        for x in l.iter().filter(|x| x.uris.contains(uri)) {
            let _ = x.peer.notify(
                methods::NOTIFICATIONS_RESOURCES_UPDATED,
                Some(tag(&x.id, Some(&p))),
                Some(x.id.clone()),
            );
        }
    }

    /// A notification from upstream `name` that belongs to no request.
    pub(crate) fn announce(&self, name: &str, method: &str, params: Option<&JsonObject>) {
        if LIST_KINDS.contains(&method) {
            self.announce_list(method);
        } else if method == methods::NOTIFICATIONS_RESOURCES_UPDATED {
            if let Some(uri) = params.and_then(|p| read::<UriOf>(p).uri.into_valid()) {
                self.resource_updated(&format!("{name}{URI_SEPARATOR}{uri}"));
            }
        } else {
            tracing::debug!(upstream = %name, %method, "notification not passed on: no client to send it to");
        }
    }

    /// Counts one more subscriber of `uri`; `true` for the first.
    pub(crate) fn subscribe(&self, uri: &str) -> bool {
        let mut s = self.subscribed.lock().unwrap_or_else(|e| e.into_inner());
        let n = s.entry(uri.to_owned()).or_insert(0);
        *n += 1;
        *n == 1
    }

    /// Counts one subscriber of `uri` less; `true` for the last.
    pub(crate) fn unsubscribe(&self, uri: &str) -> bool {
        let mut s = self.subscribed.lock().unwrap_or_else(|e| e.into_inner());
        match s.get_mut(uri) {
            Some(n) if *n > 1 => {
                *n -= 1;
                false
            }
            Some(_) => {
                s.remove(uri);
                true
            }
            None => false,
        }
    }
}
