//! Notifications a connection receives are recorded like its requests, in
//! both roles: a `SERVER` span named for the method and a point of
//! `mcp.server.operation.duration`, with `mcp.method.name`,
//! `mcp.protocol.version` and the transport's attributes, no request id and
//! no response status; one a layer below drops carries `error.type`.
//!
//! Each side has an outermost layer reporting each notification once the
//! rest of its stack (the telemetry layer included) is done with it, so the
//! test waits on those reports, never on time.

use std::collections::BTreeMap;

use opentelemetry::trace::{SpanKind, Status};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::json;
use tessera_client::Client;
use tessera_server::{RequestContext, Server, tool};
use tessera_telemetry::Telemetry;
use tessera_testkit::deadline::bounded;
use tessera_testkit::layers::{RefuseNotification, Seen, Tap};
use tessera_testkit::pair::in_process;
use tessera_types::ProtocolVersion;
use tokio::sync::mpsc;

/// The notification the server's stack drops.
const DROPPED: &str = "notifications/roots/list_changed";
/// The notification the server's tool sends the client.
const TO_CLIENT: &str = "notifications/tessera/said";

fn attr(span: &SpanData, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| kv.value.to_string())
}

/// The one span named `name`, of kind `SERVER`.
fn one<'a>(spans: &'a [SpanData], name: &str) -> &'a SpanData {
    let found: Vec<&SpanData> = spans.iter().filter(|s| s.name == name).collect();
    assert_eq!(found.len(), 1, "one span {name}: {spans:#?}");
    assert_eq!(found[0].span_kind, SpanKind::Server, "{name}");
    found[0]
}

/// Waits until `done` reported each of the notifications `methods` (in any
/// order).
async fn wait_for(done: &mut mpsc::UnboundedReceiver<Seen>, methods: &[&str]) {
    let mut left: Vec<&str> = methods.to_vec();
    while !left.is_empty() {
        let seen = bounded("a notification taken", done.recv())
            .await
            .expect("the layer is still there");
        let Seen::Notification(m) = seen else {
            continue;
        };
        if let Some(i) = left.iter().position(|l| *l == m) {
            left.remove(i);
        }
    }
}

/// The points of `mcp.server.operation.duration`, each as its sorted
/// attributes and its count, for the notification methods only.
fn notification_points(
    meter: &SdkMeterProvider,
    metrics: &InMemoryMetricExporter,
) -> BTreeMap<Vec<(String, String)>, u64> {
    meter.force_flush().unwrap();
    let mut points = BTreeMap::new();
    let finished = metrics.get_finished_metrics().unwrap();
    // Each export holds the running totals: the last one is enough.
    let Some(rm) = finished.last() else {
        return points;
    };
    for sm in rm.scope_metrics() {
        for m in sm.metrics() {
            if m.name() != "mcp.server.operation.duration" {
                continue;
            }
            let AggregatedMetrics::F64(MetricData::Histogram(h)) = m.data() else {
                panic!("a histogram: {m:?}");
            };
            for p in h.data_points() {
                let mut attrs: Vec<(String, String)> = p
                    .attributes()
                    .map(|kv| (kv.key.to_string(), kv.value.to_string()))
                    .collect();
                attrs.sort();
                let method = attrs
                    .iter()
                    .find(|(k, _)| k == "mcp.method.name")
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default();
                if method.starts_with("notifications/") {
                    points.insert(attrs, p.count());
                }
            }
        }
    }
    points
}

