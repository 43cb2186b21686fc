//! A client that connects to any MCP server and calls one tool.
//!
//! The target is an http(s) URL or, after `--`, a command that starts a stdio
//! server. By default the era is detected: a `server/discover` probe first,
//! then the `initialize` handshake for a legacy server. `--version V` pins the
//! client to one protocol version instead: it never probes or falls back, so
//! a successful call proves that the server (or a proxy in front of one)
//! serves that version.
//!
//! The first line printed names the server and the protocol version in use;
//! then come the tool's text results.
//!
//! ```sh
//! cargo run -p tessera-examples --example client_call -- echo '{"text":"hi"}' http://127.0.0.1:8000/mcp
//! cargo run -p tessera-examples --example client_call -- --version 2025-11-25 echo '{"text":"hi"}' -- tessera serve --stdio
//! ```

use tessera::client::Client;
use tessera::runtime::ChildCommand;
use tessera::types::ProtocolVersion;
use tessera_http::HttpClientTransport;

const USAGE: &str = "usage: client_call [--version V] TOOL ARGS_JSON (URL | -- COMMAND ARGS...)";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // An optional `--version V` comes first.
    let (version, args) = match &args[..] {
        [flag, version, rest @ ..] if flag == "--version" => {
            let parsed = ProtocolVersion::parse(version)
                .ok_or_else(|| format!("unknown protocol version {version:?}"))?;
            (Some(parsed), rest)
        }
        rest => (None, rest),
    };
    let [tool, json, target @ ..] = args else {
        return Err(USAGE.into());
    };
    let arguments: serde_json::Value = serde_json::from_str(json)?;

    let mut builder = Client::builder("client-call-example", "1.0.0");
    if let Some(version) = version {
        builder = builder.protocol_version(version);
    }
    let client = match target {
        [url] if url.starts_with("http") => {
            // Checked once here; the client makes a new transport when it
            // reconnects (a session the server forgot).
            HttpClientTransport::new(url)?;
            let url = url.clone();
            builder
                .connect_transports(move || {
                    HttpClientTransport::new(&url).map_err(std::io::Error::other)
                })
                .await?
        }
        [dashes, program, rest @ ..] if dashes == "--" => {
            builder
                .connect_child(&ChildCommand::new(program, rest))
                .await?
        }
        _ => return Err(USAGE.into()),
    };
    let name = client.server_info().name;
    println!(
        "connected to {name}, protocol version {}",
        client.protocol_version()
    );

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
