//! [`InflightTable`]: the peer's requests being handled, by id.
//!
//! A per-request HTTP engine handles exactly one request, and most other
//! connections one at a time: the first request in progress sits in a slot
//! of its own, and the hash table is made only for the requests in
//! progress beside it.

use foldhash::HashMap;
use tessera_types::RequestId;

use super::Inflight;

/// The incoming requests in progress.
#[derive(Debug, Default)]
pub(crate) struct InflightTable {
    one: Option<(RequestId, Inflight)>,
    /// Made when a second request runs beside the first.
    many: Option<HashMap<RequestId, Inflight>>,
}

impl InflightTable {
    /// Records `f` as request `id` in progress, replacing any record of `id`.
    pub(crate) fn insert(&mut self, id: RequestId, f: Inflight) {
        match &mut self.one {
            Some((k, slot)) if *k == id => *slot = f,
            Some(_) => {
                self.many.get_or_insert_default().insert(id, f);
            }
            free @ None => {
                // `id` is in the table at most once: not beside a free slot.
                if let Some(m) = self.many.as_mut() {
                    m.remove(&id);
                }
                *free = Some((id, f));
            }
        }
    }

    /// The record of request `id`.
    pub(crate) fn get(&self, id: &RequestId) -> Option<&Inflight> {
        match &self.one {
            Some((k, f)) if k == id => Some(f),
            _ => self.many.as_ref()?.get(id),
        }
    }

    /// The record of request `id`, to change.
    pub(crate) fn get_mut(&mut self, id: &RequestId) -> Option<&mut Inflight> {
        match &mut self.one {
            Some((k, f)) if k == id => Some(f),
            _ => self.many.as_mut()?.get_mut(id),
        }
    }

    /// Whether request `id` is in progress.
    pub(crate) fn contains_key(&self, id: &RequestId) -> bool {
        self.get(id).is_some()
    }

    /// Takes the record of request `id` out.
    pub(crate) fn remove(&mut self, id: &RequestId) -> Option<Inflight> {
        match &self.one {
            Some((k, _)) if k == id => self.one.take().map(|(_, f)| f),
            _ => self.many.as_mut()?.remove(id),
        }
    }

    /// How many requests are in progress.
    pub(crate) fn len(&self) -> usize {
        usize::from(self.one.is_some()) + self.many.as_ref().map_or(0, HashMap::len)
    }

    /// Forgets every request.
    pub(crate) fn clear(&mut self) {
        self.one = None;
        self.many = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_types::Era;

    fn record(batch: u64) -> Inflight {
        Inflight {
            era: Era::Legacy,
            progress_token: None,
            last_progress: None,
            cancelled: false,
            batch: Some(batch),
            log_level: None,
            initialize: false,
            tag: None,
        }
    }

    fn batch_of(t: &InflightTable, id: i64) -> Option<u64> {
        t.get(&RequestId::Number(id)).and_then(|f| f.batch)
    }

    #[test]
    fn the_first_request_takes_the_slot_and_the_others_the_table() {
        let mut t = InflightTable::default();
        assert_eq!(t.len(), 0);
        t.insert(RequestId::Number(1), record(1));
        assert!(t.many.is_none(), "one request needs no table");
        t.insert(RequestId::from("two"), record(2));
        t.insert(RequestId::Number(3), record(3));
        assert_eq!(t.len(), 3);
        assert!(t.contains_key(&RequestId::from("two")));
        assert!(!t.contains_key(&RequestId::Number(4)));
        // Replacing keeps one record per id, wherever it is.
        t.insert(RequestId::Number(1), record(10));
        t.insert(RequestId::Number(3), record(30));
        assert_eq!(t.len(), 3);
        assert_eq!(batch_of(&t, 1), Some(10));
        assert_eq!(batch_of(&t, 3), Some(30));
        if let Some(f) = t.get_mut(&RequestId::Number(3)) {
            f.cancelled = true;
        }
        assert!(t.get(&RequestId::Number(3)).is_some_and(|f| f.cancelled));
        // The slot frees; a request already in the table is not recorded twice.
        assert_eq!(
            t.remove(&RequestId::Number(1)).and_then(|f| f.batch),
            Some(10)
        );
        assert!(t.remove(&RequestId::Number(1)).is_none());
        t.insert(RequestId::Number(3), record(31));
        assert_eq!(t.len(), 2);
        assert_eq!(batch_of(&t, 3), Some(31));
        assert!(t.remove(&RequestId::Number(3)).is_some());
        assert!(t.get(&RequestId::Number(3)).is_none());
        assert_eq!(t.len(), 1);
        t.clear();
        assert_eq!(t.len(), 0);
        assert!(!t.contains_key(&RequestId::from("two")));
    }
}
