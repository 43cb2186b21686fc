//! Who hears about an aggregating proxy's changes: its legacy sessions and
//! `subscriptions/listen` streams, and the upstream resource subscriptions
//! they hold, counted so that each upstream is asked once per URI (once per
//! caller and URI for an upstream reached on one connection per caller).
//!
//! An upstream reached per caller ([`crate::callers`]) tells each of its
//! connections of the same change: its list changes are coalesced
//! ([`crate::echoes`]) so that a session hears of each change once, and its
//! resource updates go only to the streams that subscribed through the
//! connection the update came on (the caller's own).

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use tessera_runtime::Peer;
use tessera_types::{JsonObject, RequestId, ResourceUpdatedNotificationParams, methods};
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::echoes::Echoes;
use crate::listen::tag;
use crate::naming::Naming;
use crate::shapes::{UriOf, read, write};

/// The list-change notifications.
const LIST_KINDS: [&str; 3] = [
    methods::NOTIFICATIONS_TOOLS_LIST_CHANGED,
    methods::NOTIFICATIONS_PROMPTS_LIST_CHANGED,
    methods::NOTIFICATIONS_RESOURCES_LIST_CHANGED,
];

/// One resource subscription: the URI clients see, and the key of the caller
/// whose connection carries it upstream (`None` on a pooled connection).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Topic {
    /// The caller's key ([`crate::caller_auth`]), for an upstream reached
    /// per caller.
    pub caller: Option<[u8; 32]>,
    /// How the upstream showed the URI: a subscription made before its
    /// names changed (a reload) is not its own after.
    pub naming: Naming,
    /// The URI clients see ([`Naming::uri`]).
    pub uri: String,
}

/// Which connection a notification came on: one caller's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Origin {
    /// The connection, unique in the process.
    pub conn: u64,
    /// The caller's key.
    pub caller: [u8; 32],
}

/// A `subscriptions/listen` stream served by the aggregator.
pub(crate) struct Listener {
    pub key: u64,
    pub peer: Peer,
    pub id: RequestId,
    pub lists: bool,
    pub topics: BTreeSet<Topic>,
    /// Ends the stream gracefully (the aggregator answers the request):
    /// fired when one of its subscriptions is no longer served.
    pub end: CancellationToken,
}

/// The subscribers of one [`Topic`] here, and what its upstream was last
/// made to hold.
#[derive(Default)]
struct Counted {
    /// The sessions and listen streams that hold it.
    count: usize,
    /// Whether the upstream was last asked to hold it and did (on the
    /// connection carrying it): when it may hold it without our knowing
    /// (an unsubscribe it refused), this says no, so that the next
    /// subscriber asks again rather than trust it.
    upstream: bool,
    /// Held across each exchange with the upstream about the topic, so
    /// that they reach it one after the other, each deciding from the
    /// count it finds ([`Gate`]).
    gate: Gate,
    /// How many exchanges wait for their turn.
    queued: usize,
}

/// One exchange counted as waiting for its turn ([`Hub::turn`]), until
/// it has it or is given up.
struct Queued<'a> {
    hub: &'a Hub,
    topic: &'a Topic,
    gate: &'a Gate,
}

impl Drop for Queued<'_> {
    fn drop(&mut self) {
        {
            let mut s = self
                .hub
                .subscribed
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            if let Some(c) = s
                .get_mut(self.topic)
                .filter(|c| Arc::ptr_eq(&c.gate, self.gate))
            {
                c.queued -= 1;
            }
        }
        self.hub.counted.send_modify(|n| *n += 1);
    }
}

/// The lock that orders a topic's `resources/subscribe` and
/// `resources/unsubscribe` (or listen streams) to its upstream.
pub(crate) type Gate = Arc<tokio::sync::Mutex<()>>;

/// Who hears about changes: legacy sessions and listen streams.
#[derive(Default)]
pub(crate) struct Hub {
    pub next: std::sync::atomic::AtomicU64,
    /// The legacy sessions and the subscriptions each holds, from their
    /// start to their end (watched by the aggregator).
    pub sessions: Mutex<Vec<(Peer, BTreeSet<Topic>)>>,
    pub listeners: Mutex<Vec<Listener>>,
    /// Upstream resource subscriptions, counted by topic.
    subscribed: Mutex<HashMap<Topic, Counted>>,
    /// Bumped whenever a topic's count of subscribers changes
    /// ([`Hub::wait_subscribers`]).
    counted: watch::Sender<u64>,
    /// The list changes of per-caller connections lately passed on.
    echoes: Echoes,
    /// Counts the changes of what new sessions are told in their handshake
    /// (the upstreams, or the only upstream's instructions).
    pub told: std::sync::atomic::AtomicU64,
}

