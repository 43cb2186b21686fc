//! What callers of an upstream reached on one connection per caller hear of
//! its changes: each list change once, however many callers' connections
//! tell of it, and resource updates through the subscriber's own
//! connection, to the subscriber alone.
//!
//! No test waits for silence: each caller's connection carries, after the
//! notifications counted, a resource update that only that caller
//! subscribed to; once it has arrived, everything before it has too.

use std::sync::{Arc, Mutex};

use serde_json::json;
use tessera_client::{Client, ClientEvent, EventStream, ListenStream};
use tessera_http::http::{HeaderMap, Method, StatusCode, Uri};
use tessera_http::{ChallengeOutcome, HttpAuth};
use tessera_testkit::bounded;
use tessera_types::{ProtocolVersion, SubscriptionFilter};

use crate::caller_credentials::{Rig, Speaks, exchange_auth};

/// The events of `events` up to the update of `uri` (not included).
async fn until_updated(events: &mut EventStream, uri: &str) -> Vec<ClientEvent> {
    bounded("the resource update", async {
        let mut seen = Vec::new();
        loop {
            match events.recv().await {
                Some(ClientEvent::ResourceUpdated(p)) if p.uri == uri => return seen,
                Some(e) => seen.push(e),
                None => panic!("the client closed before {uri} was updated"),
            }
        }
    })
    .await
}

/// The events of `stream` up to the update of `uri` (not included).
async fn listened_until_updated(stream: &mut ListenStream, uri: &str) -> Vec<ClientEvent> {
    bounded("the resource update on the listen stream", async {
        let mut seen = Vec::new();
        loop {
            match stream.recv().await {
                Some(ClientEvent::ResourceUpdated(p)) if p.uri == uri => return seen,
                Some(e) => seen.push(e),
                None => panic!("the stream ended before {uri} was updated"),
            }
        }
    })
    .await
}

fn tools_changed(events: &[ClientEvent]) -> usize {
    events
        .iter()
        .filter(|e| matches!(e, ClientEvent::ToolListChanged(_)))
        .count()
}

fn updates_of(events: &[ClientEvent], uri: &str) -> usize {
    events
        .iter()
        .filter(|e| matches!(e, ClientEvent::ResourceUpdated(p) if p.uri == uri))
        .count()
}

/// Alice, a legacy session presenting `token`, subscribed to
/// `up+mem://doc` and `up+mem://other`, and her events.
async fn alice_subscribed_to_both(rig: &Rig, token: &str) -> (Client, EventStream) {
    let alice = rig
        .client_speaking(token, Some(ProtocolVersion::V2025_11_25))
        .await;
    let events = alice.events();
    subscribe_to_both(&alice).await;
    (alice, events)
}

async fn subscribe_to_both(alice: &Client) {
    for uri in ["up+mem://doc", "up+mem://other"] {
        bounded("alice subscribes", alice.subscribe(uri))
            .await
            .expect("subscribed");
    }
}

