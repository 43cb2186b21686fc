//! The legacy sessions of an [`Aggregator`](super::Aggregator), watched
//! until they end: when one does (its client closed the connection or
//! deleted its HTTP session, or the session expired), the resource
//! subscriptions it held are counted out at once, and each that nobody
//! holds any more is ended upstream the way a `resources/unsubscribe`
//! would end it (on the caller's own connection for an upstream reached
//! per caller), so that it is not made again when the upstream is
//! reconnected.
//!
//! One task per aggregator watches every session; it ends with the
//! aggregator.

use std::collections::BTreeSet;
use std::sync::Weak;

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use tessera_runtime::Peer;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::Inner;
use crate::hub::Topic;

/// The legacy sessions and the subscriptions each holds.
pub(super) type Sessions = Vec<(Peer, BTreeSet<Topic>)>;

impl Inner {
    /// The subscriptions of the legacy session on `peer`'s connection in
    /// `sessions` (the hub's, locked), the session counted in and watched
    /// if it was not yet (a session carried on from stored state is first
    /// seen when it subscribes).
    pub(super) fn session<'a>(
        &self,
        sessions: &'a mut Sessions,
        peer: &Peer,
    ) -> &'a mut BTreeSet<Topic> {
        let i = match sessions.iter().position(|(p, _)| p.same_connection(peer)) {
            Some(i) => i,
            None => {
                sessions.push((peer.clone(), BTreeSet::new()));
                // The watcher is gone only with the aggregator.
                let _ = self.watch.send(peer.clone());
                sessions.len() - 1
            }
        };
        &mut sessions[i].1
    }

    /// A legacy session began (its `notifications/initialized`).
    pub(super) fn session_started(&self, peer: &Peer) {
        let mut s = self.hub.sessions.lock().unwrap_or_else(|e| e.into_inner());
        self.session(&mut s, peer);
    }

    /// The legacy session on `peer`'s connection ended: its subscriptions
    /// are counted out, and those nobody holds now are ended upstream.
    fn session_ended(&self, peer: &Peer) {
        for t in self.hub.session_ended(peer) {
            tracing::debug!(uri = %t.uri, "a session ended: its subscription ends upstream");
            self.release(t);
        }
    }
}

/// Watches the legacy sessions sent on `started` until they end, telling
/// `inner` of each end; returns when the aggregator is closed or dropped.
pub(super) async fn watch(
    inner: Weak<Inner>,
    mut started: mpsc::UnboundedReceiver<Peer>,
    stop: CancellationToken,
) {
    let mut open = FuturesUnordered::new();
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            p = started.recv() => match p {
                Some(p) => open.push(async move {
                    p.closed().await;
                    p
                }),
                None => return,
            },
            Some(p) = open.next() => {
                let Some(inner) = inner.upgrade() else {
                    return;
                };
                inner.session_ended(&p);
            }
        }
    }
}
