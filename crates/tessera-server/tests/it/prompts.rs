//! Prompts through the public API, over an in-memory connection, in both
//! eras: listing (pagination, cache hints, order), getting (arguments,
//! content types, errors), run-time changes and their notifications.

use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tessera_client::{Client, ClientError};
use tessera_server::{
    BuildError, PromptArgs, PromptArgsMap, ProtocolError, RequestContext, Server, State, prompt,
};
use tessera_testkit::pair::{ERAS, in_process};
use tessera_types::{
    ContentBlock, ErrorObject, GetPromptResult, Icon, JsonObject, PromptArgument, PromptMessage,
    ProtocolVersion, Role,
};

async fn connect<S: Send + Sync + 'static>(server: &Server<S>, version: ProtocolVersion) -> Client {
    in_process(
        server,
        Client::builder("prompt-tests", "1.0").protocol_version(version),
    )
    .await
}

fn params(v: Value) -> Option<JsonObject> {
    match v {
        Value::Object(o) => Some(o),
        _ => None,
    }
}

async fn get(client: &Client, name: &str, arguments: Value) -> Result<JsonObject, ClientError> {
    client
        .request_raw(
            "prompts/get",
            params(json!({"name": name, "arguments": arguments})),
        )
        .await
}

fn code(r: Result<JsonObject, ClientError>) -> (i64, String) {
    let e = r.expect_err("an error response");
    let remote = e.remote().expect("a JSON-RPC error");
    (remote.code, remote.message.clone())
}

fn messages(result: &JsonObject) -> Vec<PromptMessage> {
    serde_json::from_value(result["messages"].clone()).expect("messages")
}

async fn hello() -> &'static str {
    "Hello!"
}

#[derive(Deserialize, JsonSchema)]
struct Review {
    /// The code to review.
    code: String,
    /// How many remarks to make at most.
    remarks: Option<u32>,
}

async fn review(PromptArgs(r): PromptArgs<Review>) -> Vec<PromptMessage> {
    vec![
        PromptMessage::user_text(format!("Review this:\n{}", r.code)),
        PromptMessage::assistant_text(format!("At most {} remarks.", r.remarks.unwrap_or(3))),
    ]
}

async fn echo_args(PromptArgsMap(m): PromptArgsMap) -> String {
    let mut pairs: Vec<String> = m.iter().map(|(k, v)| format!("{k}={v}")).collect();
    pairs.sort();
    pairs.join(",")
}

fn basic_server() -> Server {
    Server::builder()
        .prompt(
            prompt("greeting")
                .title("Greeting")
                .description("Says hello")
                .icons(vec![Icon::new("https://example.com/hi.svg")])
                .handler(hello),
        )
        .prompt(prompt("code_review").handler(review))
        .prompt(
            prompt("test_prompt_with_arguments")
                .description("A prompt with arguments")
                .argument("arg1", "First argument", true)
                .argument("arg2", "Second argument", false)
                .handler(echo_args),
        )
        .build()
        .expect("builds")
}

#[tokio::test]
async fn declares_list_changed_and_lists_in_registration_order() {
    let server = basic_server();
    for v in ERAS {
        let client = connect(&server, v).await;
        assert_eq!(
            serde_json::to_value(client.server_capabilities().prompts).unwrap(),
            json!({"listChanged": true}),
            "{v}"
        );
        let list = client.request_raw("prompts/list", None).await.unwrap();
        let names: Vec<&str> = list["prompts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            ["greeting", "code_review", "test_prompt_with_arguments"]
        );
        let greeting = &list["prompts"][0];
        assert_eq!(greeting["title"], "Greeting");
        assert_eq!(greeting["description"], "Says hello");
        assert_eq!(greeting["icons"][0]["src"], "https://example.com/hi.svg");
        assert!(greeting.get("arguments").is_none());
        assert_eq!(
            list["prompts"][2]["arguments"],
            json!([
                {"name": "arg1", "description": "First argument", "required": true},
                {"name": "arg2", "description": "Second argument", "required": false},
            ])
        );
        assert!(list.get("nextCursor").is_none());
        if v == ProtocolVersion::V2026_07_28 {
            assert_eq!(list["ttlMs"], json!(60_000));
            assert_eq!(list["cacheScope"], "public");
            assert_eq!(list["resultType"], "complete");
        } else {
            assert!(list.get("ttlMs").is_none());
            assert!(list.get("cacheScope").is_none());
        }
    }
}

