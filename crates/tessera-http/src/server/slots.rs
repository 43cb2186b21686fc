//! [`Slots`]: units of a resource counted per key (a peer address, a
//! client) under a cap, given back when the [`Slot`] holding them is
//! dropped. The open connections of an address and the requests in progress
//! of a client are both counted this way.

use std::hash::Hash;
use std::sync::{Arc, Mutex, PoisonError};

use foldhash::HashMap;

/// The units each key holds. Keys holding none are not kept, so the map is
/// never larger than the number of keys holding something.
#[derive(Debug)]
pub(crate) struct Slots<K: Eq + Hash> {
    held: Mutex<HashMap<K, usize>>,
}

impl<K: Eq + Hash> Default for Slots<K> {
    fn default() -> Self {
        Slots {
            held: Mutex::new(HashMap::default()),
        }
    }
}

/// Units held by one key; given back when dropped.
#[derive(Debug)]
pub(crate) struct Slot<K: Eq + Hash + Clone> {
    slots: Arc<Slots<K>>,
    key: K,
    n: usize,
}

impl<K: Eq + Hash + Clone> Slots<K> {
    /// `n` more units for `key`, or `None` when that would take it over
    /// `cap` (nothing is taken then).
    pub(crate) fn take(self: &Arc<Self>, key: K, n: usize, cap: usize) -> Option<Slot<K>> {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        // One lookup when the key holds some already (a busy client).
        match held.get_mut(&key) {
            Some(now) => {
                if now.saturating_add(n) > cap {
                    return None;
                }
                *now += n;
            }
            None => {
                if n > cap {
                    return None;
                }
                if n > 0 {
                    held.insert(key.clone(), n);
                }
            }
        }
        drop(held);
        Some(Slot {
            slots: self.clone(),
            key,
            n,
        })
    }

    /// How many units `key` holds.
    pub(crate) fn held(&self, key: &K) -> usize {
        let held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        held.get(key).copied().unwrap_or(0)
    }

    /// How many keys hold something.
    #[cfg(test)]
    pub(crate) fn keys(&self) -> usize {
        self.held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

impl<K: Eq + Hash + Clone> Drop for Slot<K> {
    fn drop(&mut self) {
        if self.n == 0 {
            return;
        }
        let mut held = self
            .slots
            .held
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(n) = held.get_mut(&self.key) {
            *n = n.saturating_sub(self.n);
            if *n == 0 {
                held.remove(&self.key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_are_counted_per_key_up_to_the_cap_and_given_back() {
        let slots = Arc::new(Slots::<&str>::default());
        let three = slots.take("a", 3, 4).unwrap();
        assert!(slots.take("a", 2, 4).is_none(), "3 + 2 is over the cap");
        assert_eq!(slots.held(&"a"), 3, "a refusal takes nothing");
        let one = slots.take("a", 1, 4).unwrap();
        assert!(slots.take("a", 1, 4).is_none());
        assert!(
            slots.take("b", 4, 4).is_some(),
            "another key is not affected"
        );
        drop(three);
        assert_eq!(slots.held(&"a"), 1);
        drop(one);
        assert_eq!(slots.held(&"a"), 0);
        assert_eq!(slots.keys(), 0, "empty entries go");
        assert!(
            slots.take("d", 5, 4).is_none(),
            "a key holding nothing is held to the cap too"
        );
        assert_eq!(slots.keys(), 0, "a refused key keeps no entry");
        let none = slots.take("c", 0, 0).unwrap();
        assert_eq!(slots.keys(), 0, "taking nothing keeps no entry");
        drop(none);
        assert_eq!(slots.keys(), 0);
    }
}
