//! A client pinned to one protocol version: it never probes or falls back,
//! so it proves that a server (or a proxy in front of one) serves that
//! version. Prints the negotiated version, then the tool's text.
//!
//! ```sh
//! cargo run -p tessera-examples --example pinned_call -- 2026-07-28 echo '{"text":"hi"}' http://127.0.0.1:8002/mcp
//! cargo run -p tessera-examples --example pinned_call -- 2025-11-25 echo '{"text":"hi"}' -- tessera serve --stdio
//! ```

use tessera::client::Client;
use tessera::runtime::ChildCommand;
use tessera::types::ProtocolVersion;
use tessera_http::HttpClientTransport;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: pinned_call VERSION TOOL ARGS_JSON (URL | -- COMMAND ARGS...)";
    let [version, tool, json, target @ ..] = &args[..] else {
        return Err(usage.into());
    };
    let version = ProtocolVersion::parse(version)
        .ok_or_else(|| format!("unknown protocol version {version:?}"))?;
    let arguments: serde_json::Value = serde_json::from_str(json)?;
    let builder = Client::builder("pinned-call-example", "1.0.0").protocol_version(version);
    let client = match target {
        [url] if url.starts_with("http") => {
            builder
                .connect_transport(HttpClientTransport::new(url)?)
                .await?
        }
        [dashes, program, rest @ ..] if dashes == "--" => {
            builder
                .connect_child(&ChildCommand::new(program, rest))
                .await?
        }
        _ => return Err(usage.into()),
    };
    println!("protocol version {}", client.protocol_version());
    let result = client.call_tool(tool, arguments).await?;
    for item in &result.content {
        match item.as_text() {
            Some(text) => println!("{text}"),
            None => println!("{}", serde_json::to_string(item)?),
        }
    }
    let failed = result.is_error == Some(true);
    client.close().await;
    if failed {
        return Err("the tool reported an error".into());
    }
    Ok(())
}
