//! [`RedisEventStore`]: resumable SSE streams in Redis, so that a client
//! reconnecting with `Last-Event-ID` gets what it missed from any instance.
//!
//! Each SSE stream of a session is one Redis Stream,
//! `{prefix}ev:{session}:{stream}`, whose entry ids are `0-{seq + 1}` (so
//! entries sort by sequence number and a replay is one `XRANGE` from an
//! exclusive start) and whose one field `d` holds the event's data. Each
//! append trims the stream to the newest `per_stream` entries and pushes its
//! TTL to `ttl` from now; a set `{prefix}evs:{session}` names the session's
//! streams (same TTL) so that ending the session deletes them all.
//!
//! The store is bounded in bytes as well, across every instance that shares
//! the prefix: a hash `{prefix}evb` (the ledger) holds each session's bytes
//! (its events' data) and their `total`, and a sorted set `{prefix}evo`
//! orders the sessions by when their keys expire (so by last write). An
//! event larger than a session's budget is not kept; a session over its
//! budget loses its oldest events (lowest stream first); while the total is
//! over its budget, the least recently written sessions are deleted whole.
//! Sessions whose keys expired are taken off the ledger at the next append.
//!
//! Appends go through one writer task per store (see [`crate::event_writer`]):
//! an event is queued when [`EventStore::store`] is called and written in
//! call order, many events to one command, so that a session writes its
//! event to the client while Redis stores it. A replay first waits for the
//! appends queued before it.

use std::sync::Arc;

use bytes::Bytes;
use redis::{Script, Value};
use tessera_http::{EventId, EventStore, StoredEvent};

use crate::connection::Redis;
use crate::error::Error;
use crate::event_writer::{
    Append, EventWriter, Limits, write_index_key, write_ledger_key, write_order_key,
    write_stream_key,
};

/// Deletes a session's streams and takes its bytes off the ledger. KEYS:
/// the session's set of streams, the ledger, the session order.
const REMOVE: &str = r"
local streams = redis.call('SMEMBERS', KEYS[1])
for _, k in ipairs(streams) do redis.call('DEL', k) end
redis.call('DEL', KEYS[1])
local bytes = tonumber(redis.call('HGET', KEYS[2], KEYS[1])) or 0
if bytes ~= 0 then redis.call('HINCRBY', KEYS[2], 'total', -bytes) end
redis.call('HDEL', KEYS[2], KEYS[1])
redis.call('ZREM', KEYS[3], KEYS[1])
return #streams
";

/// Resumable SSE streams in Redis (see the module documentation for the
/// layout). Appends are batched (one round trip carries every event queued
/// meanwhile) and a replay is one round trip; failures are logged and the
/// event is not kept (the live stream is unaffected), and a replay that
/// fails returns nothing.
#[derive(Clone)]
pub struct RedisEventStore {
    redis: Redis,
    per_stream: usize,
    ttl_ms: u64,
    session_bytes: u64,
    total_bytes: u64,
    remove: Arc<Script>,
    writer: EventWriter,
}

impl std::fmt::Debug for RedisEventStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisEventStore")
            .field("redis", &self.redis)
            .field("per_stream", &self.per_stream)
            .field("ttl_ms", &self.ttl_ms)
            .field("session_bytes", &self.session_bytes)
            .field("total_bytes", &self.total_bytes)
            .finish()
    }
}

impl Redis {
    /// The event store of this instance (retention from
    /// [`RedisOptions::event_retention`](crate::RedisOptions::event_retention)
    /// and [`RedisOptions::event_bytes`](crate::RedisOptions::event_bytes)).
    pub fn event_store(&self) -> RedisEventStore {
        let o = self.settings();
        let limits = Limits {
            per_stream: o.events_per_stream,
            ttl_ms: u64::try_from(o.event_ttl.as_millis()).unwrap_or(u64::MAX),
            session_bytes: o.event_session_bytes,
            total_bytes: o.event_total_bytes,
        };
        RedisEventStore {
            redis: self.clone(),
            per_stream: limits.per_stream,
            ttl_ms: limits.ttl_ms,
            session_bytes: limits.session_bytes,
            total_bytes: limits.total_bytes,
            remove: Arc::new(Script::new(REMOVE)),
            writer: EventWriter::new(self.clone(), limits),
        }
    }
}

impl RedisEventStore {
    fn stream_key(&self, session: &str, stream: u64) -> Vec<u8> {
        let mut key = Vec::new();
        write_stream_key(&mut key, self.redis.prefix(), session, stream);
        key
    }

    fn index_key(&self, session: &str) -> Vec<u8> {
        let mut key = Vec::new();
        write_index_key(&mut key, self.redis.prefix(), session);
        key
    }

    fn ledger_key(&self) -> Vec<u8> {
        let mut key = Vec::new();
        write_ledger_key(&mut key, self.redis.prefix());
        key
    }

    fn order_key(&self) -> Vec<u8> {
        let mut key = Vec::new();
        write_order_key(&mut key, self.redis.prefix());
        key
    }

