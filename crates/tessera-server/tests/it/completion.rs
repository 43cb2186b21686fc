//! `completion/complete` through the public API, over an in-memory
//! connection, in both eras: the capability, providers for prompt arguments
//! and template variables, the 100-value limit, `context.arguments`, errors.

use std::sync::Mutex;

use serde_json::{Value, json};
use tessera_client::{Client, ClientError};
use tessera_server::{
    BuildError, CompletionRequest, CompletionTarget, PromptArgsMap, ProtocolError, Server,
    ServerBuilder, State, complete_from, prompt, resource_template,
};
use tessera_testkit::pair::{ERAS, in_process};
use tessera_types::{CompleteResult, Completion, ErrorObject, JsonObject, ProtocolVersion};

async fn connect<S: Send + Sync + 'static>(server: &Server<S>, version: ProtocolVersion) -> Client {
    in_process(
        server,
        Client::builder("completion-tests", "1.0").protocol_version(version),
    )
    .await
}

fn object(v: Value) -> JsonObject {
    match v {
        Value::Object(o) => o,
        other => panic!("not an object: {other}"),
    }
}

async fn complete_raw(client: &Client, params: Value) -> Result<JsonObject, ClientError> {
    client
        .request_raw("completion/complete", Some(object(params)))
        .await
}

async fn complete_prompt(
    client: &Client,
    prompt: &str,
    argument: &str,
    value: &str,
) -> Result<JsonObject, ClientError> {
    complete_raw(
        client,
        json!({
            "ref": {"type": "ref/prompt", "name": prompt},
            "argument": {"name": argument, "value": value},
        }),
    )
    .await
}

fn values(result: &JsonObject) -> Vec<String> {
    serde_json::from_value(result["completion"]["values"].clone()).expect("values")
}

fn code(r: Result<JsonObject, ClientError>) -> (i64, String) {
    let e = r.expect_err("an error response");
    let remote = e.remote().expect("a JSON-RPC error");
    (remote.code, remote.message.clone())
}

async fn text(PromptArgsMap(m): PromptArgsMap) -> String {
    format!("{m:?}")
}

async fn languages(req: CompletionRequest) -> Vec<String> {
    req.complete_from(["python", "pytorch", "pyside", "rust", "ruby"])
}

/// Frameworks narrowed by the language already chosen (`context.arguments`).
async fn frameworks(req: CompletionRequest) -> Vec<String> {
    let all: &[&str] = match req.resolved("language") {
        Some("python") => &["flask", "fastapi", "django"],
        Some("rust") => &["axum", "actix", "rocket"],
        _ => &[],
    };
    complete_from(all, &req.value)
}

async fn many(req: CompletionRequest) -> Vec<String> {
    let all: Vec<String> = (0..150).map(|i| format!("item{i:03}")).collect();
    req.complete_from(all)
}

fn server() -> Server {
    Server::builder()
        .prompt(
            prompt("test_prompt_with_arguments")
                .argument("arg1", "First", true)
                .argument("arg2", "Second", false)
                .handler(text),
        )
        .prompt(
            prompt("code_review")
                .argument("language", "Language", true)
                .argument("framework", "Framework", false)
                .argument("item", "Item", false)
                .handler(text)
                .complete("language", languages)
                .complete("item", many),
        )
        .prompt(prompt("plain").handler(text))
        // Registered before its prompt exists; attached when built.
        .complete_prompt_argument("code_review", "framework", frameworks)
        .build()
        .expect("builds")
}

#[tokio::test]
async fn the_capability_is_declared_when_something_can_be_completed() {
    let s = server();
    for v in ERAS {
        let client = connect(&s, v).await;
        assert_eq!(
            serde_json::to_value(client.server_capabilities().completions).unwrap(),
            json!({}),
            "{v}"
        );
    }

    // Only prompts without arguments: nothing to complete, method not found.
    let bare = Server::builder()
        .prompt(prompt("plain").handler(text))
        .build()
        .unwrap();
    assert!(bare.capabilities().completions.is_none());
    for v in ERAS {
        let client = connect(&bare, v).await;
        assert!(client.server_capabilities().completions.is_none());
        let (c, _) = code(complete_prompt(&client, "plain", "x", "").await);
        assert_eq!(c, -32601, "{v}");
    }

    // A template provider alone is enough.
    let templated = Server::builder()
        .resource_template(resource_template("file:///{path}", "file").handler(file_contents))
        .complete_template_variable("file:///{path}", "path", languages)
        .build()
        .unwrap();
    assert!(templated.capabilities().completions.is_some());
}

