//! The request handlers a [`Connection`](crate::Connection) runs: each one a
//! [`HandlerRun`] (the handler's future, its cancellation and its panic
//! guard, in one value with no box of its own), kept in [`Running`].
//!
//! Most connections that serve HTTP run one handler at a time (a
//! per-request engine runs exactly one): [`Running`] keeps the first in a
//! slot of its own and makes the set for the others only when a second one
//! runs beside it. It is also where a handler is found to be cancelled (by
//! its request's id): a connection keeps no table of its handlers besides.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::stream::{FuturesUnordered, StreamExt};
use tessera_types::{ErrorObject, RequestId};
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

use crate::service::{BoxFuture, ReplyResult};

/// One request handler in progress. Resolves to its request's id and
/// outcome: the handler's answer, an internal error when it panicked, or
/// (cancelled: the engine sends nothing for it) an error that only clears
/// the request.
pub(crate) struct HandlerRun {
    id: Option<RequestId>,
    /// The handler's answer (boxed once, by the connection).
    answer: BoxFuture<'static, ReplyResult>,
    token: CancellationToken,
    /// Whether it lives as long as the connection (`subscriptions/listen`).
    long_lived: bool,
    /// The wait for cancellation, registered only once the handler has had
    /// to wait (most finish on their first poll).
    cancelled: Option<Pin<Box<WaitForCancellationFutureOwned>>>,
}

impl HandlerRun {
    /// The handler of request `id`, cancelled by `token`; `long_lived`
    /// when it runs as long as the connection (see
    /// [`Running::cancel_long_lived`]).
    pub(crate) fn new(
        id: RequestId,
        answer: BoxFuture<'static, ReplyResult>,
        token: CancellationToken,
        long_lived: bool,
    ) -> Self {
        HandlerRun {
            id: Some(id),
            answer,
            token,
            long_lived,
            cancelled: None,
        }
    }

    /// Whether this is the (unfinished) handler of request `id`.
    fn serves(&self, id: &RequestId) -> bool {
        self.id.as_ref() == Some(id)
    }

    fn finish(&mut self, outcome: ReplyResult) -> Poll<(RequestId, ReplyResult)> {
        // Polled once more after it finished: a bug of the caller's.
        let id = self
            .id
            .take()
            .expect("a finished handler is not polled again");
        Poll::Ready((id, outcome))
    }
}

impl Future for HandlerRun {
    type Output = (RequestId, ReplyResult);

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        // Cancellation first, as a biased select would: a cancelled handler
        // is not polled again.
        if this.token.is_cancelled() {
            return this.finish(Err(ErrorObject::internal("cancelled")));
        }
        let polled = std::panic::catch_unwind(AssertUnwindSafe(|| this.answer.as_mut().poll(cx)));
        match polled {
            Ok(Poll::Ready(outcome)) => return this.finish(outcome),
            Ok(Poll::Pending) => {}
            Err(_) => {
                return this.finish(Err(ErrorObject::internal(
                    "Internal error: the request handler panicked",
                )));
            }
        }
        let token = &this.token;
        let wait = this
            .cancelled
            .get_or_insert_with(|| Box::pin(token.clone().cancelled_owned()));
        match wait.as_mut().poll(cx) {
            Poll::Ready(()) => this.finish(Err(ErrorObject::internal("cancelled"))),
            Poll::Pending => Poll::Pending,
        }
    }
}

/// The handlers in progress: the first in a slot of its own, the others (when
/// several run at once) in a set made for them.
#[derive(Default)]
pub(crate) struct Running {
    one: Option<HandlerRun>,
    many: Option<FuturesUnordered<HandlerRun>>,
}

impl Running {
    /// Starts running `h`.
    pub(crate) fn push(&mut self, h: HandlerRun) {
        if self.one.is_none() {
            self.one = Some(h);
        } else {
            self.many.get_or_insert_with(FuturesUnordered::new).push(h);
        }
    }

