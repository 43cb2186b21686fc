//! [`CommandQueue`]: what the [`Peer`](crate::Peer) handles of a connection
//! ask of it, in the order they asked, until the connection stops.
//!
//! It lives in the handles' shared state ([`PeerShared`](crate::peer_shared::PeerShared)),
//! so a connection pays for no channel of its own: an empty queue allocates
//! nothing, and a connection whose handlers never use their peer (most
//! per-request HTTP engines) never makes its buffer. One task (the one that
//! drives the connection) takes the commands out; any number of handles put
//! them in.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};

use tokio::sync::Notify;

use crate::peer::Command;

/// The queue's state behind its lock.
#[derive(Default)]
struct Inner {
    items: VecDeque<Command>,
    /// The task that drives the connection, when it waits for a command.
    waker: Option<Waker>,
}

/// The queue of a connection's commands: many senders, one receiver (the
/// connection), closed when the connection stops.
#[derive(Default)]
pub(crate) struct CommandQueue {
    inner: Mutex<Inner>,
    /// Set once the connection stopped: nothing is queued any more.
    closed: AtomicBool,
    /// Wakes the callers of [`CommandQueue::closed`].
    on_close: Notify,
}

impl CommandQueue {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        // The state is valid at every point: a panic elsewhere leaves it usable.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues `c`, waking the connection; gives it back once the connection
    /// stopped.
    pub(crate) fn send(&self, c: Command) -> Result<(), Command> {
        let waker = {
            let mut inner = self.lock();
            // Read under the lock: `close` sets it under the lock too, so no
            // command is queued after the queue was emptied for good.
            if self.closed.load(Ordering::Relaxed) {
                return Err(c);
            }
            inner.items.push_back(c);
            inner.waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
        Ok(())
    }

    /// The next command, or `Pending` (`cx` woken by the next one).
    pub(crate) fn poll_recv(&self, cx: &mut Context<'_>) -> Poll<Command> {
        let mut inner = self.lock();
        if let Some(c) = inner.items.pop_front() {
            return Poll::Ready(c);
        }
        match &mut inner.waker {
            Some(w) if w.will_wake(cx.waker()) => {}
            slot => *slot = Some(cx.waker().clone()),
        }
        Poll::Pending
    }

    /// The next command, if one is queued.
    pub(crate) fn try_recv(&self) -> Option<Command> {
        self.lock().items.pop_front()
    }

    /// Whether no command is queued.
    pub(crate) fn is_empty(&self) -> bool {
        self.lock().items.is_empty()
    }

    /// The connection stopped: what is queued is dropped (callers waiting
    /// for an answer see the connection closed), nothing more is taken, and
    /// the callers of [`CommandQueue::closed`] return.
    pub(crate) fn close(&self) {
        let dropped = {
            let mut inner = self.lock();
            self.closed.store(true, Ordering::Relaxed);
            inner.waker = None;
            std::mem::take(&mut inner.items)
        };
        // Dropped outside the lock: a command's drop may send on this queue.
        drop(dropped);
        self.on_close.notify_waiters();
    }

    /// Whether the connection stopped.
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Relaxed)
    }

    /// Completes once the connection stopped.
    pub(crate) async fn closed(&self) {
        loop {
            let notified = self.on_close.notified();
            // A `Notified` hears `notify_waiters` from the moment it is made:
            // a close between here and the wait below is not missed.
            if self.is_closed() {
                return;
            }
            notified.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::task::noop_waker_ref;
    use std::future::Future;
    use std::sync::Arc;
    use std::sync::atomic::AtomicUsize;
    use std::task::Wake;

    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    #[test]
    fn commands_come_out_in_order_and_a_waiting_receiver_is_woken() {
        let q = CommandQueue::default();
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(count.clone());
        let mut cx = Context::from_waker(&waker);
        assert!(q.poll_recv(&mut cx).is_pending());
        assert!(q.is_empty());
        assert!(q.send(Command::SessionChanged).is_ok());
        assert_eq!(count.0.load(Ordering::Relaxed), 1, "the receiver is woken");
        assert!(q.send(Command::Close).is_ok());
        assert_eq!(count.0.load(Ordering::Relaxed), 1, "once per wait");
        assert!(!q.is_empty());
        assert!(matches!(
            q.poll_recv(&mut cx),
            Poll::Ready(Command::SessionChanged)
        ));
        assert!(matches!(q.try_recv(), Some(Command::Close)));
        assert!(q.try_recv().is_none());
        assert!(q.poll_recv(&mut cx).is_pending());
    }

    #[test]
    fn a_closed_queue_drops_what_it_held_and_refuses_more() {
        let q = CommandQueue::default();
        let (reply, mut rx) = tokio::sync::oneshot::channel();
        let connect = Command::Connect {
            mode: tessera_proto::ConnectMode::Auto,
            reply,
        };
        assert!(q.send(connect).is_ok());
        assert!(!q.is_closed());
        q.close();
        assert!(q.is_closed());
        assert!(q.is_empty());
        // The caller waiting on the dropped command hears the connection gone.
        assert!(rx.try_recv().is_err());
        assert!(matches!(
            q.send(Command::SessionChanged),
            Err(Command::SessionChanged)
        ));
        let mut cx = Context::from_waker(noop_waker_ref());
        assert!(q.poll_recv(&mut cx).is_pending());
    }

    #[test]
    fn closed_returns_once_the_queue_closes() {
        let q = CommandQueue::default();
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(count.clone());
        let mut cx = Context::from_waker(&waker);
        let mut waiting = std::pin::pin!(q.closed());
        assert!(waiting.as_mut().poll(&mut cx).is_pending());
        q.close();
        assert_eq!(count.0.load(Ordering::Relaxed), 1, "the waiter is woken");
        assert!(waiting.as_mut().poll(&mut cx).is_ready());
        // Already closed: returns at once.
        assert!(std::pin::pin!(q.closed()).poll(&mut cx).is_ready());
    }
}
