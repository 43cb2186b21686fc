//! Redis-backed state for Tessera, so that several instances serve one MCP
//! endpoint behind a load balancer and any of them can serve any request.
//!
//! One [`Redis`] handle per instance holds the connection (a
//! [`redis::aio::ConnectionManager`]: multiplexed, re-established with
//! backoff when lost), the key prefix (every key this crate writes starts
//! with it, and every key has a TTL) and the instance id. From it come:
//!
//! - [`RedisTaskStore`]: tasks, with atomic transitions (Lua scripts) and a
//!   restart that fails only the restarted instance's unfinished tasks;
//! - [`RedisEventStore`]: resumable SSE streams, one Redis Stream per SSE
//!   stream, bounded by length and TTL; `Last-Event-ID` replays anywhere;
//! - [`RedisKeyRing`]: the `requestState` key ring of 2026-07-28 multi
//!   round-trip requests, rotated in Redis: a state sealed by one instance
//!   opens on every other;
//! - [`RedisSessionStore`]: the stored state of legacy sessions
//!   ([`tessera_runtime::SessionStore`]), one key per session with its TTL;
//! - [`RedisBus`]: messages between instances
//!   ([`tessera_runtime::Bus`]) over Redis pub/sub, one connection for all
//!   of an instance's subscriptions;
//! - [`RedisReplayCache`]: the DPoP proofs already used
//!   ([`tessera_auth::server::dpop::ReplayCache`]), so a proof replayed on
//!   another instance is refused there too.
//!
//! [`Redis::install`] puts a server builder's and an HTTP builder's state on
//! Redis in one call each. When Redis cannot be reached, each operation
//! fails within the operation timeout (2 s by default) with
//! [`Error::Unavailable`] instead of hanging, and the connection comes back
//! by itself.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use tessera_http::McpHttp;
//! use tessera_server::Server;
//!
//! let redis = tessera_redis::Redis::options("redis://127.0.0.1:6379/0")
//!     .prefix("myapp:")
//!     .instance_id("replica-1")
//!     .connect()
//!     .await?;
//! let server = redis.install(Server::builder().name_version("app", "1.0")).build()?;
//! server.recover_tasks().await.ok();
//! let mcp = redis.install(McpHttp::builder(server)).build();
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8001").await?;
//! tessera_http::serve(listener, mcp, std::future::pending()).await?;
//! # Ok(()) }
//! ```
//!
//! The scripts name some keys from the prefix, so a standalone Redis (or a
//! single primary with replicas) is needed, not Redis Cluster.

mod bus;
mod connection;
mod dpop_replay;
mod error;
mod event_store;
mod event_writer;
mod install;
mod key_ring;
mod session_store;
mod task_scripts;
mod task_store;
#[cfg(feature = "testing")]
pub mod testing;
mod token_bucket;

pub use bus::RedisBus;
pub use connection::{Redis, RedisOptions, RedisStats};
pub use dpop_replay::RedisReplayCache;
pub use error::Error;
pub use event_store::RedisEventStore;
pub use install::Install;
pub use key_ring::RedisKeyRing;
pub use session_store::RedisSessionStore;
pub use task_store::RedisTaskStore;
pub use token_bucket::MAX_BUCKET_NAME;

/// The `redis` crate this one is built on.
pub use redis;
