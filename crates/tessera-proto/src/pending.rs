//! Requests this side has sent and not yet seen answered: id allocation,
//! deadlines, progress routing and the memory of cancelled ids.

use std::collections::{BTreeSet, VecDeque};

use foldhash::{HashMap, HashSet};
use std::time::{Duration, Instant};

use tessera_types::{MetaChanges, ProgressToken, RequestId};

/// Per-request options for [`Engine::send_request`](crate::Engine::send_request).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestOptions {
    /// Time to wait for an answer; `None` uses the engine's default.
    pub timeout: Option<Duration>,
    /// Hard limit whatever progress arrives; `None` uses the engine's default.
    pub max_timeout: Option<Duration>,
    /// Wait forever (ignores both timeouts).
    pub no_timeout: bool,
    /// Restart the timeout on each progress notification (the hard limit still holds).
    pub reset_on_progress: bool,
    /// Ask the peer for progress (adds `_meta.progressToken`).
    pub progress: bool,
    /// The incoming request on whose behalf this one is sent (server-to-client
    /// requests made by a handler); used to route it on per-request streams.
    pub related: Option<RequestId>,
    /// Changes of `params._meta` made together with the engine's own
    /// members, in one edit of the params (a proxy's changes of a request it
    /// forwards as the text it received).
    pub meta: Option<MetaChanges>,
}

impl Default for RequestOptions {
    fn default() -> Self {
        RequestOptions {
            timeout: None,
            max_timeout: None,
            no_timeout: false,
            reset_on_progress: true,
            progress: false,
            related: None,
            meta: None,
        }
    }
}

/// What a pending request is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PendingKind {
    /// Sent by the application.
    User,
    /// The client's `server/discover` era probe.
    Probe,
    /// The client's `initialize`.
    Initialize,
}

#[derive(Debug, Clone)]
pub(crate) struct Pending {
    pub method: String,
    pub kind: PendingKind,
    pub sent_at: Instant,
    pub deadline: Option<Instant>,
    pub hard_deadline: Option<Instant>,
    pub timeout: Option<Duration>,
    pub reset_on_progress: bool,
    pub progress_token: Option<ProgressToken>,
    /// Its result is handed over as JSON text ([`crate::Event::RawResponse`]).
    pub raw: bool,
}

/// The table of outgoing requests. Its collections are made with the first
/// request sent or id remembered: an engine that only answers (a server's
/// per-request engine) never makes them.
#[derive(Debug, Default)]
pub(crate) struct PendingTable {
    next_id: i64,
    /// How many pending requests want their result as JSON text.
    raw: usize,
    held: Option<Box<Held>>,
}

/// What a [`PendingTable`] holds once it holds anything.
#[derive(Debug, Default)]
struct Held {
    map: HashMap<RequestId, Pending>,
    by_token: HashMap<ProgressToken, RequestId>,
    cancelled: HashSet<RequestId>,
    cancelled_order: VecDeque<RequestId>,
    /// Each pending request that has a deadline, keyed by the earlier of its
    /// two ([`due`]): the earliest deadline is the first key, and the
    /// requests due are a prefix, found without looking at the others.
    due: BTreeSet<(Instant, RequestId)>,
}

