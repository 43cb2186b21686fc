//! A Streamable HTTP session's part in the state shared between instances:
//! its stored [`SessionState`], its bus topic, and who holds its standalone
//! stream (see [`super::super::cluster`] for the design).

use std::sync::Arc;

use bytes::Bytes;
use tessera_proto::Outbound;
use tessera_proto::decode::{self, Inbound};
use tessera_runtime::{BusSubscription, Incoming, Peer, PeerInfo, Principal, SessionState};
use tessera_types::{JsonRpcMessage, RequestId};
use tokio::sync::watch;

use super::super::cluster::{self, Cluster, HOLDER_KEY, Note};
use super::super::registry::ClientKey;
use super::{Command, EndReason, Router, SessionHandle};

/// What one copy of a session knows of the shared state.
pub(crate) struct Link {
    cluster: Arc<Cluster>,
    /// The core's session exports.
    info: watch::Receiver<PeerInfo>,
    peer: Peer,
    /// The stored state as this copy last saved or took it (`None` until the
    /// handshake is answered, for a session that began here).
    state: Option<SessionState>,
    /// The session's topic (with a bus).
    sub: Option<BusSubscription>,
    /// The instance holding the standalone stream (0: not known).
    holder: u32,
    principal: Option<String>,
    client_key: Option<String>,
}

impl Link {
    pub(super) fn new(
        cluster: Arc<Cluster>,
        handle: &SessionHandle,
        owner: Option<Principal>,
        client: &ClientKey,
        restored: Option<SessionState>,
    ) -> Self {
        let mut info = handle.peer.info();
        info.mark_unchanged();
        let holder = restored.as_ref().map_or(0, cluster::holder_of);
        if restored.is_some() {
            handle.stored_now();
        }
        Link {
            cluster,
            info,
            peer: handle.peer.clone(),
            state: restored,
            sub: None,
            holder,
            principal: owner.map(|p| p.0),
            client_key: match client {
                ClientKey::Principal(p) => Some(format!("principal:{}", p.0)),
                ClientKey::Addr(a) => Some(format!("addr:{a}")),
                ClientKey::Unknown => None,
            },
        }
    }

    /// Subscribes to the session's topic (before anything of the session is
    /// served, so no note about it is missed from then on).
    pub(super) async fn subscribe(&mut self, session: &str) {
        let Some(bus) = &self.cluster.bus else {
            return;
        };
        match bus.subscribe(&Cluster::session_topic(session)).await {
            Ok(sub) => self.sub = Some(sub),
            Err(e) => {
                tracing::warn!(%session, %e, "no bus subscription: this copy of the session hears nothing from the others");
            }
        }
    }

    pub(super) fn cluster(&self) -> &Arc<Cluster> {
        &self.cluster
    }

    /// Whether the core exported a change not saved yet (one atomic load).
    pub(super) fn changed(&self) -> bool {
        self.info.has_changed().unwrap_or(false)
    }

    /// The holder of the standalone stream when it is another instance.
    fn remote_holder(&self) -> Option<u32> {
        (self.cluster.bus.is_some() && self.holder != 0 && self.holder != self.cluster.tag)
            .then_some(self.holder)
    }
}

/// The next note on the session's topic (never, without a subscription).
pub(super) async fn next_note(link: &mut Option<Box<Link>>) -> Bytes {
    let Some(l) = link.as_mut() else {
        return std::future::pending().await;
    };
    if let Some(sub) = l.sub.as_mut() {
        if let Some(b) = sub.recv().await {
            return b;
        }
        tracing::warn!("the bus ended a session subscription");
        l.sub = None;
    }
    std::future::pending().await
}

impl Router {
    /// Saves the state the core exported (after the handshake, and after
    /// each change), then tells the other copies.
    pub(super) async fn save_state(&mut self) {
        let Some(link) = self.link.as_mut() else {
            return;
        };
        let export = link.info.borrow_and_update().session.clone();
        let Some(export) = export else {
            return;
        };
        let first = link.state.is_none();
        let state = link.state.get_or_insert_with(|| {
            let mut s = SessionState::new(&*self.session, export.snapshot.version);
            s.principal = link.principal.clone();
            s.client_key = link.client_key.clone();
            s.data
                .insert(HOLDER_KEY.into(), serde_json::json!(link.cluster.tag));
            s
        });
        state.update_from(&export);
        state.revision += 1;
        if first {
            link.holder = link.cluster.tag;
        }
        self.negotiated = Some(state.protocol_version);
        let handle = self.handle.upgrade();
        if let Err(e) = link.cluster.store.save(state, link.cluster.ttl).await {
            tracing::warn!(session = %self.session, %e, "could not store the session's state");
            if first {
                if let Some(h) = &handle {
                    *h.store_error
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(e);
                }
            }
            return;
        }
        if let Some(h) = &handle {
            h.stored_now();
        }
        if link.cluster.bus.is_some() {
            let note = Note::State(Box::new(state.clone()));
            if let Err(e) = link.cluster.publish(&self.session, note).await {
                tracing::warn!(session = %self.session, %e, "could not tell the other instances of a session change");
            }
        }
    }

