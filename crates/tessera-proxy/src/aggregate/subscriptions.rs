//! Resource subscriptions through an [`Aggregator`](super::Aggregator): a
//! legacy session's `resources/subscribe` and `resources/unsubscribe`, and
//! `subscriptions/listen` (2026-07-28), counted per [`Topic`] so that an
//! upstream is asked once per URI, and, when it is reached on one
//! connection per caller, once per caller and URI, through that caller's
//! own connection (whose updates then go to that caller's streams alone).
//! A 2026-07-28 upstream gets a listen stream per subscription instead of
//! `resources/subscribe` (see the member's `resources` module).

use std::collections::BTreeSet;
use std::sync::Arc;

use tessera_runtime::Request;
use tessera_types::{
    ErrorObject, JsonObject, SubscriptionFilter, SubscriptionsAcknowledgedNotificationParams,
    methods,
};

use super::{Inner, required_str};
use crate::caller::Visible;
use crate::hub::{Listener, Topic};
use crate::listen::tag;
use crate::policy::ItemKind;
use crate::shapes::{Addressed, ListenParams, Loose, read, write};
use tessera_runtime::HandlerResult;
use tokio_util::sync::CancellationToken;

/// Why a subscription is refused whose URI a reload of the configuration
/// stopped serving while it was being made.
fn unserved(uri: &str) -> ErrorObject {
    ErrorObject::invalid_params(format!(
        "Invalid params: {uri:?} is no longer served: the gateway's configuration changed \
         while it was being subscribed to (list the resources again)"
    ))
}

impl Inner {
    /// `resources/subscribe` and `resources/unsubscribe` of a legacy session:
    /// counted, so that the upstream is asked once per topic, in the order
    /// its subscribers came and went ([`Inner::made`], [`Inner::ended`]).
    ///
    /// A `resources/unsubscribe` ends the session's subscription whatever
    /// the upstream answers when it is asked in turn (this session being
    /// the last here): what the session asked is that the proxy stop
    /// telling it of the resource, and the proxy does, as updates go only
    /// to the sessions holding the subscription here. An upstream refusing
    /// may go on holding its subscription and sending updates: they reach
    /// nobody, and the proxy does not count on that subscription (the next
    /// subscriber asks the upstream again); it ends with the connection,
    /// or with the next unsubscription it accepts. Only a refusal before
    /// the upstream is asked (a rate limit) refuses the request, and the
    /// session keeps its subscription.
    pub(super) async fn subscription(&self, r: &Request, subscribe: bool) -> HandlerResult {
        let params: Addressed = r
            .params
            .as_ref()
            .map(|p| read(p.object()))
            .unwrap_or_default();
        let uri = required_str(&params.uri, "uri")?.to_owned();
        let visible = Visible::of(&self.policy, &self.limits, r);
        let Some((member, rest)) = self
            .by_uri(&uri)
            .filter(|(m, rest)| visible.allows(&m.entry.name, ItemKind::Resource, rest))
        else {
            return Err(ErrorObject::invalid_params(format!(
                "Invalid params: no resource {uri:?} is available to this caller"
            )));
        };
        let rest = rest.to_owned();
        let caller = member.caller_key(r)?;
        let mut topic = Topic {
            caller,
            naming: member.naming.clone(),
            uri,
        };
        // Held by the session and counted under one lock, so that a
        // session seen ended ([`super::sessions`]) counts out exactly what
        // it held.
        let counted = {
            let mut s = self.hub.sessions.lock().unwrap_or_else(|e| e.into_inner());
            let subs = self.session(&mut s, &r.peer);
            if subscribe {
                subs.insert(topic.clone()) && self.hub.subscribe(&topic)
            } else {
                // The session's subscription to the URI, under whichever
                // caller key it was made: a token refreshed since changes
                // the key, not the subscription.
                match subs
                    .iter()
                    .find(|t| t.uri == topic.uri && t.naming == topic.naming)
                    .cloned()
                {
                    Some(held) => {
                        subs.remove(&held);
                        topic = held;
                        self.hub.unsubscribe(&topic)
                    }
                    None => false,
                }
            }
        };
        if !subscribe && topic.caller != caller {
            // Made through the connection of the caller's earlier token: it
            // ends there, whatever this request's connection is.
            if counted {
                self.release(topic);
            }
            return Ok(JsonObject::new());
        }
        if counted {
            if let Err(e) = visible
                .spend(r, &member.entry.name, ItemKind::Resource, &rest)
                .await
            {
                if subscribe {
                    self.back_out(r, &topic);
                    return Err(e);
                }
                // Refused before the upstream was asked: the session keeps
                // its subscription (ended with the session at the latest).
                let kept = {
                    let mut s = self.hub.sessions.lock().unwrap_or_else(|e| e.into_inner());
                    match s.iter_mut().find(|(p, _)| p.same_connection(&r.peer)) {
                        Some((_, subs)) => {
                            if subs.insert(topic.clone()) {
                                self.hub.subscribe(&topic);
                            }
                            true
                        }
                        None => false,
                    }
                };
                if !kept {
                    self.release(topic);
                }
                return Err(e);
            }
        }
        if !subscribe {
            if counted {
                self.ended(Some(r), &topic).await;
            }
            return Ok(JsonObject::new());
        }
        // Every subscriber waits its turn, the first or not: answered, the
        // upstream holds the subscription.
        if let Err(e) = self.made(r, &topic).await {
            self.back_out(r, &topic);
            return Err(e);
        }
        // Recorded under the configuration current now: a reload that
        // stopped serving the URI meanwhile ended the session's
        // subscription, or is about to.
        let served = self.by_topic(&topic).is_some();
        let held = {
            let mut s = self.hub.sessions.lock().unwrap_or_else(|e| e.into_inner());
            s.iter_mut()
                .find(|(p, _)| p.same_connection(&r.peer))
                .is_some_and(|(_, subs)| subs.contains(&topic))
        };
        match (served, held) {
            (true, true) => Ok(JsonObject::new()),
            (false, _) => {
                self.back_out(r, &topic);
                Err(unserved(&topic.uri))
            }
            (true, false) => Err(ErrorObject::internal(format!(
                "the subscription to {:?} ended while it was being made",
                topic.uri
            ))),
        }
    }

