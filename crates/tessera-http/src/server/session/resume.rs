//! Resuming a stream with `Last-Event-ID`, here or on another instance.
//!
//! A GET with `Last-Event-ID: S-N` replays the events of stream `S` after `N`
//! from the event store, then:
//!
//! - for a standalone stream, attaches the GET as this instance's standalone
//!   stream (and this instance becomes its holder);
//! - for a POST stream held here, attaches the GET to it while its request
//!   goes on;
//! - for a POST stream of another instance (its number carries that
//!   instance's tag), asks that instance over the bus to relay the rest
//!   (`Attach`): it replays what it stored after what was replayed here, then
//!   sends each new event of the stream (`StreamEvent`) until the request is
//!   answered (`StreamEnd`). Events are numbered, so one seen twice is sent
//!   once. When the owner does not answer within [`RELAY_WAIT`], the stream
//!   ends after the replay.

use std::time::Duration;

use bytes::Bytes;
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::super::cluster::Note;
use super::super::event_store::EventId;
use super::{Router, StreamState, is_standalone};
use crate::sse::SseEvent;

/// How long a stream resumed here waits for the instance that owns it.
pub(super) const RELAY_WAIT: Duration = Duration::from_secs(5);

/// Where a stream's connection is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Relay {
    /// Here (or nowhere yet).
    Here,
    /// Resumed on instance `n`: its events go there.
    To(u32),
    /// Owned by another instance, resumed here (until the owner's first
    /// answer, it ends at a deadline kept in the router's `relay_waits`).
    From,
}

/// The instance tag a stream number carries.
fn owner_of(stream: u64) -> u32 {
    u32::try_from(stream >> 32).unwrap_or(0)
}

impl Router {
    /// Opens the standalone stream, or resumes a stream after `last`.
    pub(super) async fn open_get(&mut self, last: Option<EventId>) -> mpsc::Receiver<Bytes> {
        let mut replay = Vec::new();
        // Every event written so far is kept before anything is replayed.
        self.unstored.settle().await;
        let target = match (last, &self.store) {
            (Some(last), Some(store)) => {
                replay = store.replay_after_boxed(&self.session, last).await;
                Some(last.stream)
            }
            _ => None,
        };
        let (tx, rx) = mpsc::channel(self.stream_buffer + replay.len() + self.backlog.len() + 1);
        for e in &replay {
            let id = e.id.to_string();
            let _ = tx.try_send(SseEvent::data(&e.data).id(&id).to_bytes());
        }
        match (target, last) {
            (Some(stream), Some(last)) if !is_standalone(stream) => {
                let after = replay.last().map_or(last.seq, |e| e.id.seq);
                if let Some(s) = self.streams.get_mut(&stream) {
                    // Resuming a POST stream held here: attach while the request goes on.
                    s.sink = Some(tx);
                    s.relay = Relay::Here;
                } else if self.relayable(stream) {
                    self.attach_remote(stream, after, tx).await;
                }
                // Otherwise the replay was all there is: the stream ends.
            }
            _ => {
                if target == Some(self.standalone) {
                    // What waited here was stored, and replayed above.
                    self.backlog.clear();
                } else {
                    for b in self.backlog.take() {
                        let _ = tx.try_send(b);
                    }
                }
                self.streams
                    .entry(self.standalone)
                    .or_insert(StreamState::new(None))
                    .sink = Some(tx);
                if target.is_none() && self.store.is_some() {
                    self.prime(self.standalone);
                }
                self.claim_standalone().await;
            }
        }
        rx
    }

    /// Whether `stream` belongs to another instance that can relay it.
    fn relayable(&self, stream: u64) -> bool {
        let owner = owner_of(stream);
        self.link
            .as_ref()
            .is_some_and(|l| l.cluster().bus.is_some() && owner != 0 && owner != l.cluster().tag)
    }