#[tokio::test]
async fn an_argument_without_a_provider_completes_to_nothing() {
    let s = server();
    for v in ERAS {
        let client = connect(&s, v).await;
        let r = complete_prompt(&client, "test_prompt_with_arguments", "arg1", "")
            .await
            .unwrap();
        assert_eq!(
            r["completion"],
            json!({"values": [], "total": 0, "hasMore": false}),
            "{v}"
        );
        if v == ProtocolVersion::V2026_07_28 {
            assert_eq!(r["resultType"], "complete");
        }
    }
}

#[tokio::test]
async fn providers_filter_by_prefix() {
    let s = server();
    for v in ERAS {
        let client = connect(&s, v).await;
        let r = complete_prompt(&client, "code_review", "language", "py")
            .await
            .unwrap();
        assert_eq!(values(&r), ["python", "pytorch", "pyside"]);
        assert_eq!(r["completion"]["total"], 3);
        assert_eq!(r["completion"]["hasMore"], false);
        let r = complete_prompt(&client, "code_review", "language", "RU")
            .await
            .unwrap();
        assert_eq!(values(&r), ["rust", "ruby"]);
    }
}

#[tokio::test]
async fn at_most_one_hundred_values_with_total_and_has_more() {
    let s = server();
    for v in ERAS {
        let client = connect(&s, v).await;
        let r = complete_prompt(&client, "code_review", "item", "")
            .await
            .unwrap();
        let vals = values(&r);
        assert_eq!(vals.len(), 100);
        assert_eq!(vals[0], "item000");
        assert_eq!(vals[99], "item099");
        assert_eq!(r["completion"]["total"], 150);
        assert_eq!(r["completion"]["hasMore"], true);

        // Narrowed below the limit: everything, nothing more.
        let r = complete_prompt(&client, "code_review", "item", "item14")
            .await
            .unwrap();
        assert_eq!(values(&r).len(), 10);
        assert_eq!(r["completion"]["total"], 10);
        assert_eq!(r["completion"]["hasMore"], false);
    }
}

#[tokio::test]
async fn context_arguments_reach_the_provider() {
    let s = server();
    for v in ERAS {
        let client = connect(&s, v).await;
        let ask = |language: &str, value: &str| {
            json!({
                "ref": {"type": "ref/prompt", "name": "code_review"},
                "argument": {"name": "framework", "value": value},
                "context": {"arguments": {"language": language}},
            })
        };
        let r = complete_raw(&client, ask("python", "fla")).await.unwrap();
        assert_eq!(values(&r), ["flask"]);
        assert_eq!(r["completion"]["total"], 1);
        assert_eq!(r["completion"]["hasMore"], false);
        let r = complete_raw(&client, ask("rust", "a")).await.unwrap();
        assert_eq!(values(&r), ["axum", "actix"]);
        // Without context there is nothing to narrow by.
        let r = complete_prompt(&client, "code_review", "framework", "")
            .await
            .unwrap();
        assert!(values(&r).is_empty());
    }
}