    /// How many handlers run.
    pub(crate) fn len(&self) -> usize {
        usize::from(self.one.is_some()) + self.many.as_ref().map_or(0, FuturesUnordered::len)
    }

    /// Every handler running.
    fn iter(&self) -> impl Iterator<Item = &HandlerRun> {
        self.one
            .iter()
            .chain(self.many.iter().flat_map(|m| m.iter()))
    }

    /// Cancels the handler of request `id`, if it runs (its token fires; it
    /// finishes at its next poll). A walk over the handlers: cancellations
    /// are rare, and a connection seldom runs many handlers at once.
    pub(crate) fn cancel(&self, id: &RequestId) {
        if let Some(h) = self.iter().find(|h| h.serves(id)) {
            h.token.cancel();
        }
    }

    /// Cancels the handlers that live as long as the connection.
    pub(crate) fn cancel_long_lived(&self) {
        for h in self.iter().filter(|h| h.long_lived) {
            h.token.cancel();
        }
    }

    /// Cancels every handler (their tokens fire; they are not dropped).
    pub(crate) fn cancel_all(&self) {
        for h in self.iter() {
            h.token.cancel();
        }
    }

    /// Whether no handler runs.
    pub(crate) fn is_empty(&self) -> bool {
        self.one.is_none() && self.many.as_ref().is_none_or(FuturesUnordered::is_empty)
    }

    /// The next handler to finish, if one has.
    pub(crate) fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<(RequestId, ReplyResult)> {
        if let Some(h) = self.one.as_mut() {
            if let Poll::Ready(out) = Pin::new(h).poll(cx) {
                self.one = None;
                return Poll::Ready(out);
            }
        }
        match self.many.as_mut() {
            Some(m) if !m.is_empty() => match m.poll_next_unpin(cx) {
                Poll::Ready(Some(out)) => Poll::Ready(out),
                Poll::Ready(None) | Poll::Pending => Poll::Pending,
            },
            _ => Poll::Pending,
        }
    }

