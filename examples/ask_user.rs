//! A handler that asks the user a question, written once, answered in both
//! eras.
//!
//! `ctx.elicit_with(..)` sends a legacy client (up to 2025-11-25) an
//! `elicitation/create` request and waits for the answer. A 2026-07-28
//! client instead gets an `InputRequiredResult` with a sealed `requestState`;
//! it retries the call with the answer and the handler runs again, this time
//! getting the answer at once. The handler cannot tell the difference.
//!
//! This program runs the server and two clients, one per era, in one process
//! over in-memory pipes: `cargo run -p tessera-examples --example ask_user`.

use std::collections::BTreeMap;

use tessera::client::{Client, ConnectMode, FormRequest};
use tessera::server::{RequestContext, Server, tool};
use tessera::types::{
    ElicitRequestParams, ElicitResult, ElicitValue, ErrorObject, ProtocolVersion,
};

/// Asks for a name (the greeting has a default) and greets.
async fn greet(ctx: RequestContext) -> Result<String, String> {
    let form: ElicitRequestParams = serde_json::from_value(serde_json::json!({
        "message": "What is your name?",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "greeting": {"type": "string", "default": "Hello"}
            },
            "required": ["name"]
        }
    }))
    .map_err(|e| e.to_string())?;
    let answer = ctx.elicit_with(form).await.map_err(|e| e.to_string())?;
    let fields = serde_json::to_value(answer.content).map_err(|e| e.to_string())?;
    let field = |k: &str| fields[k].as_str().unwrap_or("?").to_owned();
    Ok(format!("{}, {}!", field("greeting"), field("name")))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::builder()
        .tool(tool("greet").handler(greet))
        .build()?;
    for mode in [
        ConnectMode::Legacy(ProtocolVersion::V2025_11_25),
        ConnectMode::Modern(ProtocolVersion::V2026_07_28),
    ] {
        // One in-memory pipe per conversation: the server on one end ...
        let (client_io, server_io) = tokio::io::duplex(1 << 16);
        let (sr, sw) = tokio::io::split(server_io);
        let _serving = server.clone().serve_io(sr, sw);

        // ... and a client that answers forms on the other. A real client
        // would show `form.message` and the fields to a person.
        let (cr, cw) = tokio::io::split(client_io);
        let client = Client::builder("ask-user-example", "1.0.0")
            .mode(mode)
            .elicitation(|form: FormRequest| async move {
                println!("  the server asks: {}", form.message);
                let name = ElicitValue::String("Ada".into());
                Ok::<_, ErrorObject>(ElicitResult::accept(BTreeMap::from([(
                    "name".to_owned(),
                    name,
                )])))
            })
            .connect_io(cr, cw)
            .await?;
        println!("{} client:", client.protocol_version());
        let result = client.call_tool("greet", serde_json::json!({})).await?;
        let text = result.content[0].as_text().unwrap_or_default().to_owned();
        println!("  the tool answers: {text}");
        if text != "Hello, Ada!" {
            return Err(format!("unexpected answer {text:?}").into());
        }
        client.close().await;
    }
    Ok(())
}
