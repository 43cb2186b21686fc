//! [`Redis`]: one connection to a Redis server, its key prefix, this
//! instance's id, and the deadline that keeps every store operation from
//! hanging while Redis is away.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};

use crate::error::Error;
use crate::key_ring::RedisKeyRing;

/// How a [`Redis`] handle connects and names its keys. Start with
/// [`Redis::options`].
#[derive(Debug, Clone)]
pub struct RedisOptions {
    pub(crate) url: String,
    pub(crate) prefix: String,
    pub(crate) instance_id: Option<String>,
    pub(crate) op_timeout: Duration,
    pub(crate) state_ttl: Duration,
    pub(crate) key_period: Duration,
    pub(crate) events_per_stream: usize,
    pub(crate) event_ttl: Duration,
    pub(crate) event_session_bytes: u64,
    pub(crate) event_total_bytes: u64,
}

impl RedisOptions {
    /// The prefix of every key (default `tessera:`). Endpoints that share
    /// one Redis database need different prefixes; instances of one
    /// endpoint need the same.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// This instance's id, stable across its restarts (default: a random
    /// one). The task store fails only the unfinished tasks of this id when
    /// the instance starts again, so give each replica its own stable id
    /// (`tessera serve` uses the host name and the listening address).
    pub fn instance_id(mut self, id: impl Into<String>) -> Self {
        self.instance_id = Some(id.into());
        self
    }

    /// How long one store operation may take, from sending to answer,
    /// reconnection included, before it fails with
    /// [`Error::Unavailable`] (default 2 s).
    pub fn operation_timeout(mut self, timeout: Duration) -> Self {
        self.op_timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// How long a sealed `requestState` stays valid (default 10 minutes,
    /// the server's default): retired ring keys are kept this long.
    pub fn request_state_ttl(mut self, ttl: Duration) -> Self {
        self.state_ttl = ttl;
        self
    }

    /// How often the `requestState` key ring gets a new sealing key
    /// (default 1 hour).
    pub fn key_rotation_period(mut self, period: Duration) -> Self {
        self.key_period = period.max(Duration::from_secs(1));
        self
    }

    /// How many events each resumable SSE stream keeps for replay (default
    /// 256) and how long after its last event (default 1 hour).
    pub fn event_retention(mut self, per_stream: usize, ttl: Duration) -> Self {
        self.events_per_stream = per_stream.max(1);
        self.event_ttl = ttl.max(Duration::from_secs(1));
        self
    }

    /// How many bytes of event data the resumable SSE streams keep for one
    /// session (default 4 MiB) and for every session together (default 64
    /// MiB), counted in Redis so that the bound holds across the instances
    /// sharing the prefix. An event over a session's budget is not kept; a
    /// session over it loses its oldest events; over the total, the least
    /// recently written sessions are deleted whole.
    pub fn event_bytes(mut self, per_session: u64, total: u64) -> Self {
        self.event_session_bytes = per_session.max(1);
        self.event_total_bytes = total.max(self.event_session_bytes);
        self
    }

    /// Connects (failing at once when Redis does not answer) and starts the
    /// background refresh of the `requestState` key ring.
    pub async fn connect(self) -> Result<Redis, Error> {
        let client = redis::Client::open(self.url.as_str())
            .map_err(|e| Error::InvalidUrl(format!("{}: {e}", redact(&self.url))))?;
        // Each reconnection tries a few times with a short exponential
        // backoff (100 ms, 200 ms, 400 ms, capped at 1 s); a command that
        // finds the connection still broken starts another round.
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(self.op_timeout)
            .set_response_timeout(self.op_timeout)
            .set_number_of_retries(3)
            .set_exponent_base(2)
            .set_factor(100)
            .set_max_delay(1_000);
        let manager = tokio::time::timeout(
            self.op_timeout,
            ConnectionManager::new_with_config(client.clone(), config),
        )
        .await
        .map_err(|_| Error::Unavailable(format!("no answer from {}", redact(&self.url))))?
        .map_err(|e| Error::Unavailable(format!("{}: {e}", redact(&self.url))))?;
        let instance = self.instance_id.clone().unwrap_or_else(random_id);
        let conn = Conn {
            manager,
            timeout: self.op_timeout,
            stats: Arc::default(),
        };
        let ring = RedisKeyRing::start(
            conn.clone(),
            format!("{}mrtr:ring", self.prefix),
            self.state_ttl,
            self.key_period,
        )
        .await?;
        Ok(Redis {
            inner: Arc::new(Shared {
                client,
                conn,
                options: self,
                instance,
                ring,
                bus: std::sync::OnceLock::new(),
            }),
        })
    }
}

/// The shared connection and the deadline of one operation.
#[derive(Clone)]
pub(crate) struct Conn {
    manager: ConnectionManager,
    timeout: Duration,
    stats: Arc<RedisStats>,
}

/// What a [`Redis`] handle counts for its operators: the operations sent
/// (each one round trip: a command, a pipeline or a script) and those that
/// failed. `tessera-telemetry` exports them as `tessera.redis.round_trips`
/// and `tessera.redis.errors`.
#[derive(Debug, Default)]
pub struct RedisStats {
    round_trips: AtomicU64,
    errors: AtomicU64,
}

impl RedisStats {
    /// Operations sent since the handle connected (the bus's subscription
    /// connection not included).
    pub fn round_trips(&self) -> u64 {
        self.round_trips.load(Ordering::Relaxed)
    }

