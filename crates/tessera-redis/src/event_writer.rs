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
/// of their sessions. ARGV: `MAXLEN`, the TTL in milliseconds, the number
/// of streams S, then for each stream the position in KEYS of its session's
/// index (S values), then for each event the position in KEYS of its
/// stream, its entry id and its data.
///
/// Every TTL is set before anything that may fail on a key of the wrong
/// type, and every step runs even when one fails: the reply is the first
/// error, if any (the batch is then reported as not kept), else the number
/// of events.
const APPEND: &str = r"
local maxlen, ttl, s = ARGV[1], ARGV[2], tonumber(ARGV[3])
local failed
local function run(...)
  local r = redis.pcall(...)
  if type(r) == 'table' and r.err and not failed then failed = r end
end
local n = 0
for at = 4 + s, #ARGV, 3 do
  run('XADD', KEYS[tonumber(ARGV[at])], 'MAXLEN', '=', maxlen, ARGV[at + 1], 'd', ARGV[at + 2])
  n = n + 1
end
for i = 1, s do
  run('PEXPIRE', KEYS[i], ttl)
end
for i = 1, s do
  local index = KEYS[tonumber(ARGV[3 + i])]
  run('SADD', index, KEYS[i])
  run('PEXPIRE', index, ttl)
end
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
    per_stream: usize,
    ttl_ms: u64,
    queue: Arc<OnceLock<mpsc::UnboundedSender<Job>>>,
}

impl EventWriter {
    pub(crate) fn new(redis: Redis, per_stream: usize, ttl_ms: u64) -> Self {
        EventWriter {
            redis,
            per_stream,
            ttl_ms,
            queue: Arc::new(OnceLock::new()),
        }
    }

    fn queue(&self) -> &mpsc::UnboundedSender<Job> {
        self.queue.get_or_init(|| {
            let (tx, rx) = mpsc::unbounded_channel();
            let batch = Batch::new(self.redis.prefix(), self.per_stream, self.ttl_ms);
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

/// The command of one batch, rebuilt in place for each batch (its buffers
/// keep their capacity), and what it is built from.
struct Batch {
    prefix: Box<str>,
    per_stream: usize,
    ttl_ms: u64,
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
    fn new(prefix: &str, per_stream: usize, ttl_ms: u64) -> Self {
        Batch {
            prefix: prefix.into(),
            per_stream,
            ttl_ms,
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
            .arg(s + self.sessions.len());
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
        cmd.arg(self.per_stream).arg(self.ttl_ms).arg(s);
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
        let mut b = Batch::new("p:", 10, 1000);
        assert!(b.encode(&batch));
        let hash = b.script.get_hash().to_owned();
        assert_eq!(
            args(&b.cmd),
            [
                "EVALSHA", &hash, "5", // streams, then indexes
                "p:ev:s:1", "p:ev:s:2", "p:ev:t:1", "p:evs:s", "p:evs:t", //
                "10", "1000", "3", // MAXLEN, TTL, streams
                "4", "4", "5", // each stream's index
                "1", "0-2", "{}", "1", "0-3", "{}", "2", "0-1", "{}", "3", "0-1", "{}",
            ]
        );
        // The buffers are reused: a second batch replaces the first.
        assert!(b.encode(&jobs([a("u", 7, 9)])));
        assert_eq!(
            args(&b.cmd),
            [
                "EVALSHA", &hash, "2", "p:ev:u:7", "p:evs:u", "10", "1000", "1", "2", "1", "0-9",
                "{}"
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