    /// Resumer side: asks the owner of `stream` for its events after `after`.
    async fn attach_remote(&mut self, stream: u64, after: u64, tx: mpsc::Sender<Bytes>) {
        let Some(link) = &self.link else {
            return;
        };
        let note = Note::Attach {
            to: owner_of(stream),
            stream,
            after,
            from: link.cluster().tag,
        };
        if let Err(e) = link.cluster().publish(&self.session, note).await {
            tracing::warn!(session = %self.session, %e, "could not ask for a stream held by another instance");
            return;
        }
        self.streams.insert(
            stream,
            StreamState {
                seq: after + 1,
                sink: Some(tx),
                relay: Relay::From,
            },
        );
        self.relay_waits.push((stream, Instant::now() + RELAY_WAIT));
    }

    /// Owner side: instance `from` resumed `stream` after `after`.
    pub(super) async fn on_attach(&mut self, stream: u64, after: u64, from: u32) {
        let live = match self.streams.get_mut(&stream) {
            Some(s) if !is_standalone(stream) => {
                s.sink = None;
                s.relay = Relay::To(from);
                true
            }
            _ => false,
        };
        self.unstored.settle().await;
        let missed = match &self.store {
            Some(store) => {
                store
                    .replay_after_boxed(&self.session, EventId { stream, seq: after })
                    .await
            }
            None => Vec::new(),
        };
        for e in missed.iter().filter(|e| !e.data.is_empty()) {
            self.relay_event(from, e.id, &e.data).await;
        }
        if !live {
            self.relay_ends.push((from, stream));
            self.end_relays().await;
        }
    }

    /// Owner side: sends one event of a relayed stream.
    pub(super) async fn relay_event(&mut self, to: u32, id: EventId, data: &[u8]) {
        let (Some(link), Some(message)) = (&self.link, Note::raw(data)) else {
            return;
        };
        let note = Note::StreamEvent {
            to,
            stream: id.stream,
            seq: id.seq,
            message,
        };
        if let Err(e) = link.cluster().publish(&self.session, note).await {
            tracing::warn!(session = %self.session, %e, "an event of a relayed stream was lost (it stays replayable)");
        }
    }

    /// Owner side: tells the resumers of relayed streams that they ended.
    pub(super) async fn end_relays(&mut self) {
        let ends = std::mem::take(&mut self.relay_ends);
        let Some(link) = &self.link else {
            return;
        };
        for (to, stream) in ends {
            let _ = link
                .cluster()
                .publish(&self.session, Note::StreamEnd { to, stream })
                .await;
        }
    }

    /// Resumer side: an event of a stream resumed here.
    pub(super) fn on_stream_event(&mut self, stream: u64, seq: u64, data: &[u8]) {
        let Some(s) = self.streams.get_mut(&stream) else {
            return;
        };
        if s.relay != Relay::From {
            return;
        }
        self.relay_waits.retain(|(w, _)| *w != stream);
        if seq < s.seq {
            return; // replayed already
        }
        s.seq = seq + 1;
        let id = EventId { stream, seq };
        let mut buf = [0u8; 41];
        let bytes = SseEvent::data(data).id(id.encode(&mut buf)).to_bytes();
        self.deliver(stream, bytes);
    }

    /// Resumer side: the request of a stream resumed here was answered.
    pub(super) fn on_stream_end(&mut self, stream: u64) {
        if self
            .streams
            .get(&stream)
            .is_some_and(|s| s.relay == Relay::From)
        {
            // Dropping the sink ends the response once it is written.
            self.streams.remove(&stream);
            self.relay_waits.retain(|(w, _)| *w != stream);
        }
    }

    /// Ends the resumed streams whose owner did not answer in time.
    pub(super) fn expire_relays(&mut self) {
        let now = Instant::now();
        let streams = &mut self.streams;
        self.relay_waits.retain(|(stream, deadline)| {
            if *deadline > now {
                return true;
            }
            tracing::debug!(
                stream,
                "the instance holding a resumed stream did not answer: it ends"
            );
            streams.remove(stream);
            false
        });
    }
}
