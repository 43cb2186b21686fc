//! Token buckets in Redis: two handles (two instances) drain one bucket
//! together, an empty bucket says when its next token comes, a bucket
//! expires once it would be full again, and bad arguments are refused.

use std::time::Duration;

use tessera_redis::Redis;
use tessera_redis::testing::RedisServer;

async fn instance(server: &RedisServer) -> Redis {
    Redis::options(server.url())
        .prefix("bucket-test:")
        .connect()
        .await
        .expect("connect")
}

#[tokio::test]
async fn two_instances_share_one_bucket() {
    let server = RedisServer::start().expect("start redis-server");
    let (a, b) = (instance(&server).await, instance(&server).await);
    // 3 tokens, one every 100 s: the fourth take waits about 100 s.
    let rate = 0.01;
    assert_eq!(a.take_token("alice:files", rate, 3.0).await, Ok(None));
    assert_eq!(b.take_token("alice:files", rate, 3.0).await, Ok(None));
    assert_eq!(a.take_token("alice:files", rate, 3.0).await, Ok(None));
    let wait = b
        .take_token("alice:files", rate, 3.0)
        .await
        .expect("answers")
        .expect("empty");
    assert!(
        wait > Duration::from_secs(95) && wait <= Duration::from_secs(100),
        "{wait:?}"
    );
    // Another bucket is full.
    assert_eq!(b.take_token("bob:files", rate, 3.0).await, Ok(None));

    // Each bucket expires once it would be full again (here after 300 s).
    let mut conn = redis::Client::open(server.url())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let pttl: i64 = redis::cmd("PTTL")
        .arg("bucket-test:rl:alice:files")
        .query_async(&mut conn)
        .await
        .unwrap();
    assert!(pttl > 290_000 && pttl <= 301_000, "{pttl}");

    assert!(a.take_token(&"x".repeat(600), rate, 3.0).await.is_err());
    assert!(a.take_token("x", 0.0, 3.0).await.is_err());
    assert!(a.take_token("x", 1.0, 0.5).await.is_err());
}

#[tokio::test]
async fn a_fast_bucket_refills() {
    let server = RedisServer::start().expect("start redis-server");
    let a = instance(&server).await;
    // 1000 tokens a second, burst 1: the next token comes within 1 ms.
    assert_eq!(a.take_token("fast", 1000.0, 1.0).await, Ok(None));
    let r = a.take_token("fast", 1000.0, 1.0).await.expect("answers");
    if let Some(wait) = r {
        assert!(wait <= Duration::from_millis(1), "{wait:?}");
    }
}
