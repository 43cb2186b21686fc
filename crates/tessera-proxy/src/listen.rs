//! `subscriptions/listen` (2026-07-28) through the proxy.
//!
//! - Upstream speaks 2026-07-28: the listen request is forwarded and its
//!   notifications are passed back re-tagged with the client's request id.
//! - Upstream speaks an older version: the proxy serves the stream itself,
//!   granting what the upstream's capabilities allow, subscribing to
//!   resources upstream (`resources/subscribe`, counted across listeners)
//!   and turning the upstream's change notifications into tagged ones.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use tessera_types::methods;

use serde_json::Value;
use tessera_proto::{RequestOptions, meta_keys};
use tessera_runtime::{HandlerResult, Peer, Request};
use tessera_types::{
    Era, ErrorObject, JsonObject, NotificationMeta, RequestId, SubscriptionFilter,
    SubscriptionsAcknowledgedNotificationParams,
};
use tokio::sync::oneshot;

use crate::fanout::Fanout;
use crate::forward::{peer_error, prepare};
use crate::member::resources::ask_about_resource;
use crate::shapes::{ListenParams, Loose, MetaOf, UriOf, WithMeta, read, write};
use crate::upstream::Upstream;

/// Tagged notifications that arrived before their listener was registered
/// (kept briefly; bounded).
const ORPHANS: usize = 64;

#[derive(Debug, Default, Clone)]
struct Filter {
    tools: bool,
    prompts: bool,
    resources: bool,
    uris: BTreeSet<String>,
}

impl Filter {
    fn wants(&self, method: &str, params: Option<&JsonObject>) -> bool {
        match method {
            methods::NOTIFICATIONS_TOOLS_LIST_CHANGED => self.tools,
            methods::NOTIFICATIONS_PROMPTS_LIST_CHANGED => self.prompts,
            methods::NOTIFICATIONS_RESOURCES_LIST_CHANGED => self.resources,
            methods::NOTIFICATIONS_RESOURCES_UPDATED => params
                .map(read::<UriOf>)
                .and_then(|p| p.uri.into_valid())
                .is_some_and(|u| self.uris.contains(&u)),
            _ => false,
        }
    }
}

struct Listener {
    key: u64,
    peer: Peer,
    id: RequestId,
    /// The upstream listen request's id (forwarded streams).
    upstream: Option<RequestId>,
    filter: Filter,
}

#[derive(Default)]
struct State {
    next: u64,
    list: Vec<Listener>,
    orphans: VecDeque<(RequestId, String, Option<JsonObject>)>,
    subscribed: HashMap<String, usize>,
    /// The proxy's own listen stream (its upstream id) and the legacy
    /// sessions its notifications go to.
    fanout: Option<(RequestId, Arc<Fanout>)>,
}

/// The listen streams open through one upstream connection.
#[derive(Default)]
pub(crate) struct Listeners {
    state: Mutex<State>,
}

impl std::fmt::Debug for Listeners {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Listeners").finish_non_exhaustive()
    }
}

struct ListenerGuard {
    listeners: Arc<Listeners>,
    key: u64,
}

impl Drop for ListenerGuard {
    fn drop(&mut self) {
        if let Ok(mut s) = self.listeners.state.lock() {
            s.list.retain(|l| l.key != self.key);
        }
    }
}

/// Sets `_meta` subscription id of notification params to `id`.
pub(crate) fn tag(id: &RequestId, params: Option<&JsonObject>) -> JsonObject {
    let mut p = WithMeta::split_option(params.cloned());
    p.edit_meta(|m| {
        m.insert(
            meta_keys::SUBSCRIPTION_ID.into(),
            serde_json::to_value(id).unwrap_or(Value::Null),
        )
    });
    p.join()
}

/// The subscription id in the `_meta` of notification params.
pub(crate) fn subscription_of(params: Option<&JsonObject>) -> Option<RequestId> {
    let meta = read::<MetaOf<NotificationMeta>>(params?)
        .meta
        .into_valid()?;
    meta.subscription_id
}