    /// Drops every handler (their futures are not polled again).
    pub(crate) fn clear(&mut self) {
        self.one = None;
        self.many = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::task::noop_waker_ref;
    use tessera_proto::Reply;
    use tessera_types::JsonObject;

    fn ready(n: i64) -> HandlerRun {
        let f: BoxFuture<'static, _> = Box::pin(async { Ok(Reply::Object(JsonObject::new())) });
        HandlerRun::new(RequestId::Number(n), f, CancellationToken::new(), false)
    }

    fn waiting(
        n: i64,
        rx: tokio::sync::oneshot::Receiver<()>,
        token: CancellationToken,
    ) -> HandlerRun {
        let f: BoxFuture<'static, _> = Box::pin(async move {
            let _ = rx.await;
            Ok(Reply::Object(JsonObject::new()))
        });
        HandlerRun::new(RequestId::Number(n), f, token, false)
    }

    fn id_of(p: Poll<(RequestId, ReplyResult)>) -> Option<(RequestId, bool)> {
        match p {
            Poll::Ready((id, r)) => Some((id, r.is_ok())),
            Poll::Pending => None,
        }
    }

    #[test]
    fn one_handler_runs_in_the_slot_and_others_beside_it() {
        let mut cx = Context::from_waker(noop_waker_ref());
        let mut r = Running::default();
        assert!(r.is_empty());
        assert!(r.poll_next(&mut cx).is_pending());
        let (tx1, rx1) = tokio::sync::oneshot::channel();
        r.push(waiting(1, rx1, CancellationToken::new()));
        assert!(r.many.is_none(), "one handler needs no set");
        r.push(ready(2));
        assert!(!r.is_empty());
        assert_eq!(
            id_of(r.poll_next(&mut cx)),
            Some((RequestId::Number(2), true))
        );
        assert!(r.poll_next(&mut cx).is_pending());
        tx1.send(()).unwrap();
        assert_eq!(
            id_of(r.poll_next(&mut cx)),
            Some((RequestId::Number(1), true))
        );
        assert!(r.is_empty());
        // The slot is free again: the next handler takes it.
        r.push(ready(3));
        assert_eq!(
            id_of(r.poll_next(&mut cx)),
            Some((RequestId::Number(3), true))
        );
        r.push(ready(4));
        r.clear();
        assert!(r.is_empty());
    }

    #[test]
    fn handlers_are_cancelled_by_id_by_lifetime_or_all_at_once() {
        let mut cx = Context::from_waker(noop_waker_ref());
        let mut r = Running::default();
        let tokens: Vec<CancellationToken> = (0..3).map(|_| CancellationToken::new()).collect();
        let mut senders = Vec::new();
        for (n, t) in tokens.iter().enumerate() {
            let (tx, rx) = tokio::sync::oneshot::channel();
            senders.push(tx);
            let mut h = waiting(n as i64, rx, t.clone());
            // The second is a long-lived one (`subscriptions/listen`).
            h.long_lived = n == 1;
            r.push(h);
        }
        assert_eq!(r.len(), 3);
        // The one in the slot and one in the set, by id.
        r.cancel(&RequestId::Number(0));
        assert!(tokens[0].is_cancelled() && !tokens[1].is_cancelled());
        r.cancel(&RequestId::Number(2));
        assert!(tokens[2].is_cancelled() && !tokens[1].is_cancelled());
        r.cancel(&RequestId::Number(9));
        assert!(!tokens[1].is_cancelled());
        r.cancel_long_lived();
        assert!(tokens[1].is_cancelled());
        // Cancelled handlers finish at their next poll.
        for _ in 0..3 {
            assert!(matches!(r.poll_next(&mut cx), Poll::Ready((_, Err(_)))));
        }
        assert_eq!(r.len(), 0);
        assert!(r.is_empty());

        let t = CancellationToken::new();
        let (_tx, rx) = tokio::sync::oneshot::channel();
        r.push(waiting(5, rx, t.clone()));
        r.push(ready(6));
        r.cancel_long_lived();
        assert!(!t.is_cancelled(), "not long-lived");
        r.cancel_all();
        assert!(t.is_cancelled());
    }

    #[test]
    fn a_cancelled_handler_is_not_polled_again() {
        let mut cx = Context::from_waker(noop_waker_ref());
        let token = CancellationToken::new();
        let (_tx, rx) = tokio::sync::oneshot::channel();
        let mut h = waiting(7, rx, token.clone());
        assert!(Pin::new(&mut h).poll(&mut cx).is_pending());
        assert!(
            h.cancelled.is_some(),
            "the wait is registered once it waits"
        );
        token.cancel();
        assert_eq!(
            id_of(Pin::new(&mut h).poll(&mut cx)),
            Some((RequestId::Number(7), false))
        );
        // Cancelled before its first poll: the handler never runs.
        let token = CancellationToken::new();
        token.cancel();
        let f: BoxFuture<'static, _> = Box::pin(async { panic!("a cancelled handler ran") });
        let mut h = HandlerRun::new(RequestId::Number(8), f, token, false);
        assert_eq!(
            id_of(Pin::new(&mut h).poll(&mut cx)),
            Some((RequestId::Number(8), false))
        );
    }

    #[test]
    fn a_panicking_handler_answers_an_internal_error() {
        let mut cx = Context::from_waker(noop_waker_ref());
        let f: BoxFuture<'static, _> = Box::pin(async { panic!("boom") });
        let mut h = HandlerRun::new(RequestId::Number(9), f, CancellationToken::new(), false);
        match Pin::new(&mut h).poll(&mut cx) {
            Poll::Ready((id, Err(e))) => {
                assert_eq!(id, RequestId::Number(9));
                assert!(e.message.contains("panicked"), "{}", e.message);
            }
            _ => panic!("expected an internal error"),
        }
    }
}