fn kv(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    v.sort();
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn received_notifications_are_spans_and_duration_points_in_both_roles() {
    let spans = InMemorySpanExporter::default();
    let tracer = SdkTracerProvider::builder()
        .with_simple_exporter(spans.clone())
        .build();
    let metrics = InMemoryMetricExporter::default();
    let meter = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(metrics.clone()).build())
        .build();
    let telemetry = Telemetry::builder()
        .tracer_provider(&tracer)
        .meter_provider(&meter)
        .build();

    let (server_tx, mut server_done) = mpsc::unbounded_channel();
    let server = Server::builder()
        .name_version("notes", "1.0.0")
        .layer(Tap::once_done(server_tx))
        .middleware(|s| telemetry.install(s))
        .layer(RefuseNotification(DROPPED))
        .tool(
            tool("say")
                .description("Tells the client something")
                .handler(|ctx: RequestContext| async move {
                    let params = json!({"what": "hello"}).as_object().cloned();
                    ctx.peer()
                        .notify(TO_CLIENT, params, None)
                        .map(|()| "said".to_owned())
                        .map_err(|e| e.to_string())
                }),
        )
        .build()
        .unwrap();
    let (client_tx, mut client_done) = mpsc::unbounded_channel();
    let client = in_process(
        &server,
        Client::builder("notes-client", "1.0")
            .protocol_version(ProtocolVersion::V2025_11_25)
            .layer(Tap::once_done(client_tx))
            .layer(telemetry.layer()),
    )
    .await;

    // The server takes the handshake's `notifications/initialized` (the
    // core acts on it, the stack still sees it) and drops the roots change.
    client
        .peer()
        .notify(DROPPED, None, None)
        .expect("the connection is open");
    wait_for(&mut server_done, &["notifications/initialized", DROPPED]).await;
    // The client takes the server's notification.
    let r = client.call_tool("say", json!({})).await.unwrap();
    assert_ne!(r.is_error, Some(true));
    wait_for(&mut client_done, &[TO_CLIENT]).await;

    let finished = spans.get_finished_spans().unwrap();
    let notes: Vec<&SpanData> = finished
        .iter()
        .filter(|s| s.name.starts_with("notifications/"))
        .collect();
    assert_eq!(notes.len(), 3, "{notes:#?}");
    let initialized = one(&finished, "notifications/initialized");
    let dropped = one(&finished, DROPPED);
    let told = one(&finished, TO_CLIENT);
    for (s, method) in [
        (initialized, "notifications/initialized"),
        (dropped, DROPPED),
        (told, TO_CLIENT),
    ] {
        assert_eq!(attr(s, "mcp.method.name").as_deref(), Some(method));
        assert_eq!(
            attr(s, "mcp.protocol.version").as_deref(),
            Some("2025-11-25"),
            "{s:#?}"
        );
        assert_eq!(attr(s, "network.transport").as_deref(), Some("pipe"));
        assert_eq!(attr(s, "jsonrpc.request.id"), None, "no id: {s:#?}");
        assert_eq!(attr(s, "rpc.response.status_code"), None, "no response");
    }
    for s in [initialized, told] {
        assert_eq!(attr(s, "error.type"), None, "{s:#?}");
        assert_eq!(s.status, Status::Unset);
    }
    assert_eq!(attr(dropped, "error.type").as_deref(), Some("-32600"));
    assert!(
        matches!(&dropped.status, Status::Error { description } if description.contains("not this notification")),
        "{:?}",
        dropped.status
    );
    // The server's notification ran inside the call's handler, but the
    // client records it on its own: no `_meta` carried a trace context.
    assert_eq!(told.parent_span_id, opentelemetry::trace::SpanId::INVALID);

    let common = [
        ("mcp.protocol.version", "2025-11-25"),
        ("network.transport", "pipe"),
    ];
    let with = |extra: &[(&str, &str)]| {
        let mut all = common.to_vec();
        all.extend_from_slice(extra);
        kv(&all)
    };
    let expected: BTreeMap<Vec<(String, String)>, u64> = [
        (with(&[("mcp.method.name", "notifications/initialized")]), 1),
        (
            with(&[("mcp.method.name", DROPPED), ("error.type", "-32600")]),
            1,
        ),
        (with(&[("mcp.method.name", TO_CLIENT)]), 1),
    ]
    .into_iter()
    .collect();
    assert_eq!(notification_points(&meter, &metrics), expected);
    client.close().await;
}
