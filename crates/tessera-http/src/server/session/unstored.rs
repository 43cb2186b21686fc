//! Events written to a client before their event store kept them.
//!
//! A session does not wait for its [`EventStore`](crate::EventStore) before
//! it writes an event to the client: the store takes the event when it is
//! called (in call order) and the session goes on while it is kept (with a
//! networked store, many sessions' events share one round trip). What stays
//! correct for `Last-Event-ID`:
//!
//! - a stream ends as soon as its last event is written, kept or not: its
//!   client has every event of it and never needs a replay (holding the end
//!   back until the store had the last event cost one more write and wake
//!   per call, and bought nothing a client could see);
//! - before the session replays anything (a resumption here, or another
//!   instance asking for the rest of a stream), every pending event is kept;
//! - a session holds at most [`MAX_UNSTORED`] pending events; beyond that it
//!   waits for the store (bounded memory when the store is slow or away).

use std::task::{Context, Poll};

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use tessera_runtime::BoxFuture;

/// The most events of one session whose store is pending.
pub(super) const MAX_UNSTORED: usize = 64;

/// A session's pending stores.
#[derive(Default)]
pub(super) struct Pending {
    stores: FuturesUnordered<BoxFuture<'static, ()>>,
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

    /// Keeps `stored` (pending) until done.
    pub(super) fn hold(&mut self, stored: Option<BoxFuture<'static, ()>>) {
        if let Some(stored) = stored {
            self.stores.push(stored);
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
