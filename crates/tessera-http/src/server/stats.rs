//! [`HttpStats`]: what an endpoint counts for its operators — connections
//! and SSE streams open now, and the requests each limit refused. Read by
//! `tessera-telemetry`'s `tessera.*` instruments (or anything else) through
//! [`McpHttp::stats`](super::McpHttp::stats).

use std::sync::Arc;

use tessera_runtime::tally::{Level, LevelGuard, Tally};

/// The limits whose refusals an endpoint counts, by the name of their
/// setting ([`McpHttpBuilder`](super::McpHttpBuilder) method, `tessera
/// serve` flag with `-` for `_`).
pub mod limit {
    /// A connection beyond the cap on open connections (`503`, closed).
    pub const MAX_CONNECTIONS: &str = "max_connections";
    /// A connection beyond its address's cap on open connections (`429`,
    /// closed).
    pub const MAX_CONNECTIONS_PER_CLIENT: &str = "max_connections_per_client";
    /// A body over the size limit (`413`).
    pub const MAX_BODY_BYTES: &str = "max_body_bytes";
    /// A body that stopped arriving (`408`).
    pub const BODY_READ_TIMEOUT: &str = "body_read_timeout";
    /// A body that did not arrive in time (`408`).
    pub const BODY_TOTAL_TIMEOUT: &str = "body_total_timeout";
    /// A body slower than the minimum rate (`408`).
    pub const BODY_MIN_RATE: &str = "body_min_rate";
    /// A batch with too many messages (`400`).
    pub const MAX_BATCH: &str = "max_batch";
    /// A new session when the endpoint's sessions are all busy (`503`).
    pub const MAX_SESSIONS: &str = "max_sessions";
    /// A new session when the client's sessions are all busy (`429`).
    pub const MAX_SESSIONS_PER_CLIENT: &str = "max_sessions_per_client";
    /// A request when its session has too many in progress (`429`).
    pub const MAX_REQUESTS_PER_SESSION: &str = "max_requests_per_session";
    /// A request when its client has too many in progress (`429`).
    pub const MAX_REQUESTS_PER_CLIENT: &str = "max_requests_per_client";
    /// A connection closed because no request head came in time.
    pub const HEADER_READ_TIMEOUT: &str = "header_read_timeout";

    /// Every limit counted, in a fixed order.
    pub const ALL: &[&str] = &[
        MAX_CONNECTIONS,
        MAX_CONNECTIONS_PER_CLIENT,
        MAX_BODY_BYTES,
        BODY_READ_TIMEOUT,
        BODY_TOTAL_TIMEOUT,
        BODY_MIN_RATE,
        MAX_BATCH,
        MAX_SESSIONS,
        MAX_SESSIONS_PER_CLIENT,
        MAX_REQUESTS_PER_SESSION,
        MAX_REQUESTS_PER_CLIENT,
        HEADER_READ_TIMEOUT,
    ];
}

/// An endpoint's operational counts. Cheap to read at any time.
#[derive(Debug)]
pub struct HttpStats {
    connections: Arc<Level>,
    streams: Arc<Level>,
    refused: Tally,
}

impl Default for HttpStats {
    fn default() -> Self {
        HttpStats {
            connections: Arc::default(),
            streams: Arc::default(),
            refused: Tally::new(limit::ALL),
        }
    }
}

impl HttpStats {
    /// Connections open now (those accepted by [`serve`](super::serve) or
    /// [`serve_with`](super::serve_with); an endpoint mounted in another
    /// server does not see its connections).
    pub fn connections_open(&self) -> usize {
        self.connections.get()
    }

    /// SSE response streams open now (replies, standalone `GET` streams,
    /// HTTP+SSE streams).
    pub fn streams_open(&self) -> usize {
        self.streams.get()
    }

    /// The requests refused by each limit since the endpoint was built,
    /// by the names of [`limit`].
    pub fn refused(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        self.refused.read()
    }

    /// The requests refused by the limit `name` ([`limit`]).
    pub fn refused_by(&self, name: &str) -> u64 {
        self.refused.get(name)
    }

    /// Counts a refusal by `limit` (one of [`limit::ALL`]).
    pub(crate) fn refuse(&self, limit: &'static str) {
        self.refused.add(limit);
    }

    /// Counts an open connection until the guard is dropped.
    pub(crate) fn connection(&self) -> LevelGuard {
        self.connections.enter()
    }

    /// Counts an open SSE stream until the guard is dropped.
    pub(crate) fn stream(&self) -> LevelGuard {
        self.streams.enter()
    }
}