#[tokio::test]
async fn unknown_references_are_invalid_params() {
    let s = server();
    for v in ERAS {
        let client = connect(&s, v).await;
        let (c, msg) = code(complete_prompt(&client, "nope", "arg1", "").await);
        assert_eq!(c, -32602);
        assert!(msg.contains("nope"), "{msg}");

        let (c, msg) =
            code(complete_prompt(&client, "test_prompt_with_arguments", "arg9", "").await);
        assert_eq!(c, -32602);
        assert!(msg.contains("arg9"), "{msg}");

        let (c, msg) = code(
            complete_raw(
                &client,
                json!({
                    "ref": {"type": "ref/tool", "name": "x"},
                    "argument": {"name": "a", "value": ""},
                }),
            )
            .await,
        );
        assert_eq!(c, -32602);
        assert!(
            msg.contains("ref/tool") && msg.contains("ref/prompt"),
            "{msg}"
        );

        let (c, _) =
            code(complete_raw(&client, json!({"argument": {"name": "a", "value": ""}})).await);
        assert_eq!(c, -32602);

        let (c, _) = code(
            complete_raw(
                &client,
                json!({"ref": {"type": "ref/prompt", "name": "code_review"}}),
            )
            .await,
        );
        assert_eq!(c, -32602, "no argument");

        let (c, msg) = code(
            complete_raw(
                &client,
                json!({
                    "ref": {"type": "ref/resource", "uri": "file:///{nothing}"},
                    "argument": {"name": "nothing", "value": ""},
                }),
            )
            .await,
        );
        assert_eq!(c, -32602);
        assert!(msg.contains("file:///{nothing}"), "{msg}");
    }
}

struct Catalog {
    paths: Vec<String>,
    seen: Mutex<Vec<CompletionTarget>>,
}

async fn paths(State(c): State<Catalog>, req: CompletionRequest) -> Completion {
    c.seen.lock().unwrap().push(req.target.clone());
    let found = req.complete_from(&c.paths);
    Completion {
        total: Some(u64::try_from(found.len()).unwrap()),
        has_more: Some(false),
        values: found,
    }
}

async fn file_contents(uri: tessera_server::Uri) -> String {
    format!("contents of {}", uri.0)
}

fn file_template() -> tessera_server::ResourceTemplateRoute<Catalog> {
    resource_template("file:///{path}", "file").handler(file_contents)
}

#[tokio::test]
async fn template_variables_complete_with_state() {
    let s = Server::with_state(Catalog {
        paths: vec![
            "src/main.rs".into(),
            "src/lib.rs".into(),
            "README.md".into(),
        ],
        seen: Mutex::new(Vec::new()),
    })
    // The provider before its template: order does not matter.
    .complete_template_variable("file:///{path}", "path", paths)
    .resource_template(file_template())
    .resource_template(resource_template("db://{table}/{row}", "row").handler(file_contents))
    .build()
    .unwrap();
    for v in ERAS {
        let client = connect(&s, v).await;
        assert_eq!(
            serde_json::to_value(client.server_capabilities().completions).unwrap(),
            json!({})
        );
        let ask = |uri: &str, name: &str, value: &str| {
            json!({
                "ref": {"type": "ref/resource", "uri": uri},
                "argument": {"name": name, "value": value},
            })
        };
        let r = complete_raw(&client, ask("file:///{path}", "path", "src/"))
            .await
            .unwrap();
        assert_eq!(values(&r), ["src/main.rs", "src/lib.rs"]);
        assert_eq!(r["completion"]["total"], 2);

        // A variable of a template, without a provider: nothing to suggest.
        let r = complete_raw(&client, ask("db://{table}/{row}", "table", ""))
            .await
            .unwrap();
        assert_eq!(
            r["completion"],
            json!({"values": [], "total": 0, "hasMore": false})
        );

        // Not a variable of that template.
        let (c, msg) = code(complete_raw(&client, ask("file:///{path}", "other", "")).await);
        assert_eq!(c, -32602);
        assert!(msg.contains("other"), "{msg}");
    }
    assert_eq!(
        s.state().seen.lock().unwrap().as_slice(),
        [
            CompletionTarget::ResourceTemplate("file:///{path}".into()),
            CompletionTarget::ResourceTemplate("file:///{path}".into())
        ]
    );

    // A template removed while serving can no longer be completed.
    assert!(s.remove_resource_template("file:///{path}"));
    let client = connect(&s, ProtocolVersion::V2025_11_25).await;
    let (c, _) = code(
        complete_raw(
            &client,
            json!({
                "ref": {"type": "ref/resource", "uri": "file:///{path}"},
                "argument": {"name": "path", "value": ""},
            }),
        )
        .await,
    );
    assert_eq!(c, -32602);
}

