//! The conformance scenarios that need no authorization.

use serde_json::json;
use tessera::client::{Client, ClientBuilder, ClientError};
use tessera::http::HttpClientTransport;
use tessera::types::{ElicitResult, ProtocolVersion};

/// The client every scenario starts from: the suite's protocol version (if
/// it names one) and an elicitation handler that accepts with defaults.
pub(crate) fn builder() -> Result<ClientBuilder, String> {
    let b = Client::builder("tessera-conformance-client", env!("CARGO_PKG_VERSION")).elicitation(
        |_req| async move {
            // Accept and send nothing of our own: the client fills in the
            // schema's defaults (SEP-1034) before answering.
            Ok(ElicitResult::accept(Default::default()))
        },
    );
    match std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION") {
        Ok(v) => ProtocolVersion::parse(&v)
            .map(|v| b.clone().protocol_version(v))
            .ok_or_else(|| format!("unknown protocol version {v:?}")),
        // Suite 0.1 speaks the initialize handshake only.
        Err(_) => Ok(b.protocol_version(ProtocolVersion::V2025_11_25)),
    }
}

/// Runs one scenario against the mock server at `url`.
pub(crate) async fn run(url: &str, scenario: &str) -> Result<(), String> {
    let transport = HttpClientTransport::new(url).map_err(|e| e.to_string())?;
    let client = builder()?
        .connect_transport(transport)
        .await
        .map_err(|e: ClientError| format!("connect: {e}"))?;
    let outcome = async {
        match scenario {
            "tools_call" => {
                client.list_tools().await.map_err(|e| e.to_string())?;
                let r = client
                    .call_tool("add_numbers", json!({"a": 5, "b": 3}))
                    .await
                    .map_err(|e| e.to_string())?;
                eprintln!(
                    "add_numbers: {:?}",
                    r.content.first().and_then(|c| c.as_text())
                );
            }
            "elicitation-sep1034-client-defaults" => {
                client
                    .call_tool("test_client_elicitation_defaults", json!({}))
                    .await
                    .map_err(|e| e.to_string())?;
            }
            "sse-retry" => {
                client
                    .call_tool("test_reconnection", json!({}))
                    .await
                    .map_err(|e| e.to_string())?;
            }
            _ => {
                // initialize and anything else: connect and look around.
                let _ = client.list_tools().await;
            }
        }
        Ok::<(), String>(())
    }
    .await;
    client.close().await;
    outcome
}
