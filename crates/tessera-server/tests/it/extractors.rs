//! One extractor trait for every kind of handler: an extractor of the
//! user's own that reads only the request parts works in a tool, a prompt, a
//! resource and a completion handler alike, and a missing `Extension<T>` is
//! refused the way each kind of request reports errors.

use std::sync::atomic::{AtomicU32, Ordering};

use serde_json::json;
use tessera_client::Client;
use tessera_server::{
    CompletionRequest, Extension, FromRequest, HandlerInput, Rejection, RequestBody,
    RequestContext, Server, prompt, resource, tool,
};
use tessera_testkit::pair::in_process;
use tessera_types::{JsonObject, ProtocolVersion};

/// The server's state: a counter every handler bumps through `Visit`.
struct Counter(AtomicU32);

/// An extractor of the user's own, generic over the request's body: the
/// number of requests served so far, this one included.
struct Visit(u32);

impl<B: RequestBody> FromRequest<Counter, B> for Visit {
    fn from_request(input: &mut HandlerInput<Counter, B>) -> Result<Self, Rejection> {
        Ok(Visit(
            input.parts.state.0.fetch_add(1, Ordering::SeqCst) + 1,
        ))
    }
}

/// A value no transport attaches in these tests.
#[derive(Clone)]
struct Missing;

async fn tool_visit(Visit(n): Visit, ctx: RequestContext) -> String {
    format!("tool {n} {}", ctx.protocol_version())
}

async fn prompt_visit(Visit(n): Visit) -> String {
    format!("prompt {n}")
}

async fn resource_visit(Visit(n): Visit) -> String {
    format!("resource {n}")
}

async fn complete_visit(Visit(n): Visit, req: CompletionRequest) -> Vec<String> {
    vec![format!("{}{n}", req.value)]
}

async fn tool_needs(Extension(Missing): Extension<Missing>) -> String {
    "unreachable".into()
}

async fn prompt_needs(Extension(Missing): Extension<Missing>) -> String {
    "unreachable".into()
}

fn server() -> Server<Counter> {
    Server::with_state(Counter(AtomicU32::new(0)))
        .tool(tool("visit").handler(tool_visit))
        .tool(tool("needs").handler(tool_needs))
        .prompt(
            prompt("visit")
                .argument("word", "A word", false)
                .handler(prompt_visit)
                .complete("word", complete_visit),
        )
        .prompt(prompt("needs").handler(prompt_needs))
        .resource(resource("visit://me", "visit").handler(resource_visit))
        .build()
        .expect("builds")
}

async fn connect(server: &Server<Counter>, version: ProtocolVersion) -> Client {
    in_process(
        server,
        Client::builder("extractor-tests", "1.0").protocol_version(version),
    )
    .await
}

fn object(v: serde_json::Value) -> JsonObject {
    v.as_object().cloned().expect("an object")
}

#[tokio::test]
async fn a_parts_extractor_works_in_every_kind_of_handler() {
    for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
        let server = server();
        let client = connect(&server, version).await;

        let r = client.call_tool("visit", json!({})).await.expect("tool");
        assert_eq!(
            r.content[0].as_text(),
            Some(format!("tool 1 {version}").as_str())
        );

        let p = client
            .get_prompt("visit", Default::default())
            .await
            .expect("prompt");
        assert_eq!(
            serde_json::to_value(&p.messages[0].content).unwrap()["text"],
            "prompt 2"
        );

        let res = client.read_resource("visit://me").await.expect("resource");
        assert_eq!(
            serde_json::to_value(&res.contents[0]).unwrap()["text"],
            "resource 3"
        );

        let c = client
            .request_raw(
                "completion/complete",
                Some(object(json!({
                    "ref": {"type": "ref/prompt", "name": "visit"},
                    "argument": {"name": "word", "value": "w"},
                }))),
            )
            .await
            .expect("completion");
        assert_eq!(c["completion"]["values"], json!(["w4"]));
        client.close().await;
    }
}

#[tokio::test]
async fn a_missing_extension_is_refused_as_each_kind_reports_errors() {
    let server = server();
    let client = connect(&server, ProtocolVersion::V2025_11_25).await;

    // A tool call: an `isError` result the model can read.
    let r = client
        .call_tool("needs", json!({}))
        .await
        .expect("a result");
    assert_eq!(r.is_error, Some(true));
    let text = r.content[0].as_text().expect("text");
    assert!(
        text.contains("missing") && text.contains("Missing"),
        "{text}"
    );

    // A prompt: a JSON-RPC internal error.
    let e = client
        .get_prompt("needs", Default::default())
        .await
        .expect_err("an error response");
    let remote = e.remote().expect("a JSON-RPC error");
    assert_eq!(remote.code, -32603);
    assert!(remote.message.contains("Missing"), "{}", remote.message);
    client.close().await;
}