#[tokio::test]
async fn typed_arguments_declare_the_prompt_arguments() {
    let server = basic_server();
    for v in ERAS {
        let client = connect(&server, v).await;
        let list = client.request_raw("prompts/list", None).await.unwrap();
        let args: Vec<PromptArgument> =
            serde_json::from_value(list["prompts"][1]["arguments"].clone()).unwrap();
        let code_arg = args.iter().find(|a| a.name == "code").unwrap();
        assert_eq!(code_arg.required, Some(true));
        assert_eq!(code_arg.description.as_deref(), Some("The code to review."));
        let remarks = args.iter().find(|a| a.name == "remarks").unwrap();
        assert_eq!(remarks.required, Some(false));

        let r = get(
            &client,
            "code_review",
            json!({"code": "fn main() {}", "remarks": "5"}),
        )
        .await
        .unwrap();
        let m = messages(&r);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].role, Role::User);
        assert_eq!(m[0].content.as_text(), Some("Review this:\nfn main() {}"));
        assert_eq!(m[1].role, Role::Assistant);
        assert_eq!(m[1].content.as_text(), Some("At most 5 remarks."));

        // A value that does not parse as the field's type.
        let (c, msg) = code(
            get(
                &client,
                "code_review",
                json!({"code": "x", "remarks": "five"}),
            )
            .await,
        );
        assert_eq!(c, -32602, "{msg}");
        assert!(msg.contains("code_review"), "{msg}");
    }
}

#[tokio::test]
async fn a_string_is_one_user_message_and_the_description_is_filled_in() {
    let server = basic_server();
    for v in ERAS {
        let client = connect(&server, v).await;
        let r = get(&client, "greeting", json!({})).await.unwrap();
        assert_eq!(r["description"], "Says hello");
        assert_eq!(
            r["messages"],
            json!([{"role": "user", "content": {"type": "text", "text": "Hello!"}}])
        );
        // No arguments at all is the same as an empty object.
        let r = client
            .request_raw("prompts/get", params(json!({"name": "greeting"})))
            .await
            .unwrap();
        assert_eq!(messages(&r).len(), 1);
        if v == ProtocolVersion::V2026_07_28 {
            assert_eq!(r["resultType"], "complete");
        }
    }
}

#[tokio::test]
async fn arguments_are_checked_before_the_handler_runs() {
    let server = basic_server();
    for v in ERAS {
        let client = connect(&server, v).await;
        let r = get(
            &client,
            "test_prompt_with_arguments",
            json!({"arg1": "a", "arg2": "b"}),
        )
        .await
        .unwrap();
        assert_eq!(messages(&r)[0].content.as_text(), Some("arg1=a,arg2=b"));

        let (c, msg) = code(get(&client, "test_prompt_with_arguments", json!({"arg2": "b"})).await);
        assert_eq!(c, -32602);
        assert!(
            msg.contains("arg1") && msg.contains("Missing required"),
            "{msg}"
        );

        let (c, msg) = code(get(&client, "no_such_prompt", json!({})).await);
        assert_eq!(c, -32602);
        assert!(msg.contains("no_such_prompt"), "{msg}");

        let (c, msg) = code(
            get(
                &client,
                "test_prompt_with_arguments",
                json!({"arg1": "a", "agr2": "typo"}),
            )
            .await,
        );
        assert_eq!(c, -32602);
        assert!(msg.contains("agr2") && msg.contains("arg1, arg2"), "{msg}");

        let (c, msg) = code(get(&client, "greeting", json!({"x": "1"})).await);
        assert_eq!(c, -32602);
        assert!(msg.contains("takes no arguments"), "{msg}");

        // Argument values are strings.
        let (c, _) = code(get(&client, "test_prompt_with_arguments", json!({"arg1": 5})).await);
        assert_eq!(c, -32602);
        // A name is required.
        let (c, _) = code(
            client
                .request_raw("prompts/get", params(json!({"arguments": {}})))
                .await,
        );
        assert_eq!(c, -32602);
    }
}

