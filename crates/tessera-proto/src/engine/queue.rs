//! [`Queue`]: a first-in, first-out queue whose first item needs no buffer.
//!
//! The engine queues what it writes and the events it raises; an engine
//! serving one HTTP request queues one event and one message, each taken
//! out before the next arrives. Such an engine allocates no buffer for
//! either: the oldest item sits in a slot of its own, and the buffer is made
//! only when a second item waits behind it.

use std::collections::VecDeque;

/// A first-in, first-out queue.
#[derive(Debug)]
pub(crate) struct Queue<T> {
    /// The oldest item, when it is not in `rest`.
    head: Option<T>,
    /// The items behind `head` (all of them while `head` is empty).
    rest: VecDeque<T>,
}

impl<T> Default for Queue<T> {
    fn default() -> Self {
        Queue {
            head: None,
            rest: VecDeque::new(),
        }
    }
}

impl<T> Queue<T> {
    /// Adds `item` at the back.
    pub(crate) fn push_back(&mut self, item: T) {
        if self.head.is_none() && self.rest.is_empty() {
            self.head = Some(item);
        } else {
            self.rest.push_back(item);
        }
    }

    /// Takes the oldest item out.
    pub(crate) fn pop_front(&mut self) -> Option<T> {
        self.head.take().or_else(|| self.rest.pop_front())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_come_out_in_order_and_one_at_a_time_needs_no_buffer() {
        let mut q = Queue::default();
        assert_eq!(q.pop_front(), None::<u32>);
        for n in 0..3 {
            q.push_back(n);
            assert_eq!(q.pop_front(), Some(n));
        }
        assert_eq!(q.rest.capacity(), 0, "one at a time: no buffer");
        q.push_back(1);
        q.push_back(2);
        q.push_back(3);
        assert_eq!(q.pop_front(), Some(1));
        // The slot is free while others wait: a new item goes behind them.
        q.push_back(4);
        assert_eq!(q.pop_front(), Some(2));
        assert_eq!(q.pop_front(), Some(3));
        assert_eq!(q.pop_front(), Some(4));
        assert_eq!(q.pop_front(), None);
        q.push_back(5);
        assert_eq!(q.pop_front(), Some(5));
    }
}
