//! Resumable SSE streams in Redis: replay from another instance, bounds,
//! TTLs and session removal.

use std::time::Duration;

use bytes::Bytes;
use tessera_http::{EventId, EventStore, StoredEvent};
use tessera_redis::Redis;
use tessera_redis::redis::{self, AsyncCommands};
use tessera_redis::testing::RedisServer;

fn ev(stream: u64, seq: u64) -> StoredEvent {
    StoredEvent {
        id: EventId { stream, seq },
        data: Bytes::from(format!("{{\"n\":{seq},\"s\":{stream}}}")),
    }
}

async fn instance(server: &RedisServer, per_stream: usize) -> Redis {
    Redis::options(server.url())
        .prefix("ev-test:")
        .event_retention(per_stream, Duration::from_secs(120))
        .connect()
        .await
        .expect("connect")
}

#[tokio::test]
async fn events_stored_on_one_instance_replay_on_another() {
    let server = RedisServer::start().expect("start redis-server");
    let a = instance(&server, 100).await.event_store();
    let b = instance(&server, 100).await.event_store();
    for seq in 0..5 {
        a.store("s1", ev(1, seq)).await;
    }
    a.store("s1", ev(0, 0)).await;
    a.store("s1", ev(2, 0)).await;
    a.store("other", ev(1, 7)).await;
    let got = b.replay_after("s1", EventId { stream: 1, seq: 1 }).await;
    assert_eq!(
        got,
        vec![ev(1, 2), ev(1, 3), ev(1, 4)],
        "stream 1 after 1-1"
    );
    assert_eq!(
        b.replay_after("s1", EventId { stream: 1, seq: 0 })
            .await
            .len(),
        4,
        "the priming event 1-0 is the exclusive start"
    );
    assert!(
        b.replay_after("s1", EventId { stream: 1, seq: 4 })
            .await
            .is_empty()
    );
    assert!(
        b.replay_after("s1", EventId { stream: 9, seq: 0 })
            .await
            .is_empty()
    );
    assert!(
        b.replay_after("none", EventId { stream: 1, seq: 0 })
            .await
            .is_empty()
    );
    // Binary-safe data.
    let raw = StoredEvent {
        id: EventId { stream: 3, seq: 1 },
        data: Bytes::from_static(b"\x00\xff\r\n"),
    };
    a.store("s1", raw.clone()).await;
    assert_eq!(
        b.replay_after("s1", EventId { stream: 3, seq: 0 }).await,
        vec![raw]
    );
    // Ending the session deletes all its streams, and only its.
    b.remove_session("s1").await;
    assert!(
        a.replay_after("s1", EventId { stream: 1, seq: 0 })
            .await
            .is_empty()
    );
    assert!(
        a.replay_after("s1", EventId { stream: 2, seq: 0 })
            .await
            .is_empty()
    );
    assert_eq!(
        a.replay_after("other", EventId { stream: 1, seq: 0 }).await,
        vec![ev(1, 7)]
    );
}

#[tokio::test]
async fn streams_are_bounded_and_expire() {
    let server = RedisServer::start().expect("start redis-server");
    let store = instance(&server, 10).await.event_store();
    for seq in 0..50 {
        store.store("big", ev(1, seq)).await;
    }
    let got = store
        .replay_after("big", EventId { stream: 1, seq: 0 })
        .await;
    assert_eq!(
        got.iter().map(|e| e.id.seq).collect::<Vec<_>>(),
        (40..50).collect::<Vec<_>>(),
        "only the newest 10 are kept"
    );
    let client = redis::Client::open(server.url()).unwrap();
    let mut c = client.get_multiplexed_async_connection().await.unwrap();
    let keys: Vec<String> = c.keys("ev-test:ev*").await.unwrap();
    assert_eq!(
        keys.len(),
        4,
        "one stream, the session's index, the ledger and the order: {keys:?}"
    );
    for k in keys {
        let ttl: i64 = c.pttl(&k).await.unwrap();
        assert!(ttl > 0 && ttl <= 120_000, "{k}: {ttl}");
    }
}

/// Every key of the event store (streams and indexes) has a TTL within
/// `max_ms`; returns how many there are.
async fn assert_all_expire(c: &mut redis::aio::MultiplexedConnection, max_ms: i64) -> usize {
    let keys: Vec<String> = c.keys("ev-test:ev*").await.unwrap();
    for k in &keys {
        let ttl: i64 = c.pttl(k).await.unwrap();
        assert!(ttl > 0 && ttl <= max_ms, "{k}: {ttl}");
    }
    keys.len()
}

