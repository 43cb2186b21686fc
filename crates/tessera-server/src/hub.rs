//! Who gets told when something changes: legacy sessions (list_changed,
//! `resources/subscribe`) and modern `subscriptions/listen` streams.
//!
//! When several instances serve one endpoint, [`Server::share_events`]
//! links their hubs over a [`Bus`]: each change announced here is published
//! on the [`EVENTS_TOPIC`] and announced by every other instance to its own
//! sessions and listeners, exactly as if it had happened there.
//!
//! [`Server::share_events`]: crate::Server::share_events

use std::collections::BTreeSet;
use std::sync::{Mutex, OnceLock};
use tessera_types::methods;

use bytes::Bytes;
use serde::{Deserialize, Serialize};
use tessera_runtime::{Bus, DynBus, StoreError};
use tokio::sync::mpsc;

use serde_json::Value;
use tessera_runtime::Peer;
use tessera_types::{JsonObject, NotificationParams, RequestId, ResourceUpdatedNotificationParams};

/// A list whose changes are announced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ListKind {
    /// `notifications/tools/list_changed`.
    Tools,
    /// `notifications/prompts/list_changed`.
    Prompts,
    /// `notifications/resources/list_changed`.
    Resources,
}

/// The bus topic of server-wide events (see the module documentation).
pub const EVENTS_TOPIC: &str = "tessera/events";

/// A server-wide event as it travels between instances.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
enum Event {
    ListChanged(ListKind),
    ResourceUpdated(String),
}

#[derive(Serialize, Deserialize)]
struct Envelope {
    /// The publishing hub.
    o: u64,
    e: Event,
}

/// A hub's link to the others.
struct Link {
    origin: u64,
    out: mpsc::UnboundedSender<Bytes>,
}

impl ListKind {
    fn method(self) -> &'static str {
        match self {
            ListKind::Tools => methods::NOTIFICATIONS_TOOLS_LIST_CHANGED,
            ListKind::Prompts => methods::NOTIFICATIONS_PROMPTS_LIST_CHANGED,
            ListKind::Resources => methods::NOTIFICATIONS_RESOURCES_LIST_CHANGED,
        }
    }
}

/// What a `subscriptions/listen` stream asked for (and was granted).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// Tool list changes.
    pub tools: bool,
    /// Prompt list changes.
    pub prompts: bool,
    /// Resource list changes.
    pub resources: bool,
    /// Updates of these resource URIs.
    pub resource_uris: BTreeSet<String>,
}

impl Filter {
    fn wants(&self, kind: ListKind) -> bool {
        match kind {
            ListKind::Tools => self.tools,
            ListKind::Prompts => self.prompts,
            ListKind::Resources => self.resources,
        }
    }
}

struct Session {
    peer: Peer,
    resource_uris: BTreeSet<String>,
}

struct Listener {
    key: u64,
    peer: Peer,
    request: RequestId,
    filter: Filter,
}

#[derive(Default)]
struct State {
    sessions: Vec<Session>,
    listeners: Vec<Listener>,
    next_key: u64,
}

/// The registry of everyone listening for changes.
#[derive(Default)]
pub struct Hub {
    state: Mutex<State>,
    link: OnceLock<Link>,
}

impl std::fmt::Debug for Hub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hub").finish_non_exhaustive()
    }
}

impl Hub {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A legacy session finished its handshake.
    pub fn add_session(&self, peer: Peer) {
        let mut s = self.lock();
        s.sessions.retain(|x| x.peer.is_open());
        s.sessions.push(Session {
            peer,
            resource_uris: BTreeSet::new(),
        });
    }

    /// `resources/subscribe` from a legacy session.
    pub fn subscribe(&self, peer: &Peer, uri: &str) {
        let mut s = self.lock();
        match s.sessions.iter_mut().find(|x| x.peer.same_connection(peer)) {
            Some(x) => {
                x.resource_uris.insert(uri.to_owned());
            }
            None => s.sessions.push(Session {
                peer: peer.clone(),
                resource_uris: BTreeSet::from([uri.to_owned()]),
            }),
        }
    }

    /// A legacy session carried on from stored state (or whose stored state
    /// changed elsewhere): registered, with exactly these subscriptions.
    pub fn restore_session(&self, peer: &Peer, resource_uris: BTreeSet<String>) {
        let mut s = self.lock();
        s.sessions.retain(|x| x.peer.is_open());
        match s.sessions.iter_mut().find(|x| x.peer.same_connection(peer)) {
            Some(x) => x.resource_uris = resource_uris,
            None => s.sessions.push(Session {
                peer: peer.clone(),
                resource_uris,
            }),
        }
    }

    /// The resource URIs a legacy session subscribed to.
    pub fn subscriptions_of(&self, peer: &Peer) -> BTreeSet<String> {
        self.lock()
            .sessions
            .iter()
            .find(|x| x.peer.same_connection(peer))
            .map(|x| x.resource_uris.clone())
            .unwrap_or_default()
    }

    /// `resources/unsubscribe` from a legacy session.
    pub fn unsubscribe(&self, peer: &Peer, uri: &str) {
        let mut s = self.lock();
        if let Some(x) = s.sessions.iter_mut().find(|x| x.peer.same_connection(peer)) {
            x.resource_uris.remove(uri);
        }
    }

