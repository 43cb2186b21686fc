//! The writer of a [`RedisEventStore`](crate::RedisEventStore): one task
//! that appends the store's events to Redis in the order they were handed
//! over, many at a time.
//!
//! An append is queued when [`EventWriter::append`] is called (not when its
//! future is first polled), so the order of calls is the order in Redis.
//! The task takes everything queued and sends it as one command, an
//! `EVALSHA` of [`APPEND`], waits for the answer and then acknowledges each
//! append; what was queued meanwhile goes in the next command. Under load,
//! one round trip (one write, one read, one wake-up, one reply to parse)
//! carries the events of many streams and sessions, and no caller waits for
//! Redis before writing its event to its client.
//!
//! One script rather than a pipeline of `XADD`, `PEXPIRE` and `SADD`s: the
//! client encodes one command per batch into a buffer it reuses, and reads
//! one integer back, instead of building, encoding and parsing four
//! commands per event (most of the server's CPU per stored event); and a
//! stream or index never exists without its TTL, even for a moment.
//!
//! A [`EventWriter::flush`] is acknowledged once every append queued before
//! it has been answered: a replay after a flush sees them.

use std::io::Write as _;
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use redis::{Cmd, ErrorKind, RedisWrite as _, Script};
use tokio::sync::{mpsc, oneshot};

use crate::connection::Redis;
use crate::error::Error;

/// The most appends one command carries.
const MAX_BATCH: usize = 256;

