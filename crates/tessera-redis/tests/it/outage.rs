//! Redis goes away: operations fail fast with an error instead of hanging,
//! and the connection comes back by itself once Redis is there again (a new
//! redis-server on the same port).

use std::time::{Duration, Instant};

use bytes::Bytes;
use tessera_http::{EventId, EventStore, StoredEvent};
use tessera_redis::testing::RedisServer;
use tessera_redis::{Error, Redis};
use tessera_server::task::{TaskRecord, TaskStore, TaskStoreError};

const OP_TIMEOUT: Duration = Duration::from_millis(500);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operations_fail_fast_while_redis_is_down_and_recover() {
    let mut server = RedisServer::start().expect("start redis-server");
    let redis = Redis::options(server.url())
        .prefix("outage:")
        .operation_timeout(OP_TIMEOUT)
        .connect()
        .await
        .expect("connect");
    let tasks = redis.task_store();
    let events = redis.event_store();
    tasks
        .create(TaskRecord::working(
            "before",
            "alice",
            "tools/call",
            1,
            Some(60_000),
            None,
        ))
        .await
        .unwrap();
    // Operations are counted (the connection's key ring, the create), and
    // none failed yet.
    let stats = redis.stats();
    let trips = stats.round_trips();
    assert!(trips >= 1, "{trips}");
    assert_eq!(stats.errors(), 0);

    server.kill();
    for _ in 0..3 {
        let started = Instant::now();
        match tasks.get("alice", "before", 2).await {
            Err(TaskStoreError::Backend(msg)) => assert!(msg.contains("unavailable"), "{msg}"),
            other => panic!("expected a backend error, got {other:?}"),
        }
        assert!(matches!(redis.ping().await, Err(Error::Unavailable(_))));
        let ev = StoredEvent {
            id: EventId { stream: 1, seq: 1 },
            data: Bytes::from_static(b"x"),
        };
        events.store("s", ev).await;
        assert!(
            events
                .replay_after("s", EventId { stream: 1, seq: 0 })
                .await
                .is_empty()
        );
        // Four operations, each bounded by the operation timeout.
        assert!(
            started.elapsed() < OP_TIMEOUT * 4 + Duration::from_millis(500),
            "took {:?}",
            started.elapsed()
        );
    }
    // The failed get and ping of each round, at least, were counted.
    assert!(stats.errors() >= 6, "{}", stats.errors());
    assert!(stats.round_trips() >= trips + 6);

    server
        .restart()
        .expect("restart redis-server on the same port");
    let deadline = Instant::now() + Duration::from_secs(20);
    while redis.ping().await.is_err() {
        assert!(
            Instant::now() < deadline,
            "the connection did not come back"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The new server is empty (persistence is off); the store works again.
    assert_eq!(tasks.get("alice", "before", 2).await.unwrap(), None);
    tasks
        .create(TaskRecord::working(
            "after",
            "alice",
            "tools/call",
            3,
            Some(60_000),
            None,
        ))
        .await
        .unwrap();
    assert!(tasks.get("alice", "after", 4).await.unwrap().is_some());
    let ev = StoredEvent {
        id: EventId { stream: 1, seq: 1 },
        data: Bytes::from_static(b"y"),
    };
    events.store("s", ev.clone()).await;
    assert_eq!(
        events
            .replay_after("s", EventId { stream: 1, seq: 0 })
            .await,
        vec![ev]
    );
}

#[tokio::test]
async fn connecting_to_nothing_fails_at_once() {
    // A port nobody listens on: bind, note it, close.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let started = Instant::now();
    let r = Redis::options(format!("redis://127.0.0.1:{port}/0"))
        .operation_timeout(OP_TIMEOUT)
        .connect()
        .await;
    assert!(matches!(r, Err(Error::Unavailable(_))), "{r:?}");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert!(matches!(
        Redis::connect("http://nope").await,
        Err(Error::InvalidUrl(_))
    ));
}
