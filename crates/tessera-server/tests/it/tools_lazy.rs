//! Schemas derived on first use (`compile_schemas_on_first_use`): a server
//! built that way derives no schema while building, and then lists, checks
//! and mirrors exactly what a server that derived them at build does.

use std::borrow::Cow;
use std::sync::atomic::{AtomicUsize, Ordering};

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};
use serde_json::json;
use tessera_client::Client;
use tessera_server::{Args, BuildError, Server, ServerBuilder, Structured, tool};
use tessera_testkit::pair::in_process;
use tessera_types::ProtocolVersion;

#[derive(Debug, Deserialize, JsonSchema)]
struct Query {
    /// Where to look.
    #[schemars(extend("x-mcp-header" = "Region"))]
    region: String,
    /// At most this many (1 or more).
    #[schemars(range(min = 1))]
    limit: u32,
}

#[derive(Debug, Serialize, JsonSchema)]
struct Found {
    hits: Vec<String>,
}

async fn search(Args(q): Args<Query>) -> Structured<Found> {
    Structured(Found {
        hits: vec![format!("{} x{}", q.region, q.limit)],
    })
}

/// The same tools on either kind of server.
fn tools(b: ServerBuilder) -> ServerBuilder {
    b.tool(tool("search").description("Searches").handler(search))
        .tool(
            tool("given")
                .input_schema(
                    json!({"type": "object", "properties": {"n": {"type": "integer", "x-mcp-header": "N"}}})
                        .as_object()
                        .cloned()
                        .unwrap_or_default(),
                )
                .handler(|| async { "given" }),
        )
        .tool(tool("plain").handler(|| async { "plain" }))
}

async fn connect(server: &Server) -> Client {
    in_process(
        server,
        Client::builder("lazy-tests", "1.0").protocol_version(ProtocolVersion::V2025_11_25),
    )
    .await
}

/// `tools/list`, the answers to good and bad calls, the input schemas and
/// the `x-mcp-header` parameters are the same whether the schemas were
/// derived while building or on first use (and the first thing asked may
/// be a call, or a transport's header lookup, rather than the list).
#[tokio::test]
async fn schemas_derived_on_first_use_are_those_derived_at_build() {
    let eager = tools(Server::builder()).build().expect("builds");
    let lazy = || {
        tools(Server::builder().compile_schemas_on_first_use())
            .build()
            .expect("builds")
    };
    let first_listed = lazy();
    let first_called = lazy();
    let first_looked_up = lazy();
    for name in ["search", "given", "plain"] {
        let headers = |s: &Server| {
            s.tool_param_headers(name)
                .map(|h| format!("{h:?}"))
                .expect("a tool")
        };
        assert_eq!(headers(&first_looked_up), headers(&eager), "{name}");
        assert_eq!(
            first_looked_up.tool_input_schema(name),
            eager.tool_input_schema(name),
            "{name}"
        );
    }
    let calls = &[
        ("search", json!({"region": "eu", "limit": 2})),
        ("search", json!({"region": "eu", "limit": 0})),
        ("search", json!({"region": "eu"})),
        ("given", json!({"n": "not a number"})),
        ("plain", json!({})),
    ];
    let answers = |c: Client| async move {
        let mut out = Vec::new();
        for (name, args) in calls {
            let r = c.call_tool(name, args.clone()).await.expect("an answer");
            out.push(serde_json::to_value(r).expect("json"));
        }
        out
    };
    let listed = |c: Client| async move {
        let tools = c.list_tools().await.expect("tools/list");
        serde_json::to_value(tools).expect("json")
    };
    let want_list = listed(connect(&eager).await).await;
    let want_answers = answers(connect(&eager).await).await;
    assert_eq!(
        want_list[0]["inputSchema"]["properties"]["region"]["x-mcp-header"],
        "Region"
    );
    assert!(want_list[0]["outputSchema"].is_object(), "{want_list}");
    assert_eq!(listed(connect(&first_listed).await).await, want_list);
    assert_eq!(answers(connect(&first_listed).await).await, want_answers);
    assert_eq!(answers(connect(&first_called).await).await, want_answers);
    assert_eq!(listed(connect(&first_called).await).await, want_list);
    assert_eq!(listed(connect(&first_looked_up).await).await, want_list);
}

