//! The DPoP replay cache in Redis: a proof recorded through one instance's
//! handle is seen by another's, each record lives until the proof's window
//! ends, the nonce secret is one for all, and an unreachable Redis is an
//! error, not a pass.

use tessera_auth::server::dpop::{ReplayCache, ReplayError};
use tessera_redis::Redis;
use tessera_redis::testing::RedisServer;

async fn instance(server: &RedisServer) -> Redis {
    Redis::options(server.url())
        .prefix("dpop-test:")
        .connect()
        .await
        .expect("connect")
}

#[tokio::test]
async fn a_proof_used_on_one_instance_is_seen_on_another() {
    let mut server = RedisServer::start().expect("start redis-server");
    let (a, b) = (instance(&server).await, instance(&server).await);
    let (ca, cb) = (a.dpop_replay_cache(), b.dpop_replay_cache());
    let key = [7u8; 32];
    assert_eq!(ca.first_use(&key, 1_060, 1_000).await, Ok(true));
    assert_eq!(cb.first_use(&key, 1_060, 1_000).await, Ok(false));
    assert_eq!(ca.first_use(&key, 1_060, 1_000).await, Ok(false));
    assert_eq!(cb.first_use(&[8u8; 32], 1_060, 1_000).await, Ok(true));

    // The record lives as long as the proof could be accepted (60 s here).
    let name = format!("dpop-test:dpop:jti:{}", "07".repeat(32));
    let mut conn = redis::Client::open(server.url())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let ttl: i64 = redis::cmd("TTL")
        .arg(&name)
        .query_async(&mut conn)
        .await
        .unwrap();
    assert!((55..=60).contains(&ttl), "TTL {ttl}");

    // Every instance derives its DPoP nonces from the same secret.
    let secret = a.dpop_nonce_secret().await.unwrap();
    assert_eq!(b.dpop_nonce_secret().await.unwrap(), secret);
    assert_eq!(a.dpop_nonce_secret().await.unwrap(), secret);
    assert_ne!(secret, [0u8; 32]);

    // Redis gone: the cache says so (the layer answers 503), never "new".
    server.kill();
    assert!(matches!(
        ca.first_use(&[9u8; 32], 1_060, 1_000).await,
        Err(ReplayError::Unavailable(_))
    ));
}
