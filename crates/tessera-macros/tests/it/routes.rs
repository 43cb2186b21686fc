//! The macros end to end: servers built from `#[tool]`, `#[prompt]`,
//! `#[resource]` functions and `#[tools]` impl blocks (plain and generic),
//! served over an in-memory connection and called with the Tessera client.
//! Checks the names, descriptions (from doc comments), schemas, annotations
//! and that calls reach the right function with the right arguments.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tessera_client::Client;
use tessera_macros::{prompt, resource, tool, tools};
use tessera_server::{Args, PromptArgs, RequestContext, Server, State, Structured, Uri, Vars};
use tessera_testkit::pair::in_process;
use tessera_types::{CallToolResult, ContentBlock, JsonObject, Tool};

async fn connect<S: Send + Sync + 'static>(server: &Server<S>) -> Client {
    in_process(server, Client::builder("macro-tests", "1.0")).await
}

async fn raw(client: &Client, method: &str, params: Value) -> Value {
    let params: Option<JsonObject> = match params {
        Value::Object(o) => Some(o),
        _ => None,
    };
    Value::Object(client.request_raw(method, params).await.expect(method))
}

fn text(r: &CallToolResult) -> &str {
    match r.content.first() {
        Some(ContentBlock::Text(t)) => &t.text,
        other => panic!("expected one text block, got {other:?}"),
    }
}

fn find<'a>(tools: &'a [Tool], name: &str) -> &'a Tool {
    tools
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("no tool {name} in {tools:?}"))
}

// ---------------------------------------------------------------- free fns

#[derive(Deserialize, JsonSchema)]
struct Echo {
    /// The text to send back.
    text: String,
}

/// Sends the text back.
///
/// Useful for checking a connection.
#[tool(annotations(read_only, open_world = false))]
async fn echo(Args(a): Args<Echo>) -> String {
    a.text
}

#[derive(Deserialize, JsonSchema)]
struct Sum {
    a: i64,
    b: i64,
}

#[derive(Serialize, JsonSchema)]
struct Total {
    total: i64,
}

/// This doc comment is replaced by the description below.
#[tool(
    name = "math.add",
    title = "Add",
    description = "Adds two integers",
    annotations(destructive = false, idempotent)
)]
async fn add(Args(s): Args<Sum>, cx: RequestContext) -> Structured<Total> {
    let _ = cx.request_id();
    Structured(Total { total: s.a + s.b })
}

/// Fails when asked to.
#[tool]
async fn r#fail(Args(a): Args<Echo>) -> Result<String, String> {
    Err(format!("failed: {}", a.text))
}

#[tool]
async fn undocumented() {}

#[tokio::test]
async fn free_functions_become_tools() {
    let server = Server::builder()
        .tool(echo_tool())
        .tool(add_tool())
        .tool(fail_tool())
        .tool(undocumented_tool())
        .build()
        .expect("builds");
    let client = connect(&server).await;
    let tools = client.list_tools().await.expect("lists");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["echo", "math.add", "fail", "undocumented"]);

    let e = find(&tools, "echo");
    assert_eq!(
        e.description.as_deref(),
        Some("Sends the text back.\n\nUseful for checking a connection.")
    );
    assert_eq!(e.title, None);
    assert_eq!(e.input_schema["type"], "object");
    assert_eq!(e.input_schema["required"], json!(["text"]));
    assert_eq!(
        e.input_schema["properties"]["text"]["description"],
        "The text to send back."
    );
    let hints = e.annotations.as_ref().expect("annotations");
    assert_eq!(hints.read_only_hint, Some(true));
    assert_eq!(hints.open_world_hint, Some(false));
    assert_eq!(hints.destructive_hint, None);
    assert_eq!(hints.idempotent_hint, None);
    assert_eq!(e.output_schema, None);

    let a = find(&tools, "math.add");
    assert_eq!(a.description.as_deref(), Some("Adds two integers"));
    assert_eq!(a.title.as_deref(), Some("Add"));
    let hints = a.annotations.as_ref().expect("annotations");
    assert_eq!(hints.destructive_hint, Some(false));
    assert_eq!(hints.idempotent_hint, Some(true));
    assert_eq!(hints.read_only_hint, None);
    let out = a
        .output_schema
        .as_ref()
        .expect("outputSchema from Structured<Total>");
    assert!(out["properties"].get("total").is_some(), "{out:?}");

    let f = find(&tools, "fail");
    assert_eq!(f.description.as_deref(), Some("Fails when asked to."));
    let u = find(&tools, "undocumented");
    assert_eq!(u.description, None);
    assert_eq!(u.input_schema["type"], "object");

    let r = client
        .call_tool("echo", json!({"text": "hi"}))
        .await
        .expect("calls");
    assert_eq!(text(&r), "hi");
    assert_ne!(r.is_error, Some(true));

    let r = client
        .call_tool("math.add", json!({"a": 2, "b": 40}))
        .await
        .expect("calls");
    assert_eq!(r.structured_content, Some(json!({"total": 42})));

    let r = client
        .call_tool("fail", json!({"text": "on purpose"}))
        .await
        .expect("calls");
    assert_eq!(r.is_error, Some(true));
    assert_eq!(text(&r), "failed: on purpose");

    // The schema the macro derived is enforced before the function runs.
    let r = client
        .call_tool("echo", json!({"text": 5}))
        .await
        .expect("calls");
    assert_eq!(r.is_error, Some(true));

    let r = client
        .call_tool("undocumented", json!({}))
        .await
        .expect("calls");
    assert!(r.content.is_empty());

    // The function itself is untouched and can still be called directly.
    assert_eq!(echo(Args(Echo { text: "x".into() })).await, "x");
}

