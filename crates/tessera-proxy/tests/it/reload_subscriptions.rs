//! Resource subscriptions across a reload that changes the names an
//! upstream is shown by (prefixed, then `"prefix": false`, then prefixed
//! again): the subscriptions made under the old URIs end (a legacy session
//! hears a last update of the URI, a listen stream ends gracefully), and
//! none is made upstream again for nobody.

use serde_json::json;
use tessera_client::{Client, ClientEvent, ListenEnd};
use tessera_http::HttpClientTransport;
use tessera_proto::EngineConfig;
use tessera_proxy::{Aggregator, UpstreamConfig, UpstreamOptions, UpstreamSpec};
use tessera_runtime::middleware::McpLayer;
use tessera_server::{Server, resource};
use tessera_testkit::bounded;
use tessera_testkit::layers::{Seen, Tap};
use tessera_types::{ProtocolVersion, SubscriptionFilter, methods};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::unprefixed::{until_streamed, until_updated};

/// Serves a legacy-only server with resource `mem://doc` (subscribed to
/// with `resources/subscribe`), telling `seen` of each message as it
/// arrives; its URL and the server (to tell of updates).
pub(crate) async fn serve(
    stop: &CancellationToken,
    seen: mpsc::UnboundedSender<Seen>,
) -> (String, Server) {
    serve_layered(stop, Tap::on_arrival(seen)).await
}

/// [`serve`], with `layer` over the server's handlers instead of the tap.
pub(crate) async fn serve_layered(
    stop: &CancellationToken,
    layer: impl McpLayer,
) -> (String, Server) {
    let server = Server::builder()
        .name_version("docs", "1.0.0")
        .resource(resource("mem://doc", "doc").handler(|| async { "a doc" }))
        .middleware(|s| s.layer(layer))
        .build()
        .expect("builds");
    let legacy: Vec<ProtocolVersion> = ProtocolVersion::ALL
        .iter()
        .copied()
        .filter(|v| *v < ProtocolVersion::V2026_07_28)
        .collect();
    let s = server.clone();
    let factory = move || -> (EngineConfig, Server) {
        (s.engine_config().with_versions(legacy.clone()), s.clone())
    };
    (crate::bridge::serve(factory, stop).await, server)
}

pub(crate) fn entry(url: &str, prefix: bool) -> UpstreamConfig {
    let mut e = UpstreamConfig::new("a", UpstreamSpec::http(url, Default::default()));
    e.prefix = prefix;
    e
}

pub(crate) async fn client(url: &str, version: ProtocolVersion) -> Client {
    bounded(
        "connecting",
        Client::builder("reload-test", "1.0")
            .protocol_version(version)
            .connect_transport(HttpClientTransport::new(url).expect("transport")),
    )
    .await
    .expect("connects")
}

/// Makes `a` the only upstream, shown as `prefix` says, with `unchanged`
/// saying whether its entry is the same, and waits for it.
async fn reload(agg: &Aggregator, url: &str, prefix: bool, unchanged: bool) {
    let said = agg
        .reconfigure(vec![entry(url, prefix)], |_| unchanged)
        .expect("reloads");
    // Its names change, so it is connected again whatever `unchanged` says.
    assert_eq!(said.changed, ["a"]);
    assert!(bounded("a connects again", agg.wait_connected("a", true)).await);
}

/// How many `resources/subscribe` the upstream received since the last look.
fn subscribes(seen: &mut mpsc::UnboundedReceiver<Seen>) -> usize {
    std::iter::from_fn(|| seen.try_recv().ok())
        .filter(|s| *s == Seen::Request(methods::RESOURCES_SUBSCRIBE.into()))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscriptions_under_names_a_reload_changed_end_and_are_not_made_again() {
    let stop = CancellationToken::new();
    let (tx, mut seen) = mpsc::unbounded_channel();
    let (url, server) = serve(&stop, tx).await;
    let agg =
        Aggregator::start(vec![entry(&url, true)], UpstreamOptions::default()).expect("starts");
    assert!(bounded("a connects", agg.wait_connected("a", true)).await);
    let proxy = crate::bridge::serve(agg.clone(), &stop).await;

    // A legacy session subscribes, a 2026-07-28 one listens: one
    // subscription upstream.
    let legacy = client(&proxy, ProtocolVersion::V2025_11_25).await;
    let mut events = legacy.events();
    bounded("subscribes", legacy.subscribe("a+mem://doc"))
        .await
        .expect("subscribed");
    let modern = client(&proxy, ProtocolVersion::V2026_07_28).await;
    let filter: SubscriptionFilter = serde_json::from_value(
        json!({"toolsListChanged": true, "resourceSubscriptions": ["a+mem://doc"]}),
    )
    .unwrap();
    let mut stream = bounded("listens", modern.listen(filter))
        .await
        .expect("listens");
    assert_eq!(
        stream.acknowledged().resource_subscriptions.as_deref(),
        Some(&["a+mem://doc".to_owned()][..])
    );
    assert_eq!(subscribes(&mut seen), 1);
    server.notify_resource_updated("mem://doc");
    until_updated(&mut events, "a+mem://doc").await;
    until_streamed(&mut stream, "a+mem://doc").await;

    // Shown unprefixed: `a+mem://doc` names nothing now. The session hears
    // a last update of it (reading it again says it is gone), the stream
    // ends gracefully (listening again, the acknowledgement says what is
    // served), and nothing is subscribed to on the new connection.
    reload(&agg, &url, false, false).await;
    until_updated(&mut events, "a+mem://doc").await;
    bounded("reads", legacy.read_resource("a+mem://doc"))
        .await
        .expect_err("gone");
    bounded("the stream ends", async {
        while let Some(event) = stream.recv().await {
            assert!(
                !matches!(event, ClientEvent::ResourceUpdated(_)),
                "{event:?}"
            );
        }
    })
    .await;
    assert_eq!(stream.end(), Some(ListenEnd::Graceful));
    assert_eq!(subscribes(&mut seen), 0);

    // Prefixed again (by a caller that says the entry is unchanged): the
    // old subscriptions are not made again for nobody; subscribing anew
    // works.
    reload(&agg, &url, true, true).await;
    assert_eq!(subscribes(&mut seen), 0, "made again for nobody");
    bounded("subscribes again", legacy.subscribe("a+mem://doc"))
        .await
        .expect("subscribed");
    assert_eq!(subscribes(&mut seen), 1);
    server.notify_resource_updated("mem://doc");
    until_updated(&mut events, "a+mem://doc").await;

    legacy.close().await;
    modern.close().await;
    agg.close();
    stop.cancel();
}
