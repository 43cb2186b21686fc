//! Events written to a client before their event store kept them.
//!
//! A session does not wait for its [`EventStore`](crate::EventStore) before
//! it writes an event to the client: the store takes the event when it is
//! called (in call order) and the session goes on while it is kept (with a
//! networked store, many sessions' events share one round trip). What stays
//! correct for `Last-Event-ID`:
//!
//! - a stream whose last event is not yet kept does not end: its connection
//!   is held here until the store has it, so a client that saw a stream end
//!   can find all of it;
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

/// The store of one event, not yet done: the future the store returned,
/// and the connection of a stream that ends with this event.
pub(super) struct Unstored {
    stored: BoxFuture<'static, ()>,
    sink: Option<mpsc::Sender<Bytes>>,
}

impl Future for Unstored {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let done = self.stored.as_mut().poll(cx);
        if done.is_ready() {
            // The stream (if this was its last event) may end now.
            self.sink = None;
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

    /// Keeps `stored` (pending) until done, with the connection of the
    /// stream it ends, if any.
    pub(super) fn hold(
        &mut self,
        stored: Option<BoxFuture<'static, ()>>,
        sink: Option<mpsc::Sender<Bytes>>,
    ) {
        if let Some(stored) = stored {
            self.stores.push(Unstored { stored, sink });
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
