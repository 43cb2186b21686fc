//! Operational counts a component keeps for whoever wants to read them
//! (the telemetry crate's `tessera.*` gauges and counters, a health page):
//! a [`Tally`] of named events (requests refused by each limit, tasks by
//! the status they entered) and a [`Level`] of things open now
//! (connections, streams).
//!
//! They are plain atomics, read when a metric reader collects: the
//! component that counts depends on no metrics library, and counting costs
//! one atomic add whether anyone reads or not.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Counts of events by name, from a fixed list of names known when the
/// tally is made (so a peer cannot grow it).
#[derive(Debug)]
pub struct Tally {
    names: &'static [&'static str],
    counts: Box<[AtomicU64]>,
}

impl Tally {
    /// A tally of the events `names`, all at zero.
    pub fn new(names: &'static [&'static str]) -> Tally {
        Tally {
            names,
            counts: names.iter().map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// Counts one event `name`. A name not in the list is counted nowhere
    /// (and trips a debug assertion: it is a bug of the caller).
    pub fn add(&self, name: &str) {
        match self.names.iter().position(|n| *n == name) {
            Some(i) => {
                self.counts[i].fetch_add(1, Ordering::Relaxed);
            }
            None => debug_assert!(false, "{name} is not one of {:?}", self.names),
        }
    }

    /// How many events `name` were counted.
    pub fn get(&self, name: &str) -> u64 {
        self.names
            .iter()
            .position(|n| *n == name)
            .map_or(0, |i| self.counts[i].load(Ordering::Relaxed))
    }

    /// Every name with its count, in the order of the list.
    pub fn read(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        self.names
            .iter()
            .zip(self.counts.iter())
            .map(|(n, c)| (*n, c.load(Ordering::Relaxed)))
    }
}

/// How many of something are open now: [`Level::enter`] returns a guard
/// that counts one until it is dropped.
#[derive(Debug, Default)]
pub struct Level(AtomicUsize);

impl Level {
    /// Counts one more until the guard is dropped.
    pub fn enter(self: &Arc<Self>) -> LevelGuard {
        self.0.fetch_add(1, Ordering::Relaxed);
        LevelGuard(self.clone())
    }

    /// How many are open now.
    pub fn get(&self) -> usize {
        self.0.load(Ordering::Relaxed)
    }
}

/// One counted by a [`Level`] until dropped.
#[derive(Debug)]
pub struct LevelGuard(Arc<Level>);

impl Drop for LevelGuard {
    fn drop(&mut self) {
        self.0.0.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tally_counts_by_name() {
        let t = Tally::new(&["a", "b"]);
        t.add("b");
        t.add("b");
        t.add("a");
        assert_eq!(t.get("a"), 1);
        assert_eq!(t.get("b"), 2);
        assert_eq!(t.get("c"), 0);
        assert_eq!(t.read().collect::<Vec<_>>(), vec![("a", 1), ("b", 2)]);
    }

    #[test]
    fn a_level_counts_what_is_open() {
        let l = Arc::new(Level::default());
        let one = l.enter();
        let two = l.enter();
        assert_eq!(l.get(), 2);
        drop(one);
        assert_eq!(l.get(), 1);
        drop(two);
        assert_eq!(l.get(), 0);
    }
}
