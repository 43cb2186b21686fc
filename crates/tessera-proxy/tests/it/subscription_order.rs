//! The order of an aggregator's exchanges with an upstream about one
//! resource subscription: each `resources/subscribe` and
//! `resources/unsubscribe` waits for the one before it, so that the
//! upstream ends up holding the subscription exactly when a session here
//! does; an upstream refusing to unsubscribe does not keep the session
//! subscribed; and a subscription being made across a reload that stops
//! serving its URI is refused, naming the reload.
//!
//! The upstream (legacy-only, `resources/subscribe`) holds the first
//! request of one method at a gate the test opens.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tessera_proxy::{Aggregator, UpstreamOptions};
use tessera_runtime::Request;
use tessera_runtime::middleware::{McpLayer, Next, from_fn};
use tessera_server::Server;
use tessera_testkit::bounded;
use tessera_types::{ErrorObject, ProtocolVersion, methods};
use tokio::sync::{Semaphore, mpsc};
use tokio_util::sync::CancellationToken;

use crate::reload_subscriptions::{client, entry, serve_layered};
use crate::unprefixed::until_updated;

/// What the upstream does to the requests it receives.
#[derive(Clone)]
struct Upstream {
    /// Told the method of each request as it arrives.
    arrived: mpsc::UnboundedSender<String>,
    /// The first request of this method waits for a permit of `gate`.
    hold: &'static str,
    gate: Arc<Semaphore>,
    held: Arc<AtomicBool>,
    /// The held request is refused once let through.
    refuse_held: bool,
    /// Every request of this method is refused.
    refuse: Option<&'static str>,
}

impl Upstream {
    fn layer(self) -> impl McpLayer {
        from_fn(move |request: Request, next: Next| {
            let u = self.clone();
            async move {
                let method = request.method.clone();
                let _ = u.arrived.send(method.clone());
                if method == u.hold && !u.held.swap(true, Ordering::SeqCst) {
                    u.gate.acquire().await.expect("the gate stays").forget();
                    if u.refuse_held {
                        return Err(ErrorObject::internal("refused at the gate"));
                    }
                }
                if u.refuse == Some(method.as_str()) {
                    return Err(ErrorObject::internal(format!("no {method} here")));
                }
                next.run(request).await
            }
        })
    }
}

/// A running gated upstream behind an aggregator showing it as `a`.
struct Rig {
    arrived: mpsc::UnboundedReceiver<String>,
    gate: Arc<Semaphore>,
    server: Server,
    url: String,
    aggregator: Aggregator,
    proxy: String,
    stop: CancellationToken,
}

impl Rig {
    /// The upstream holds the first `hold`, refusing it then if
    /// `refuse_held`, and refuses every `refuse`.
    async fn start(hold: &'static str, refuse_held: bool, refuse: Option<&'static str>) -> Rig {
        let stop = CancellationToken::new();
        let (tx, arrived) = mpsc::unbounded_channel();
        let gate = Arc::new(Semaphore::new(0));
        let upstream = Upstream {
            arrived: tx,
            hold,
            gate: gate.clone(),
            held: Arc::default(),
            refuse_held,
            refuse,
        };
        let (url, server) = serve_layered(&stop, upstream.layer()).await;
        let aggregator =
            Aggregator::start(vec![entry(&url, true)], UpstreamOptions::default()).expect("starts");
        assert!(bounded("a connects", aggregator.wait_connected("a", true)).await);
        let proxy = crate::bridge::serve(aggregator.clone(), &stop).await;
        Rig {
            arrived,
            gate,
            server,
            url,
            aggregator,
            proxy,
            stop,
        }
    }

    /// Waits until a request of `method` arrives upstream (others skipped).
    async fn arrives(&mut self, method: &str) {
        bounded(method, async {
            loop {
                match self.arrived.recv().await {
                    Some(m) if m == method => return,
                    Some(_) => {}
                    None => panic!("the upstream stopped before {method}"),
                }
            }
        })
        .await
    }

    /// Waits until `n` sessions here hold (or are being given) `uri`.
    async fn counted(&self, uri: &str, n: usize) {
        assert!(
            bounded(
                "the subscribers counted",
                self.aggregator.wait_subscribers(uri, n)
            )
            .await
        );
    }

    async fn session(&self) -> tessera_client::Client {
        client(&self.proxy, ProtocolVersion::V2025_11_25).await
    }

    fn close(self) {
        self.aggregator.close();
        self.stop.cancel();
    }
}