impl Hub {
    /// Tells every session and listener that the lists may have changed.
    pub(crate) fn lists_changed(&self) {
        for m in LIST_KINDS {
            self.announce_list(m);
        }
    }

    /// Forgets the legacy session on `peer`'s connection (it ended) and
    /// counts out the subscriptions it held; returns those that nobody
    /// holds now, to be ended upstream.
    pub(crate) fn session_ended(&self, peer: &Peer) -> Vec<Topic> {
        let held = {
            let mut s = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
            match s.iter().position(|(p, _)| p.same_connection(peer)) {
                Some(i) => s.remove(i).1,
                None => return Vec::new(),
            }
        };
        held.into_iter().filter(|t| self.unsubscribe(t)).collect()
    }

    fn announce_list(&self, method: &str) {
        let s = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
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

    fn resource_updated(&self, topic: &Topic) {
        let Ok(p) = write(&ResourceUpdatedNotificationParams::new(&topic.uri)) else {
            return;
        };
        let s = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        for (peer, _) in s.iter().filter(|(_, subs)| subs.contains(topic)) {
            let _ = peer.notify(
                methods::NOTIFICATIONS_RESOURCES_UPDATED,
                Some(p.clone()),
                None,
            );
        }
        drop(s);
        let l = self.listeners.lock().unwrap_or_else(|e| e.into_inner());
        for x in l.iter().filter(|x| x.topics.contains(topic)) {
            let _ = x.peer.notify(
                methods::NOTIFICATIONS_RESOURCES_UPDATED,
                Some(tag(&x.id, Some(&p))),
                Some(x.id.clone()),
            );
        }
    }

    /// A notification from the upstream named by `naming` that belongs to
    /// no request, received on a caller's own connection (`origin`) or on
    /// the pooled one.
    pub(crate) fn announce(
        &self,
        naming: &Naming,
        origin: Option<Origin>,
        method: &str,
        params: Option<&JsonObject>,
    ) {
        let name = naming.upstream();
        if LIST_KINDS.contains(&method) {
            let first =
                origin.is_none_or(|o| self.echoes.first(name, method, o.conn, Instant::now()));
            if first {
                self.announce_list(method);
            } else {
                tracing::debug!(upstream = %name, %method, "the same change, heard on another caller's connection");
            }
        } else if method == methods::NOTIFICATIONS_RESOURCES_UPDATED {
            if let Some(uri) = params.and_then(|p| read::<UriOf>(p).uri.into_valid()) {
                self.resource_updated(&Topic {
                    caller: origin.map(|o| o.caller),
                    naming: naming.clone(),
                    uri: naming.uri(&uri),
                });
            }
        } else {
            tracing::debug!(upstream = %name, %method, "notification not passed on: no client to send it to");
        }
    }

    /// Ends the subscriptions made under a naming that is not among
    /// `serving` (their upstream was removed, renamed, or changed whether it
    /// is prefixed: the URIs they were made under no longer name its
    /// resources). Their upstream connection was closed with the upstream,
    /// taking its subscriptions with it; here they are forgotten: a legacy
    /// session is sent a last `notifications/resources/updated` of each
    /// (reading it again tells it the resource is gone), and a listen
    /// stream holding one is ended gracefully (its client may listen again,
    /// and the acknowledgement says what is served now). Returns how many
    /// subscriptions of sessions and streams ended.
    pub(crate) fn end_unserved(&self, serving: &[&Naming]) -> usize {
        let gone = |t: &Topic| !serving.contains(&&t.naming);
        self.subscribed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|t, _| !gone(t));
        self.counted.send_modify(|n| *n += 1);
        let mut ended = 0;
        let mut s = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        for (peer, subs) in s.iter_mut() {
            let (dead, kept): (BTreeSet<Topic>, BTreeSet<Topic>) =
                std::mem::take(subs).into_iter().partition(|t| gone(t));
            *subs = kept;
            for t in dead {
                ended += 1;
                if let Ok(p) = write(&ResourceUpdatedNotificationParams::new(&t.uri)) {
                    let _ = peer.notify(methods::NOTIFICATIONS_RESOURCES_UPDATED, Some(p), None);
                }
            }
        }
        drop(s);
        let mut l = self.listeners.lock().unwrap_or_else(|e| e.into_inner());
        for x in l.iter_mut() {
            let before = x.topics.len();
            x.topics.retain(|t| !gone(t));
            if x.topics.len() < before {
                ended += before - x.topics.len();
                x.end.cancel();
            }
        }
        ended
    }

