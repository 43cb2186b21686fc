//! The attribute macros used through the facade (`tessera::macros`), with
//! the server API at `tessera::server`: a server built from macro-generated
//! routes, served over an in-memory connection and called with
//! `tessera::client::Client`.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tessera::client::Client;
use tessera::macros::{prompt, resource, tool, tools};
use tessera::server::{Args, PromptArgs, Server, Vars};
use tessera::types::{CallToolResult, ContentBlock};
use tessera_testkit::pair::in_process;

async fn connect<S: Send + Sync + 'static>(server: &Server<S>) -> Client {
    in_process(server, Client::builder("facade-macro-tests", "1.0")).await
}

fn text(r: &CallToolResult) -> &str {
    match r.content.first() {
        Some(ContentBlock::Text(t)) => &t.text,
        other => panic!("expected one text block, got {other:?}"),
    }
}

#[derive(Deserialize, JsonSchema)]
struct Greeting {
    /// Who to greet.
    name: String,
}

/// Greets someone by name.
#[tool(annotations(read_only))]
async fn greet(Args(g): Args<Greeting>) -> String {
    format!("Hello, {}!", g.name)
}

/// Says goodbye (the server API path given explicitly, as a crate that
/// re-exports Tessera under another name would).
#[tool(crate = "::tessera::server")]
async fn farewell(Args(g): Args<Greeting>) -> String {
    format!("Goodbye, {}!", g.name)
}

/// Suggests a greeting.
#[prompt(crate = "::tessera::server")]
async fn suggest(PromptArgs(g): PromptArgs<Greeting>) -> String {
    format!("Write a warm greeting for {}", g.name)
}

#[derive(Deserialize)]
struct Lang {
    lang: String,
}

/// The word for hello in a language.
#[resource(template = "hello://{lang}", mime_type = "text/plain")]
async fn hello_in(Vars(l): Vars<Lang>) -> String {
    match l.lang.as_str() {
        "fr" => "bonjour".into(),
        _ => "hello".into(),
    }
}

/// A greeter with a configurable punctuation mark.
struct Greeter<T> {
    mark: T,
}

#[tools(crate = "::tessera::server")]
impl<T: std::fmt::Display + Send + Sync + 'static> Greeter<T> {
    /// Greets loudly.
    #[tool]
    async fn shout(&self, Args(g): Args<Greeting>) -> String {
        format!("HELLO, {}{}", g.name.to_uppercase(), self.mark)
    }
}

#[tokio::test]
async fn macros_work_through_the_facade() {
    let server = Arc::new(Greeter { mark: "!!" })
        .register(Server::builder())
        .tool(greet_tool())
        .tool(farewell_tool())
        .prompt(suggest_prompt())
        .resource_template(hello_in_resource())
        .build()
        .expect("builds");
    let client = connect(&server).await;

    let tools = client.list_tools().await.expect("lists");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["shout", "greet", "farewell"]);
    let greet = &tools[1];
    assert_eq!(
        greet.description.as_deref(),
        Some("Greets someone by name.")
    );
    assert_eq!(greet.input_schema["required"], json!(["name"]));
    assert_eq!(
        greet.annotations.as_ref().and_then(|a| a.read_only_hint),
        Some(true)
    );

    let r = client
        .call_tool("greet", json!({"name": "Ada"}))
        .await
        .expect("calls");
    assert_eq!(text(&r), "Hello, Ada!");
    let r = client
        .call_tool("farewell", json!({"name": "Ada"}))
        .await
        .expect("calls");
    assert_eq!(text(&r), "Goodbye, Ada!");
    let r = client
        .call_tool("shout", json!({"name": "Ada"}))
        .await
        .expect("calls");
    assert_eq!(text(&r), "HELLO, ADA!!");

    let got = client
        .request_raw(
            "prompts/get",
            json!({"name": "suggest", "arguments": {"name": "Ada"}})
                .as_object()
                .cloned(),
        )
        .await
        .expect("gets");
    assert_eq!(
        got["messages"][0]["content"]["text"],
        "Write a warm greeting for Ada"
    );
    let read = client
        .request_raw(
            "resources/read",
            json!({"uri": "hello://fr"}).as_object().cloned(),
        )
        .await
        .expect("reads");
    assert_eq!(read["contents"][0]["text"], "bonjour");
}