impl Listeners {
    fn add(
        self: &Arc<Self>,
        peer: Peer,
        id: RequestId,
        upstream: Option<RequestId>,
        filter: Filter,
    ) -> ListenerGuard {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let key = s.next;
        s.next += 1;
        // Deliver what arrived before the listener was known.
        if let Some(u) = &upstream {
            let (mine, rest): (Vec<_>, Vec<_>) = s.orphans.drain(..).partition(|(o, _, _)| o == u);
            s.orphans = rest.into();
            for (_, method, params) in mine {
                let _ = peer.notify(method, Some(tag(&id, params.as_ref())), Some(id.clone()));
            }
        }
        s.list.push(Listener {
            key,
            peer,
            id,
            upstream,
            filter,
        });
        ListenerGuard {
            listeners: self.clone(),
            key,
        }
    }

    /// Makes `upstream` (the id of the proxy's own listen request) the
    /// stream whose notifications go to the sessions of `fanout`.
    pub fn set_fanout(&self, upstream: RequestId, fanout: Arc<Fanout>) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let (mine, rest): (Vec<_>, Vec<_>) =
            s.orphans.drain(..).partition(|(o, _, _)| *o == upstream);
        s.orphans = rest.into();
        for (_, method, params) in mine {
            fanout.deliver(&method, params.as_ref());
        }
        s.fanout = Some((upstream, fanout));
    }

    /// Forgets the proxy's own listen stream.
    pub fn clear_fanout(&self) {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).fanout = None;
    }

    /// Passes on a notification of a forwarded listen stream; `false` when it
    /// carries no subscription id.
    pub fn route_tagged(&self, method: &str, params: Option<&JsonObject>) -> bool {
        let Some(sub) = subscription_of(params) else {
            return false;
        };
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((id, fanout)) = &s.fanout {
            if *id == sub {
                fanout.deliver(method, params);
                return true;
            }
        }
        match s.list.iter().find(|l| l.upstream.as_ref() == Some(&sub)) {
            Some(l) => {
                let _ = l
                    .peer
                    .notify(method, Some(tag(&l.id, params)), Some(l.id.clone()));
            }
            None => {
                if s.orphans.len() >= ORPHANS {
                    s.orphans.pop_front();
                }
                s.orphans
                    .push_back((sub, method.to_owned(), params.cloned()));
            }
        }
        true
    }

    /// Turns an untagged change notification from a legacy upstream into
    /// tagged ones on every translated stream that asked for it.
    pub fn broadcast(&self, method: &str, params: Option<&JsonObject>) {
        let s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        for l in s.list.iter().filter(|l| l.upstream.is_none()) {
            if l.filter.wants(method, params) {
                let _ = l
                    .peer
                    .notify(method, Some(tag(&l.id, params)), Some(l.id.clone()));
            }
        }
    }

    /// Counts one more listener of `uri`; `true` for the first.
    fn subscribe(&self, uri: &str) -> bool {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let n = s.subscribed.entry(uri.to_owned()).or_insert(0);
        *n += 1;
        *n == 1
    }

    /// Counts one listener of `uri` less; `true` for the last.
    fn unsubscribe(&self, uri: &str) -> bool {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        match s.subscribed.get_mut(uri) {
            Some(n) if *n > 1 => {
                *n -= 1;
                false
            }
            Some(_) => {
                s.subscribed.remove(uri);
                true
            }
            None => false,
        }
    }
}

/// Forwards a listen request to a 2026-07-28 upstream.
pub(crate) async fn forward(
    up: &Upstream,
    listeners: &Arc<Listeners>,
    r: &Request,
) -> HandlerResult {
    let (tx, rx) = oneshot::channel();
    let params = prepare(
        r.params.as_ref().map(|p| p.object().clone()),
        r,
        Era::Modern,
        None,
    );
    let options = RequestOptions {
        no_timeout: true,
        ..RequestOptions::default()
    };
    let call = up
        .peer
        .request_with_id(methods::SUBSCRIPTIONS_LISTEN, params, options, tx);
    tokio::pin!(call);
    let mut assigned = Some(rx);
    let mut _guard = None;
    loop {
        tokio::select! {
            biased;
            _ = r.cancel.cancelled() => return Err(ErrorObject::internal("cancelled by the client")),
            id = async { assigned.as_mut().expect("guarded by the branch condition").await }, if assigned.is_some() => {
                assigned = None;
                if let Ok(id) = id {
                    _guard = Some(listeners.add(r.peer.clone(), r.id.clone(), Some(id), Filter::default()));
                }
            }
            out = &mut call => {
                let result = out.map_err(|e| peer_error(methods::SUBSCRIPTIONS_LISTEN, e))?;
                return Ok(tag(&r.id, Some(&result)));
            }
        }
    }
}