/// Appends a batch of events. KEYS: the batch's streams, then the indexes
/// of their sessions, then the store's byte ledger (a hash: each session's
/// index → its bytes, and `total`) and its session order (a sorted set:
/// each session's index → when it expires, in Redis's milliseconds). ARGV:
/// the events kept per stream, the TTL in milliseconds, the number of
/// streams S, the bytes kept per session, the bytes kept in all, then for
/// each stream the position in KEYS of its session's index (S values), then
/// for each event the position in KEYS of its stream, its entry id and its
/// data.
///
/// The bytes of an event are the length of its data. First the sessions
/// whose keys have expired are taken off the ledger; then each event over
/// the session budget is skipped and each other one added (a stream over
/// its count loses its oldest entries); then each session of the batch over
/// its budget loses its oldest events, lowest stream first; then, while the
/// total is over its budget, the least recently written sessions outside
/// the batch are deleted whole. The ledger and the order keep the TTL of
/// the newest session, so nothing outlives what it counts.
///
/// Every TTL is set before anything that may fail on a key of the wrong
/// type, and every step runs even when one fails: the reply is the first
/// error, if any (the batch is then reported as not kept), else the number
/// of events.
const APPEND: &str = r"
local maxlen, ttl, s = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local per_session, total_max = tonumber(ARGV[4]), tonumber(ARGV[5])
local ledger, order = KEYS[#KEYS - 1], KEYS[#KEYS]
local first_index, last_index = s + 1, #KEYS - 2
local failed
local function run(...)
  local r = redis.pcall(...)
  if type(r) == 'table' and r.err then
    if not failed then failed = r end
    return nil
  end
  return r
end
local function account(index, delta)
  if delta ~= 0 then
    redis.call('HINCRBY', ledger, index, delta)
    redis.call('HINCRBY', ledger, 'total', delta)
  end
end
local function bytes_of(index)
  return tonumber(redis.call('HGET', ledger, index)) or 0
end
local function forget(index)
  local streams = run('SMEMBERS', index) or {}
  for _, k in ipairs(streams) do redis.call('DEL', k) end
  redis.call('DEL', index)
  account(index, -bytes_of(index))
  redis.call('HDEL', ledger, index)
  redis.call('ZREM', order, index)
end
-- Deletes the oldest entries of a stream until `want` bytes are freed or
-- it is empty; returns the bytes freed.
local function drop(key, want, count)
  local freed = 0
  while (want == nil or freed < want) and (count == nil or count > 0) do
    local entries = run('XRANGE', key, '-', '+', 'COUNT', 1)
    if not entries or #entries == 0 then break end
    local fields = entries[1][2]
    for j = 1, #fields, 2 do
      if fields[j] == 'd' then freed = freed + #fields[j + 1] end
    end
    redis.call('XDEL', key, entries[1][1])
    if count then count = count - 1 end
  end
  return freed
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for _, index in ipairs(redis.call('ZRANGEBYSCORE', order, '-inf', now)) do
  forget(index)
end
local n = 0
for at = 6 + s, #ARGV, 3 do
  local stream = tonumber(ARGV[at])
  local key, index = KEYS[stream], KEYS[tonumber(ARGV[5 + stream])]
  local data = ARGV[at + 2]
  if #data <= per_session and run('XADD', key, ARGV[at + 1], 'd', data) then
    account(index, #data)
    local len = run('XLEN', key) or 0
    if len > maxlen then account(index, -drop(key, nil, len - maxlen)) end
    n = n + 1
  end
end
for i = 1, s do
  run('PEXPIRE', KEYS[i], ttl)
end
local expires = now + ttl
for i = 1, s do
  local index = KEYS[tonumber(ARGV[5 + i])]
  run('SADD', index, KEYS[i])
  run('PEXPIRE', index, ttl)
end
local batch = {}
for i = first_index, last_index do
  local index = KEYS[i]
  batch[index] = true
  redis.call('ZADD', order, expires, index)
  local over = bytes_of(index) - per_session
  if over > 0 then
    local streams = run('SMEMBERS', index) or {}
    table.sort(streams, function(a, b)
      return (tonumber(string.match(a, ':(%d+)$')) or 0) < (tonumber(string.match(b, ':(%d+)$')) or 0)
    end)
    for _, k in ipairs(streams) do
      if over <= 0 then break end
      local freed = drop(k, over, nil)
      account(index, -freed)
      over = over - freed
    end
  end
end
local total = tonumber(redis.call('HGET', ledger, 'total')) or 0
if total > total_max then
  for _, index in ipairs(redis.call('ZRANGE', order, 0, -1)) do
    if total <= total_max then break end
    if not batch[index] then
      forget(index)
      total = tonumber(redis.call('HGET', ledger, 'total')) or 0
    end
  end
end
redis.call('PEXPIRE', ledger, ttl)
redis.call('PEXPIRE', order, ttl)
if failed then return failed end
return n
";

/// One event to append: its session, its stream, the entry number
/// (`seq + 1`) and the data.
pub(crate) struct Append {
    pub(crate) session: Box<str>,
    pub(crate) stream: u64,
    pub(crate) entry: u64,
    pub(crate) data: Bytes,
}

enum Job {
    Append(Append, oneshot::Sender<Result<(), Error>>),
    Flush(oneshot::Sender<()>),
}

/// The queue of one event store's writer task (started on first use, ended
/// when the last clone of the store is dropped).
#[derive(Clone)]
pub(crate) struct EventWriter {
    redis: Redis,
    limits: Limits,
    queue: Arc<OnceLock<mpsc::UnboundedSender<Job>>>,
}

impl EventWriter {
    pub(crate) fn new(redis: Redis, limits: Limits) -> Self {
        EventWriter {
            redis,
            limits,
            queue: Arc::new(OnceLock::new()),
        }
    }

    fn queue(&self) -> &mpsc::UnboundedSender<Job> {
        self.queue.get_or_init(|| {
            let (tx, rx) = mpsc::unbounded_channel();
            let batch = Batch::new(self.redis.prefix(), self.limits);
            tokio::spawn(run(self.redis.clone(), batch, rx));
            tx
        })
    }

    /// Queues one append now; the receiver gets its outcome.
    pub(crate) fn append(&self, append: Append) -> oneshot::Receiver<Result<(), Error>> {
        let (done, rx) = oneshot::channel();
        if let Err(mpsc::error::SendError(Job::Append(_, done))) =
            self.queue().send(Job::Append(append, done))
        {
            let _ = done.send(Err(Error::Unavailable(
                "the event writer has stopped".into(),
            )));
        }
        rx
    }

    /// Resolves once every append queued before this call was answered.
    pub(crate) async fn flush(&self) {
        let Some(queue) = self.queue.get() else {
            return; // nothing was ever queued
        };
        let (done, rx) = oneshot::channel();
        if queue.send(Job::Flush(done)).is_ok() {
            let _ = rx.await;
        }
    }
}

async fn run(redis: Redis, mut batch: Batch, mut rx: mpsc::UnboundedReceiver<Job>) {
    let mut jobs = Vec::with_capacity(MAX_BATCH);
    while rx.recv_many(&mut jobs, MAX_BATCH).await > 0 {
        let result = if batch.encode(&jobs) {
            send(&redis, &batch).await
        } else {
            Ok(())
        };
        if let Err(e) = &result {
            let n = jobs.iter().filter(|j| matches!(j, Job::Append(..))).count();
            tracing::warn!(error = %e, events = n, "SSE events not kept for replay");
        }
        for job in jobs.drain(..) {
            match job {
                Job::Append(_, done) => {
                    let _ = done.send(result.clone());
                }
                Job::Flush(done) => {
                    let _ = done.send(());
                }
            }
        }
    }
}

/// Runs the batch's command, loading the script first when Redis does not
/// have it (a new or restarted server): nothing ran then, so running it
/// again is safe.
async fn send(redis: &Redis, batch: &Batch) -> Result<(), Error> {
    let cmd = &batch.cmd;
    let script = &batch.script;
    redis
        .run(|mut c| async move {
            match cmd.query_async::<i64>(&mut c).await {
                Err(e) if e.kind() == ErrorKind::NoScriptError => {
                    script.load_async(&mut c).await?;
                    cmd.query_async::<i64>(&mut c).await
                }
                other => other,
            }
        })
        .await
        .map(|_| ())
}

/// What an event store keeps: events per stream, for how long after the
/// last one, and bytes per session and in all.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub(crate) per_stream: usize,
    pub(crate) ttl_ms: u64,
    pub(crate) session_bytes: u64,
    pub(crate) total_bytes: u64,
}

/// The command of one batch, rebuilt in place for each batch (its buffers
/// keep their capacity), and what it is built from.
struct Batch {
    prefix: Box<str>,
    limits: Limits,
    script: Script,
    cmd: Cmd,
    /// The positions of the batch's appends among its jobs.
    events: Vec<usize>,
    /// Each distinct stream of the batch: its number, the job of its first
    /// event and the position of its session in `sessions`.
    streams: Vec<(u64, usize, usize)>,
    /// Each distinct session of the batch: the job of its first event.
    sessions: Vec<usize>,
    /// For each event, the position of its stream in `streams`.
    event_streams: Vec<usize>,
}

impl Batch {
    fn new(prefix: &str, limits: Limits) -> Self {
        Batch {
            prefix: prefix.into(),
            limits,
            script: Script::new(APPEND),
            cmd: Cmd::new(),
            events: Vec::new(),
            streams: Vec::new(),
            sessions: Vec::new(),
            event_streams: Vec::new(),
        }
    }

    /// Encodes the `EVALSHA` of the appends among `jobs`; `false` when
    /// there is nothing to append. Streams and sessions are found by
    /// scanning (batches are small, and a scan beats hashing here).
    fn encode(&mut self, jobs: &[Job]) -> bool {
        let append = |i: usize| match &jobs[i] {
            Job::Append(a, _) => Some(a),
            Job::Flush(_) => None,
        };
        self.events.clear();
        self.streams.clear();
        self.sessions.clear();
        self.event_streams.clear();
        for (i, job) in jobs.iter().enumerate() {
            let Job::Append(a, _) = job else { continue };
            self.events.push(i);
            let session = match self
                .sessions
                .iter()
                .position(|&s| append(s).is_some_and(|f| f.session == a.session))
            {
                Some(p) => p,
                None => {
                    self.sessions.push(i);
                    self.sessions.len() - 1
                }
            };
            let stream = match self
                .streams
                .iter()
                .position(|&(n, _, s)| n == a.stream && s == session)
            {
                Some(p) => p,
                None => {
                    self.streams.push((a.stream, i, session));
                    self.streams.len() - 1
                }
            };
            self.event_streams.push(stream);
        }
        if self.events.is_empty() {
            return false;
        }
        let s = self.streams.len();
        let cmd = &mut self.cmd;
        cmd.clear();
        cmd.reserve_space_for_args(
            self.events
                .iter()
                .filter_map(|&i| append(i))
                .map(|a| a.data.len()),
        );
        cmd.arg("EVALSHA")
            .arg(self.script.get_hash())
            .arg(s + self.sessions.len() + 2);
        for &(stream, first, _) in &self.streams {
            if let Some(a) = append(first) {
                write_stream_key(
                    &mut cmd.writer_for_next_arg(),
                    &self.prefix,
                    &a.session,
                    stream,
                );
            }
        }
        for &first in &self.sessions {
            if let Some(a) = append(first) {
                write_index_key(&mut cmd.writer_for_next_arg(), &self.prefix, &a.session);
            }
        }
        write_ledger_key(&mut cmd.writer_for_next_arg(), &self.prefix);
        write_order_key(&mut cmd.writer_for_next_arg(), &self.prefix);
        let l = &self.limits;
        cmd.arg(l.per_stream)
            .arg(l.ttl_ms)
            .arg(s)
            .arg(l.session_bytes)
            .arg(l.total_bytes);
        for &(_, _, session) in &self.streams {
            cmd.arg(s + session + 1);
        }
        for (&i, &stream) in self.events.iter().zip(&self.event_streams) {
            let Some(a) = append(i) else { continue };
            cmd.arg(stream + 1);
            let mut w = cmd.writer_for_next_arg();
            let _ = w.write_all(b"0-");
            let _ = w.write_all(itoa::Buffer::new().format(a.entry).as_bytes());
            drop(w);
            cmd.arg(a.data.as_ref());
        }
        true
    }
}

/// Writes the key of `session`'s stream `stream`: `{prefix}ev:{session}:{stream}`.
pub(crate) fn write_stream_key(
    w: &mut impl std::io::Write,
    prefix: &str,
    session: &str,
    stream: u64,
) {
    let _ = w.write_all(prefix.as_bytes());
    let _ = w.write_all(b"ev:");
    let _ = w.write_all(session.as_bytes());
    let _ = w.write_all(b":");
    let _ = w.write_all(itoa::Buffer::new().format(stream).as_bytes());
}

/// Writes the key of `session`'s index of streams: `{prefix}evs:{session}`.
pub(crate) fn write_index_key(w: &mut impl std::io::Write, prefix: &str, session: &str) {
    let _ = w.write_all(prefix.as_bytes());
    let _ = w.write_all(b"evs:");
    let _ = w.write_all(session.as_bytes());
}

/// Writes the key of the store's byte ledger: `{prefix}evb`.
pub(crate) fn write_ledger_key(w: &mut impl std::io::Write, prefix: &str) {
    let _ = w.write_all(prefix.as_bytes());
    let _ = w.write_all(b"evb");
}

/// Writes the key of the store's session order: `{prefix}evo`.
pub(crate) fn write_order_key(w: &mut impl std::io::Write, prefix: &str) {
    let _ = w.write_all(prefix.as_bytes());
    let _ = w.write_all(b"evo");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(cmd: &Cmd) -> Vec<String> {
        cmd.args_iter()
            .map(|a| match a {
                redis::Arg::Simple(b) => String::from_utf8_lossy(b).into_owned(),
                redis::Arg::Cursor => String::new(),
            })
            .collect()
    }

    fn jobs(appends: impl IntoIterator<Item = Append>) -> Vec<Job> {
        appends
            .into_iter()
            .map(|a| Job::Append(a, oneshot::channel().0))
            .collect()
    }

    #[test]
    fn one_command_per_batch_with_each_stream_and_index_once() {
        let a = |session: &str, stream, entry| Append {
            session: session.into(),
            stream,
            entry,
            data: Bytes::from_static(b"{}"),
        };
        let mut batch = jobs([a("s", 1, 2), a("s", 1, 3), a("s", 2, 1)]);
        batch.push(Job::Flush(oneshot::channel().0));
        batch.extend(jobs([a("t", 1, 1)]));
        let mut b = Batch::new(
            "p:",
            Limits {
                per_stream: 10,
                ttl_ms: 1000,
                session_bytes: 500,
                total_bytes: 9000,
            },
        );
        assert!(b.encode(&batch));
        let hash = b.script.get_hash().to_owned();
        assert_eq!(
            args(&b.cmd),
            [
                "EVALSHA", &hash, "7", // streams, indexes, ledger, order
                "p:ev:s:1", "p:ev:s:2", "p:ev:t:1", "p:evs:s", "p:evs:t", "p:evb", "p:evo", "10",
                "1000", "3", "500", "9000", // count, TTL, streams, bytes
                "4", "4", "5", // each stream's index
                "1", "0-2", "{}", "1", "0-3", "{}", "2", "0-1", "{}", "3", "0-1", "{}",
            ]
        );
        // The buffers are reused: a second batch replaces the first.
        assert!(b.encode(&jobs([a("u", 7, 9)])));
        assert_eq!(
            args(&b.cmd),
            [
                "EVALSHA", &hash, "4", "p:ev:u:7", "p:evs:u", "p:evb", "p:evo", "10", "1000", "1",
                "500", "9000", "2", "1", "0-9", "{}"
            ]
        );
        assert!(!b.encode(&[Job::Flush(oneshot::channel().0)]));
    }

    #[test]
    fn keys_match_the_store_layout() {
        let mut k = Vec::new();
        write_stream_key(&mut k, "tessera:", "abc", 18_446_744_073_709_551_615);
        assert_eq!(k, b"tessera:ev:abc:18446744073709551615");
        k.clear();
        write_index_key(&mut k, "tessera:", "abc");
        assert_eq!(k, b"tessera:evs:abc");
    }
}