struct Counter(AtomicU32);

/// Counts calls, in the server's state.
#[tool]
async fn bump(State(c): State<Counter>) -> String {
    (c.0.fetch_add(1, Ordering::SeqCst) + 1).to_string()
}

#[tokio::test]
async fn a_state_parameter_fixes_the_server_state_type() {
    let server = Server::with_state(Counter(AtomicU32::new(0)))
        .tool(bump_tool())
        .build()
        .expect("builds");
    let client = connect(&server).await;
    for want in ["1", "2", "3"] {
        let r = client.call_tool("bump", json!({})).await.expect("calls");
        assert_eq!(text(&r), want);
    }
}

// ------------------------------------------------------- prompts, resources

#[derive(Deserialize, JsonSchema)]
struct Review {
    /// The code to review.
    code: String,
    /// What to focus on.
    focus: Option<String>,
}

/// Asks for a code review.
#[prompt(title = "Code review")]
async fn code_review(PromptArgs(r): PromptArgs<Review>) -> String {
    let focus = r.focus.unwrap_or_else(|| "anything".into());
    format!("Review this, focusing on {focus}:\n{}", r.code)
}

/// The project's readme.
#[resource(
    uri = "docs://readme",
    name = "readme",
    mime_type = "text/markdown",
    size = 9
)]
async fn readme() -> &'static str {
    "# Tessera"
}

#[derive(Deserialize)]
struct UserId {
    id: u64,
}

/// A user's profile.
#[resource(template = "users://{id}/profile", mime_type = "text/plain")]
async fn profile(Vars(u): Vars<UserId>, Uri(uri): Uri) -> String {
    format!("user {} at {uri}", u.id)
}

#[tokio::test]
async fn prompts_and_resources_from_functions() {
    let server = Server::builder()
        .prompt(code_review_prompt())
        .resource(readme_resource())
        .resource_template(profile_resource())
        .build()
        .expect("builds");
    let client = connect(&server).await;

    let prompts = raw(&client, "prompts/list", json!({})).await;
    let p = &prompts["prompts"][0];
    assert_eq!(p["name"], "code_review");
    assert_eq!(p["title"], "Code review");
    assert_eq!(p["description"], "Asks for a code review.");
    let args = p["arguments"]
        .as_array()
        .expect("arguments from PromptArgs<Review>");
    assert_eq!(args[0]["name"], "code");
    assert_eq!(args[0]["required"], true);
    assert_eq!(args[1]["name"], "focus");
    assert_ne!(args[1]["required"], true);

    let got = raw(
        &client,
        "prompts/get",
        json!({"name": "code_review", "arguments": {"code": "fn main() {}", "focus": "names"}}),
    )
    .await;
    assert_eq!(
        got["messages"][0]["content"]["text"],
        "Review this, focusing on names:\nfn main() {}"
    );

    let resources = raw(&client, "resources/list", json!({})).await;
    let r = &resources["resources"][0];
    assert_eq!(r["uri"], "docs://readme");
    assert_eq!(r["name"], "readme");
    assert_eq!(r["mimeType"], "text/markdown");
    assert_eq!(r["description"], "The project's readme.");
    assert_eq!(r["size"], 9);

    let templates = raw(&client, "resources/templates/list", json!({})).await;
    let t = &templates["resourceTemplates"][0];
    assert_eq!(t["uriTemplate"], "users://{id}/profile");
    assert_eq!(t["name"], "profile");
    assert_eq!(t["description"], "A user's profile.");

    let read = raw(&client, "resources/read", json!({"uri": "docs://readme"})).await;
    assert_eq!(read["contents"][0]["text"], "# Tessera");
    assert_eq!(read["contents"][0]["mimeType"], "text/markdown");

    let read = raw(
        &client,
        "resources/read",
        json!({"uri": "users://7/profile"}),
    )
    .await;
    assert_eq!(read["contents"][0]["text"], "user 7 at users://7/profile");
}

