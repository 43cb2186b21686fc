//! A legacy session that ends (its client deletes its HTTP session, or is
//! dropped) ends the resource subscriptions it held: the upstream is sent
//! `resources/unsubscribe` at once, without waiting for another session
//! to come or go, and a later connection to the upstream does not
//! subscribe again for nobody.

use tessera_proxy::{Aggregator, UpstreamOptions};
use tessera_testkit::bounded;
use tessera_testkit::layers::Seen;
use tessera_types::{ProtocolVersion, methods};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::caller_credentials::{Rig, Speaks, exchange_auth};
use crate::reload_subscriptions::{client, entry, serve};

/// Waits until the upstream has received a request of `method`,
/// returning how many `resources/subscribe` it received before.
async fn until_request(seen: &mut mpsc::UnboundedReceiver<Seen>, method: &str) -> usize {
    let mut subscribes = 0;
    bounded(method, async {
        loop {
            match seen.recv().await {
                Some(Seen::Request(m)) if m == method => return subscribes,
                Some(Seen::Request(m)) if m == methods::RESOURCES_SUBSCRIBE => subscribes += 1,
                Some(_) => {}
                None => panic!("the upstream stopped before {method}"),
            }
        }
    })
    .await
}

/// How many `resources/subscribe` the upstream received since the last look.
fn subscribes(seen: &mut mpsc::UnboundedReceiver<Seen>) -> usize {
    std::iter::from_fn(|| seen.try_recv().ok())
        .filter(|s| *s == Seen::Request(methods::RESOURCES_SUBSCRIBE.into()))
        .count()
}

/// A legacy session subscribes to `a+mem://doc`, and ends by `close`
/// (deleting its HTTP session) or by being dropped: the upstream hears
/// `resources/unsubscribe`, and connected again it hears no
/// `resources/subscribe`.
async fn ends_upstream(close: bool) {
    let stop = CancellationToken::new();
    let (tx, mut seen) = mpsc::unbounded_channel();
    let (url, _server) = serve(&stop, tx).await;
    let agg =
        Aggregator::start(vec![entry(&url, true)], UpstreamOptions::default()).expect("starts");
    assert!(bounded("a connects", agg.wait_connected("a", true)).await);
    let proxy = crate::bridge::serve(agg.clone(), &stop).await;

    let legacy = client(&proxy, ProtocolVersion::V2025_11_25).await;
    bounded("subscribes", legacy.subscribe("a+mem://doc"))
        .await
        .expect("subscribed");
    assert_eq!(subscribes(&mut seen), 1);

    if close {
        legacy.close().await;
    } else {
        drop(legacy);
    }
    assert_eq!(
        until_request(&mut seen, methods::RESOURCES_UNSUBSCRIBE).await,
        0
    );

    // Connected again (its entry changed): nothing is subscribed to for
    // the session that ended. Subscriptions are made again before the
    // upstream counts as connected.
    let said = agg
        .reconfigure(vec![entry(&url, true)], |_| false)
        .expect("reloads");
    assert_eq!(said.changed, ["a"]);
    assert!(bounded("a connects again", agg.wait_connected("a", true)).await);
    assert_eq!(subscribes(&mut seen), 0, "made again for nobody");

    agg.close();
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_legacy_session_ends_its_subscriptions_upstream() {
    ends_upstream(true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_legacy_client_ends_its_subscriptions_upstream() {
    ends_upstream(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_per_caller_subscription_ends_on_the_callers_own_connection_with_its_session() {
    // An upstream reached with each caller's own token: Alice's
    // subscription is made, and ended, on her own connection.
    let rig = Rig::start_speaking(Speaks::LegacyOnly, exchange_auth(None)).await;
    let alice = rig
        .client_speaking(&rig.token("alice", &[]), Some(ProtocolVersion::V2025_11_25))
        .await;
    bounded("alice subscribes", alice.subscribe("up+mem://doc"))
        .await
        .expect("subscribed");
    rig.handled(methods::RESOURCES_SUBSCRIBE, 1).await;
    assert_eq!(rig.aggregator.caller_connections("up"), 1);

    alice.close().await;
    rig.handled(methods::RESOURCES_UNSUBSCRIBE, 1).await;
    rig.close();
}
