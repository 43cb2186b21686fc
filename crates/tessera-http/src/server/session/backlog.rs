//! The standalone backlog: messages of a Streamable HTTP session that are
//! not related to a request and found no open GET stream, kept until one
//! opens. Bounded by count and by bytes; the oldest go first.

use std::collections::VecDeque;

use bytes::Bytes;

/// The default bytes a session's backlog holds.
pub const DEFAULT_BACKLOG_BYTES: usize = 1 << 20;

/// Undelivered standalone messages, oldest first.
#[derive(Debug)]
pub(super) struct Backlog {
    items: VecDeque<Bytes>,
    bytes: usize,
    max_items: usize,
    max_bytes: usize,
}

impl Backlog {
    /// A backlog of at most `max_items` messages and `max_bytes` bytes
    /// (`max_items` 0: nothing is kept).
    pub fn new(max_items: usize, max_bytes: usize) -> Backlog {
        Backlog {
            items: VecDeque::new(),
            bytes: 0,
            max_items,
            max_bytes,
        }
    }

    /// Keeps `b`, dropping the oldest messages to make room; a message over
    /// the byte budget alone is dropped. Returns how many were dropped.
    pub fn push(&mut self, b: Bytes) -> usize {
        if self.max_items == 0 || b.len() > self.max_bytes {
            return 1;
        }
        let mut dropped = 0;
        while !self.items.is_empty()
            && (self.items.len() >= self.max_items || self.bytes + b.len() > self.max_bytes)
        {
            if let Some(old) = self.items.pop_front() {
                self.bytes -= old.len();
                dropped += 1;
            }
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
        self.bytes = 0;
    }

    /// Takes every message, oldest first.
    pub fn take(&mut self) -> VecDeque<Bytes> {
        self.bytes = 0;
        std::mem::take(&mut self.items)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_by_count_and_bytes() {
        let mut b = Backlog::new(3, 100);
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
        assert_eq!(Backlog::new(0, 100).push(Bytes::new()), 1);
    }
}
