//! The `StreamControl` extractor away from HTTP: it does nothing over stdio,
//! and relays to a client that declares Tessera's close-stream extension
//! (a proxy serving the request over HTTP).

use std::collections::BTreeMap;

use serde_json::json;
use tessera_client::{Client, ClientBuilder};
use tessera_runtime::{CLOSE_SSE_STREAM_CAPABILITY, StreamControl};
use tessera_server::{Server, tool};
use tessera_testkit::pair::in_process;
use tessera_types::{ClientCapabilities, ProtocolVersion};

async fn close(stream: StreamControl) -> String {
    format!(
        "{} {}",
        stream.is_available(),
        stream.close_sse_stream(None)
    )
}

async fn call(client: ClientBuilder) -> String {
    let server = Server::builder()
        .tool(tool("close").handler(close))
        .build()
        .unwrap();
    let client: Client = in_process(&server, client).await;
    let r = client.call_tool("close", json!({})).await.unwrap();
    serde_json::to_value(&r.content[0]).unwrap()["text"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn over_stdio_stream_control_does_nothing() {
    let plain =
        Client::builder("stream-tests", "1.0").protocol_version(ProtocolVersion::V2025_11_25);
    assert_eq!(call(plain).await, "false false");
}

#[tokio::test]
async fn a_client_declaring_the_extension_is_asked_to_close() {
    let mut experimental = BTreeMap::new();
    experimental.insert(CLOSE_SSE_STREAM_CAPABILITY.to_owned(), Default::default());
    let caps = ClientCapabilities {
        experimental: Some(experimental),
        ..Default::default()
    };
    let proxy_like = Client::builder("stream-tests", "1.0")
        .protocol_version(ProtocolVersion::V2025_11_25)
        .capabilities(caps);
    assert_eq!(call(proxy_like).await, "true true");
}