#[tokio::test]
async fn undeclared_arguments_can_be_allowed() {
    let server = Server::builder()
        .prompt(
            prompt("open")
                .argument("a", "A", false)
                .allow_undeclared_arguments()
                .handler(echo_args),
        )
        .build()
        .unwrap();
    for v in ERAS {
        let client = connect(&server, v).await;
        let r = get(&client, "open", json!({"a": "1", "b": "2"}))
            .await
            .unwrap();
        assert_eq!(messages(&r)[0].content.as_text(), Some("a=1,b=2"));
    }
}

async fn every_content_type() -> Vec<PromptMessage> {
    let user = |content| PromptMessage {
        role: Role::User,
        content,
    };
    let mut link = tessera_types::ResourceLink::new("file:///project/src/main.rs", "main.rs");
    link.description = Some("Primary application entry point".into());
    link.mime_type = Some("text/x-rust".into());
    vec![
        user(ContentBlock::text("plain text")),
        user(ContentBlock::image("iVBORw0KGgo=", "image/png")),
        user(ContentBlock::audio("UklGRg==", "audio/wav")),
        user(ContentBlock::ResourceLink(link)),
        user(ContentBlock::embedded_text(
            "resource://example",
            "Resource content",
        )),
        PromptMessage {
            role: Role::Assistant,
            content: ContentBlock::embedded_blob("resource://blob", &[0, 1, 2, 255]),
        },
    ]
}

#[tokio::test]
async fn messages_carry_every_content_type() {
    let server = Server::builder()
        .prompt(prompt("all").handler(every_content_type))
        .build()
        .unwrap();
    for v in ERAS {
        let client = connect(&server, v).await;
        let r = get(&client, "all", json!({})).await.unwrap();
        let m = &r["messages"];
        assert_eq!(
            m[0]["content"],
            json!({"type": "text", "text": "plain text"})
        );
        assert_eq!(
            m[1]["content"],
            json!({"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"})
        );
        assert_eq!(
            m[2]["content"],
            json!({"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"})
        );
        assert_eq!(
            m[3]["content"],
            json!({
                "type": "resource_link",
                "uri": "file:///project/src/main.rs",
                "name": "main.rs",
                "description": "Primary application entry point",
                "mimeType": "text/x-rust",
            })
        );
        assert_eq!(m[4]["content"]["type"], "resource");
        assert_eq!(m[4]["content"]["resource"]["uri"], "resource://example");
        assert_eq!(m[4]["content"]["resource"]["text"], "Resource content");
        assert_eq!(m[5]["role"], "assistant");
        assert_eq!(m[5]["content"]["resource"]["blob"], "AAEC/w==");
        // And it all reads back into the types.
        let typed: GetPromptResult = serde_json::from_value(Value::Object(r.clone())).unwrap();
        assert_eq!(typed.messages, every_content_type().await);
    }
}

#[tokio::test]
async fn an_older_client_gets_a_resource_link_as_text() {
    let server = Server::builder()
        .prompt(prompt("all").handler(every_content_type))
        .build()
        .unwrap();
    let client = connect(&server, ProtocolVersion::V2025_03_26).await;
    let r = get(&client, "all", json!({})).await.unwrap();
    assert_eq!(
        r["messages"][3]["content"],
        json!({
            "type": "text",
            "text": "Resource: main.rs <file:///project/src/main.rs>\nPrimary application entry point",
        })
    );
    assert_eq!(r["messages"][2]["content"]["type"], "audio");
}

#[derive(Debug)]
struct Unavailable;

impl std::fmt::Display for Unavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the template store is unavailable")
    }
}

async fn failing() -> Result<String, Unavailable> {
    Err(Unavailable)
}

async fn refusing(PromptArgsMap(m): PromptArgsMap) -> Result<String, ProtocolError> {
    match m.get("lang").map(String::as_str) {
        Some("rust") => Ok("ok".into()),
        other => Err(ProtocolError(ErrorObject::invalid_params(format!(
            "Unsupported language: {other:?}"
        )))),
    }
}

