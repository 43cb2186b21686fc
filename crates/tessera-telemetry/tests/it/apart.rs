//! Two telemetries in one process, each on its own server's and client's
//! stacks, record apart: every span of a connection, the `CLIENT` spans
//! of what it sends included, goes to the telemetry on that connection's
//! stack, whichever telemetry was made first.

use opentelemetry::trace::SpanKind;
use serde_json::json;
use tessera_client::Client;
use tessera_server::{Server, tool};
use tessera_testkit::pair::in_process;
use tessera_types::ProtocolVersion;

use crate::sinks::{Sinks, attr, in_memory};

/// A server named `name` with one tool, `hello`, and a client of it, both
/// recording into `sinks`; calls the tool once and closes.
async fn call_once(name: &str, sinks: &Sinks) {
    let t = sinks.telemetry.clone();
    let server = Server::builder()
        .name_version(name, "1.0.0")
        .middleware(|s| t.install(s))
        .tool(tool("hello").handler(|| async { "hi" }))
        .build()
        .unwrap();
    let client = in_process(
        &server,
        Client::builder(format!("{name}-client"), "1.0")
            .protocol_version(ProtocolVersion::V2025_11_25)
            .middleware(|s| sinks.telemetry.install(s)),
    )
    .await;
    let r = client.call_tool("hello", json!({})).await.unwrap();
    assert_ne!(r.is_error, Some(true));
    client.close().await;
}

/// `(span name, kind, tessera.server.name)` of every span `sinks` holds
/// for the tool call and the handshake, sorted.
fn recorded(sinks: &Sinks) -> Vec<(String, SpanKind, Option<String>)> {
    let mut v: Vec<_> = sinks
        .spans
        .get_finished_spans()
        .unwrap()
        .iter()
        .filter(|s| s.name == "tools/call hello" || s.name == "initialize")
        .map(|s| {
            (
                s.name.to_string(),
                s.span_kind.clone(),
                attr(s, "tessera.server.name"),
            )
        })
        .collect();
    v.sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_telemetries_in_one_process_record_apart() {
    let (first, second) = (in_memory(), in_memory());
    call_once("first", &first).await;
    call_once("second", &second).await;
    for (sinks, name) in [(&first, "first"), (&second, "second")] {
        let spans = recorded(sinks);
        let kinds: Vec<(&str, &SpanKind)> = spans.iter().map(|(n, k, _)| (n.as_str(), k)).collect();
        assert_eq!(
            kinds,
            [
                ("initialize", &SpanKind::Client),
                ("tools/call hello", &SpanKind::Client),
                ("tools/call hello", &SpanKind::Server),
            ],
            "{name}: {spans:?}"
        );
        // The client's spans name the server it spoke to: its own.
        for (n, k, server) in &spans {
            if *k == SpanKind::Client {
                assert_eq!(server.as_deref(), Some(name), "{n}");
            }
        }
    }
}
