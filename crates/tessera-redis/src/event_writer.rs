//! The writer of a [`RedisEventStore`](crate::RedisEventStore): one task
//! that appends the store's events to Redis in the order they were handed
//! over, many at a time.
//!
//! An append is queued when [`EventWriter::append`] is called (not when its
//! future is first polled), so the order of calls is the order in Redis.
//! The task takes everything queued, sends it as one pipeline, waits for
//! the answer and then acknowledges each append; what was queued meanwhile
//! goes in the next pipeline. Under load, one round trip (one write, one
//! read, one wake-up) carries the events of many streams and sessions, and
//! no caller waits for Redis before writing its event to its client.
//!
//! A [`EventWriter::flush`] is acknowledged once every append queued before
//! it has been answered: a replay after a flush sees them.

use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use tokio::sync::{mpsc, oneshot};

use crate::connection::Redis;
use crate::error::Error;

/// The most appends one pipeline carries.
const MAX_BATCH: usize = 256;

/// One event to append: its stream's key, the session's index of streams,
/// the entry number (`seq + 1`) and the data.
pub(crate) struct Append {
    pub(crate) key: String,
    pub(crate) index: String,
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
            tokio::spawn(run(self.redis.clone(), self.per_stream, self.ttl_ms, rx));
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

async fn run(redis: Redis, per_stream: usize, ttl_ms: u64, mut rx: mpsc::UnboundedReceiver<Job>) {
    let mut jobs = Vec::with_capacity(MAX_BATCH);
    while rx.recv_many(&mut jobs, MAX_BATCH).await > 0 {
        let appends = jobs.iter().filter_map(|j| match j {
            Job::Append(a, _) => Some(a),
            Job::Flush(_) => None,
        });
        let result = match pipeline(appends, per_stream, ttl_ms) {
            Some(pipe) => {
                redis
                    .run(|mut c| async move { pipe.exec_async(&mut c).await })
                    .await
            }
            None => Ok(()),
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

/// One pipeline for a batch: each event's `XADD` (trimmed to `per_stream`
/// entries), then once per stream its `PEXPIRE`, and once per session its
/// index's `SADD` of the batch's streams and `PEXPIRE`. `None` when there
/// is nothing to append.
fn pipeline<'a>(
    appends: impl Iterator<Item = &'a Append>,
    per_stream: usize,
    ttl_ms: u64,
) -> Option<redis::Pipeline> {
    let mut pipe = redis::pipe();
    // Streams and indexes of the batch, in first-seen order (batches are
    // small; a scan beats hashing here).
    let mut streams: Vec<&str> = Vec::new();
    let mut indexes: Vec<(&str, Vec<&str>)> = Vec::new();
    let mut id = String::new();
    let mut digits = itoa::Buffer::new();
    for a in appends {
        id.clear();
        id.push_str("0-");
        id.push_str(digits.format(a.entry));
        pipe.cmd("XADD")
            .arg(&a.key)
            .arg("MAXLEN")
            .arg("=")
            .arg(per_stream)
            .arg(&id)
            .arg("d")
            .arg(a.data.as_ref())
            .ignore();
        if !streams.contains(&a.key.as_str()) {
            streams.push(&a.key);
            match indexes.iter_mut().find(|(i, _)| *i == a.index) {
                Some((_, keys)) => keys.push(&a.key),
                None => indexes.push((&a.index, vec![&a.key])),
            }
        }
    }
    if streams.is_empty() {
        return None;
    }
    for key in streams {
        pipe.cmd("PEXPIRE").arg(key).arg(ttl_ms).ignore();
    }
    for (index, keys) in indexes {
        pipe.cmd("SADD").arg(index).arg(keys).ignore();
        pipe.cmd("PEXPIRE").arg(index).arg(ttl_ms).ignore();
    }
    Some(pipe)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_expiry_per_stream_and_one_index_update_per_session() {
        let a = |key: &str, index: &str, entry| Append {
            key: key.into(),
            index: index.into(),
            entry,
            data: Bytes::from_static(b"{}"),
        };
        let batch = [
            a("ev:s:1", "evs:s", 2),
            a("ev:s:1", "evs:s", 3),
            a("ev:s:2", "evs:s", 1),
            a("ev:t:1", "evs:t", 1),
        ];
        let pipe = pipeline(batch.iter(), 10, 1000).expect("a pipeline");
        let names: Vec<String> = pipe
            .cmd_iter()
            .map(|c| {
                let args: Vec<Vec<u8>> = c
                    .args_iter()
                    .map(|a| match a {
                        redis::Arg::Simple(b) => b.to_vec(),
                        redis::Arg::Cursor => Vec::new(),
                    })
                    .collect();
                String::from_utf8_lossy(&args.join(&b' ')).into_owned()
            })
            .collect();
        assert_eq!(
            names,
            [
                "XADD ev:s:1 MAXLEN = 10 0-2 d {}",
                "XADD ev:s:1 MAXLEN = 10 0-3 d {}",
                "XADD ev:s:2 MAXLEN = 10 0-1 d {}",
                "XADD ev:t:1 MAXLEN = 10 0-1 d {}",
                "PEXPIRE ev:s:1 1000",
                "PEXPIRE ev:s:2 1000",
                "PEXPIRE ev:t:1 1000",
                "SADD evs:s ev:s:1 ev:s:2",
                "PEXPIRE evs:s 1000",
                "SADD evs:t ev:t:1",
                "PEXPIRE evs:t 1000",
            ]
        );
        assert!(pipeline([].iter(), 10, 1000).is_none());
    }
}