async fn broken_image() -> PromptMessage {
    PromptMessage {
        role: Role::User,
        content: ContentBlock::image("%%% not base64 %%%", "image/png"),
    }
}

#[tokio::test]
async fn handler_failures_are_json_rpc_errors() {
    let server = Server::builder()
        .prompt(prompt("failing").handler(failing))
        .prompt(
            prompt("refusing")
                .argument("lang", "A language", true)
                .handler(refusing),
        )
        .prompt(prompt("broken").handler(broken_image))
        .build()
        .unwrap();
    for v in ERAS {
        let client = connect(&server, v).await;
        let (c, msg) = code(get(&client, "failing", json!({})).await);
        assert_eq!(c, -32603);
        assert!(msg.contains("unavailable"), "{msg}");

        let (c, msg) = code(get(&client, "refusing", json!({"lang": "cobol"})).await);
        assert_eq!(c, -32602);
        assert!(msg.contains("cobol"), "{msg}");
        assert!(
            get(&client, "refusing", json!({"lang": "rust"}))
                .await
                .is_ok()
        );

        let (c, msg) = code(get(&client, "broken", json!({})).await);
        assert_eq!(c, -32603);
        assert!(msg.contains("broken") && msg.contains("base64"), "{msg}");
    }
}

struct Greeter {
    greeting: String,
}

async fn stateful(
    State(s): State<Greeter>,
    ctx: RequestContext,
    PromptArgsMap(m): PromptArgsMap,
) -> String {
    format!(
        "{} {} ({})",
        s.greeting,
        m.get("name").map(String::as_str).unwrap_or("stranger"),
        ctx.protocol_version()
    )
}

#[tokio::test]
async fn handlers_extract_state_and_context() {
    let server = Server::with_state(Greeter {
        greeting: "Hi".into(),
    })
    .prompt(
        prompt("greet")
            .argument("name", "Who", false)
            .handler(stateful),
    )
    .build()
    .unwrap();
    for v in ERAS {
        let client = connect(&server, v).await;
        let r = get(&client, "greet", json!({"name": "Ada"})).await.unwrap();
        assert_eq!(
            messages(&r)[0].content.as_text(),
            Some(format!("Hi Ada ({v})").as_str())
        );
    }
}

#[tokio::test]
async fn pages_are_deterministic_and_cursors_sealed() {
    let mut b = Server::builder().page_size(2);
    for i in 0..5 {
        b = b.prompt(prompt(format!("p{i}")).handler(hello));
    }
    let server = b.build().unwrap();
    for v in ERAS {
        let client = connect(&server, v).await;
        let mut seen = Vec::new();
        let mut cursor: Option<String> = None;
        let mut first_cursor = None;
        loop {
            let p = cursor
                .as_ref()
                .map(|c| json!({"cursor": c}))
                .unwrap_or(json!({}));
            let page = client.request_raw("prompts/list", params(p)).await.unwrap();
            let prompts = page["prompts"].as_array().unwrap();
            assert!(prompts.len() <= 2);
            seen.extend(
                prompts
                    .iter()
                    .map(|p| p["name"].as_str().unwrap().to_owned()),
            );
            if v == ProtocolVersion::V2026_07_28 {
                assert_eq!(page["cacheScope"], "public", "every page carries the hints");
                assert!(page["ttlMs"].is_u64());
            }
            match page.get("nextCursor") {
                Some(Value::String(c)) => {
                    first_cursor.get_or_insert_with(|| c.clone());
                    cursor = Some(c.clone());
                }
                _ => break,
            }
        }
        assert_eq!(seen, ["p0", "p1", "p2", "p3", "p4"]);

        // The same cursor gives the same page.
        let c = first_cursor.unwrap();
        let a = client
            .request_raw("prompts/list", params(json!({"cursor": c})))
            .await
            .unwrap();
        let b = client
            .request_raw("prompts/list", params(json!({"cursor": c})))
            .await
            .unwrap();
        assert_eq!(a["prompts"], b["prompts"]);

        // A tampered cursor, garbage, a non-string.
        let mut tampered = c.into_bytes();
        // A character in the middle: the payload changes, the seal does not match.
        let mid = tampered.len() / 2;
        tampered[mid] = if tampered[mid] == b'A' { b'B' } else { b'A' };
        let tampered = String::from_utf8(tampered).unwrap();
        for bad in [json!(tampered), json!("garbage"), json!(""), json!(7)] {
            let (c, msg) = code(
                client
                    .request_raw("prompts/list", params(json!({"cursor": bad})))
                    .await,
            );
            assert_eq!(c, -32602, "{bad}: {msg}");
        }
    }
}

