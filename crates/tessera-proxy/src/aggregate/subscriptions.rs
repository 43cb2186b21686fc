//! Resource subscriptions through an [`Aggregator`](super::Aggregator): a
//! legacy session's `resources/subscribe` and `resources/unsubscribe`, and
//! `subscriptions/listen` (2026-07-28), counted per [`Topic`] so that an
//! upstream is asked once per URI, and, when it is reached on one
//! connection per caller, once per caller and URI, through that caller's
//! own connection (whose updates then go to that caller's streams alone).
//! A 2026-07-28 upstream gets a listen stream per subscription instead of
//! `resources/subscribe` (see the member's `resources` module).

use std::collections::BTreeSet;

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

impl Inner {
    /// `resources/subscribe` and `resources/unsubscribe` of a legacy session:
    /// counted, so that the upstream is asked once per topic.
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
        let ask_upstream = {
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
            if ask_upstream {
                member.unsubscribe(topic.caller, &rest);
            }
            return Ok(JsonObject::new());
        }
        if ask_upstream {
            let spent = visible
                .spend(r, &member.entry.name, ItemKind::Resource, &rest)
                .await;
            if let (Err(e), false) = (&spent, subscribe) {
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
                    member.unsubscribe(topic.caller, &rest);
                }
                return Err(e.clone());
            }
            let asked = match spent {
                Err(e) => Err(e),
                Ok(()) if subscribe => member.subscribe(r, topic.caller, &rest).await,
                Ok(()) => member.unsubscribe_now(r, topic.caller, &rest).await,
            };
            if let Err(e) = asked {
                if subscribe {
                    let mut s = self.hub.sessions.lock().unwrap_or_else(|e| e.into_inner());
                    if let Some((_, subs)) = s.iter_mut().find(|(p, _)| p.same_connection(&r.peer))
                    {
                        // Unless the session ended meanwhile (and was
                        // counted out).
                        if subs.remove(&topic) {
                            self.hub.unsubscribe(&topic);
                        }
                    }
                }
                return Err(e);
            }
            if subscribe && !self.hub.is_subscribed(&topic) {
                // The session ended while the upstream was asked, and
                // nobody else subscribed since.
                member.unsubscribe(topic.caller, &rest);
            }
        }
        Ok(JsonObject::new())
    }

    /// The topics of the prefixed `uris` the caller of `r` may subscribe
    /// to, each subscribed to upstream by its first subscriber (those the
    /// upstream refuses are left out).
    async fn subscribe_all<'a>(
        &self,
        r: &Request,
        uris: impl Iterator<Item = &'a String>,
    ) -> BTreeSet<Topic> {
        let visible = Visible::of(&self.policy, &self.limits, r);
        let mut topics = BTreeSet::new();
        for u in uris {
            let Some((m, rest)) = self
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
            if self.hub.subscribe(&topic) {
                if let Err(e) = m.subscribe(r, caller, rest).await {
                    tracing::debug!(upstream = %m.entry.name, error = %e.message, "subscription refused");
                    self.hub.unsubscribe(&topic);
                    continue;
                }
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
        let key = self
            .hub
            .next
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let end = CancellationToken::new();
        self.hub
            .listeners
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Listener {
                key,
                peer: r.peer.clone(),
                id: r.id.clone(),
                lists,
                topics,
                end: end.clone(),
            });
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
                if let Some((m, rest)) = self.by_topic(&t) {
                    m.unsubscribe(t.caller, rest);
                }
            }
        }
        Ok(tag(&r.id, None))
    }
}