    /// Takes back the subscription to `topic` that the legacy session of
    /// `r` was counted in for (a subscription refused), if it still holds
    /// it.
    fn back_out(&self, r: &Request, topic: &Topic) {
        let last = {
            let mut s = self.hub.sessions.lock().unwrap_or_else(|e| e.into_inner());
            s.iter_mut()
                .find(|(p, _)| p.same_connection(&r.peer))
                .is_some_and(|(_, subs)| subs.remove(topic))
                && self.hub.unsubscribe(topic)
        };
        if last {
            self.release(topic.clone());
        }
    }

    /// Ends `topic` upstream in the background ([`Inner::ended`]), once
    /// its last subscriber here has been counted out.
    pub(super) fn release(&self, topic: Topic) {
        let Some(inner) = self.me.upgrade() else {
            return;
        };
        tokio::spawn(async move { inner.ended(None, &topic).await });
    }

    /// Makes the upstream hold `topic`, counted in for the caller of `r`,
    /// in its turn: asked unless it holds it already, through the upstream
    /// that serves the topic's URI in the configuration current then; the
    /// error says why it was refused, or that a reload stopped serving the
    /// URI meanwhile.
    async fn made(&self, r: &Request, topic: &Topic) -> Result<(), ErrorObject> {
        let turn = self.hub.turn(topic).await;
        let gate = tokio::sync::OwnedMutexGuard::mutex(&turn);
        loop {
            match self.hub.state(topic, gate) {
                None => return Err(unserved(&topic.uri)),
                Some((0, upstream)) => {
                    // Its subscribers left while it waited.
                    self.hub.set_upstream(topic, gate, upstream);
                    return Ok(());
                }
                Some((_, true)) => return Ok(()),
                Some((_, false)) => {}
            }
            let Some((member, rest)) = self.by_topic(topic) else {
                self.hub.set_upstream(topic, gate, false);
                return Err(unserved(&topic.uri));
            };
            let asked = member.subscribe(r, topic.caller, rest).await;
            // A reload while the upstream was asked: the subscription is
            // recorded under the configuration current now, or refused.
            let now = self.by_topic(topic).map(|(m, _)| m);
            if self.hub.state(topic, gate).is_none() || now.is_none() {
                // Its URI is no longer served (and its connection closed
                // with its upstream).
                return Err(unserved(&topic.uri));
            }
            match asked {
                Ok(()) => {
                    // Made on the connection of the upstream serving it
                    // now, or carried to its new one (which made again
                    // every subscription counted then).
                    self.hub.set_upstream(topic, gate, true);
                    return Ok(());
                }
                Err(_) if now.is_some_and(|m| !Arc::ptr_eq(&m, &member)) => {
                    // Its upstream was replaced (same names): asked again,
                    // of the new one, unless it already holds it.
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Ends `topic` upstream in its turn if nobody here holds it any more
    /// and the upstream does, for the caller of `r` (`None`: in the
    /// background). A refusal is logged: the upstream is no longer counted
    /// on to hold it (see [`Inner::subscription`]).
    async fn ended(&self, r: Option<&Request>, topic: &Topic) {
        let turn = self.hub.turn(topic).await;
        let gate = tokio::sync::OwnedMutexGuard::mutex(&turn);
        let Some((count, upstream)) = self.hub.state(topic, gate) else {
            return;
        };
        if count > 0 || !upstream {
            self.hub.set_upstream(topic, gate, upstream);
            return;
        }
        if let Some((member, rest)) = self.by_topic(topic) {
            let asked = match r {
                Some(r) => member
                    .unsubscribe_now(r, topic.caller, rest)
                    .await
                    .map_err(|e| e.message),
                None => member.end_subscription(topic.caller, rest).await,
            };
            if let Err(error) = asked {
                tracing::warn!(upstream = %member.entry.name, uri = %topic.uri, %error, "the upstream refused to end a subscription nobody here holds: its updates are dropped");
            }
        }
        self.hub.set_upstream(topic, gate, false);
    }

    /// The topics of the prefixed `uris` the caller of `r` may subscribe
    /// to, each made upstream in its turn (those the upstream refuses are
    /// left out).
    async fn subscribe_all<'a>(
        &self,
        r: &Request,
        uris: impl Iterator<Item = &'a String>,
    ) -> BTreeSet<Topic> {
        let visible = Visible::of(&self.policy, &self.limits, r);
        let mut topics = BTreeSet::new();
        for u in uris {
            let Some((m, _)) = self
                .by_uri(u)
                .filter(|(m, rest)| visible.allows(&m.entry.name, ItemKind::Resource, rest))
            else {
                continue;
            };
            let Ok(caller) = m.caller_key(r) else {
                continue;
            };
            let topic = Topic {
                caller,
                naming: m.naming.clone(),
                uri: u.to_owned(),
            };
            if topics.contains(&topic) {
                continue;
            }
            self.hub.subscribe(&topic);
            if let Err(e) = self.made(r, &topic).await {
                tracing::debug!(upstream = %m.entry.name, error = %e.message, "subscription refused");
                if self.hub.unsubscribe(&topic) {
                    self.release(topic);
                }
                continue;
            }
            topics.insert(topic);
        }
        topics
    }

    /// `subscriptions/listen` (2026-07-28), served by the aggregator.
    pub(super) async fn listen(&self, r: &Request) -> HandlerResult {
        let params: ListenParams = r
            .params
            .as_ref()
            .map(|p| read(p.object()))
            .unwrap_or_default();
        let Loose::Valid(requested) = params.notifications else {
            return Err(ErrorObject::invalid_params(
                "Invalid params: subscriptions/listen needs a notifications object",
            ));
        };
        let on = |flag: &Loose<bool>| flag.valid() == Some(&true);
        let tools = on(&requested.tools_list_changed);
        let prompts = on(&requested.prompts_list_changed);
        let resources = on(&requested.resources_list_changed);
        let lists = tools || prompts || resources;
        let topics = match &requested.resource_subscriptions {
            Loose::Valid(a) => {
                self.subscribe_all(r, a.iter().filter_map(Loose::valid))
                    .await
            }
            _ => BTreeSet::new(),
        };
        let key = self
            .hub
            .next
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let end = CancellationToken::new();
        // Listed first, then held to the configuration current now: a
        // reload that stopped serving a URI while it was being subscribed
        // to either sees this stream, or came before this look.
        let topics = {
            let mut l = self.hub.listeners.lock().unwrap_or_else(|e| e.into_inner());
            let (kept, gone): (BTreeSet<Topic>, BTreeSet<Topic>) =
                topics.into_iter().partition(|t| self.by_topic(t).is_some());
            l.push(Listener {
                key,
                peer: r.peer.clone(),
                id: r.id.clone(),
                lists,
                topics: kept.clone(),
                end: end.clone(),
            });
            for t in gone {
                if self.hub.unsubscribe(&t) {
                    self.release(t);
                }
            }
            kept
        };
        let uris: BTreeSet<&str> = topics.iter().map(|t| t.uri.as_str()).collect();
        let granted = SubscriptionsAcknowledgedNotificationParams {
            meta: None,
            notifications: SubscriptionFilter {
                tools_list_changed: tools.then_some(true),
                prompts_list_changed: prompts.then_some(true),
                resources_list_changed: resources.then_some(true),
                resource_subscriptions: (!uris.is_empty())
                    .then(|| uris.iter().map(|u| (*u).to_owned()).collect()),
                task_ids: None,
            },
        };
        let ack = write(&granted)?;
        let _ = r.peer.notify(
            methods::NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED,
            Some(tag(&r.id, Some(&ack))),
            Some(r.id.clone()),
        );
        // Until the client cancels, or a reload leaves one of its
        // subscriptions unserved ([`crate::hub::Hub::end_unserved`]).
        tokio::select! {
            _ = r.cancel.cancelled() => {}
            _ = end.cancelled() => {}
        }
        // The topics it holds now (those a reload ended are already
        // forgotten).
        let held = {
            let mut l = self.hub.listeners.lock().unwrap_or_else(|e| e.into_inner());
            let i = l.iter().position(|l| l.key == key);
            i.map(|i| l.remove(i).topics).unwrap_or_default()
        };
        for t in held {
            if self.hub.unsubscribe(&t) {
                self.release(t);
            }
        }
        Ok(tag(&r.id, None))
    }
}