    /// The bytes of event data kept for every session of the store (every
    /// instance sharing the prefix), once the appends queued before this
    /// call are written.
    pub async fn bytes(&self) -> Result<u64, Error> {
        self.ledger_entry(b"total".to_vec()).await
    }

    /// The bytes of event data kept for `session`, once the appends queued
    /// before this call are written.
    pub async fn session_bytes(&self, session: &str) -> Result<u64, Error> {
        self.ledger_entry(self.index_key(session)).await
    }

    async fn ledger_entry(&self, field: Vec<u8>) -> Result<u64, Error> {
        self.writer.flush().await;
        let ledger = self.ledger_key();
        let n: Option<i64> = self
            .redis
            .run(|mut c| async move {
                redis::cmd("HGET")
                    .arg(&ledger)
                    .arg(&field)
                    .query_async(&mut c)
                    .await
            })
            .await?;
        Ok(n.unwrap_or(0).max(0).unsigned_abs())
    }

    /// Appends one event (see [`EventStore::store`]), reporting failures.
    pub async fn try_store(&self, session: &str, event: &StoredEvent) -> Result<(), Error> {
        self.queue(session, event)
            .await
            .unwrap_or_else(|_| Err(Error::Unavailable("the event writer has stopped".into())))
    }

    /// Queues one append now (in call order); the receiver gets its outcome.
    fn queue(
        &self,
        session: &str,
        event: &StoredEvent,
    ) -> tokio::sync::oneshot::Receiver<Result<(), Error>> {
        self.writer.append(Append {
            session: session.into(),
            stream: event.id.stream,
            entry: event.id.seq.saturating_add(1),
            data: event.data.clone(),
        })
    }

    /// The events of `after.stream` after `after.seq` (see
    /// [`EventStore::replay_after`]), reporting failures.
    pub async fn try_replay_after(
        &self,
        session: &str,
        after: EventId,
    ) -> Result<Vec<StoredEvent>, Error> {
        self.writer.flush().await;
        let key = self.stream_key(session, after.stream);
        let start = format!("(0-{}", after.seq.saturating_add(1));
        let reply: Value = self
            .redis
            .run(|mut c| async move {
                redis::cmd("XRANGE")
                    .arg(&key)
                    .arg(&start)
                    .arg("+")
                    .query_async(&mut c)
                    .await
            })
            .await?;
        decode_range(after.stream, reply)
    }

    /// Deletes every stream of `session`, reporting failures.
    pub async fn try_remove_session(&self, session: &str) -> Result<(), Error> {
        self.writer.flush().await;
        let index = self.index_key(session);
        let (ledger, order) = (self.ledger_key(), self.order_key());
        let script = self.remove.clone();
        self.redis
            .run(|mut c| async move {
                script
                    .key(&index)
                    .key(&ledger)
                    .key(&order)
                    .invoke_async::<i64>(&mut c)
                    .await
            })
            .await
            .map(|_| ())
    }
}

/// Reads an `XRANGE` reply: `[[id, [field, value, …]], …]`.
fn decode_range(stream: u64, reply: Value) -> Result<Vec<StoredEvent>, Error> {
    let bad = |what: &str| Error::Corrupt(format!("event stream entry: {what}"));
    let Value::Array(entries) = reply else {
        return Ok(Vec::new());
    };
    let mut out = Vec::with_capacity(entries.len());
    for entry in entries {
        let Value::Array(parts) = entry else {
            return Err(bad("not an array"));
        };
        let [id, fields] = parts.as_slice() else {
            return Err(bad("not [id, fields]"));
        };
        let id = match id {
            Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
            Value::SimpleString(s) => s.clone(),
            _ => return Err(bad("id")),
        };
        let seq = id
            .strip_prefix("0-")
            .and_then(|n| n.parse::<u64>().ok())
            .and_then(|n| n.checked_sub(1))
            .ok_or_else(|| bad("id"))?;
        let Value::Array(fields) = fields else {
            return Err(bad("fields"));
        };
        let data = fields
            .chunks(2)
            .find_map(|kv| match kv {
                [Value::BulkString(k), Value::BulkString(v)] if k == b"d" => {
                    Some(Bytes::from(v.clone()))
                }
                _ => None,
            })
            .ok_or_else(|| bad("no data"))?;
        out.push(StoredEvent {
            id: EventId { stream, seq },
            data,
        });
    }
    Ok(out)
}

impl EventStore for RedisEventStore {
    fn store(
        &self,
        session: &str,
        event: StoredEvent,
    ) -> impl Future<Output = ()> + Send + 'static {
        // Queued now; the writer logs a failed batch once.
        let done = self.queue(session, &event);
        async move {
            let _ = done.await;
        }
    }

    async fn replay_after(&self, session: &str, after: EventId) -> Vec<StoredEvent> {
        self.try_replay_after(session, after)
            .await
            .unwrap_or_else(|e| {
                tracing::warn!(error = %e, after = %after, "SSE replay failed");
                Vec::new()
            })
    }

    async fn remove_session(&self, session: &str) {
        if let Err(e) = self.try_remove_session(session).await {
            tracing::warn!(error = %e, "SSE streams of an ended session not deleted");
        }
    }
}
