//! The standalone backlog: messages of a Streamable HTTP session that are
//! not related to a request and found no open GET stream, kept until one
//! opens. Bounded by count and by bytes per session, and by bytes for every
//! session together ([`BacklogBudget`]); the oldest go first.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;

/// The default bytes a session's backlog holds.
pub const DEFAULT_BACKLOG_BYTES: usize = 1 << 20;

/// The default bytes the backlogs of every session hold together.
pub const DEFAULT_BACKLOG_TOTAL_BYTES: usize = 64 << 20;

/// The bytes held by every session's backlog, against one cap.
#[derive(Debug)]
pub(crate) struct BacklogBudget {
    used: AtomicUsize,
    max: usize,
}

impl BacklogBudget {
    /// A budget of `max` bytes.
    pub fn new(max: usize) -> Arc<BacklogBudget> {
        Arc::new(BacklogBudget {
            used: AtomicUsize::new(0),
            max,
        })
    }

    /// Takes `n` bytes if they fit.
    fn take(&self, n: usize) -> bool {
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |u| {
                (u + n <= self.max).then_some(u + n)
            })
            .is_ok()
    }

    fn give(&self, n: usize) {
        self.used.fetch_sub(n, Ordering::AcqRel);
    }

    /// The bytes held now.
    #[cfg(test)]
    fn used(&self) -> usize {
        self.used.load(Ordering::Acquire)
    }
}

/// Undelivered standalone messages, oldest first.
#[derive(Debug)]
pub(super) struct Backlog {
    items: VecDeque<Bytes>,
    bytes: usize,
    max_items: usize,
    max_bytes: usize,
    budget: Arc<BacklogBudget>,
}

impl Backlog {
    /// A backlog of at most `max_items` messages and `max_bytes` bytes
    /// (`max_items` 0: nothing is kept), within `budget`.
    pub fn new(max_items: usize, max_bytes: usize, budget: Arc<BacklogBudget>) -> Backlog {
        Backlog {
            items: VecDeque::new(),
            bytes: 0,
            max_items,
            max_bytes,
            budget,
        }
    }

    fn pop(&mut self) -> bool {
        match self.items.pop_front() {
            Some(old) => {
                self.bytes -= old.len();
                self.budget.give(old.len());
                true
            }
            None => false,
        }
    }

    /// Keeps `b`, dropping this session's oldest messages to make room (in
    /// its own budget and in the shared one); a message that still does not
    /// fit is dropped. Returns how many were dropped.
    pub fn push(&mut self, b: Bytes) -> usize {
        if self.max_items == 0 || b.len() > self.max_bytes {
            return 1;
        }
        let mut dropped = 0;
        while (self.items.len() >= self.max_items || self.bytes + b.len() > self.max_bytes)
            && self.pop()
        {
            dropped += 1;
        }
        while !self.budget.take(b.len()) {
            if !self.pop() {
                // The other sessions hold the shared budget.
                return dropped + 1;
            }
            dropped += 1;
        }
        self.bytes += b.len();
        self.items.push_back(b);
        dropped
    }

    /// How many messages are held.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Forgets every message.
    pub fn clear(&mut self) {
        self.items.clear();
        self.budget.give(self.bytes);
        self.bytes = 0;
    }

    /// Takes every message, oldest first.
    pub fn take(&mut self) -> VecDeque<Bytes> {
        self.budget.give(self.bytes);
        self.bytes = 0;
        std::mem::take(&mut self.items)
    }
}

impl Drop for Backlog {
    fn drop(&mut self) {
        self.budget.give(self.bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_by_count_and_bytes() {
        let budget = BacklogBudget::new(1000);
        let mut b = Backlog::new(3, 100, budget.clone());
        for _ in 0..3 {
            assert_eq!(b.push(Bytes::from(vec![0; 10])), 0);
        }
        assert_eq!(b.push(Bytes::from(vec![1; 10])), 1, "count");
        // 30 bytes held: 10 + 90 fits in 100 once two of them are gone.
        assert_eq!(b.push(Bytes::from(vec![2; 90])), 2, "bytes: the oldest go");
        assert_eq!(b.len(), 2);
        let alone = b.push(Bytes::from(vec![3; 101]));
        assert_eq!(alone, 1, "over the budget alone");
        assert_eq!(b.len(), 2);
        let taken = b.take();
        assert_eq!((taken[0][0], taken[1][0]), (1, 2));
        assert_eq!(b.len(), 0);
        assert_eq!(
            b.push(Bytes::from(vec![4; 100])),
            0,
            "the budget is free again"
        );
        assert_eq!(Backlog::new(0, 100, budget.clone()).push(Bytes::new()), 1);
        drop(b);
        assert_eq!(budget.used(), 0, "a session that ends gives its bytes back");
    }

    #[test]
    fn every_session_together_stays_within_the_shared_budget() {
        let budget = BacklogBudget::new(250);
        let mut a = Backlog::new(64, 200, budget.clone());
        let mut b = Backlog::new(64, 200, budget.clone());
        for _ in 0..4 {
            a.push(Bytes::from(vec![0; 50]));
        }
        assert_eq!(budget.used(), 200);
        // b finds 50 bytes left: one message fits, the next is dropped.
        assert_eq!(b.push(Bytes::from(vec![1; 50])), 0);
        assert_eq!(
            b.push(Bytes::from(vec![1; 50])),
            1,
            "b's own oldest made room"
        );
        assert_eq!(b.len(), 1);
        assert_eq!(budget.used(), 250);
        // a makes room from its own messages.
        assert_eq!(a.push(Bytes::from(vec![2; 100])), 2);
        assert!(budget.used() <= 250);
        a.clear();
        assert_eq!(budget.used(), 50);
    }
}
