//! The session store contract against a real Redis: the same checks as the
//! in-memory store, TTLs included (real time passes: Redis expires keys by
//! its own clock), and a session saved by one instance loaded by another.

use std::time::Duration;

use tessera_redis::Redis;
use tessera_redis::testing::RedisServer;
use tessera_runtime::SessionStore;
use tessera_runtime::shared::session_contract;

async fn instance(server: &RedisServer) -> Redis {
    Redis::options(server.url())
        .prefix("sess-test:")
        .connect()
        .await
        .expect("connect")
}

#[tokio::test]
async fn redis_session_store_meets_the_contract() {
    let server = RedisServer::start().expect("start redis-server");
    let store = instance(&server).await.session_store();
    session_contract::run(&store).await;
    // Redis expires keys by its clock: let that much real time pass.
    session_contract::expiry(&store, tokio::time::sleep).await;
}

#[tokio::test]
async fn a_session_saved_on_one_instance_loads_on_another() {
    let server = RedisServer::start().expect("start redis-server");
    let a = instance(&server).await.session_store();
    let b = instance(&server).await.session_store();
    let s = session_contract::full_state("shared-1");
    a.save(&s, Duration::from_secs(60)).await.unwrap();
    assert_eq!(b.load("shared-1").await.unwrap(), Some(s));
    assert!(b.touch("shared-1", Duration::from_secs(60)).await.unwrap());
    b.remove("shared-1").await.unwrap();
    assert_eq!(a.load("shared-1").await.unwrap(), None);
}
