//! The client the official MCP conformance suite drives:
//! `conformance-client <server-url>`, with the scenario in
//! `MCP_CONFORMANCE_SCENARIO` and, from suite 0.2, the protocol version in
//! `MCP_CONFORMANCE_PROTOCOL_VERSION`. It uses the public client API only.

use std::process::ExitCode;

use serde_json::json;
use tessera::client::{Client, ClientBuilder, ClientError};
use tessera::http::HttpClientTransport;
use tessera::types::{ElicitResult, ProtocolVersion};

fn builder() -> Result<ClientBuilder, String> {
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

async fn run(url: &str, scenario: &str) -> Result<(), String> {
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

fn main() -> ExitCode {
    let Some(url) = std::env::args().nth(1).filter(|u| u.starts_with("http")) else {
        eprintln!("usage: conformance-client <server-url> (scenario in MCP_CONFORMANCE_SCENARIO)");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("TESSERA_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("cannot start the runtime: {e}");
            return ExitCode::from(1);
        }
    };
    match rt.block_on(run(&url, &scenario)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("conformance-client ({scenario}): {e}");
            ExitCode::from(1)
        }
    }
}