// ------------------------------------------------------------- impl blocks

/// A notebook: tools, a prompt and resources as methods.
struct Notebook {
    title: String,
    notes: std::sync::Mutex<Vec<String>>,
}

#[derive(Deserialize, JsonSchema)]
struct Note {
    /// The note's text.
    text: String,
}

#[tools]
impl Notebook {
    /// Adds a note.
    #[tool(annotations(destructive = false))]
    async fn add_note(&self, Args(n): Args<Note>) -> String {
        let mut notes = self.notes.lock().expect("not poisoned");
        notes.push(n.text);
        format!("{} notes", notes.len())
    }

    /// Counts the notes.
    #[tool(name = "count")]
    async fn count_notes(self: Arc<Self>) -> String {
        self.notes.lock().expect("not poisoned").len().to_string()
    }

    /// The version of the notebook format.
    #[tool]
    async fn format_version() -> &'static str {
        "1"
    }

    /// Summarises the notebook.
    #[prompt]
    async fn summarise(&self) -> String {
        format!("Summarise the notebook {}", self.title)
    }

    /// Every note, one a line.
    #[resource(uri = "notebook://all", mime_type = "text/plain")]
    async fn all_notes(&self) -> String {
        self.notes.lock().expect("not poisoned").join("\n")
    }

    /// One note by its index.
    #[resource(template = "notebook://note/{index}")]
    async fn note(&self, Vars(v): Vars<NoteIndex>) -> Result<String, String> {
        let notes = self.notes.lock().expect("not poisoned");
        notes
            .get(v.index)
            .cloned()
            .ok_or_else(|| format!("no note {}", v.index))
    }

    /// Not a route: left alone.
    fn len(&self) -> usize {
        self.notes.lock().expect("not poisoned").len()
    }
}

#[derive(Deserialize)]
struct NoteIndex {
    index: usize,
}

#[tokio::test]
async fn impl_block_methods_become_routes() {
    let notebook = Arc::new(Notebook {
        title: "ideas".into(),
        notes: Default::default(),
    });
    let tools = Arc::clone(&notebook).tool_routes::<()>();
    let names: Vec<&str> = tools.iter().map(|t| t.definition().name.as_str()).collect();
    assert_eq!(names, ["add_note", "count", "format_version"]);
    assert_eq!(Arc::clone(&notebook).prompt_routes::<()>().len(), 1);
    assert_eq!(Arc::clone(&notebook).resource_routes::<()>().len(), 1);
    assert_eq!(
        Arc::clone(&notebook).resource_template_routes::<()>().len(),
        1
    );

    let server = Arc::clone(&notebook)
        .register(Server::builder())
        .build()
        .expect("builds");
    let client = connect(&server).await;

    let tools = client.list_tools().await.expect("lists");
    let add = find(&tools, "add_note");
    assert_eq!(add.description.as_deref(), Some("Adds a note."));
    assert_eq!(add.input_schema["required"], json!(["text"]));
    assert_eq!(
        add.annotations.as_ref().and_then(|a| a.destructive_hint),
        Some(false)
    );
    assert_eq!(
        find(&tools, "count").description.as_deref(),
        Some("Counts the notes.")
    );

    for (i, t) in ["a", "b"].iter().enumerate() {
        let r = client
            .call_tool("add_note", json!({"text": t}))
            .await
            .expect("calls");
        assert_eq!(text(&r), format!("{} notes", i + 1));
    }
    let r = client.call_tool("count", json!({})).await.expect("calls");
    assert_eq!(text(&r), "2");
    let r = client
        .call_tool("format_version", json!({}))
        .await
        .expect("calls");
    assert_eq!(text(&r), "1");
    // The handlers share the value the routes were made from.
    assert_eq!(notebook.len(), 2);

    let got = raw(&client, "prompts/get", json!({"name": "summarise"})).await;
    assert_eq!(
        got["messages"][0]["content"]["text"],
        "Summarise the notebook ideas"
    );
    let read = raw(&client, "resources/read", json!({"uri": "notebook://all"})).await;
    assert_eq!(read["contents"][0]["text"], "a\nb");
    let read = raw(
        &client,
        "resources/read",
        json!({"uri": "notebook://note/1"}),
    )
    .await;
    assert_eq!(read["contents"][0]["text"], "b");
}

