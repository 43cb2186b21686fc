//! Events written to a client before their event store kept them.
//!
//! A session does not wait for its [`EventStore`](crate::EventStore) before
//! it writes an event to the client: the store takes the event when it is
//! called (in call order) and the session goes on while it is kept (with a
//! networked store, many sessions' events share one round trip). What stays
//! correct for `Last-Event-ID`:
//!
//! - a stream's last event (the answer to its request) is held back until
//!   the store has it, then written together with the end of the stream: a
//!   client that saw a stream end can find all of it, and the answer and
//!   the end leave in one write, not two;
//! - before the session replays anything (a resumption here, or another
//!   instance asking for the rest of a stream), every pending event is kept;
//! - a session holds at most [`MAX_UNSTORED`] pending events; beyond that it
//!   waits for the store (bounded memory when the store is slow or away).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures::StreamExt;
use futures::stream::FuturesUnordered;
use tessera_runtime::BoxFuture;
use tokio::sync::mpsc;

/// The most events of one session whose store is pending.
pub(super) const MAX_UNSTORED: usize = 64;

/// What [`emit`](super::Session) leaves undone: the store of the event when
/// it is not done yet, and the encoded event itself when it is a stream's
/// last and waits for its store before it is written.
#[derive(Default)]
pub(super) struct Unkept {
    /// The store's future, when not done at once.
    pub(super) stored: Option<BoxFuture<'static, ()>>,
    /// The event's bytes, held back until `stored` is done.
    pub(super) held: Option<Bytes>,
}

/// The store of one event, not yet done: the future the store returned,
/// and the connection of a stream that ends with this event, with the
/// event's bytes when they were held back.
pub(super) struct Unstored {
    stored: BoxFuture<'static, ()>,
    sink: Option<mpsc::Sender<Bytes>>,
    held: Option<Bytes>,
}

impl Future for Unstored {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let done = self.stored.as_mut().poll(cx);
        if done.is_ready() {
            // The stream (if this was its last event) gets the event and
            // ends now. A full queue means a client too slow to read: the
            // stream ends without it, and the event is there to resume.
            if let (Some(sink), Some(bytes)) = (self.sink.take(), self.held.take()) {
                let _ = sink.try_send(bytes);
            }
        }
        done
    }
}

/// A session's pending stores.
#[derive(Default)]
pub(super) struct Pending {
    stores: FuturesUnordered<Unstored>,
}

impl Pending {
    /// Starts keeping an event's store: `None` when it is already done.
    /// Polled once here, so a store that finishes at once (the in-memory
    /// one) costs nothing more.
    pub(super) fn start(mut stored: BoxFuture<'static, ()>) -> Option<BoxFuture<'static, ()>> {
        let waker = futures::task::noop_waker();
        match stored.as_mut().poll(&mut Context::from_waker(&waker)) {
            Poll::Ready(()) => None,
            Poll::Pending => Some(stored),
        }
    }

    /// Keeps an event's pending store until done, with the connection of
    /// the stream it ends, if any (which then gets the held-back event).
    pub(super) fn hold(&mut self, unkept: Unkept, sink: Option<mpsc::Sender<Bytes>>) {
        if let Some(stored) = unkept.stored {
            self.stores.push(Unstored {
                stored,
                sink,
                held: unkept.held,
            });
        }
    }

    /// Whether the session is at its limit of pending stores.
    pub(super) fn full(&self) -> bool {
        self.stores.len() >= MAX_UNSTORED
    }

    /// Whether nothing is pending.
    pub(super) fn is_empty(&self) -> bool {
        self.stores.is_empty()
    }

    /// Waits for one pending store (never resolves when none is pending).
    pub(super) async fn next(&mut self) {
        if self.stores.next().await.is_none() {
            std::future::pending::<()>().await;
        }
    }

    /// Waits until every pending store is done.
    pub(super) async fn settle(&mut self) {
        while self.stores.next().await.is_some() {}
    }
}
