//! Requests this side has sent and not yet seen answered: id allocation,
//! deadlines, progress routing and the memory of cancelled ids.

use std::collections::{HashMap, HashSet, VecDeque};
use std::time::{Duration, Instant};

use tessera_types::{ProgressToken, RequestId};

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
}

/// The table of outgoing requests.
#[derive(Debug, Default)]
pub(crate) struct PendingTable {
    next_id: i64,
    map: HashMap<RequestId, Pending>,
    by_token: HashMap<ProgressToken, RequestId>,
    cancelled: HashSet<RequestId>,
    cancelled_order: VecDeque<RequestId>,
}

impl PendingTable {
    /// A fresh id, never one in flight and never one used before by this table.
    pub fn next_id(&mut self) -> RequestId {
        loop {
            self.next_id = self.next_id.wrapping_add(1);
            let id = RequestId::Number(self.next_id);
            if !self.map.contains_key(&id) && !self.cancelled.contains(&id) {
                return id;
            }
        }
    }

    pub fn insert(&mut self, id: RequestId, p: Pending) {
        if let Some(t) = &p.progress_token {
            self.by_token.insert(t.clone(), id.clone());
        }
        self.map.insert(id, p);
    }

    pub fn remove(&mut self, id: &RequestId) -> Option<Pending> {
        let p = self.map.remove(id)?;
        if let Some(t) = &p.progress_token {
            self.by_token.remove(t);
        }
        Some(p)
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Remembers an id whose late answer must be dropped quietly.
    pub fn remember_cancelled(&mut self, id: RequestId, capacity: usize) {
        if self.cancelled.insert(id.clone()) {
            self.cancelled_order.push_back(id);
        }
        while self.cancelled_order.len() > capacity.max(1) {
            if let Some(old) = self.cancelled_order.pop_front() {
                self.cancelled.remove(&old);
            }
        }
    }

    pub fn was_cancelled(&self, id: &RequestId) -> bool {
        self.cancelled.contains(id)
    }

    /// Routes a progress token to its request and restarts its timeout if asked to.
    pub fn on_progress(&mut self, token: &ProgressToken, now: Instant) -> Option<RequestId> {
        let id = self.by_token.get(token)?.clone();
        if let Some(p) = self.map.get_mut(&id) {
            if p.reset_on_progress {
                if let Some(t) = p.timeout {
                    p.deadline = Some(now + t);
                }
            }
        }
        Some(id)
    }

    /// The earliest deadline.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.map
            .values()
            .flat_map(|p| [p.deadline, p.hard_deadline])
            .flatten()
            .min()
    }

    /// Removes and returns every request whose deadline has passed.
    pub fn expire(&mut self, now: Instant) -> Vec<(RequestId, Pending)> {
        let due: Vec<RequestId> = self
            .map
            .iter()
            .filter(|(_, p)| {
                p.deadline.is_some_and(|d| d <= now) || p.hard_deadline.is_some_and(|d| d <= now)
            })
            .map(|(id, _)| id.clone())
            .collect();
        // Oldest id first, so that events come out in a reproducible order.
        let mut due = due;
        due.sort();
        due.into_iter()
            .filter_map(|id| self.remove(&id).map(|p| (id, p)))
            .collect()
    }

    /// Removes every pending request (the connection closed).
    pub fn drain(&mut self) -> Vec<(RequestId, Pending)> {
        self.by_token.clear();
        let mut all: Vec<_> = self.map.drain().collect();
        all.sort_by(|a, b| a.0.cmp(&b.0));
        all
    }
}
