//! A client that connects to any MCP server and calls one tool.
//!
//! The target is an http(s) URL or, after `--`, a command that starts a stdio
//! server. The era is detected: a `server/discover` probe first, then the
//! `initialize` handshake for a legacy server.
//!
//! ```sh
//! cargo run -p tessera-examples --example client_call -- echo '{"text":"hi"}' http://127.0.0.1:8000/mcp
//! cargo run -p tessera-examples --example client_call -- echo '{"text":"hi"}' -- tessera serve --stdio
//! ```

use tessera::client::Client;
use tessera::runtime::ChildCommand;
use tessera_http::HttpClientTransport;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: client_call TOOL ARGS_JSON (URL | -- COMMAND ARGS...)";
    let (tool, arguments) = match &args[..] {
        [tool, json, ..] => (tool.clone(), serde_json::from_str(json)?),
        _ => return Err(usage.into()),
    };
    let builder = Client::builder("client-call-example", "1.0.0");
    let client = match &args[2..] {
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
    let info = client.server_info();
    let name = info.get("name").and_then(|n| n.as_str()).unwrap_or("?");
    println!("connected to {name} ({})", client.protocol_version());

    let result = client.call_tool(&tool, arguments).await?;
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
