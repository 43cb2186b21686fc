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
        2,
        "one stream and the session's index: {keys:?}"
    );
    for k in keys {
        let ttl: i64 = c.pttl(&k).await.unwrap();
        assert!(ttl > 0 && ttl <= 120_000, "{k}: {ttl}");
    }
}
