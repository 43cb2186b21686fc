//! [`Install`]: one call puts a builder's state on Redis.

use tessera_http::McpHttpBuilder;
use tessera_server::ServerBuilder;

use crate::connection::Redis;

/// A builder whose state [`Redis::install`] can put on Redis.
///
/// - [`ServerBuilder`]: tasks ([`RedisTaskStore`](crate::RedisTaskStore),
///   with the instance's [`RedisBus`](crate::RedisBus) relaying task input,
///   cancellation and status changes between instances) and the
///   `requestState` key ring ([`RedisKeyRing`](crate::RedisKeyRing),
///   with the lifetime of [`RedisOptions::request_state_ttl`](crate::RedisOptions::request_state_ttl)).
/// - [`McpHttpBuilder`]: resumable SSE streams
///   ([`RedisEventStore`](crate::RedisEventStore)), the state of legacy
///   (Streamable HTTP) sessions ([`RedisSessionStore`](crate::RedisSessionStore))
///   and the instance's [`RedisBus`](crate::RedisBus), which carries what
///   one session's copies on several instances tell each other and the
///   server-wide events (resources updated, lists changed).
pub trait Install: Sized {
    /// Returns the builder with its stores on `redis`.
    fn install_redis(self, redis: &Redis) -> Self;
}

impl<S: Send + Sync + 'static> Install for ServerBuilder<S> {
    fn install_redis(self, redis: &Redis) -> Self {
        self.task_store(redis.task_store())
            .task_bus(redis.bus())
            .request_state_key_source(redis.key_ring(), redis.settings().state_ttl)
    }
}

impl Install for McpHttpBuilder {
    fn install_redis(self, redis: &Redis) -> Self {
        self.event_store(redis.event_store())
            .session_store(redis.session_store())
            .bus(redis.bus())
    }
}

impl Redis {
    /// Puts the state of `builder` on Redis (see [`Install`] for what each
    /// builder gets). Use it on the server builder and on the HTTP builder
    /// of every instance that serves one endpoint:
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// use tessera_http::McpHttp;
    /// use tessera_server::Server;
    ///
    /// let redis = tessera_redis::Redis::connect("redis://127.0.0.1:6379/0").await?;
    /// let server = redis.install(Server::builder()).build()?;
    /// // Tasks a previous run of this instance left unfinished are failed.
    /// server.recover_tasks().await.ok();
    /// let http = redis.install(McpHttp::builder(server)).build();
    /// # let _ = http; Ok(()) }
    /// ```
    pub fn install<B: Install>(&self, builder: B) -> B {
        builder.install_redis(self)
    }
}