/// Where a generic service keeps its data.
trait Store: Send + Sync + 'static {
    fn get(&self, key: &str) -> Option<String>;
}

struct Upper;

impl Store for Upper {
    fn get(&self, key: &str) -> Option<String> {
        Some(key.to_uppercase())
    }
}

struct Empty;

impl Store for Empty {
    fn get(&self, _: &str) -> Option<String> {
        None
    }
}

/// A service generic over its store.
struct Lookup<T> {
    store: T,
    prefix: &'static str,
}

#[derive(Deserialize, JsonSchema)]
struct Key {
    /// The key to look up.
    key: String,
}

#[tools]
impl<T: Store> Lookup<T> {
    /// Looks a key up in the store.
    #[tool]
    async fn get(&self, Args(k): Args<Key>) -> Result<String, String> {
        self.store
            .get(&k.key)
            .map(|v| format!("{}{v}", self.prefix))
            .ok_or_else(|| format!("no value for {}", k.key))
    }
}

#[tokio::test]
async fn generic_impl_blocks_work_for_each_type() {
    let upper = Arc::new(Lookup {
        store: Upper,
        prefix: "=",
    });
    let server = Server::builder()
        .tool(upper.tool_routes().pop().expect("one route"))
        .build()
        .expect("builds");
    let client = connect(&server).await;
    let tools = client.list_tools().await.expect("lists");
    let get = find(&tools, "get");
    assert_eq!(
        get.description.as_deref(),
        Some("Looks a key up in the store.")
    );
    assert_eq!(
        get.input_schema["properties"]["key"]["description"],
        "The key to look up."
    );
    let r = client
        .call_tool("get", json!({"key": "abc"}))
        .await
        .expect("calls");
    assert_eq!(text(&r), "=ABC");

    let empty = Arc::new(Lookup {
        store: Empty,
        prefix: "",
    });
    let server = empty.register(Server::builder()).build().expect("builds");
    let client = connect(&server).await;
    let r = client
        .call_tool("get", json!({"key": "abc"}))
        .await
        .expect("calls");
    assert_eq!(r.is_error, Some(true));
    assert_eq!(text(&r), "no value for abc");
}

/// State shared by the tools of a stateful impl block.
struct Hits(AtomicU32);

/// Methods that also take the server's state.
struct Stats;

#[tools]
impl Stats {
    /// Counts hits in the server's state.
    #[tool]
    async fn hit(&self, State(h): State<Hits>) -> String {
        (h.0.fetch_add(1, Ordering::SeqCst) + 1).to_string()
    }
}

#[tokio::test]
async fn impl_blocks_take_the_state_type_from_state_parameters() {
    let server = Arc::new(Stats)
        .register(Server::with_state(Hits(AtomicU32::new(10))))
        .build()
        .expect("builds");
    let client = connect(&server).await;
    let r = client.call_tool("hit", json!({})).await.expect("calls");
    assert_eq!(text(&r), "11");
}

/// Runs as a task only.
#[tool(task_support = "required")]
async fn long_job() -> &'static str {
    "done"
}

#[test]
fn task_support_reaches_the_definition() {
    let route: tessera_server::ToolRoute<()> = long_job_tool();
    let support = route
        .definition()
        .execution
        .as_ref()
        .and_then(|e| e.task_support);
    assert_eq!(support, Some(tessera_server::task::TaskSupport::Required));
    let plain: tessera_server::ToolRoute<()> = echo_tool();
    assert!(plain.definition().execution.is_none());
}
