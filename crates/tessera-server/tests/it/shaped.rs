//! 2026-07-28: every typed result of the server leaves the handler written
//! with what the engine adds (`resultType`, `_meta` with the server's
//! identity) in front of its members, so the engine writes it as it is
//! instead of reading it again (issue 27). A layer that does not read the
//! results sees their text; in a legacy session the text is the bare result.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tessera_client::Client;
use tessera_runtime::middleware::{Next, from_fn};
use tessera_runtime::{Reply, Request};
use tessera_server::{
    Args, CompletionRequest, PromptArgsMap, Server, prompt, resource, resource_template, tool,
};
use tessera_testkit::pair::in_process;
use tessera_types::{JsonObject, ProtocolVersion};

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Text {
    text: String,
}

async fn echo(Args(t): Args<Text>) -> String {
    t.text
}

async fn readme() -> &'static str {
    "read me"
}

async fn profile() -> String {
    "a profile".into()
}

async fn greet(PromptArgsMap(m): PromptArgsMap) -> String {
    format!("hello {}", m.get("who").map_or("", String::as_str))
}

async fn names(req: CompletionRequest) -> Vec<String> {
    req.complete_from(["ada", "alan", "grace"])
}

/// Method and result text of each answer that left the stack as text.
type Texts = Arc<Mutex<Vec<(String, Option<String>)>>>;

fn server(texts: &Texts) -> Server {
    let record = texts.clone();
    let look = from_fn(move |request: Request, next: Next| {
        let record = record.clone();
        async move {
            let method = request.method.clone();
            let reply = next.run(request).await?;
            let text = match &reply {
                Reply::Raw(t) => Some(t.get().to_owned()),
                Reply::Object(_) => None,
            };
            record.lock().unwrap().push((method, text));
            Ok(reply)
        }
    });
    Server::builder()
        .name_version("shaped-tests", "1.0")
        .tool(tool("echo").description("Echoes").handler(echo))
        .resource(resource("docs://readme", "readme").handler(readme))
        .resource_template(resource_template("users://{id}", "profile").handler(profile))
        .prompt(
            prompt("greet")
                .argument("who", "Who", true)
                .handler(greet)
                .complete("who", names),
        )
        .layer(look)
        .build()
        .unwrap()
}

fn object(v: Value) -> JsonObject {
    match v {
        Value::Object(o) => o,
        other => panic!("not an object: {other}"),
    }
}

/// Asks each typed method once and returns what the layer saw.
async fn ask_all(version: ProtocolVersion) -> Vec<(String, Option<String>)> {
    let texts: Texts = Arc::default();
    let client = in_process(
        &server(&texts),
        Client::builder("shaped-tests", "1.0").protocol_version(version),
    )
    .await;
    let asks = [
        ("tools/list", json!({})),
        (
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "hi"}}),
        ),
        ("resources/list", json!({})),
        ("resources/templates/list", json!({})),
        ("resources/read", json!({"uri": "docs://readme"})),
        ("prompts/list", json!({})),
        (
            "prompts/get",
            json!({"name": "greet", "arguments": {"who": "ada"}}),
        ),
        (
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "greet"},
                   "argument": {"name": "who", "value": "a"}}),
        ),
    ];
    let count = asks.len();
    for (method, params) in asks {
        let result = client
            .request_raw(method, Some(object(params)))
            .await
            .unwrap_or_else(|e| panic!("{method}: {e}"));
        if version == ProtocolVersion::V2026_07_28 {
            assert_eq!(result["resultType"], "complete", "{method}");
        }
    }
    let seen = texts.lock().unwrap().clone();
    assert_eq!(seen.len(), count, "{seen:?}");
    seen
}

#[tokio::test]
async fn every_typed_result_is_written_with_the_engines_members_in_front() {
    let front = r#"{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"shaped-tests","version":"1.0"}},"#;
    for (method, text) in ask_all(ProtocolVersion::V2026_07_28).await {
        let text = text.unwrap_or_else(|| panic!("{method}: answered as a tree"));
        assert!(text.starts_with(front), "{method}: {text}");
        assert_eq!(
            text.matches("\"resultType\"").count(),
            1,
            "{method}: {text}"
        );
    }
    // A legacy session's results are the bare results (nothing is added).
    for (method, text) in ask_all(ProtocolVersion::V2025_11_25).await {
        let text = text.unwrap_or_else(|| panic!("{method}: answered as a tree"));
        assert!(!text.contains("\"resultType\""), "{method}: {text}");
    }
}