    /// A message related to no request in progress here: for the standalone
    /// stream, wherever it is held.
    pub(super) async fn unrelated(&mut self, message: &Outbound, bytes: Bytes) {
        if let Some(to) = self.link.as_ref().and_then(|l| l.remote_holder()) {
            let broadcast = matches!(
                message,
                Outbound::Single(JsonRpcMessage::Notification(n)) if cluster::is_broadcast(&n.method)
            );
            if broadcast {
                // The holder's copy sends its own from the same event.
                return;
            }
            if let (Some(link), Some(raw)) = (&self.link, Note::raw(&bytes)) {
                let note = Note::Standalone { to, message: raw };
                if let Err(e) = link.cluster.publish(&self.session, note).await {
                    tracing::warn!(session = %self.session, %e, "a message for the standalone stream held by another instance was lost");
                }
            }
            return;
        }
        self.emit(self.standalone, bytes).await;
    }

    /// A GET stream opened here: this instance now holds the standalone
    /// stream, and the other copies send their messages for it here.
    pub(super) async fn claim_standalone(&mut self) {
        let Some(link) = self.link.as_mut() else {
            return;
        };
        let tag = link.cluster.tag;
        if link.cluster.bus.is_none() || link.holder == tag {
            return;
        }
        link.holder = tag;
        let Some(state) = link.state.as_mut() else {
            return;
        };
        state.data.insert(HOLDER_KEY.into(), serde_json::json!(tag));
        state.revision += 1;
        if let Err(e) = link.cluster.store.save(state, link.cluster.ttl).await {
            tracing::warn!(session = %self.session, %e, "could not store who holds the standalone stream");
        }
        let note = Note::State(Box::new(state.clone()));
        if let Err(e) = link.cluster.publish(&self.session, note).await {
            tracing::warn!(session = %self.session, %e, "could not tell the other instances where the standalone stream is");
        }
    }

    /// A note from another copy of the session.
    pub(super) async fn on_note(&mut self, bytes: Bytes) {
        let Some(link) = self.link.as_mut() else {
            return;
        };
        let Some(note) = link.cluster.read(&bytes) else {
            return;
        };
        let tag = link.cluster.tag;
        match note {
            Note::State(state) => self.take_state(*state),
            Note::Response { to, message } if to == tag => {
                let inbound = decode::decode(message.get().as_bytes());
                let _ = self.inbound.send(Incoming::Decoded(inbound)).await;
            }
            Note::Cancelled { message } => {
                let inbound = decode::decode(message.get().as_bytes());
                let id = cancelled_id(&inbound);
                let _ = self.inbound.send(Incoming::Decoded(inbound)).await;
                if let Some(id) = id {
                    Box::pin(self.command(Command::Cancelled(id))).await;
                }
            }
            Note::Standalone { to, message } if to == tag => {
                let bytes = Bytes::from(message.get().to_owned());
                match link.remote_holder() {
                    // It moved on: pass it along (once).
                    Some(holder) if holder != to => {
                        let note = Note::Standalone {
                            to: holder,
                            message,
                        };
                        let _ = link.cluster.publish(&self.session, note).await;
                    }
                    _ => self.emit(self.standalone, bytes).await,
                }
            }
            Note::Ended => {
                tracing::debug!(session = %self.session, "session deleted through another instance");
                if let Some(h) = self.handle.upgrade() {
                    h.terminate_as(EndReason::Remote);
                }
            }
            Note::Attach {
                to,
                stream,
                after,
                from,
            } if to == tag => self.on_attach(stream, after, from).await,
            Note::StreamEvent {
                to,
                stream,
                seq,
                message,
            } if to == tag => self.on_stream_event(stream, seq, message.get().as_bytes()),
            Note::StreamEnd { to, stream } if to == tag => self.on_stream_end(stream),
            Note::Response { .. }
            | Note::Standalone { .. }
            | Note::Attach { .. }
            | Note::StreamEvent { .. }
            | Note::StreamEnd { .. } => {}
        }
    }

    /// Takes a newer state saved by another copy.
    fn take_state(&mut self, state: SessionState) {
        let Some(link) = self.link.as_mut() else {
            return;
        };
        if link
            .state
            .as_ref()
            .is_some_and(|mine| mine.revision >= state.revision)
        {
            return;
        }
        link.holder = cluster::holder_of(&state);
        self.negotiated = Some(state.protocol_version);
        if let Some(h) = self.handle.upgrade() {
            if state.initialized {
                h.mark_handshaken();
            }
            h.stored_now();
        }
        link.peer.apply_session_state(state.clone());
        link.state = Some(state);
    }
}

/// The request a `notifications/cancelled` names.
fn cancelled_id(inbound: &Inbound) -> Option<RequestId> {
    match inbound {
        Inbound::Message(JsonRpcMessage::Notification(n)) => n
            .params
            .as_ref()
            .and_then(|p| p.get("requestId"))
            .and_then(|v| serde_json::from_value(v.clone()).ok()),
        _ => None,
    }
}
