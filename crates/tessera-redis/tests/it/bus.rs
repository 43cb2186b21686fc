//! The bus contract against a real Redis, between two instances, and across
//! a Redis restart (the subscription task reconnects and subscribes again).

use std::time::{Duration, Instant};

use bytes::Bytes;
use tessera_redis::Redis;
use tessera_redis::testing::RedisServer;
use tessera_runtime::Bus;
use tessera_runtime::shared::bus_contract;

async fn instance(server: &RedisServer) -> Redis {
    Redis::options(server.url())
        .prefix("bus-test:")
        .operation_timeout(Duration::from_millis(500))
        .connect()
        .await
        .expect("connect")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_bus_meets_the_contract() {
    let server = RedisServer::start().expect("start redis-server");
    let bus = instance(&server).await.bus();
    bus_contract::run(&bus).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn messages_cross_instances_and_prefixes_separate_endpoints() {
    let server = RedisServer::start().expect("start redis-server");
    let a = instance(&server).await.bus();
    let b = instance(&server).await.bus();
    let other = Redis::options(server.url())
        .prefix("another-endpoint:")
        .connect()
        .await
        .unwrap()
        .bus();
    let mut on_b = b.subscribe("t").await.unwrap();
    let mut on_other = other.subscribe("t").await.unwrap();
    a.publish("t", Bytes::from_static(b"from a")).await.unwrap();
    assert_eq!(bus_contract::next(&mut on_b, "a to b").await, "from a");
    other
        .publish("t", Bytes::from_static(b"marker"))
        .await
        .unwrap();
    assert_eq!(
        bus_contract::next(&mut on_other, "marker").await,
        "marker",
        "another prefix does not hear the first endpoint"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscriptions_end_with_the_connection_and_work_again_after_redis_restarts() {
    let mut server = RedisServer::start().expect("start redis-server");
    let redis = instance(&server).await;
    let bus = redis.bus();
    let mut sub = bus.subscribe("live").await.unwrap();
    bus.publish("live", Bytes::from_static(b"before"))
        .await
        .unwrap();
    assert_eq!(bus_contract::next(&mut sub, "before").await, "before");

    server.kill();
    // The subscription ends, so its owner knows it may miss messages.
    let ended = tokio::time::timeout(Duration::from_secs(10), sub.recv()).await;
    assert_eq!(ended, Ok(None), "the subscription ends with the connection");
    let started = Instant::now();
    assert!(
        bus.publish("live", Bytes::from_static(b"lost"))
            .await
            .is_err()
    );
    assert!(
        bus.subscribe("live").await.is_err(),
        "no subscription while Redis is down"
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );

    server.restart().expect("restart redis-server");
    // Subscribe again (bounded) once the bus has reconnected.
    let until = Instant::now() + Duration::from_secs(20);
    let mut again = loop {
        match bus.subscribe("live").await {
            Ok(s) => break s,
            Err(e) => assert!(
                Instant::now() < until,
                "no subscription after the restart: {e}"
            ),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let until = Instant::now() + Duration::from_secs(20);
    while bus
        .publish("live", Bytes::from_static(b"after"))
        .await
        .is_err()
    {
        assert!(Instant::now() < until, "publishing did not come back");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(bus_contract::next(&mut again, "after").await, "after");
}