#[tokio::test]
async fn appends_queued_together_are_kept_in_order_with_their_ttls() {
    let server = RedisServer::start().expect("start redis-server");
    let a = instance(&server, 100).await.event_store();
    let b = instance(&server, 100).await.event_store();
    // Queued without waiting, so that they share batches: three sessions,
    // several streams each, events interleaved.
    let mut pending = Vec::new();
    for seq in 0..20 {
        for session in ["x", "y", "z"] {
            for stream in [1, 2, 5] {
                pending.push(a.store(session, ev(stream, seq)));
            }
        }
    }
    futures::future::join_all(pending).await;
    for session in ["x", "y", "z"] {
        for stream in [1, 2, 5] {
            let got = b.replay_after(session, EventId { stream, seq: 0 }).await;
            assert_eq!(
                got,
                (1..20).map(|seq| ev(stream, seq)).collect::<Vec<_>>(),
                "{session} stream {stream}"
            );
        }
    }
    let client = redis::Client::open(server.url()).unwrap();
    let mut c = client.get_multiplexed_async_connection().await.unwrap();
    assert_eq!(
        assert_all_expire(&mut c, 120_000).await,
        3 * 3 + 3 + 2,
        "nine streams, three indexes, the ledger and the order"
    );
    let mut index: Vec<String> = c.smembers("ev-test:evs:y").await.unwrap();
    index.sort();
    assert_eq!(
        index,
        ["ev-test:ev:y:1", "ev-test:ev:y:2", "ev-test:ev:y:5"]
    );
    b.remove_session("y").await;
    assert_eq!(assert_all_expire(&mut c, 120_000).await, 2 * 3 + 2 + 2);
}

#[tokio::test]
async fn a_restarted_redis_without_the_script_still_keeps_events() {
    let server = RedisServer::start().expect("start redis-server");
    let store = instance(&server, 100).await.event_store();
    store.try_store("s", &ev(1, 0)).await.expect("first append");
    let client = redis::Client::open(server.url()).unwrap();
    let mut c = client.get_multiplexed_async_connection().await.unwrap();
    // What a restart does to the script cache.
    let () = redis::cmd("SCRIPT")
        .arg("FLUSH")
        .query_async(&mut c)
        .await
        .unwrap();
    store
        .try_store("s", &ev(1, 1))
        .await
        .expect("append after the flush");
    assert_eq!(
        store.replay_after("s", EventId { stream: 1, seq: 0 }).await,
        vec![ev(1, 1)]
    );
}

#[tokio::test]
async fn a_failed_append_fails_its_batch_but_spares_the_others_and_every_ttl() {
    let server = RedisServer::start().expect("start redis-server");
    let store = instance(&server, 100).await.event_store();
    let client = redis::Client::open(server.url()).unwrap();
    let mut c = client.get_multiplexed_async_connection().await.unwrap();
    // A key of the wrong type where a stream goes.
    let () = c.set("ev-test:ev:bad:1", "not a stream").await.unwrap();
    // Queued together (the writer runs when this task waits), so one batch.
    let (bad_event, good_event) = (ev(1, 0), ev(1, 1));
    let (bad, good) = tokio::join!(
        store.try_store("bad", &bad_event),
        store.try_store("good", &good_event)
    );
    assert!(
        matches!(bad, Err(tessera_redis::Error::Backend(_))),
        "{bad:?}"
    );
    // The writer cannot tell which event failed: the batch is reported as
    // not kept, but the script went on past the failure.
    assert!(good.is_err(), "{good:?}");
    assert_eq!(
        store
            .replay_after("good", EventId { stream: 1, seq: 0 })
            .await,
        vec![ev(1, 1)]
    );
    store
        .try_store("good", &ev(1, 2))
        .await
        .expect("a later append");
    assert_eq!(assert_all_expire(&mut c, 120_000).await, 4 + 2);
}

/// An event whose data is `len` bytes.
fn sized(stream: u64, seq: u64, len: usize) -> StoredEvent {
    StoredEvent {
        id: EventId { stream, seq },
        data: Bytes::from(vec![b'x'; len]),
    }
}

async fn bounded(server: &RedisServer, per_stream: usize, session: u64, total: u64) -> Redis {
    Redis::options(server.url())
        .prefix("ev-test:")
        .event_retention(per_stream, Duration::from_secs(120))
        .event_bytes(session, total)
        .connect()
        .await
        .expect("connect")
}

fn seqs(events: &[StoredEvent]) -> Vec<u64> {
    events.iter().map(|e| e.id.seq).collect()
}