    /// A `subscriptions/listen` stream opened; returns a key for
    /// [`Hub::remove_listener`]. `acknowledge` runs under the hub's lock before
    /// the listener is registered, so the acknowledgement is the first message
    /// of the subscription: no change can be announced in between.
    pub fn add_listener(
        &self,
        peer: Peer,
        request: RequestId,
        filter: Filter,
        acknowledge: impl FnOnce(&Peer),
    ) -> u64 {
        let mut s = self.lock();
        acknowledge(&peer);
        s.next_key += 1;
        let key = s.next_key;
        s.listeners.push(Listener {
            key,
            peer,
            request,
            filter,
        });
        key
    }

    /// A `subscriptions/listen` stream ended.
    pub fn remove_listener(&self, key: u64) {
        self.lock().listeners.retain(|l| l.key != key);
    }

    /// Links this hub to the hubs of other instances over `bus` (see the
    /// module documentation). Returns once the subscription is in place;
    /// linking twice does nothing.
    pub async fn link(
        self: &std::sync::Arc<Self>,
        bus: std::sync::Arc<dyn DynBus>,
    ) -> Result<(), StoreError> {
        if self.link.get().is_some() {
            return Ok(());
        }
        let mut sub = bus.subscribe(EVENTS_TOPIC).await?;
        let (out, mut outgoing) = mpsc::unbounded_channel::<Bytes>();
        let origin: u64 = rand::random();
        if self.link.set(Link { origin, out }).is_err() {
            return Ok(());
        }
        // One publisher keeps the events in order.
        let publisher = bus.clone();
        tokio::spawn(async move {
            while let Some(b) = outgoing.recv().await {
                if let Err(e) = publisher.publish(EVENTS_TOPIC, b).await {
                    tracing::warn!(%e, "a server-wide event could not be shared with other instances");
                }
            }
        });
        let hub = std::sync::Arc::downgrade(self);
        tokio::spawn(async move {
            while let Some(b) = sub.recv().await {
                let Some(hub) = hub.upgrade() else { break };
                match serde_json::from_slice::<Envelope>(&b) {
                    Ok(e) if e.o == origin => {}
                    Ok(e) => match e.e {
                        Event::ListChanged(kind) => hub.announce_list_changed(kind),
                        Event::ResourceUpdated(uri) => hub.announce_resource_updated(&uri),
                    },
                    Err(e) => tracing::warn!(%e, "unreadable server-wide event: ignored"),
                }
            }
        });
        Ok(())
    }

    fn share(&self, e: Event) {
        if let Some(link) = self.link.get() {
            let bytes = serde_json::to_vec(&Envelope { o: link.origin, e }).unwrap_or_default();
            let _ = link.out.send(Bytes::from(bytes));
        }
    }

    /// Announces a list change to every legacy session and every listener
    /// that asked (on every linked instance).
    pub fn list_changed(&self, kind: ListKind) {
        self.announce_list_changed(kind);
        self.share(Event::ListChanged(kind));
    }

    fn announce_list_changed(&self, kind: ListKind) {
        let mut s = self.lock();
        s.sessions.retain(|x| x.peer.is_open());
        s.listeners.retain(|l| l.peer.is_open());
        for x in &s.sessions {
            let _ = x.peer.notify(kind.method(), None, None);
        }
        for l in s.listeners.iter().filter(|l| l.filter.wants(kind)) {
            let params = NotificationParams {
                meta: Some(subscription_meta(&l.request)),
            };
            let _ = l.peer.notify(
                kind.method(),
                tessera_types::encode_params(&params).ok(),
                Some(l.request.clone()),
            );
        }
    }

    /// Announces that a resource changed to whoever subscribed to it (on
    /// every linked instance).
    pub fn resource_updated(&self, uri: &str) {
        self.announce_resource_updated(uri);
        self.share(Event::ResourceUpdated(uri.to_owned()));
    }

    fn announce_resource_updated(&self, uri: &str) {
        let mut s = self.lock();
        s.sessions.retain(|x| x.peer.is_open());
        s.listeners.retain(|l| l.peer.is_open());
        let updated = ResourceUpdatedNotificationParams::new(uri);
        let params = tessera_types::encode_params(&updated).ok();
        for x in s.sessions.iter().filter(|x| x.resource_uris.contains(uri)) {
            let _ = x.peer.notify(
                methods::NOTIFICATIONS_RESOURCES_UPDATED,
                params.clone(),
                None,
            );
        }
        for l in s
            .listeners
            .iter()
            .filter(|l| l.filter.resource_uris.contains(uri))
        {
            let tagged = ResourceUpdatedNotificationParams {
                meta: Some(subscription_meta(&l.request)),
                ..updated.clone()
            };
            let _ = l.peer.notify(
                methods::NOTIFICATIONS_RESOURCES_UPDATED,
                tessera_types::encode_params(&tagged).ok(),
                Some(l.request.clone()),
            );
        }
    }

    /// How many legacy sessions and listeners are registered.
    pub fn counts(&self) -> (usize, usize) {
        let s = self.lock();
        (s.sessions.len(), s.listeners.len())
    }
}

/// The `_meta` that ties a notification to the `subscriptions/listen`
/// stream `request` opened: `io.modelcontextprotocol/subscriptionId`.
pub fn subscription_meta(request: &RequestId) -> JsonObject {
    let mut meta = JsonObject::new();
    meta.insert(
        tessera_types::meta::SUBSCRIPTION_ID.into(),
        serde_json::to_value(request).unwrap_or(Value::Null),
    );
    meta
}