/// How many times [`Counted`]'s schema was made.
static DERIVED: AtomicUsize = AtomicUsize::new(0);

/// Arguments whose schema counts how often it is derived.
#[derive(Debug, Deserialize)]
struct Counted {
    #[allow(dead_code)]
    n: u32,
}

impl JsonSchema for Counted {
    fn schema_name() -> Cow<'static, str> {
        "Counted".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        DERIVED.fetch_add(1, Ordering::SeqCst);
        schemars::json_schema!({
            "type": "object",
            "properties": {"n": {"type": "integer", "minimum": 0}},
            "required": ["n"]
        })
    }
}

/// Building a server that compiles on first use derives no schema; the
/// first `tools/list` derives each tool's once, and later lists and calls
/// reuse it. Without the setting the build derives it (once).
#[tokio::test]
async fn building_on_first_use_derives_no_schema_until_one_is_needed() {
    let server = Server::builder()
        .compile_schemas_on_first_use()
        .tool(tool("counted").handler(|Args(_): Args<Counted>| async { "ok" }))
        .build()
        .expect("builds");
    assert_eq!(DERIVED.load(Ordering::SeqCst), 0, "derived while building");
    let client = connect(&server).await;
    assert_eq!(DERIVED.load(Ordering::SeqCst), 0, "derived by initialize");
    let tools = client.list_tools().await.expect("tools/list");
    assert_eq!(tools[0].input_schema["required"], json!(["n"]));
    assert_eq!(DERIVED.load(Ordering::SeqCst), 1);
    client.list_tools().await.expect("tools/list");
    let ok = client.call_tool("counted", json!({"n": 1})).await.unwrap();
    assert_eq!(ok.content[0].as_text(), Some("ok"));
    assert_eq!(DERIVED.load(Ordering::SeqCst), 1, "derived once");
    Server::builder()
        .tool(tool("counted").handler(|Args(_): Args<Counted>| async { "ok" }))
        .build()
        .expect("builds");
    assert_eq!(DERIVED.load(Ordering::SeqCst), 2, "derived once at build");
}

/// Arguments whose schema is not an object schema.
#[derive(Debug, Deserialize, JsonSchema)]
enum Mode {
    Fast,
    Slow,
}

/// A derived `inputSchema` that is not an object schema fails the build by
/// default. Compiled on first use, the server builds and answers
/// `initialize`; `tools/list` and the tool's calls then fail with an
/// internal error carrying the build error's text, every time, while the
/// other tools are still called.
#[tokio::test]
async fn a_derived_schema_refused_on_first_use_fails_the_list_and_its_calls() {
    let mode = || tool("mode").handler(|Args(_): Args<Mode>| async { "ran" });
    let built = Server::builder().tool(mode()).build();
    let Err(BuildError::InvalidSchema {
        tool: name,
        problem,
    }) = &built
    else {
        panic!("{built:?}");
    };
    assert_eq!(
        (name.as_str(), problem.as_str()),
        ("mode", "inputSchema must have \"type\": \"object\"")
    );
    let text = built.err().map(|e| e.to_string()).unwrap_or_default();
    let server = Server::builder()
        .compile_schemas_on_first_use()
        .tool(mode())
        .tool(tool("plain").handler(|| async { "plain" }))
        .build()
        .expect("the schema is derived when first needed");
    let client = connect(&server).await;
    for _ in 0..2 {
        let e = client.list_tools().await.unwrap_err();
        let e = e.remote().expect("an error answer");
        assert_eq!(e.code, -32603, "{e:?}");
        assert!(e.message.contains(&text), "{e:?}");
        let e = client.call_tool("mode", json!({})).await.unwrap_err();
        let e = e.remote().expect("an error answer");
        assert_eq!(e.code, -32603, "{e:?}");
        assert!(e.message.contains(&text), "{e:?}");
    }
    assert!(server.tool_input_schema("mode").is_none());
    let plain = client.call_tool("plain", json!({})).await.unwrap();
    assert_eq!(plain.content[0].as_text(), Some("plain"));
    assert!(
        matches!(client.call_tool("none", json!({})).await.unwrap_err().remote(), Some(e) if e.code == -32602)
    );
}
