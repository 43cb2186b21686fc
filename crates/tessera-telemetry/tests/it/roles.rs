//! Both roles in one process, in-process over a duplex pipe: a tool call
//! whose handler asks the client's model (`sampling/createMessage`, a
//! server-to-client request) gives four spans in one trace — the client's
//! `CLIENT` span, the server's `SERVER` span under it, the server's
//! `CLIENT` span for the sampling request, and the client's `SERVER` span
//! under that — with `network.transport = pipe`; a legacy session's
//! duration is recorded on both sides when the connection ends. In
//! 2026-07-28 the same call is two multi round-trip rounds: two spans per
//! side, marked by the era mapping's `tessera.mrtr.*` attributes.

use opentelemetry::trace::SpanKind;
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
use opentelemetry_sdk::trace::SpanData;
use serde_json::json;
use tessera_client::Client;
use tessera_server::{RequestContext, Server, tool};
use tessera_telemetry::Telemetry;
use tessera_testkit::pair::in_process;

use crate::sinks::{attr, one};
use tessera_types::{
    CreateMessageRequestParams, CreateMessageResult, ErrorObject, ProtocolVersion, SamplingMessage,
};

async fn paris(_: CreateMessageRequestParams) -> Result<CreateMessageResult, ErrorObject> {
    Ok(CreateMessageResult::text("test-model", "Paris"))
}

/// Serves `server` in-process and connects a client speaking `version`
/// with a sampling handler and the telemetry layer.
async fn connect(server: &Server, telemetry: &Telemetry, version: ProtocolVersion) -> Client {
    in_process(
        server,
        Client::builder("roles-client", "1.0")
            .protocol_version(version)
            .sampling(paris)
            .middleware(|s| telemetry.install(s)),
    )
    .await
}

#[tokio::test(start_paused = true)]
async fn server_to_client_requests_are_spans_in_both_roles() {
    let crate::sinks::Sinks {
        spans,
        metrics,
        meter,
        telemetry,
        ..
    } = crate::sinks::in_memory();

    let server = Server::builder()
        .name_version("roles", "1.0.0")
        .middleware(|s| telemetry.install(s))
        .tool(tool("ask").description("Asks the client's model").handler(
            |ctx: RequestContext| async move {
                let params = CreateMessageRequestParams::new(
                    vec![SamplingMessage::user_text("capital of France?")],
                    10,
                );
                ctx.sample(params)
                    .await
                    .map(|_| "asked".to_owned())
                    .map_err(|e| e.to_string())
            },
        ))
        .build()
        .unwrap();
    let client = connect(&server, &telemetry, ProtocolVersion::V2025_11_25).await;
    let r = client.call_tool("ask", json!({})).await.unwrap();
    assert_ne!(r.is_error, Some(true));
    client.close().await;

    let finished = spans.get_finished_spans().unwrap();
    let call = one(&finished, "tools/call ask", SpanKind::Client);
    let served = one(&finished, "tools/call ask", SpanKind::Server);
    let ask = one(&finished, "sampling/createMessage", SpanKind::Client);
    let answered = one(&finished, "sampling/createMessage", SpanKind::Server);
    let trace = call.span_context.trace_id();
    for s in [served, ask, answered] {
        assert_eq!(s.span_context.trace_id(), trace, "{s:#?}");
    }
    assert_eq!(served.parent_span_id, call.span_context.span_id());
    assert_eq!(ask.parent_span_id, served.span_context.span_id());
    assert_eq!(answered.parent_span_id, ask.span_context.span_id());
    assert_eq!(attr(served, "network.transport").as_deref(), Some("pipe"));
    assert_eq!(
        attr(answered, "mcp.method.name").as_deref(),
        Some("sampling/createMessage")
    );
    assert_eq!(attr(served, "gen_ai.tool.name").as_deref(), Some("ask"));
    let init = one(&finished, "initialize", SpanKind::Client);
    assert_eq!(attr(init, "tessera.server.name").as_deref(), Some("roles"));

    // 2026-07-28: the sampling request is an input round of the call.
    spans.reset();
    let modern = connect(&server, &telemetry, ProtocolVersion::V2026_07_28).await;
    let r = modern.call_tool("ask", json!({})).await.unwrap();
    assert_ne!(r.is_error, Some(true));
    modern.close().await;
    let finished = spans.get_finished_spans().unwrap();
    let rounds = |kind: SpanKind| {
        let mut v: Vec<&SpanData> = finished
            .iter()
            .filter(|s| s.name == "tools/call ask" && s.span_kind == kind)
            .collect();
        v.sort_by_key(|s| s.start_time);
        v
    };
    let (sent, received) = (rounds(SpanKind::Client), rounds(SpanKind::Server));
    assert_eq!((sent.len(), received.len()), (2, 2), "{finished:#?}");
    assert_eq!(
        attr(sent[0], "tessera.mrtr.call"),
        attr(sent[1], "tessera.mrtr.call")
    );
    assert!(attr(sent[0], "tessera.mrtr.call").is_some());
    assert_eq!(attr(sent[0], "tessera.mrtr.round").as_deref(), Some("0"));
    assert_eq!(attr(sent[1], "tessera.mrtr.round").as_deref(), Some("1"));
    for side in [&sent, &received] {
        assert_eq!(
            attr(side[0], "tessera.mrtr.input_required").as_deref(),
            Some("true")
        );
        assert_eq!(
            attr(side[0], "error.type"),
            None,
            "asking for input is no error"
        );
        assert_eq!(
            attr(side[1], "tessera.mrtr.continued").as_deref(),
            Some("true")
        );
        for s in side.iter() {
            assert_eq!(
                attr(s, "mcp.protocol.version").as_deref(),
                Some("2026-07-28")
            );
            assert_eq!(attr(s, "mcp.session.id"), None);
        }
    }
    for (c, s) in sent.iter().zip(&received) {
        assert_eq!(s.parent_span_id, c.span_context.span_id());
    }
    // No server-to-client request is sent in 2026-07-28; the client's
    // layer still sees the input it fulfils.
    assert!(
        !finished
            .iter()
            .any(|s| s.name == "sampling/createMessage" && s.span_kind == SpanKind::Client),
        "2026-07-28 sends no server-to-client request"
    );
    one(&finished, "sampling/createMessage", SpanKind::Server);
    one(&finished, "server/discover", SpanKind::Client);

    // Both sides saw the legacy session end when the client closed (and
    // no session was recorded for 2026-07-28).
    let names = || {
        meter.force_flush().unwrap();
        let mut names = std::collections::BTreeMap::new();
        for rm in metrics.get_finished_metrics().unwrap() {
            for sm in rm.scope_metrics() {
                for m in sm.metrics() {
                    if let AggregatedMetrics::F64(MetricData::Histogram(h)) = m.data() {
                        let n: u64 = h.data_points().map(|p| p.count()).sum();
                        names.insert(m.name().to_owned(), n);
                    }
                }
            }
        }
        names
    };
    // On the paused clock the sleep ends only once every task is idle: the
    // two connections have ended and recorded their sessions by then.
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    let n = names();
    assert_eq!(n.get("mcp.server.session.duration"), Some(&1), "{n:?}");
    assert_eq!(n.get("mcp.client.session.duration"), Some(&1), "{n:?}");
    // Legacy: the handshake's notifications/initialized, tools/call and
    // sampling; 2026-07-28: two rounds and the sampling input the client
    // fulfilled.
    assert_eq!(n.get("mcp.server.operation.duration"), Some(&6), "{n:?}");
}
