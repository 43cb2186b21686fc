//! A Streamable HTTP session's part in the state shared between instances:
//! its stored [`SessionState`], its bus topic, and who holds its standalone
//! stream (see [`super::super::cluster`] for the design).

use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;

use futures::Stream;

use bytes::Bytes;
use tessera_proto::Outbound;
use tessera_proto::decode::{self, Inbound};
use tessera_runtime::{BusSubscription, Incoming, Peer, PeerInfo, SessionState};
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
    /// With a bus: the stored state as this copy last saved or took it
    /// (`None` until the handshake is answered, for a session that began
    /// here). A lone instance keeps only `revision`: each save is built
    /// from the core's export.
    state: Option<Box<SessionState>>,
    /// The revision of the stored state this copy knows.
    revision: u64,
    /// Whether the state was stored once (the handshake).
    saved: bool,
    /// The session's topic (with a bus).
    sub: Option<BusSubscription>,
    /// The instance holding the standalone stream (0: not known).
    holder: u32,
}

impl Link {
    pub(super) fn new(
        cluster: Arc<Cluster>,
        handle: &SessionHandle,
        restored: Option<SessionState>,
    ) -> Self {
        let mut info = handle.peer.info();
        info.mark_unchanged();
        let holder = restored.as_ref().map_or(0, cluster::holder_of);
        let revision = restored.as_ref().map_or(0, |s| s.revision);
        let saved = restored.is_some();
        if saved {
            handle.stored_now();
        }
        Link {
            state: restored.filter(|_| cluster.bus.is_some()).map(Box::new),
            revision,
            saved,
            cluster,
            info,
            peer: handle.peer.clone(),
            sub: None,
            holder,
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
/// A `poll_fn` rather than an `async fn`: it is built on every turn of the
/// router, whose future holds it.
pub(super) fn next_note(
    link: &mut Option<Box<Link>>,
) -> impl std::future::Future<Output = Bytes> + Send + '_ {
    std::future::poll_fn(move |cx| {
        let Some(l) = link.as_mut() else {
            return Poll::Pending;
        };
        let Some(sub) = l.sub.as_mut() else {
            return Poll::Pending;
        };
        match Pin::new(sub).poll_next(cx) {
            Poll::Ready(Some(b)) => Poll::Ready(b),
            Poll::Ready(None) => {
                tracing::warn!("the bus ended a session subscription");
                l.sub = None;
                Poll::Pending
            }
            Poll::Pending => Poll::Pending,
        }
    })
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
        let first = !link.saved;
        let handle = self.handle.upgrade();
        let mut state = link.state.take().unwrap_or_else(|| {
            let mut s = SessionState::new(&*self.session, export.snapshot.version);
            if let Some(h) = &handle {
                s.principal = h.owner.as_ref().map(|p| p.0.clone());
                s.client_key = match &h.client {
                    ClientKey::Principal(p) => Some(format!("principal:{}", p.0)),
                    ClientKey::Addr(a) => Some(format!("addr:{a}")),
                    ClientKey::Unknown => None,
                };
            }
            Box::new(s)
        });
        state.update_from(&export);
        state.revision = link.revision + 1;
        let shared = link.cluster.bus.is_some();
        if shared {
            if first {
                link.holder = link.cluster.tag;
            }
            state
                .data
                .insert(HOLDER_KEY.into(), serde_json::json!(link.holder));
        }
        let saved = link.cluster.store.save(&state, link.cluster.ttl).await;
        if shared {
            link.state = Some(state.clone());
        }
        if let Err(e) = saved {
            tracing::warn!(session = %self.session, %e, "could not store the session's state");
            if first {
                if let Some(h) = &handle {
                    let _ = h.store_error.set(Box::new(e));
                }
            }
            return;
        }
        link.saved = true;
        link.revision = state.revision;
        if let Some(h) = &handle {
            h.stored_now();
        }
        if shared {
            let note = Note::State(state);
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
                if let Err(e) = Box::pin(link.cluster.publish(&self.session, note)).await {
                    tracing::warn!(session = %self.session, %e, "a message for the standalone stream held by another instance was lost");
                }
            }
            return;
        }
        let stored = self.emit(self.standalone, bytes).await;
        self.unstored.hold(stored);
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
        state.revision = link.revision + 1;
        link.revision = state.revision;
        if let Err(e) = link.cluster.store.save(state, link.cluster.ttl).await {
            tracing::warn!(session = %self.session, %e, "could not store who holds the standalone stream");
        }
        let note = Note::State(state.clone());
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
                self.core.handle(Incoming::Decoded(inbound));
            }
            Note::Cancelled { message } => {
                let inbound = decode::decode(message.get().as_bytes());
                let id = cancelled_id(&inbound);
                self.core.handle(Incoming::Decoded(inbound));
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
                    _ => {
                        let stored = self.emit(self.standalone, bytes).await;
                        self.unstored.hold(stored);
                    }
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
        if link.saved && link.revision >= state.revision {
            return;
        }
        link.saved = true;
        link.revision = state.revision;
        link.holder = cluster::holder_of(&state);
        if let Some(h) = self.handle.upgrade() {
            if state.initialized {
                h.mark_handshaken();
            }
            h.stored_now();
        }
        link.peer.apply_session_state(state.clone());
        link.state = Some(Box::new(state));
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
