//! The contract every [`Bus`] must meet, written once and run against each
//! implementation ([`LocalBus`](super::LocalBus) here; a networked bus in
//! another crate calls [`run`] from its own tests).
//!
//! The checks panic on the first broken rule. Waiting for a delivery is
//! bounded by an explicit deadline (5 s), so a lost message fails the check
//! instead of hanging it. Absence is checked without waiting: a marker is
//! published after the message that must not arrive, and the marker must be
//! the next thing received.

use std::time::Duration;

use bytes::Bytes;

use super::bus::{Bus, BusSubscription};

const DEADLINE: Duration = Duration::from_secs(5);

/// The next message of `sub`, or a panic naming `what` after the deadline.
pub async fn next(sub: &mut BusSubscription, what: &str) -> Bytes {
    match tokio::time::timeout(DEADLINE, sub.recv()).await {
        Ok(Some(b)) => b,
        Ok(None) => panic!("{what}: the subscription ended"),
        Err(_) => panic!("{what}: nothing delivered within {DEADLINE:?}"),
    }
}

/// Runs every check. Topics are prefixed `contract/`.
pub async fn run<B: Bus + ?Sized>(bus: &B) {
    delivers(bus).await;
    fans_out(bus).await;
    topics_are_separate(bus).await;
    keeps_order(bus).await;
    unsubscribes_on_drop(bus).await;
    opaque_payloads(bus).await;
}

/// A message published after `subscribe` returned reaches the subscription,
/// the publisher's own included; publishing to a topic nobody listens on is
/// not an error.
pub async fn delivers<B: Bus + ?Sized>(bus: &B) {
    bus.publish("contract/nobody", Bytes::from_static(b"x"))
        .await
        .expect("publish to a topic without subscribers");
    let mut sub = bus.subscribe("contract/one").await.expect("subscribe");
    bus.publish("contract/one", Bytes::from_static(b"hello"))
        .await
        .expect("publish");
    assert_eq!(
        next(&mut sub, "delivers").await,
        Bytes::from_static(b"hello")
    );
}

/// Every subscription of a topic gets each message exactly once.
pub async fn fans_out<B: Bus + ?Sized>(bus: &B) {
    let mut a = bus.subscribe("contract/fan").await.expect("subscribe");
    let mut b = bus.subscribe("contract/fan").await.expect("subscribe");
    bus.publish("contract/fan", Bytes::from_static(b"1"))
        .await
        .expect("publish");
    bus.publish("contract/fan", Bytes::from_static(b"2"))
        .await
        .expect("publish");
    for (sub, name) in [(&mut a, "first"), (&mut b, "second")] {
        assert_eq!(
            next(sub, name).await,
            Bytes::from_static(b"1"),
            "{name} subscription"
        );
        assert_eq!(
            next(sub, name).await,
            Bytes::from_static(b"2"),
            "{name} subscription, once each"
        );
    }
}

/// A subscription gets only its topic's messages (no prefix matching).
pub async fn topics_are_separate<B: Bus + ?Sized>(bus: &B) {
    let mut sub = bus.subscribe("contract/sep").await.expect("subscribe");
    bus.publish("contract/sep/child", Bytes::from_static(b"wrong"))
        .await
        .expect("publish");
    bus.publish("contract/se", Bytes::from_static(b"wrong"))
        .await
        .expect("publish");
    bus.publish("contract/other", Bytes::from_static(b"wrong"))
        .await
        .expect("publish");
    bus.publish("contract/sep", Bytes::from_static(b"marker"))
        .await
        .expect("publish");
    assert_eq!(
        next(&mut sub, "topics").await,
        Bytes::from_static(b"marker"),
        "a message of another topic was delivered"
    );
}

/// Messages from one publisher arrive in the order they were published.
pub async fn keeps_order<B: Bus + ?Sized>(bus: &B) {
    let mut sub = bus.subscribe("contract/order").await.expect("subscribe");
    for i in 0..200u32 {
        bus.publish("contract/order", Bytes::from(i.to_be_bytes().to_vec()))
            .await
            .expect("publish");
    }
    for i in 0..200u32 {
        let got = next(&mut sub, "order").await;
        assert_eq!(
            got.as_ref(),
            i.to_be_bytes(),
            "message {i} out of order or lost"
        );
    }
}

/// Dropping a subscription unsubscribes it; the topic's other subscriptions
/// and later subscriptions go on working. (A message published just before a
/// subscription was made may still reach it: delivery is promised only for
/// what is published after `subscribe` returns.)
pub async fn unsubscribes_on_drop<B: Bus + ?Sized>(bus: &B) {
    let gone = bus.subscribe("contract/drop").await.expect("subscribe");
    let mut stays = bus.subscribe("contract/drop").await.expect("subscribe");
    drop(gone);
    bus.publish("contract/drop", Bytes::from_static(b"a"))
        .await
        .expect("publish after a drop");
    assert_eq!(next(&mut stays, "drop").await, Bytes::from_static(b"a"));
    drop(stays);
    bus.publish("contract/drop", Bytes::from_static(b"b"))
        .await
        .expect("publish with no one left");
    let mut again = bus
        .subscribe("contract/drop")
        .await
        .expect("subscribe again");
    bus.publish("contract/drop", Bytes::from_static(b"c"))
        .await
        .expect("publish");
    // "b" was published before this subscription: a networked bus may still
    // have it in flight on a connection subscribed to the topic (the drop's
    // unsubscription travels too), so it may arrive, once, before "c".
    let mut got = next(&mut again, "resubscribe").await;
    if got == Bytes::from_static(b"b") {
        got = next(&mut again, "resubscribe").await;
    }
    assert_eq!(
        got,
        Bytes::from_static(b"c"),
        "a new subscription gets what is published after it"
    );
}

/// Payloads are bytes: empty, binary, large; topics may hold `:` `/` `.` `-`.
pub async fn opaque_payloads<B: Bus + ?Sized>(bus: &B) {
    let topic = "contract/session:AbC-12.x/events";
    let mut sub = bus.subscribe(topic).await.expect("subscribe");
    let big: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    let payloads = [
        Bytes::new(),
        Bytes::from_static(&[0, 255, 10, 13, 0xC3, 0x28]),
        Bytes::from(big),
    ];
    for p in &payloads {
        bus.publish(topic, p.clone()).await.expect("publish");
    }
    for p in &payloads {
        assert_eq!(
            &next(&mut sub, "payloads").await,
            p,
            "payload changed in transit"
        );
    }
}