/// A requested flag (`key` names it in the error when it is not a boolean).
fn flag(requested: &Loose<bool>, key: &str) -> Result<bool, ErrorObject> {
    match requested {
        Loose::Absent => Ok(false),
        Loose::Valid(b) => Ok(*b),
        Loose::Malformed(_) => Err(ErrorObject::invalid_params(format!(
            "Invalid params: notifications.{key} must be a boolean"
        ))),
    }
}

/// Serves a listen request in front of a legacy upstream.
pub(crate) async fn translate(
    up: &Upstream,
    listeners: &Arc<Listeners>,
    r: &Request,
) -> HandlerResult {
    let params: ListenParams = r
        .params
        .as_ref()
        .map(|p| read(p.object()))
        .unwrap_or_default();
    let requested = match params.notifications {
        Loose::Valid(f) => f,
        Loose::Malformed(_) => {
            return Err(ErrorObject::invalid_params(
                "Invalid params: notifications must be an object",
            ));
        }
        Loose::Absent => {
            return Err(ErrorObject::invalid_params(
                "Invalid params: subscriptions/listen needs a notifications filter",
            ));
        }
    };
    let caps = &up.connected.server_capabilities;
    let mut filter = Filter {
        tools: flag(&requested.tools_list_changed, "toolsListChanged")?
            && caps.tools.as_ref().and_then(|c| c.list_changed) == Some(true),
        prompts: flag(&requested.prompts_list_changed, "promptsListChanged")?
            && caps.prompts.as_ref().and_then(|c| c.list_changed) == Some(true),
        resources: flag(&requested.resources_list_changed, "resourcesListChanged")?
            && caps.resources.as_ref().and_then(|c| c.list_changed) == Some(true),
        uris: BTreeSet::new(),
    };
    let can_subscribe = caps.resources.as_ref().and_then(|c| c.subscribe) == Some(true);
    match requested.resource_subscriptions {
        Loose::Absent => {}
        Loose::Valid(uris) => {
            for u in uris {
                let Loose::Valid(u) = u else {
                    return Err(ErrorObject::invalid_params(
                        "Invalid params: notifications.resourceSubscriptions must be strings",
                    ));
                };
                if can_subscribe {
                    filter.uris.insert(u);
                }
            }
        }
        Loose::Malformed(_) => {
            return Err(ErrorObject::invalid_params(
                "Invalid params: notifications.resourceSubscriptions must be an array",
            ));
        }
    }
    let mut subscribed = Vec::new();
    for uri in filter.uris.clone() {
        if listeners.subscribe(&uri) {
            if let Err(e) = ask_about_resource(&up.peer, methods::RESOURCES_SUBSCRIBE, &uri).await {
                tracing::debug!(%uri, %e, "upstream refused a resource subscription");
                listeners.unsubscribe(&uri);
                filter.uris.remove(&uri);
                continue;
            }
        }
        subscribed.push(uri);
    }
    let granted = SubscriptionsAcknowledgedNotificationParams {
        meta: None,
        notifications: SubscriptionFilter {
            tools_list_changed: filter.tools.then_some(true),
            prompts_list_changed: filter.prompts.then_some(true),
            resources_list_changed: filter.resources.then_some(true),
            resource_subscriptions: (!filter.uris.is_empty())
                .then(|| filter.uris.iter().cloned().collect()),
            task_ids: None,
        },
    };
    let ack = write(&granted)?;
    let guard = listeners.add(r.peer.clone(), r.id.clone(), None, filter);
    let _ = r.peer.notify(
        methods::NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED,
        Some(tag(&r.id, Some(&ack))),
        Some(r.id.clone()),
    );
    tokio::select! {
        _ = r.cancel.cancelled() => {}
        _ = up.peer_closed() => {}
    }
    drop(guard);
    for uri in subscribed {
        if listeners.unsubscribe(&uri) {
            let peer = up.peer.clone();
            tokio::spawn(async move {
                let _ = ask_about_resource(&peer, methods::RESOURCES_UNSUBSCRIBE, &uri).await;
            });
        }
    }
    Ok(tag(&r.id, None))
}