const DOC: &str = "a+mem://doc";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscribe_waits_for_the_last_sessions_unsubscribe_in_flight() {
    let mut rig = Rig::start(methods::RESOURCES_UNSUBSCRIBE, false, None).await;
    let alice = rig.session().await;
    let bob = rig.session().await;
    let mut updates = bob.events();
    bounded("alice subscribes", alice.subscribe(DOC))
        .await
        .expect("subscribed");
    rig.arrives(methods::RESOURCES_SUBSCRIBE).await;

    // Alice leaves, the last here: the upstream is asked to unsubscribe,
    // and holds the request.
    let leaving = {
        let alice = alice.clone();
        tokio::spawn(async move { alice.unsubscribe(DOC).await })
    };
    rig.arrives(methods::RESOURCES_UNSUBSCRIBE).await;
    // Bob subscribes meanwhile: counted here, asked upstream only once the
    // unsubscribe is answered.
    let joining = {
        let bob = bob.clone();
        tokio::spawn(async move { bob.subscribe(DOC).await })
    };
    // The gate opens once Bob's subscribe either waits its turn here or
    // reached the upstream ahead of Alice's unsubscribe (and was then
    // undone by it).
    let aggregator = rig.aggregator.clone();
    let queued = bounded("bob's subscribe waits or arrives", async {
        tokio::select! {
            q = aggregator.wait_queued(DOC, 1) => q,
            () = rig.arrives(methods::RESOURCES_SUBSCRIBE) => false,
        }
    })
    .await;
    assert!(queued, "bob's subscribe overtook alice's unsubscribe");
    assert_eq!(rig.aggregator.subscribers(DOC), 1);
    rig.gate.add_permits(1);
    bounded("alice's unsubscribe", leaving)
        .await
        .unwrap()
        .expect("unsubscribed");
    bounded("bob's subscribe", joining)
        .await
        .unwrap()
        .expect("subscribed");
    rig.arrives(methods::RESOURCES_SUBSCRIBE).await;

    // The upstream holds the subscription Bob believes in.
    rig.server.notify_resource_updated("mem://doc");
    until_updated(&mut updates, DOC).await;
    alice.close().await;
    bob.close().await;
    rig.close();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_subscriber_is_answered_once_the_upstream_holds_the_subscription() {
    // The first subscribe is held, then refused.
    let mut rig = Rig::start(methods::RESOURCES_SUBSCRIBE, true, None).await;
    let alice = rig.session().await;
    let bob = rig.session().await;
    let mut updates = bob.events();
    let first = {
        let alice = alice.clone();
        tokio::spawn(async move { alice.subscribe(DOC).await })
    };
    rig.arrives(methods::RESOURCES_SUBSCRIBE).await;
    let second = {
        let bob = bob.clone();
        tokio::spawn(async move { bob.subscribe(DOC).await })
    };
    rig.counted(DOC, 2).await;
    rig.gate.add_permits(1);
    bounded("alice's subscribe", first)
        .await
        .unwrap()
        .expect_err("refused upstream");
    // Bob is not answered on the strength of Alice's request: the
    // upstream is asked again, for him, and accepts.
    bounded("bob's subscribe", second)
        .await
        .unwrap()
        .expect("subscribed");
    rig.arrives(methods::RESOURCES_SUBSCRIBE).await;
    assert_eq!(rig.aggregator.subscribers(DOC), 1);
    rig.server.notify_resource_updated("mem://doc");
    until_updated(&mut updates, DOC).await;
    alice.close().await;
    bob.close().await;
    rig.close();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unsubscribe_the_upstream_refuses_still_ends_the_sessions_subscription() {
    // Nothing held; every unsubscribe refused upstream.
    let mut rig = Rig::start("none", false, Some(methods::RESOURCES_UNSUBSCRIBE)).await;
    let alice = rig.session().await;
    let mut updates = alice.events();
    bounded("subscribes", alice.subscribe(DOC))
        .await
        .expect("subscribed");
    rig.arrives(methods::RESOURCES_SUBSCRIBE).await;
    // Answered: the proxy tells the session of the resource no more,
    // whatever the upstream goes on holding.
    bounded("unsubscribes", alice.unsubscribe(DOC))
        .await
        .expect("unsubscribed here");
    rig.arrives(methods::RESOURCES_UNSUBSCRIBE).await;
    assert_eq!(rig.aggregator.subscribers(DOC), 0);
    // Not counted on: subscribing again asks the upstream again.
    bounded("subscribes again", alice.subscribe(DOC))
        .await
        .expect("subscribed");
    rig.arrives(methods::RESOURCES_SUBSCRIBE).await;
    rig.server.notify_resource_updated("mem://doc");
    until_updated(&mut updates, DOC).await;
    alice.close().await;
    rig.close();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscribe_held_across_a_reload_that_renames_its_uri_is_refused_naming_it() {
    let mut rig = Rig::start(methods::RESOURCES_SUBSCRIBE, false, None).await;
    let alice = rig.session().await;
    let mut updates = alice.events();
    let subscribing = {
        let alice = alice.clone();
        tokio::spawn(async move { alice.subscribe(DOC).await })
    };
    rig.arrives(methods::RESOURCES_SUBSCRIBE).await;
    // Shown unprefixed now: `a+mem://doc` names nothing.
    let said = rig
        .aggregator
        .reconfigure(vec![entry(&rig.url, false)], |_| true)
        .expect("reloads");
    assert_eq!(said.changed, ["a"]);
    assert!(bounded("a connects again", rig.aggregator.wait_connected("a", true)).await);
    rig.gate.add_permits(1);
    let e = bounded("the held subscribe", subscribing)
        .await
        .unwrap()
        .expect_err("its URI is no longer served");
    let remote = e.remote().expect("a JSON-RPC error");
    assert_eq!(remote.code, -32602, "{e}");
    assert!(
        remote
            .message
            .contains("\"a+mem://doc\" is no longer served")
            && remote.message.contains("configuration changed"),
        "{e}"
    );
    assert_eq!(rig.aggregator.subscribers(DOC), 0);
    // Under the name served now, the subscription is made and served.
    bounded("subscribes by the new name", alice.subscribe("mem://doc"))
        .await
        .expect("subscribed");
    rig.server.notify_resource_updated("mem://doc");
    until_updated(&mut updates, "mem://doc").await;
    alice.close().await;
    rig.close();
}
