//! Change notifications for the legacy sessions the proxy serves over its
//! shared 2026-07-28 upstream connection.
//!
//! A 2026-07-28 server announces list changes only on `subscriptions/listen`
//! streams, while a legacy client expects `notifications/*/list_changed` on
//! its session. The proxy keeps one listen stream of its own open upstream
//! (opened when the first such session arrives, re-opened with the shared
//! connection) and passes each change it reports to every session
//! registered here.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use tessera_proto::meta_keys;
use tessera_runtime::Peer;
use tessera_types::{
    JsonObject, ServerCapabilities, SubscriptionFilter, SubscriptionsListenRequestParams, methods,
};
use tokio::sync::watch;

use crate::shapes::{Loose, write};
use crate::upstream::Upstream;
use tessera_types::WithMeta;

/// How long a session arriving while the proxy's listen stream is being
/// opened waits for the server to acknowledge it.
const OPENING: Duration = Duration::from_secs(5);

/// Where the proxy's listen stream stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stream {
    /// Being opened (or re-opened).
    Opening,
    /// Acknowledged by the server: changes from now on are delivered.
    Open,
    /// Not open, and not being opened.
    Down,
}

/// The legacy sessions served over the shared connection.
#[derive(Debug)]
pub(crate) struct Fanout {
    next: AtomicU64,
    sessions: Mutex<HashMap<u64, Peer>>,
    running: AtomicBool,
    stream: watch::Sender<Stream>,
    /// The connection that refused a listen stream (or declares no list
    /// changes): not asked again.
    refused: Mutex<Weak<Upstream>>,
}

impl Default for Fanout {
    fn default() -> Self {
        Fanout {
            next: AtomicU64::new(0),
            sessions: Mutex::default(),
            running: AtomicBool::new(false),
            stream: watch::Sender::new(Stream::Down),
            refused: Mutex::new(Weak::new()),
        }
    }
}

impl Fanout {
    /// Registers a session; the key removes it again.
    pub fn join(&self, peer: Peer) -> u64 {
        let key = self.next.fetch_add(1, Ordering::Relaxed);
        self.lock().insert(key, peer);
        key
    }

    /// Removes a session.
    pub fn leave(&self, key: u64) {
        self.lock().remove(&key);
    }

    /// Whether the proxy's listen stream is open or being opened.
    pub fn running(&self) -> bool {
        self.running.load(Ordering::Acquire)
    }

    /// Records that `conn` will not give a listen stream.
    pub fn refuse(&self, conn: Weak<Upstream>) {
        *self.refused.lock().unwrap_or_else(|e| e.into_inner()) = conn;
    }

    /// Whether `conn` would not give a listen stream.
    pub fn refused(&self, conn: &Arc<Upstream>) -> bool {
        let r = self.refused.lock().unwrap_or_else(|e| e.into_inner());
        std::ptr::eq(r.as_ptr(), Arc::as_ptr(conn))
    }

    /// Marks the upstream listen stream as started; `false` when it already
    /// was.
    pub fn start(&self) -> bool {
        let first = !self.running.swap(true, Ordering::AcqRel);
        if first {
            self.set(Stream::Opening);
        }
        first
    }

    /// Marks the upstream listen stream as ended.
    pub fn stopped(&self) {
        self.running.store(false, Ordering::Release);
        self.set(Stream::Down);
    }

    /// Records where the listen stream stands.
    pub fn set(&self, state: Stream) {
        self.stream.send_replace(state);
    }

    /// Waits (boundedly) while the listen stream is being opened, so that
    /// a session sees every change made after its first answer.
    pub async fn opened(&self) {
        let mut rx = self.stream.subscribe();
        let wait = rx.wait_for(|s| *s != Stream::Opening);
        if tokio::time::timeout(OPENING, wait).await.is_err() {
            tracing::debug!("the upstream did not acknowledge the proxy's listen stream in time");
        }
    }

    /// Takes a notification of the proxy's listen stream: the server's
    /// acknowledgement, or a change for every session (passed on without
    /// the stream's subscription id).
    pub fn deliver(&self, method: &str, params: Option<&JsonObject>) {
        match method {
            methods::NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED => self.set(Stream::Open),
            methods::NOTIFICATIONS_TOOLS_LIST_CHANGED
            | methods::NOTIFICATIONS_PROMPTS_LIST_CHANGED
            | methods::NOTIFICATIONS_RESOURCES_LIST_CHANGED => self.broadcast(method, params),
            _ => {}
        }
    }

    fn broadcast(&self, method: &str, params: Option<&JsonObject>) {
        let params = untag(params);
        let peers: Vec<Peer> = self.lock().values().cloned().collect();
        for p in peers {
            let _ = p.notify(method, params.clone(), None);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Peer>> {
        self.sessions.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The `subscriptions/listen` params asking for every list change the
/// server declares; `None` when it declares none.
pub(crate) fn listen_params(caps: &ServerCapabilities) -> Option<JsonObject> {
    let on = |c: Option<bool>| (c == Some(true)).then_some(true);
    let notifications = SubscriptionFilter {
        tools_list_changed: on(caps.tools.as_ref().and_then(|c| c.list_changed)),
        prompts_list_changed: on(caps.prompts.as_ref().and_then(|c| c.list_changed)),
        resources_list_changed: on(caps.resources.as_ref().and_then(|c| c.list_changed)),
        ..SubscriptionFilter::default()
    };
    if notifications == SubscriptionFilter::default() {
        return None;
    }
    write(&SubscriptionsListenRequestParams {
        meta: None,
        notifications,
    })
    .ok()
}

/// The params without the listen stream's subscription id.
fn untag(params: Option<&JsonObject>) -> Option<JsonObject> {
    let mut p = WithMeta::split(params?.clone());
    if let Loose::Valid(m) = &mut p.meta {
        m.remove(meta_keys::SUBSCRIPTION_ID);
        if m.is_empty() {
            p.meta = Loose::Absent;
        }
    }
    Some(p.join()).filter(|p| !p.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn the_listen_asks_for_what_the_server_declares() {
        let caps: ServerCapabilities = serde_json::from_value(json!({
            "tools": {"listChanged": true},
            "prompts": {"listChanged": false},
            "resources": {"subscribe": true}
        }))
        .unwrap();
        assert_eq!(
            Value::Object(listen_params(&caps).unwrap()),
            json!({"notifications": {"toolsListChanged": true}})
        );
        let none: ServerCapabilities = serde_json::from_value(json!({"tools": {}})).unwrap();
        assert!(listen_params(&none).is_none());
    }

    #[test]
    fn the_subscription_id_is_taken_off() {
        let tagged = json!({"_meta": {meta_keys::SUBSCRIPTION_ID: 7}});
        assert_eq!(untag(tagged.as_object()), None);
        let mixed = json!({"uri": "a://b", "_meta": {meta_keys::SUBSCRIPTION_ID: 7, "x": 1}});
        assert_eq!(
            Value::Object(untag(mixed.as_object()).unwrap()),
            json!({"uri": "a://b", "_meta": {"x": 1}})
        );
    }
}