    /// Operations that failed: Redis answered with an error, the
    /// connection broke, or no answer came within the operation timeout.
    pub fn errors(&self) -> u64 {
        self.errors.load(Ordering::Relaxed)
    }
}

impl Conn {
    /// Runs one operation on a clone of the shared connection, failing with
    /// [`Error::Unavailable`] once the operation deadline has passed.
    pub(crate) async fn run<T, F, Fut>(&self, op: F) -> Result<T, Error>
    where
        F: FnOnce(ConnectionManager) -> Fut,
        Fut: std::future::Future<Output = redis::RedisResult<T>>,
    {
        self.stats.round_trips.fetch_add(1, Ordering::Relaxed);
        let r = match tokio::time::timeout(self.timeout, op(self.manager.clone())).await {
            Ok(Ok(v)) => return Ok(v),
            Ok(Err(e)) => Error::from_redis(e),
            Err(_) => Error::Unavailable(format!("no answer within {:?}", self.timeout)),
        };
        self.stats.errors.fetch_add(1, Ordering::Relaxed);
        Err(r)
    }
}

/// A connection to Redis shared by every store of one instance: the key
/// prefix, the instance id and the operation deadline come with it. Cheap to
/// clone.
///
/// ```no_run
/// # async fn run() -> Result<(), tessera_redis::Error> {
/// let redis = tessera_redis::Redis::options("redis://127.0.0.1:6379/0")
///     .prefix("myapp:")
///     .connect()
///     .await?;
/// let tasks = redis.task_store();
/// # let _ = tasks; Ok(()) }
/// ```
#[derive(Clone)]
pub struct Redis {
    pub(crate) inner: Arc<Shared>,
}

/// What every clone of a [`Redis`] shares.
pub(crate) struct Shared {
    /// For connections of their own (the bus's pub/sub connection).
    pub(crate) client: redis::Client,
    pub(crate) conn: Conn,
    pub(crate) options: RedisOptions,
    pub(crate) instance: String,
    pub(crate) ring: Arc<RedisKeyRing>,
    /// The instance's bus, made on first use.
    pub(crate) bus: std::sync::OnceLock<crate::RedisBus>,
}

impl std::fmt::Debug for Redis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redis")
            .field("url", &redact(&self.inner.options.url))
            .field("prefix", &self.inner.options.prefix)
            .field("instance", &self.inner.instance)
            .finish_non_exhaustive()
    }
}

impl Redis {
    /// Options for a connection to `url` (`redis://HOST:PORT[/DB]`, with
    /// `redis://:PASSWORD@HOST` or `redis://USER:PASSWORD@HOST` when Redis
    /// asks for one).
    pub fn options(url: impl Into<String>) -> RedisOptions {
        RedisOptions {
            url: url.into(),
            prefix: "tessera:".into(),
            instance_id: None,
            op_timeout: Duration::from_secs(2),
            state_ttl: Duration::from_secs(600),
            key_period: Duration::from_secs(3600),
            events_per_stream: 256,
            event_ttl: Duration::from_secs(3600),
            event_session_bytes: 4 << 20,
            event_total_bytes: 64 << 20,
        }
    }

    /// Connects to `url` with the default options.
    pub async fn connect(url: impl Into<String>) -> Result<Redis, Error> {
        Redis::options(url).connect().await
    }

    /// The prefix of every key this handle writes.
    pub fn prefix(&self) -> &str {
        &self.inner.options.prefix
    }

    /// This instance's id.
    pub fn instance_id(&self) -> &str {
        &self.inner.instance
    }

    /// The options this handle was made with.
    pub fn settings(&self) -> &RedisOptions {
        &self.inner.options
    }

    /// The full name of key `rest`.
    pub(crate) fn key(&self, rest: &str) -> String {
        let mut k = String::with_capacity(self.prefix().len() + rest.len());
        k.push_str(self.prefix());
        k.push_str(rest);
        k
    }

    /// Runs one operation (see [`Conn::run`]).
    pub(crate) async fn run<T, F, Fut>(&self, op: F) -> Result<T, Error>
    where
        F: FnOnce(ConnectionManager) -> Fut,
        Fut: std::future::Future<Output = redis::RedisResult<T>>,
    {
        self.inner.conn.run(op).await
    }

    /// The operations sent and failed so far ([`RedisStats`]).
    pub fn stats(&self) -> Arc<RedisStats> {
        self.inner.conn.stats.clone()
    }

    /// The `requestState` key ring this instance shares through Redis.
    pub fn key_ring(&self) -> Arc<RedisKeyRing> {
        self.inner.ring.clone()
    }

    /// Answers `PING` (a health check).
    pub async fn ping(&self) -> Result<(), Error> {
        self.run(|mut c| async move { redis::cmd("PING").query_async::<String>(&mut c).await })
            .await
            .map(|_| ())
    }
}

/// The URL without its password, for messages.
pub(crate) fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => format!("{}://***@{}", &url[..s], &url[at + 1..]),
        _ => url.to_owned(),
    }
}

/// A random instance id (64 bits, hex).
fn random_id() -> String {
    format!("{:016x}", rand::random::<u64>())
}

#[cfg(test)]
mod tests {
    #[test]
    fn passwords_are_not_shown() {
        assert_eq!(
            super::redact("redis://:secret@127.0.0.1:6379/0"),
            "redis://***@127.0.0.1:6379/0"
        );
        assert_eq!(super::redact("redis://h:1"), "redis://h:1");
    }
}