#[tokio::test]
async fn a_tools_cursor_is_not_a_prompts_cursor() {
    let mut b = Server::builder().page_size(1);
    for i in 0..2 {
        b = b
            .prompt(prompt(format!("p{i}")).handler(hello))
            .tool(tessera_server::tool(format!("t{i}")).handler(hello));
    }
    let server = b.build().unwrap();
    let client = connect(&server, ProtocolVersion::V2025_11_25).await;
    let tools = client.request_raw("tools/list", None).await.unwrap();
    let cursor = tools["nextCursor"].clone();
    assert!(cursor.is_string());
    let (c, _) = code(
        client
            .request_raw("prompts/list", params(json!({"cursor": cursor})))
            .await,
    );
    assert_eq!(c, -32602);
}

fn build_error(b: tessera_server::ServerBuilder) -> BuildError {
    b.build().expect_err("the build fails")
}

#[test]
fn definitions_are_checked_at_build_time() {
    let dup = build_error(
        Server::builder()
            .prompt(prompt("twice").handler(hello))
            .prompt(prompt("twice").handler(hello)),
    );
    assert!(dup.to_string().contains("twice"), "{dup}");

    for bad in ["", " padded", "new\nline"] {
        let e = build_error(Server::builder().prompt(prompt(bad).handler(hello)));
        assert!(e.to_string().contains("name"), "{e}");
    }

    let e = build_error(
        Server::builder().prompt(
            prompt("args")
                .argument("a", "A", true)
                .argument("a", "again", false)
                .handler(hello),
        ),
    );
    assert!(e.to_string().contains("\"a\""), "{e}");

    let e = build_error(
        Server::builder().prompt(prompt("args").argument("", "empty", true).handler(hello)),
    );
    assert!(e.to_string().contains("argument"), "{e}");
}

#[tokio::test]
async fn runtime_changes_are_announced_to_a_legacy_session() {
    let server = basic_server();
    let client = connect(&server, ProtocolVersion::V2025_11_25).await;
    let mut notes = client.events();

    server
        .add_prompt(prompt("late").argument("x", "X", true).handler(echo_args))
        .unwrap();
    let (method, _) = next_note(&mut notes).await;
    assert_eq!(method, "notifications/prompts/list_changed");
    let list = client.request_raw("prompts/list", None).await.unwrap();
    assert_eq!(list["prompts"].as_array().unwrap().len(), 4);
    assert!(get(&client, "late", json!({"x": "1"})).await.is_ok());

    // Adding a duplicate fails and announces nothing.
    assert!(server.add_prompt(prompt("late").handler(hello)).is_err());

    assert!(server.remove_prompt("late"));
    let (method, _) = next_note(&mut notes).await;
    assert_eq!(method, "notifications/prompts/list_changed");
    assert!(!server.remove_prompt("late"));
    let (c, _) = code(get(&client, "late", json!({"x": "1"})).await);
    assert_eq!(c, -32602);
    assert!(notes.try_recv().is_none(), "nothing else was announced");
}

type Notes = tessera_client::EventStream;

/// The next notification other than a log message, within five seconds.
async fn next_note(notes: &mut Notes) -> (String, Option<JsonObject>) {
    tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            let e = notes.recv().await.expect("the connection is open");
            match e.method() {
                Some("notifications/message") | None => {}
                Some(m) => return (m.to_owned(), e.params()),
            }
        }
    })
    .await
    .expect("a notification in time")
}

