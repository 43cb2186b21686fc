//! Notifications a connection receives are recorded like its requests, in
//! both roles: a `SERVER` span named for the method and a point of
//! `mcp.server.operation.duration`, with `mcp.method.name`,
//! `mcp.protocol.version` and the transport's attributes, no request id and
//! no response status; one a layer below drops carries `error.type`. Those
//! it sends are `CLIENT` spans and points of `mcp.client.operation.duration`,
//! whose context travels in `params._meta` to the receiver's span.
//!
//! Each side has an outermost layer reporting each notification once the
//! rest of its stack (the telemetry layer included) is done with it, so the
//! test waits on those reports, never on time.

use std::collections::BTreeMap;

use opentelemetry::trace::{SpanKind, Status};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, SdkMeterProvider};
use opentelemetry_sdk::trace::SpanData;
use serde_json::json;
use tessera_client::Client;
use tessera_server::{RequestContext, Server, tool};
use tessera_testkit::deadline::bounded;
use tessera_testkit::layers::{RefuseNotification, Seen, Tap};
use tessera_testkit::pair::in_process;

use crate::sinks::{attr, one};
use tessera_types::ProtocolVersion;
use tokio::sync::mpsc;

/// The notification the server's stack drops.
const DROPPED: &str = "notifications/roots/list_changed";
/// The notification the server's tool sends the client.
const TO_CLIENT: &str = "notifications/tessera/said";

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

/// The points of the histogram `name`, each as its sorted attributes and
/// its count, for the notification methods only.
fn notification_points(
    name: &str,
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
            if m.name() != name {
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
async fn sent_and_received_notifications_are_spans_and_duration_points_in_both_roles() {
    let crate::sinks::Sinks {
        spans,
        metrics,
        meter,
        telemetry,
        ..
    } = crate::sinks::in_memory();

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
            .middleware(|s| telemetry.install(s)),
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
    let received: Vec<&SpanData> = finished
        .iter()
        .filter(|s| s.name.starts_with("notifications/") && s.span_kind == SpanKind::Server)
        .collect();
    assert_eq!(received.len(), 3, "{received:#?}");
    let initialized = one(&finished, "notifications/initialized", SpanKind::Server);
    let dropped = one(&finished, DROPPED, SpanKind::Server);
    let told = one(&finished, TO_CLIENT, SpanKind::Server);
    // What was sent through `Peer::notify`: the roots change (client) and
    // the tool's notification (server). The handshake's
    // `notifications/initialized` is part of the `initialize` span.
    let sent: Vec<&SpanData> = finished
        .iter()
        .filter(|s| s.name.starts_with("notifications/") && s.span_kind == SpanKind::Client)
        .collect();
    assert_eq!(sent.len(), 2, "{sent:#?}");
    let sent_dropped = one(&finished, DROPPED, SpanKind::Client);
    let sent_told = one(&finished, TO_CLIENT, SpanKind::Client);
    for (s, method) in [
        (initialized, "notifications/initialized"),
        (dropped, DROPPED),
        (told, TO_CLIENT),
        (sent_dropped, DROPPED),
        (sent_told, TO_CLIENT),
    ] {
        assert_eq!(attr(s, "mcp.method.name").as_deref(), Some(method));
        assert_eq!(
            attr(s, "mcp.protocol.version").as_deref(),
            Some("2025-11-25"),
            "{s:#?}"
        );
        assert_eq!(attr(s, "jsonrpc.request.id"), None, "no id: {s:#?}");
        assert_eq!(attr(s, "rpc.response.status_code"), None, "no response");
    }
    // The receiving side names the transport it took the message from.
    for s in [initialized, dropped, told] {
        assert_eq!(attr(s, "network.transport").as_deref(), Some("pipe"));
    }
    for s in [initialized, told, sent_dropped, sent_told] {
        assert_eq!(attr(s, "error.type"), None, "{s:#?}");
        assert_eq!(s.status, Status::Unset);
    }
    assert_eq!(attr(dropped, "error.type").as_deref(), Some("-32600"));
    assert!(
        matches!(&dropped.status, Status::Error { description } if description.contains("not this notification")),
        "{:?}",
        dropped.status
    );
    // Each received notification continues the sender's trace: its context
    // travelled in `_meta`. The server's notification was sent inside the
    // call's handler, so it belongs to the call's trace.
    assert_eq!(told.parent_span_id, sent_told.span_context.span_id());
    assert_eq!(dropped.parent_span_id, sent_dropped.span_context.span_id());
    let call = one(&finished, "tools/call say", SpanKind::Server);
    assert_eq!(sent_told.parent_span_id, call.span_context.span_id());
    assert_eq!(told.span_context.trace_id(), call.span_context.trace_id());

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
    assert_eq!(
        notification_points("mcp.server.operation.duration", &meter, &metrics),
        expected
    );
    // The sender's points: the in-process pipe gives no link to name.
    let sent = |method: &str| {
        kv(&[
            ("mcp.method.name", method),
            ("mcp.protocol.version", "2025-11-25"),
        ])
    };
    let expected: BTreeMap<Vec<(String, String)>, u64> = [(sent(DROPPED), 1), (sent(TO_CLIENT), 1)]
        .into_iter()
        .collect();
    assert_eq!(
        notification_points("mcp.client.operation.duration", &meter, &metrics),
        expected
    );
    client.close().await;
}