#[test]
fn resource_templates_alone_offer_completion() {
    let s = Server::with_state(Catalog {
        paths: Vec::new(),
        seen: Mutex::new(Vec::new()),
    })
    .resource_template(file_template())
    .build()
    .unwrap();
    assert!(s.capabilities().completions.is_some());
}

#[test]
fn template_providers_are_checked_at_build_time() {
    let e = build_error(
        Server::builder()
            .resource_template(resource_template("file:///{path}", "file").handler(file_contents))
            .complete_template_variable("file:///{path}", "nope", languages),
    );
    assert!(e.to_string().contains("nope"), "{e}");
    let e =
        build_error(Server::builder().complete_template_variable("other:///{x}", "x", languages));
    assert!(e.to_string().contains("other:///{x}"), "{e}");
}

#[derive(Debug)]
struct Offline;

impl std::fmt::Display for Offline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the index is offline")
    }
}

async fn offline(_req: CompletionRequest) -> Result<Vec<String>, Offline> {
    Err(Offline)
}

async fn picky(req: CompletionRequest) -> Result<CompleteResult, ProtocolError> {
    if req.value.len() > 3 {
        return Err(ProtocolError(ErrorObject::invalid_params(
            "Value too long to complete",
        )));
    }
    Ok(CompleteResult::new(vec![format!("{}!", req.value)]))
}

#[tokio::test]
async fn provider_failures_are_json_rpc_errors() {
    let s = Server::builder()
        .prompt(
            prompt("p")
                .argument("a", "A", false)
                .argument("b", "B", false)
                .handler(text)
                .complete("a", offline)
                .complete("b", picky),
        )
        .build()
        .unwrap();
    for v in ERAS {
        let client = connect(&s, v).await;
        let (c, msg) = code(complete_prompt(&client, "p", "a", "").await);
        assert_eq!(c, -32603);
        assert!(msg.contains("offline"), "{msg}");
        let (c, msg) = code(complete_prompt(&client, "p", "b", "long").await);
        assert_eq!(c, -32602);
        assert!(msg.contains("too long"), "{msg}");
        let r = complete_prompt(&client, "p", "b", "ok").await.unwrap();
        assert_eq!(values(&r), ["ok!"]);
    }
}

#[tokio::test]
async fn removing_a_prompt_removes_its_providers() {
    let s = server();
    let client = connect(&s, ProtocolVersion::V2025_11_25).await;
    assert!(
        complete_prompt(&client, "code_review", "language", "r")
            .await
            .is_ok()
    );
    assert!(s.remove_prompt("code_review"));
    let (c, _) = code(complete_prompt(&client, "code_review", "language", "r").await);
    assert_eq!(c, -32602);

    // Added back with a provider while serving.
    s.add_prompt(
        prompt("code_review")
            .argument("language", "Language", true)
            .handler(text)
            .complete("language", languages),
    )
    .unwrap();
    let r = complete_prompt(&client, "code_review", "language", "r")
        .await
        .unwrap();
    assert_eq!(values(&r), ["rust", "ruby"]);
}

fn build_error(b: ServerBuilder) -> BuildError {
    b.build().expect_err("the build fails")
}

#[test]
fn providers_are_checked_at_build_time() {
    let with_prompt = || {
        Server::builder().prompt(
            prompt("p")
                .argument("a", "A", false)
                .handler(text)
                .complete("a", languages),
        )
    };
    assert!(with_prompt().build().is_ok());

    let e = build_error(with_prompt().complete_prompt_argument("missing", "a", languages));
    assert!(e.to_string().contains("missing"), "{e}");

    let e = build_error(with_prompt().complete_prompt_argument("p", "zz", languages));
    assert!(e.to_string().contains("zz"), "{e}");

    let e = build_error(with_prompt().complete_prompt_argument("p", "a", languages));
    assert!(e.to_string().contains("two completion providers"), "{e}");

    let e = build_error(
        Server::builder().prompt(prompt("q").handler(text).complete("undeclared", languages)),
    );
    assert!(e.to_string().contains("undeclared"), "{e}");

    let e = build_error(
        Server::builder()
            .complete_template_variable("file:///{path}", "path", languages)
            .complete_template_variable("file:///{path}", "path", languages),
    );
    assert!(e.to_string().contains("two completion providers"), "{e}");
}