#[tokio::test]
async fn runtime_changes_reach_a_modern_listener() {
    let server = basic_server();
    let client = connect(&server, ProtocolVersion::V2026_07_28).await;
    let mut notes = client.events();
    let peer = client.peer().clone();
    let listen = tokio::spawn(async move {
        peer.request(
            "subscriptions/listen",
            params(json!({"notifications": {"promptsListChanged": true}})),
            Default::default(),
        )
        .await
    });
    let (ack, params_) = next_note(&mut notes).await;
    assert_eq!(ack, "notifications/subscriptions/acknowledged");
    assert_eq!(
        params_.unwrap()["notifications"],
        json!({"promptsListChanged": true})
    );
    server.add_prompt(prompt("late").handler(hello)).unwrap();
    let (method, _) = next_note(&mut notes).await;
    assert_eq!(method, "notifications/prompts/list_changed");
    listen.abort();
}

#[tokio::test]
async fn dynamic_prompts_start_empty_and_grow() {
    let server = Server::builder().dynamic_prompts().build().unwrap();
    let caps = server.capabilities();
    assert!(caps.prompts.is_some());
    let client = connect(&server, ProtocolVersion::V2025_11_25).await;
    let list = client.request_raw("prompts/list", None).await.unwrap();
    assert_eq!(list["prompts"], json!([]));
    let mut notes = client.events();
    server.add_prompt(prompt("first").handler(hello)).unwrap();
    let (method, _) = next_note(&mut notes).await;
    assert_eq!(method, "notifications/prompts/list_changed");
    assert!(get(&client, "first", json!({})).await.is_ok());

    // Without prompts (and without dynamic_prompts) nothing is offered.
    let bare = Server::builder().build().unwrap();
    assert!(bare.capabilities().prompts.is_none());
    let client = connect(&bare, ProtocolVersion::V2025_11_25).await;
    let (c, _) = code(client.request_raw("prompts/list", None).await);
    assert_eq!(c, -32601);
}

#[tokio::test]
async fn many_gets_in_parallel() {
    let server = basic_server();
    let client = Arc::new(connect(&server, ProtocolVersion::V2026_07_28).await);
    let mut tasks = Vec::new();
    for i in 0..20 {
        let client = client.clone();
        tasks.push(tokio::spawn(async move {
            let r = get(
                &client,
                "test_prompt_with_arguments",
                json!({"arg1": i.to_string()}),
            )
            .await
            .unwrap();
            messages(&r)[0].content.as_text().unwrap().to_owned()
        }));
    }
    for (i, t) in tasks.into_iter().enumerate() {
        assert_eq!(t.await.unwrap(), format!("arg1={i}"));
    }
}

async fn with_roots(ctx: RequestContext) -> Result<String, tessera_server::mrtr::InputError> {
    let roots = ctx.roots().await?;
    Ok(format!("{} roots", roots.roots.len()))
}

#[tokio::test]
async fn a_modern_get_can_ask_for_input_and_be_retried() {
    let server = Server::builder()
        .prompt(prompt("rooted").handler(with_roots))
        .build()
        .unwrap();
    let client = in_process(
        &server,
        Client::builder("prompt-tests", "1.0")
            .protocol_version(ProtocolVersion::V2026_07_28)
            .capabilities(tessera_types::ClientCapabilities {
                roots: Some(Default::default()),
                ..Default::default()
            }),
    )
    .await;

    let first = get(&client, "rooted", json!({})).await.unwrap();
    assert_eq!(first["resultType"], "input_required");
    let requests = first["inputRequests"].as_object().unwrap();
    assert_eq!(requests.len(), 1);
    let (key, request) = requests.iter().next().unwrap();
    assert_eq!(request["method"], "roots/list");
    let state = first["requestState"].clone();
    assert!(state.is_string());

    let retry = client
        .request_raw(
            "prompts/get",
            params(json!({
                "name": "rooted",
                "arguments": {},
                "inputResponses": {key.as_str(): {"roots": [{"uri": "file:///work"}]}},
                "requestState": state,
            })),
        )
        .await
        .unwrap();
    assert_eq!(retry["resultType"], "complete");
    assert_eq!(messages(&retry)[0].content.as_text(), Some("1 roots"));

    // A forged state is refused before the handler runs.
    let (c, _) = code(
        client
            .request_raw(
                "prompts/get",
                params(json!({"name": "rooted", "arguments": {}, "requestState": "forged"})),
            )
            .await,
    );
    assert_eq!(c, -32602);
}