    /// Counts one more subscriber of `topic`; `true` for the first.
    pub(crate) fn subscribe(&self, topic: &Topic) -> bool {
        let first = {
            let mut s = self.subscribed.lock().unwrap_or_else(|e| e.into_inner());
            let c = s.entry(topic.clone()).or_default();
            c.count += 1;
            c.count == 1
        };
        self.counted.send_modify(|n| *n += 1);
        first
    }

    /// Counts one subscriber of `topic` less; `true` for the last.
    pub(crate) fn unsubscribe(&self, topic: &Topic) -> bool {
        let last = {
            let mut s = self.subscribed.lock().unwrap_or_else(|e| e.into_inner());
            let Some(c) = s.get_mut(topic).filter(|c| c.count > 0) else {
                return false;
            };
            c.count -= 1;
            let last = c.count == 0;
            if last && !c.upstream && Arc::strong_count(&c.gate) == 1 {
                s.remove(topic);
            }
            last
        };
        self.counted.send_modify(|n| *n += 1);
        last
    }

    /// Waits for the turn of an exchange with the upstream about `topic`
    /// (after those before it), and holds it until the guard is dropped;
    /// the guard's mutex is the topic's [`Gate`] (kept, with the topic,
    /// until it has no subscriber, nothing upstream and no exchange under
    /// way or waiting).
    pub(crate) async fn turn(&self, topic: &Topic) -> tokio::sync::OwnedMutexGuard<()> {
        let gate = {
            let mut s = self.subscribed.lock().unwrap_or_else(|e| e.into_inner());
            let c = s.entry(topic.clone()).or_default();
            c.queued += 1;
            c.gate.clone()
        };
        self.counted.send_modify(|n| *n += 1);
        let queued = Queued {
            hub: self,
            topic,
            gate: &gate,
        };
        let turn = gate.clone().lock_owned().await;
        drop(queued);
        turn
    }

    /// How many exchanges with upstreams about the subscription to `uri`
    /// (as clients see it) wait for their turn.
    pub(crate) fn queued(&self, uri: &str) -> usize {
        self.total(uri, |c| c.queued)
    }

    /// The sum of `of` over the topics of `uri` (as clients see it), on
    /// every connection.
    fn total(&self, uri: &str, of: fn(&Counted) -> usize) -> usize {
        self.subscribed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter(|(t, _)| t.uri == uri)
            .map(|(_, c)| of(c))
            .sum()
    }

    /// Waits until [`Hub::queued`] of `uri` is `n`.
    pub(crate) async fn wait_queued(&self, uri: &str, n: usize) {
        let mut rx = self.counted.subscribe();
        let _ = rx.wait_for(|_| self.queued(uri) == n).await;
    }

    /// How many subscribers `topic` has, and whether its upstream holds
    /// it, if `gate` is still its lock (`None`: the topic was ended since,
    /// by a reload that no longer serves its names).
    pub(crate) fn state(&self, topic: &Topic, gate: &Gate) -> Option<(usize, bool)> {
        let s = self.subscribed.lock().unwrap_or_else(|e| e.into_inner());
        s.get(topic)
            .filter(|c| Arc::ptr_eq(&c.gate, gate))
            .map(|c| (c.count, c.upstream))
    }

    /// Records whether the upstream holds `topic` now (asked under
    /// `gate`, which must still be its lock); the topic is forgotten when
    /// nothing holds it any more and nobody else waits on `gate` (the
    /// caller holds one clone of it).
    pub(crate) fn set_upstream(&self, topic: &Topic, gate: &Gate, upstream: bool) {
        let mut s = self.subscribed.lock().unwrap_or_else(|e| e.into_inner());
        let Some(c) = s.get_mut(topic).filter(|c| Arc::ptr_eq(&c.gate, gate)) else {
            return;
        };
        c.upstream = upstream;
        // This map's and the caller's.
        if c.count == 0 && !upstream && Arc::strong_count(&c.gate) <= 2 {
            s.remove(topic);
        }
    }