/// Issue 32 item 1 in Redis: a session keeps at most its byte budget (its
/// oldest events go, lowest stream first), an event over the budget is not
/// kept, and trimming by count gives the bytes back.
#[tokio::test]
async fn a_session_keeps_at_most_its_bytes_oldest_events_first() {
    let server = RedisServer::start().expect("start redis-server");
    let store = bounded(&server, 8, 10_000, 100_000).await.event_store();
    for seq in 0..6 {
        store.store("s", sized(1, seq, 1000)).await;
    }
    for seq in 0..6 {
        store.store("s", sized(2, seq, 1000)).await;
    }
    assert_eq!(store.session_bytes("s").await.unwrap(), 10_000);
    assert_eq!(store.bytes().await.unwrap(), 10_000);
    let one = store.replay_after("s", EventId { stream: 1, seq: 0 }).await;
    assert_eq!(seqs(&one), [2, 3, 4, 5], "stream 1 lost its two oldest");
    let two = store.replay_after("s", EventId { stream: 2, seq: 0 }).await;
    assert_eq!(seqs(&two), [1, 2, 3, 4, 5], "stream 2 is whole");

    // One event over the whole budget (a 4 MB echo) is not kept, and
    // nothing else goes for it.
    store.store("s", sized(2, 6, 10_001)).await;
    assert_eq!(store.session_bytes("s").await.unwrap(), 10_000);
    let two = store.replay_after("s", EventId { stream: 2, seq: 0 }).await;
    assert_eq!(seqs(&two), [1, 2, 3, 4, 5]);

    // Trimming by count (8 per stream) gives the bytes back.
    for seq in 0..20 {
        store.store("t", sized(1, seq, 100)).await;
    }
    assert_eq!(store.session_bytes("t").await.unwrap(), 800);
    assert_eq!(store.bytes().await.unwrap(), 10_800);

    // Ending a session takes its bytes off.
    store.remove_session("s").await;
    assert_eq!(store.session_bytes("s").await.unwrap(), 0);
    assert_eq!(store.bytes().await.unwrap(), 800);
}

/// The total is counted in Redis, so it holds across instances: over it,
/// the least recently written sessions are deleted whole, whichever
/// instance wrote them, and the session being written stays.
#[tokio::test]
async fn the_total_holds_across_instances_least_recently_written_sessions_first() {
    let server = RedisServer::start().expect("start redis-server");
    let a = bounded(&server, 100, 4_000, 10_000).await.event_store();
    let b = bounded(&server, 100, 4_000, 10_000).await.event_store();
    for (i, session) in ["s1", "s2", "s3", "s4", "s5"].into_iter().enumerate() {
        let store = if i % 2 == 0 { &a } else { &b };
        for seq in 0..3 {
            store.store(session, sized(1, seq, 1000)).await;
        }
        assert!(a.bytes().await.unwrap() <= 10_000);
    }
    assert_eq!(a.bytes().await.unwrap(), 9_000);
    assert_eq!(b.bytes().await.unwrap(), 9_000);
    for gone in ["s1", "s2"] {
        assert!(
            a.replay_after(gone, EventId { stream: 1, seq: 0 })
                .await
                .is_empty(),
            "{gone} was deleted"
        );
        assert_eq!(b.session_bytes(gone).await.unwrap(), 0);
    }
    for kept in ["s3", "s4", "s5"] {
        assert_eq!(
            seqs(&b.replay_after(kept, EventId { stream: 1, seq: 0 }).await),
            [1, 2],
            "{kept}"
        );
    }
    let client = redis::Client::open(server.url()).unwrap();
    let mut c = client.get_multiplexed_async_connection().await.unwrap();
    let keys: Vec<String> = c.keys("ev-test:ev:s1*").await.unwrap();
    assert!(keys.is_empty(), "{keys:?}");
}

/// A session whose keys expired (as Redis's TTL does; here its place in the
/// order is moved into the past) is taken off the ledger at the next append,
/// so expired sessions never count against the total.
#[tokio::test]
async fn expired_sessions_leave_the_ledger_at_the_next_append() {
    let server = RedisServer::start().expect("start redis-server");
    let store = bounded(&server, 100, 4_000, 10_000).await.event_store();
    for seq in 0..3 {
        store.store("old", sized(1, seq, 1000)).await;
    }
    let client = redis::Client::open(server.url()).unwrap();
    let mut c = client.get_multiplexed_async_connection().await.unwrap();
    let _: i64 = c.zadd("ev-test:evo", "ev-test:evs:old", 1).await.unwrap();
    store.store("new", sized(1, 0, 500)).await;
    assert_eq!(store.bytes().await.unwrap(), 500);
    assert_eq!(store.session_bytes("old").await.unwrap(), 0);
    let score: Option<f64> = c.zscore("ev-test:evo", "ev-test:evs:old").await.unwrap();
    assert_eq!(score, None);
}