/// When request `p` is due: the earlier of its deadlines, if it has one.
fn due(p: &Pending) -> Option<Instant> {
    match (p.deadline, p.hard_deadline) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

impl PendingTable {
    /// A fresh id, never one in flight and never one used before by this table.
    /// The next id handed out is `base + 1` (or the first free one after it).
    pub fn set_base(&mut self, base: i64) {
        self.next_id = base;
    }

    /// The collections, made now if they were not.
    fn held_mut(&mut self) -> &mut Held {
        self.held.get_or_insert_with(Box::default)
    }

    pub fn next_id(&mut self) -> RequestId {
        loop {
            self.next_id = self.next_id.wrapping_add(1);
            let id = RequestId::Number(self.next_id);
            let taken = self
                .held
                .as_ref()
                .is_some_and(|h| h.map.contains_key(&id) || h.cancelled.contains(&id));
            if !taken {
                return id;
            }
        }
    }

    pub fn insert(&mut self, id: RequestId, p: Pending) {
        self.raw += usize::from(p.raw);
        let held = self.held.get_or_insert_with(Box::default);
        if let Some(t) = &p.progress_token {
            held.by_token.insert(t.clone(), id.clone());
        }
        let new_due = due(&p);
        if let Some(d) = new_due {
            held.due.insert((d, id.clone()));
        }
        if let Some(old) = held.map.insert(id.clone(), p) {
            self.raw -= usize::from(old.raw);
            if let Some(d) = due(&old).filter(|d| Some(*d) != new_due) {
                held.due.remove(&(d, id));
            }
        }
    }

    pub fn remove(&mut self, id: &RequestId) -> Option<Pending> {
        let held = self.held.as_mut()?;
        let p = held.map.remove(id)?;
        if let Some(t) = &p.progress_token {
            held.by_token.remove(t);
        }
        self.raw -= usize::from(p.raw);
        if let Some(d) = due(&p) {
            held.due.remove(&(d, id.clone()));
        }
        Some(p)
    }

    /// Hands the result of pending request `id` over as JSON text.
    pub fn mark_raw(&mut self, id: &RequestId) {
        if let Some(p) = self.held.as_mut().and_then(|h| h.map.get_mut(id)) {
            if !p.raw {
                p.raw = true;
                self.raw += 1;
            }
        }
    }

    /// Whether some pending request wants its result as JSON text.
    pub fn has_raw(&self) -> bool {
        self.raw > 0
    }

    /// Whether request `id` is pending and wants its result as JSON text.
    pub fn is_raw(&self, id: &RequestId) -> bool {
        self.held
            .as_ref()
            .and_then(|h| h.map.get(id))
            .is_some_and(|p| p.raw)
    }

    pub fn len(&self) -> usize {
        self.held.as_ref().map_or(0, |h| h.map.len())
    }

    /// Remembers an id whose late answer must be dropped quietly.
    pub fn remember_cancelled(&mut self, id: RequestId, capacity: usize) {
        let held = self.held_mut();
        if held.cancelled.insert(id.clone()) {
            held.cancelled_order.push_back(id);
        }
        while held.cancelled_order.len() > capacity.max(1) {
            if let Some(old) = held.cancelled_order.pop_front() {
                held.cancelled.remove(&old);
            }
        }
    }

    pub fn was_cancelled(&self, id: &RequestId) -> bool {
        self.held.as_ref().is_some_and(|h| h.cancelled.contains(id))
    }

    /// Routes a progress token to its request and restarts its timeout if asked to.
    pub fn on_progress(&mut self, token: &ProgressToken, now: Instant) -> Option<RequestId> {
        let held = self.held.as_mut()?;
        let id = held.by_token.get(token)?.clone();
        if let Some(p) = held.map.get_mut(&id) {
            if p.reset_on_progress {
                if let Some(t) = p.timeout {
                    let before = due(p);
                    p.deadline = Some(now + t);
                    let after = due(p);
                    if before != after {
                        if let Some(d) = before {
                            held.due.remove(&(d, id.clone()));
                        }
                        if let Some(d) = after {
                            held.due.insert((d, id.clone()));
                        }
                    }
                }
            }
        }
        Some(id)
    }

    /// The earliest deadline.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.held.as_ref()?.due.first().map(|(d, _)| *d)
    }

    /// Removes and returns every request whose deadline has passed.
    pub fn expire(&mut self, now: Instant) -> Vec<(RequestId, Pending)> {
        let Some(held) = &self.held else {
            return Vec::new();
        };
        let mut ids: Vec<RequestId> = held
            .due
            .iter()
            .take_while(|(d, _)| *d <= now)
            .map(|(_, id)| id.clone())
            .collect();
        if ids.is_empty() {
            return Vec::new();
        }
        // Oldest id first, so that events come out in a reproducible order.
        ids.sort();
        ids.into_iter()
            .filter_map(|id| self.remove(&id).map(|p| (id, p)))
            .collect()
    }

    /// Removes every pending request (the connection closed).
    pub fn drain(&mut self) -> Vec<(RequestId, Pending)> {
        self.raw = 0;
        let Some(held) = self.held.as_mut() else {
            return Vec::new();
        };
        held.by_token.clear();
        held.due.clear();
        let mut all: Vec<_> = held.map.drain().collect();
        all.sort_by(|a, b| a.0.cmp(&b.0));
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending(now: Instant, timeout: Option<u64>, max: Option<u64>, token: bool) -> Pending {
        Pending {
            method: "m".into(),
            kind: PendingKind::User,
            sent_at: now,
            deadline: timeout.map(|t| now + Duration::from_millis(t)),
            hard_deadline: max.map(|t| now + Duration::from_millis(t)),
            timeout: timeout.map(Duration::from_millis),
            reset_on_progress: true,
            progress_token: token.then(|| RequestId::from("tok")),
            raw: false,
        }
    }

    #[test]
    fn a_table_that_holds_nothing_makes_no_collections() {
        let now = Instant::now();
        let mut t = PendingTable::default();
        let id = RequestId::Number(1);
        assert_eq!(t.next_id(), id);
        assert!(t.remove(&id).is_none() && !t.is_raw(&id) && !t.was_cancelled(&id));
        t.mark_raw(&id);
        assert_eq!((t.len(), t.next_deadline(), t.has_raw()), (0, None, false));
        assert!(t.on_progress(&RequestId::from("tok"), now).is_none());
        assert!(t.expire(now).is_empty() && t.drain().is_empty());
        assert!(t.held.is_none());
        t.insert(id.clone(), pending(now, Some(10), None, false));
        assert!(t.held.is_some());
        assert_eq!(t.remove(&id).map(|p| p.method), Some("m".to_owned()));
    }

    #[test]
    fn next_id_skips_ids_in_flight_and_remembered() {
        let now = Instant::now();
        let mut t = PendingTable::default();
        t.insert(RequestId::Number(1), pending(now, None, None, false));
        t.remember_cancelled(RequestId::Number(3), 10);
        assert_eq!(t.next_id(), RequestId::Number(2));
        assert_eq!(t.next_id(), RequestId::Number(4));
        // Wrapping around never hands out an id still in use.
        t.next_id = i64::MAX - 1;
        t.insert(RequestId::Number(i64::MAX), pending(now, None, None, false));
        t.insert(RequestId::Number(i64::MIN), pending(now, None, None, false));
        assert_eq!(t.next_id(), RequestId::Number(i64::MIN + 1));
    }

    #[test]
    fn cancelled_memory_is_bounded_and_forgets_the_oldest() {
        let mut t = PendingTable::default();
        for n in 0..5 {
            t.remember_cancelled(RequestId::Number(n), 3);
        }
        t.remember_cancelled(RequestId::Number(4), 3); // already known: no change
        assert!(!t.was_cancelled(&RequestId::Number(1)));
        assert!(t.was_cancelled(&RequestId::Number(2)));
        assert!(t.was_cancelled(&RequestId::Number(4)));
        assert_eq!(t.held.as_ref().unwrap().cancelled_order.len(), 3);
        // A capacity of zero still remembers the last one.
        t.remember_cancelled(RequestId::Number(9), 0);
        assert!(t.was_cancelled(&RequestId::Number(9)));
        assert_eq!(t.held.as_ref().unwrap().cancelled.len(), 1);
    }

    #[test]
    fn progress_restarts_only_the_soft_deadline() {
        let now = Instant::now();
        let mut t = PendingTable::default();
        let id = RequestId::Number(7);
        t.insert(id.clone(), pending(now, Some(100), Some(250), true));
        assert_eq!(t.next_deadline(), Some(now + Duration::from_millis(100)));
        let later = now + Duration::from_millis(90);
        assert_eq!(
            t.on_progress(&RequestId::from("tok"), later),
            Some(id.clone())
        );
        assert_eq!(t.next_deadline(), Some(now + Duration::from_millis(190)));
        let later = now + Duration::from_millis(180);
        t.on_progress(&RequestId::from("tok"), later);
        assert_eq!(t.next_deadline(), Some(now + Duration::from_millis(250)));
        assert_eq!(t.on_progress(&RequestId::from("other"), later), None);

        // Without reset_on_progress the deadline stays put.
        let mut p = pending(now, Some(100), None, true);
        p.reset_on_progress = false;
        let mut t = PendingTable::default();
        t.insert(id.clone(), p);
        assert_eq!(
            t.on_progress(&RequestId::from("tok"), now + Duration::from_millis(50)),
            Some(id)
        );
        assert_eq!(t.next_deadline(), Some(now + Duration::from_millis(100)));
    }

    #[test]
    fn expire_and_drain_come_out_in_id_order_and_forget_tokens() {
        let now = Instant::now();
        let mut t = PendingTable::default();
        for n in [5, 1, 3] {
            t.insert(RequestId::Number(n), pending(now, Some(10), None, false));
        }
        t.insert(RequestId::Number(9), pending(now, Some(1_000), None, true));
        assert!(t.expire(now + Duration::from_millis(9)).is_empty());
        let due: Vec<RequestId> = t
            .expire(now + Duration::from_millis(10))
            .into_iter()
            .map(|(id, _)| id)
            .collect();
        assert_eq!(due, [1, 3, 5].map(RequestId::Number));
        assert_eq!(t.len(), 1);
        let all = t.drain();
        assert_eq!(all.len(), 1);
        assert_eq!(t.on_progress(&RequestId::from("tok"), now), None);
        assert_eq!(t.next_deadline(), None);
    }

    #[test]
    fn raw_requests_are_counted_until_answered_expired_or_drained() {
        let now = Instant::now();
        let mut t = PendingTable::default();
        let mut raw = pending(now, Some(10), None, false);
        raw.raw = true;
        t.insert(RequestId::Number(1), raw.clone());
        t.insert(RequestId::Number(2), raw.clone());
        t.insert(RequestId::Number(3), pending(now, None, None, false));
        assert!(t.has_raw() && t.is_raw(&RequestId::Number(1)));
        assert!(!t.is_raw(&RequestId::Number(3)) && !t.is_raw(&RequestId::Number(9)));
        // Replacing an entry does not count it twice.
        t.insert(RequestId::Number(2), raw.clone());
        assert!(t.remove(&RequestId::Number(1)).is_some());
        assert!(t.has_raw());
        assert_eq!(t.expire(now + Duration::from_millis(10)).len(), 1);
        assert!(!t.has_raw());
        t.insert(RequestId::Number(4), raw);
        t.drain();
        assert!(!t.has_raw());
    }

    /// The deadline index holds one key per request with a deadline, the
    /// earlier of its two, and nothing else.
    fn assert_index_matches(t: &PendingTable) {
        let held = t.held.as_ref().unwrap();
        let expected: BTreeSet<(Instant, RequestId)> = held
            .map
            .iter()
            .filter_map(|(id, p)| due(p).map(|d| (d, id.clone())))
            .collect();
        assert_eq!(held.due, expected);
    }

    #[test]
    fn the_earliest_deadline_follows_removals_progress_replacement_and_expiry() {
        // A fixed instant and offsets from it: no clock is read.
        let now = Instant::now();
        let ms = |n: u64| now + Duration::from_millis(n);
        let mut t = PendingTable::default();
        t.insert(RequestId::Number(1), pending(now, Some(30), None, false));
        t.insert(
            RequestId::Number(2),
            pending(now, Some(10), Some(50), false),
        );
        t.insert(RequestId::Number(3), pending(now, None, Some(20), false));
        t.insert(RequestId::Number(4), pending(now, None, None, false));
        t.insert(RequestId::from("s"), pending(now, Some(40), None, true));
        assert_index_matches(&t);
        assert_eq!(t.next_deadline(), Some(ms(10)));
        // Answered: the next one comes first.
        assert!(t.remove(&RequestId::Number(2)).is_some());
        assert_eq!(t.next_deadline(), Some(ms(20)));
        assert_index_matches(&t);
        // Replaced by a request with a later deadline: the old one is gone.
        t.insert(RequestId::Number(3), pending(now, Some(60), None, false));
        assert_eq!(t.next_deadline(), Some(ms(30)));
        assert_index_matches(&t);
        // Progress moves a soft deadline later (id "s", token "tok").
        t.remove(&RequestId::Number(1));
        assert_eq!(t.next_deadline(), Some(ms(40)));
        t.on_progress(&RequestId::from("tok"), ms(35));
        assert_eq!(t.next_deadline(), Some(ms(60)));
        assert_index_matches(&t);
        // Expiry takes exactly those due, and the next deadline is the rest's.
        let gone: Vec<RequestId> = t.expire(ms(60)).into_iter().map(|(id, _)| id).collect();
        assert_eq!(gone, [RequestId::Number(3)]);
        assert_eq!(t.next_deadline(), Some(ms(75)));
        assert_index_matches(&t);
        assert_eq!(t.expire(ms(75)).len(), 1);
        // Only the request without a deadline is left.
        assert_eq!((t.len(), t.next_deadline()), (1, None));
        assert_index_matches(&t);
        // A request put back with the same deadline is indexed once.
        t.insert(RequestId::Number(5), pending(now, Some(5), None, false));
        t.insert(RequestId::Number(5), pending(now, Some(5), None, false));
        assert_eq!(t.held.as_ref().unwrap().due.len(), 1);
        t.remove(&RequestId::Number(5));
        assert!(t.held.as_ref().unwrap().due.is_empty());
    }

    #[test]
    fn remove_forgets_the_progress_token() {
        let now = Instant::now();
        let mut t = PendingTable::default();
        t.insert(RequestId::Number(1), pending(now, None, None, true));
        assert!(t.remove(&RequestId::Number(1)).is_some());
        assert!(t.remove(&RequestId::Number(1)).is_none());
        assert_eq!(t.on_progress(&RequestId::from("tok"), now), None);
    }
}