    /// The URIs (the upstream's own) of the resources of the upstream
    /// named by `naming` to be subscribed to on a new connection of
    /// `caller` (`None`: the pooled one): those with a subscriber. The new
    /// connection holds nothing else, and is taken to hold those.
    pub(crate) fn topics(&self, naming: &Naming, caller: Option<[u8; 32]>) -> Vec<String> {
        let mut s = self.subscribed.lock().unwrap_or_else(|e| e.into_inner());
        s.retain(|t, c| {
            if t.caller == caller && t.naming == *naming {
                c.upstream = c.count > 0;
            }
            c.count > 0 || c.upstream || Arc::strong_count(&c.gate) > 1
        });
        s.iter()
            .filter(|(t, c)| t.caller == caller && t.naming == *naming && c.count > 0)
            .filter_map(|(t, _)| naming.own_uri(&t.uri).map(str::to_owned))
            .collect()
    }

    /// Whether `topic` has a subscriber.
    pub(crate) fn is_subscribed(&self, topic: &Topic) -> bool {
        self.subscribed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(topic)
            .is_some_and(|c| c.count > 0)
    }

    /// How many sessions and streams hold a subscription to `uri` (as
    /// clients see it), on any connection.
    pub(crate) fn subscribers(&self, uri: &str) -> usize {
        self.total(uri, |c| c.count)
    }

    /// Waits until [`Hub::subscribers`] of `uri` is `n`.
    pub(crate) async fn wait_subscribers(&self, uri: &str, n: usize) {
        let mut rx = self.counted.subscribe();
        // The sender lives as long as `self`: never closed while waited on.
        let _ = rx.wait_for(|_| self.subscribers(uri) == n).await;
    }

    /// Whether the caller `key` holds a resource subscription, or its
    /// upstream may (its connection carries it, so it must stay open).
    pub(crate) fn holds(&self, key: &[u8; 32]) -> bool {
        self.subscribed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .any(|(t, c)| t.caller.as_ref() == Some(key) && (c.count > 0 || c.upstream))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_upstreams_topics_are_those_made_under_its_naming_now() {
        // A subscription made while upstream `a` was prefixed is not one
        // of its own once it is shown unprefixed (after a reload).
        let hub = Hub::default();
        let old = Naming::prefixed("a");
        let new = Naming::unprefixed("a");
        for (naming, uri) in [(&old, "a+mem://x"), (&new, "mem://y")] {
            assert!(hub.subscribe(&Topic {
                caller: None,
                naming: naming.clone(),
                uri: uri.into(),
            }));
        }
        assert_eq!(hub.topics(&new, None), ["mem://y"]);
        assert_eq!(hub.topics(&old, None), ["mem://x"]);
        assert!(hub.topics(&new, Some([0; 32])).is_empty());
    }

    #[tokio::test]
    async fn a_topic_is_kept_while_its_upstream_holds_it_and_forgotten_after() {
        let hub = Hub::default();
        let naming = Naming::prefixed("a");
        let topic = Topic {
            caller: None,
            naming: naming.clone(),
            uri: "a+mem://x".into(),
        };
        // Counted, made upstream in its turn.
        assert!(hub.subscribe(&topic));
        let turn = hub.turn(&topic).await;
        let gate = tokio::sync::OwnedMutexGuard::mutex(&turn).clone();
        assert_eq!(hub.state(&topic, &gate), Some((1, false)));
        hub.set_upstream(&topic, &gate, true);
        drop(turn);
        // Its last subscriber leaves: kept until the upstream is told.
        assert!(hub.unsubscribe(&topic));
        assert_eq!(hub.state(&topic, &gate), Some((0, true)));
        assert!(!hub.is_subscribed(&topic));
        drop(gate);
        // A new connection holds nothing of it, and is not asked for it.
        assert!(hub.topics(&naming, None).is_empty());
        assert!(hub.subscribed.lock().unwrap().is_empty(), "forgotten");
        // Counted again, then told the upstream no longer holds it.
        assert!(hub.subscribe(&topic));
        assert_eq!(hub.topics(&naming, None), ["mem://x"]);
        assert!(hub.unsubscribe(&topic));
        let turn = hub.turn(&topic).await;
        let gate = tokio::sync::OwnedMutexGuard::mutex(&turn).clone();
        assert_eq!(hub.state(&topic, &gate), Some((0, true)));
        hub.set_upstream(&topic, &gate, false);
        assert_eq!(
            hub.state(&topic, &gate),
            Some((0, false)),
            "still waited on"
        );
        drop(gate);
        hub.set_upstream(&topic, tokio::sync::OwnedMutexGuard::mutex(&turn), false);
        assert!(hub.subscribed.lock().unwrap().is_empty(), "forgotten");
        assert_eq!(hub.queued("a+mem://x"), 0);
    }
}