/// Alice, a legacy session subscribed to `up+mem://doc` and
/// `up+mem://other`, and Bob, listening (2026-07-28) to the tool list and
/// `up+mem://doc`: each with a connection of their own upstream.
async fn alice_and_bob(rig: &Rig) -> (Client, EventStream, Client, ListenStream) {
    let (alice, alice_events) = alice_subscribed_to_both(rig, &rig.token("alice", &[])).await;
    let bob = rig.client_speaking(&rig.token("bob", &[]), None).await;
    let filter: SubscriptionFilter = serde_json::from_value(json!({
        "toolsListChanged": true,
        "resourceSubscriptions": ["up+mem://doc"]
    }))
    .unwrap();
    let bob_stream = bounded("bob listens", bob.listen(filter))
        .await
        .expect("listens");
    assert_eq!(
        serde_json::to_value(bob_stream.acknowledged()).unwrap(),
        json!({"toolsListChanged": true, "resourceSubscriptions": ["up+mem://doc"]}),
        "bob's subscription to a per-caller upstream's resource is granted"
    );
    assert_eq!(rig.aggregator.caller_connections("up"), 2);
    (alice, alice_events, bob, bob_stream)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resource_updates_come_through_each_subscribers_own_connection() {
    let rig = Rig::start_speaking(Speaks::LegacyOnly, exchange_auth(None)).await;
    let (alice, mut alice_events, bob, mut bob_stream) = alice_and_bob(&rig).await;
    // Carol has a connection of her own too, and subscribed to nothing.
    let carol = rig
        .client_speaking(&rig.token("carol", &[]), Some(ProtocolVersion::V2025_11_25))
        .await;
    let mut carol_events = carol.events();
    bounded("carol lists", carol.list_tools()).await.unwrap();
    bounded("carol subscribes", carol.subscribe("up+mem://other"))
        .await
        .expect("subscribed");
    assert_eq!(rig.aggregator.caller_connections("up"), 3);

    rig.server.notify_resource_updated("mem://doc");
    // Alice's and Bob's own connections each carry the update to their
    // subscriber.
    let seen = until_updated(&mut alice_events, "up+mem://doc").await;
    assert_eq!(updates_of(&seen, "up+mem://doc"), 0);
    let seen = listened_until_updated(&mut bob_stream, "up+mem://doc").await;
    assert_eq!(updates_of(&seen, "up+mem://doc"), 0);
    // Then one that Alice and Carol subscribed to: whatever Alice and
    // Carol were sent of the first is before it.
    rig.server.notify_resource_updated("mem://other");
    let seen = until_updated(&mut alice_events, "up+mem://other").await;
    assert_eq!(
        updates_of(&seen, "up+mem://doc"),
        0,
        "alice heard of the doc once, not again through bob's connection"
    );
    let seen = until_updated(&mut carol_events, "up+mem://other").await;
    assert_eq!(
        updates_of(&seen, "up+mem://doc"),
        0,
        "carol never subscribed to the doc"
    );
    // Bob's listen stream ends: his subscription upstream goes with it
    // (his connection may then be closed as idle), Alice's stays.
    drop(bob_stream);
    rig.server.notify_resource_updated("mem://doc");
    until_updated(&mut alice_events, "up+mem://doc").await;

    alice.close().await;
    bob.close().await;
    carol.close().await;
    rig.close();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_upstream_list_change_is_heard_once_however_many_callers_connect() {
    let rig = Rig::start_speaking(Speaks::LegacyOnly, exchange_auth(None)).await;
    let (alice, mut alice_events, bob, mut bob_stream) = alice_and_bob(&rig).await;

    // One change upstream: both callers' connections tell of it, each
    // followed by the doc's update.
    rig.server
        .notify_list_changed(tessera_server::hub::ListKind::Tools);
    rig.server.notify_resource_updated("mem://doc");
    let mut alice_seen = until_updated(&mut alice_events, "up+mem://doc").await;
    let mut bob_seen = listened_until_updated(&mut bob_stream, "up+mem://doc").await;
    // Both connections' notices of the change have now been handled; what
    // was sent of them comes before these.
    rig.server.notify_resource_updated("mem://other");
    alice_seen.extend(until_updated(&mut alice_events, "up+mem://other").await);
    rig.server.notify_resource_updated("mem://doc");
    bob_seen.extend(listened_until_updated(&mut bob_stream, "up+mem://doc").await);
    assert_eq!(tools_changed(&alice_seen), 1, "{alice_seen:?}");
    assert_eq!(tools_changed(&bob_seen), 1, "{bob_seen:?}");

    // A second change is a change again.
    rig.server
        .notify_list_changed(tessera_server::hub::ListKind::Tools);
    rig.server.notify_resource_updated("mem://doc");
    let mut alice_seen = until_updated(&mut alice_events, "up+mem://doc").await;
    listened_until_updated(&mut bob_stream, "up+mem://doc").await;
    rig.server.notify_resource_updated("mem://other");
    alice_seen.extend(until_updated(&mut alice_events, "up+mem://other").await);
    assert_eq!(tools_changed(&alice_seen), 1, "{alice_seen:?}");

    alice.close().await;
    bob.close().await;
    rig.close();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_modern_upstreams_list_changes_come_through_each_callers_connection() {
    // A 2026-07-28 upstream tells of changes only on listen streams: each
    // caller's connection opens one before it is used.
    let rig = Rig::start_speaking(Speaks::All, exchange_auth(None)).await;
    let alice = rig
        .client_speaking(&rig.token("alice", &[]), Some(ProtocolVersion::V2025_11_25))
        .await;
    let mut alice_events = alice.events();
    let bob = rig.client_speaking(&rig.token("bob", &[]), None).await;
    let filter: SubscriptionFilter =
        serde_json::from_value(json!({"toolsListChanged": true})).unwrap();
    let mut bob_stream = bounded("bob listens", bob.listen(filter))
        .await
        .expect("listens");
    for c in [&alice, &bob] {
        bounded("listing", c.list_tools()).await.expect("listed");
    }
    assert_eq!(rig.aggregator.caller_connections("up"), 2);

    rig.server
        .notify_list_changed(tessera_server::hub::ListKind::Tools);
    bounded("alice hears of the change", async {
        loop {
            match alice_events.recv().await {
                Some(ClientEvent::ToolListChanged(_)) => return,
                Some(_) => continue,
                None => panic!("alice's client closed"),
            }
        }
    })
    .await;
    bounded("bob hears of the change", async {
        loop {
            match bob_stream.recv().await {
                Some(ClientEvent::ToolListChanged(_)) => return,
                Some(_) => continue,
                None => panic!("bob's stream ended"),
            }
        }
    })
    .await;
    alice.close().await;
    bob.close().await;
    rig.close();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_modern_upstreams_resource_updates_come_through_each_subscribers_own_stream() {
    // A 2026-07-28 upstream has no resources/subscribe: each subscription
    // is a listen stream on the subscriber's own connection.
    let rig = Rig::start_speaking(Speaks::All, exchange_auth(None)).await;
    let (alice, mut alice_events, bob, mut bob_stream) = alice_and_bob(&rig).await;
    rig.server.notify_resource_updated("mem://doc");
    let seen = until_updated(&mut alice_events, "up+mem://doc").await;
    assert_eq!(updates_of(&seen, "up+mem://doc"), 0);
    listened_until_updated(&mut bob_stream, "up+mem://doc").await;
    rig.server.notify_resource_updated("mem://other");
    let seen = until_updated(&mut alice_events, "up+mem://other").await;
    assert_eq!(
        updates_of(&seen, "up+mem://doc"),
        0,
        "alice heard of the doc once, not again through bob's connection"
    );

    // Alice ends her subscription to the doc: her updates of it stop, Bob's
    // go on.
    bounded("alice unsubscribes", alice.unsubscribe("up+mem://doc"))
        .await
        .expect("unsubscribed");
    rig.server.notify_resource_updated("mem://doc");
    listened_until_updated(&mut bob_stream, "up+mem://doc").await;
    rig.server.notify_resource_updated("mem://other");
    let seen = until_updated(&mut alice_events, "up+mem://other").await;
    assert_eq!(updates_of(&seen, "up+mem://doc"), 0, "{seen:?}");
    alice.close().await;
    bob.close().await;
    rig.close();
}

/// The caller's current token, sent with every request; the test swaps it
/// as a client refreshing its token would.
struct Refreshing(Arc<Mutex<String>>);

impl HttpAuth for Refreshing {
    async fn authorize(&self, _: &Method, _: &Uri, headers: &mut HeaderMap) -> Result<(), String> {
        let value = format!("Bearer {}", self.0.lock().unwrap());
        headers.insert("authorization", value.parse().map_err(|_| "bad token")?);
        Ok(())
    }

    async fn challenge(&self, _: &Uri, _: StatusCode, _: &HeaderMap) -> ChallengeOutcome {
        ChallengeOutcome::Pass
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unsubscribe_after_the_callers_token_was_refreshed_ends_the_subscription() {
    let rig = Rig::start_speaking(Speaks::LegacyOnly, exchange_auth(None)).await;
    let token = Arc::new(Mutex::new(rig.token("alice", &[])));
    let alice = rig
        .client_authorized_by(Arc::new(Refreshing(token.clone())))
        .await;
    let mut events = alice.events();
    subscribe_to_both(&alice).await;
    // Alice's token is refreshed: the same subject, a new token, so the
    // proxy knows her by another caller key from now on.
    *token.lock().unwrap() = rig.token("alice", &["https://refreshed.example"]);
    bounded("alice unsubscribes", alice.unsubscribe("up+mem://doc"))
        .await
        .expect("unsubscribed");
    // The doc's update, then the other's, come on the connection her first
    // token opened: she hears only of the one she is still subscribed to.
    rig.server.notify_resource_updated("mem://doc");
    rig.server.notify_resource_updated("mem://other");
    let seen = until_updated(&mut events, "up+mem://other").await;
    assert_eq!(
        updates_of(&seen, "up+mem://doc"),
        0,
        "the subscription made under the old token ended"
    );
    alice.close().await;
    rig.close();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_callers_lost_connection_is_made_again_with_its_subscriptions() {
    let rig = Rig::start_speaking(Speaks::LegacyOnly, exchange_auth(None)).await;
    let (alice, mut events) = alice_subscribed_to_both(&rig, &rig.token("alice", &[])).await;
    rig.forget_handled().await;
    // The upstream restarts and forgets its sessions: the proxy's session
    // for Alice is lost with her two subscriptions. Alice sends nothing;
    // the proxy makes her connection again and subscribes once more.
    rig.restart_upstream().await;
    rig.handled("resources/subscribe", 2).await;
    rig.server.notify_resource_updated("mem://doc");
    let seen = until_updated(&mut events, "up+mem://doc").await;
    assert_eq!(updates_of(&seen, "up+mem://other"), 0, "{seen:?}");
    assert_eq!(rig.aggregator.caller_connections("up"), 1);
    alice.close().await;
    rig.close();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_callers_lost_listen_streams_are_opened_again_on_a_modern_upstream() {
    // A 2026-07-28 upstream keeps no session: its restart shows as the end
    // of the caller's list stream and of each subscription's stream.
    let rig = Rig::start_speaking(Speaks::All, exchange_auth(None)).await;
    let bob = rig.client_speaking(&rig.token("bob", &[]), None).await;
    let filter: SubscriptionFilter =
        serde_json::from_value(json!({"resourceSubscriptions": ["up+mem://doc"]})).unwrap();
    let mut stream = bounded("bob listens", bob.listen(filter))
        .await
        .expect("listens");
    rig.restart_upstream().await;
    assert!(
        bounded(
            "bob's connection made again",
            rig.aggregator.wait_callers_restored("up", 1)
        )
        .await
    );
    rig.server.notify_resource_updated("mem://doc");
    listened_until_updated(&mut stream, "up+mem://doc").await;
    bob.close().await;
    rig.close();
}
