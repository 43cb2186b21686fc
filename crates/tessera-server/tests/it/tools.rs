//! Tools through the public API: schemas per client version, argument
//! validation, unknown tools, runtime changes.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tessera_client::Client;
use tessera_server::{Args, Server, tool};
use tessera_testkit::pair::in_process;
use tessera_types::ProtocolVersion;

#[derive(Debug, Deserialize, JsonSchema)]
struct Point {
    x: f64,
    y: f64,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Line {
    /// Where it starts.
    from: Point,
    /// Where it ends.
    to: Point,
}

async fn length(Args(l): Args<Line>) -> String {
    let d = ((l.to.x - l.from.x).powi(2) + (l.to.y - l.from.y).powi(2)).sqrt();
    format!("{d}")
}

fn server() -> Server {
    Server::builder()
        .tool(
            tool("length")
                .description("Length of a line")
                .handler(length),
        )
        .draft07_schemas_before(ProtocolVersion::V2025_11_25)
        .build()
        .unwrap()
}

async fn connect(server: &Server, version: ProtocolVersion) -> Client {
    in_process(
        server,
        Client::builder("tool-tests", "1.0").protocol_version(version),
    )
    .await
}

async fn schema(version: ProtocolVersion) -> Value {
    let client = connect(&server(), version).await;
    let tools = client.list_tools().await.unwrap();
    Value::Object(tools[0].input_schema.clone())
}

#[tokio::test]
async fn old_clients_get_draft07_schemas() {
    let new = schema(ProtocolVersion::V2025_11_25).await;
    assert!(new.get("$defs").is_some(), "{new}");
    assert_eq!(new["properties"]["from"]["$ref"], "#/$defs/Point");
    for v in [ProtocolVersion::V2025_06_18, ProtocolVersion::V2024_11_05] {
        let old = schema(v).await;
        assert!(old.get("$defs").is_none(), "{old}");
        assert!(old["definitions"]["Point"].is_object(), "{old}");
        assert_eq!(old["properties"]["from"]["$ref"], "#/definitions/Point");
    }
}

#[tokio::test]
async fn arguments_are_checked_against_the_schema() {
    for v in [ProtocolVersion::V2025_06_18, ProtocolVersion::V2026_07_28] {
        let client = connect(&server(), v).await;
        let ok = client
            .call_tool(
                "length",
                json!({"from": {"x": 0, "y": 0}, "to": {"x": 3, "y": 4}}),
            )
            .await
            .unwrap();
        assert_eq!(ok.content[0].as_text(), Some("5"));
        let bad = client
            .call_tool("length", json!({"from": {"x": "zero", "y": 0}}))
            .await
            .unwrap();
        assert_eq!(bad.is_error, Some(true));
        let text = bad.content[0].as_text().unwrap();
        assert!(
            text.contains("/from/x") && text.contains("to"),
            "names the fields: {text}"
        );
        let unknown = client.call_tool("nope", json!({})).await.unwrap_err();
        assert_eq!(unknown.remote().map(|e| e.code), Some(-32602));
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Seats {
    /// At least one seat.
    #[schemars(range(min = 1))]
    count: u32,
}

/// A tool whose schema says what decoding cannot check (a range) is still
/// checked against it before the handler runs; one whose schema decoding
/// enforces is read straight from the arguments' text, and a call that does
/// not decode is explained by the schema all the same.
#[tokio::test]
async fn schema_keywords_decoding_cannot_check_are_still_checked() {
    let runs = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = runs.clone();
    let booking = Server::builder()
        .tool(tool("book").handler(move |Args(s): Args<Seats>| {
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            async move { format!("{} booked", s.count) }
        }))
        .build()
        .unwrap();
    let client = connect(&booking, ProtocolVersion::V2025_11_25).await;
    let zero = client.call_tool("book", json!({"count": 0})).await.unwrap();
    assert_eq!(zero.is_error, Some(true));
    let text = zero.content[0].as_text().unwrap();
    assert!(
        text.contains("/count") && text.contains("minimum"),
        "{text}"
    );
    assert_eq!(runs.load(std::sync::atomic::Ordering::SeqCst), 0);
    let two = client.call_tool("book", json!({"count": 2})).await.unwrap();
    assert_eq!(two.content[0].as_text(), Some("2 booked"));
    assert_eq!(runs.load(std::sync::atomic::Ordering::SeqCst), 1);
    // Empty arguments on a tool read straight from text: the missing
    // fields are named.
    let client = connect(&server(), ProtocolVersion::V2025_11_25).await;
    let missing = client.call_tool("length", json!({})).await.unwrap();
    assert_eq!(missing.is_error, Some(true));
    let text = missing.content[0].as_text().unwrap();
    assert!(text.contains("from") && text.contains("to"), "{text}");
}

/// An extension that keeps the host it is attached to.
#[derive(Clone, Default)]
struct Keeper(std::sync::Arc<std::sync::OnceLock<tessera_server::ExtensionHost>>);

impl tessera_server::ServerExtension for Keeper {
    fn id(&self) -> &str {
        "com.example/keeper"
    }
    fn attach(&self, host: tessera_server::ExtensionHost) {
        let _ = self.0.set(host);
    }
}

#[test]
fn an_extension_reads_the_servers_current_tool_definitions() {
    let keeper = Keeper::default();
    let server = Server::builder()
        .tool(
            tool("length")
                .description("Length of a line")
                .handler(length),
        )
        .extension(keeper.clone())
        .build()
        .unwrap();
    let host = keeper.0.get().expect("attached when the server was built");
    let t = host.tool("length").expect("the tool is known");
    assert_eq!(t.name, "length");
    assert_eq!(t.description.as_deref(), Some("Length of a line"));
    let properties = t.input_schema["properties"]
        .as_object()
        .expect("properties");
    assert!(properties.contains_key("from") && properties.contains_key("to"));
    assert!(host.tool("width").is_none(), "an unknown tool");
    drop(server);
    assert!(host.tool("length").is_none(), "the server is gone");
    assert!(
        tessera_server::ExtensionHost::detached()
            .tool("length")
            .is_none(),
        "a detached host knows no tools"
    );
}

/// A hand-written schema that does not compile (`minimum` must be a number).
fn broken_schema() -> tessera_types::JsonObject {
    match json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": "one"}}}) {
        Value::Object(o) => o,
        _ => unreachable!(),
    }
}

async fn raw(tessera_server::RawArgs(_): tessera_server::RawArgs) -> String {
    "ran".into()
}

/// By default a schema that does not compile fails the build. With
/// `compile_schemas_on_first_use` the server builds and serves, the other
/// tools' schemas still check their calls, and each call of the tool with
/// the broken schema (input or output) fails with an internal error naming
/// it, without running the handler's result past it.
#[tokio::test]
async fn schemas_compiled_on_first_use_fail_their_tools_calls_not_the_build() {
    let built = Server::builder()
        .tool(tool("broken").input_schema(broken_schema()).handler(raw))
        .build();
    assert!(
        matches!(built, Err(tessera_server::BuildError::InvalidSchema { ref tool, .. }) if tool == "broken"),
        "{built:?}"
    );
    let server = Server::builder()
        .compile_schemas_on_first_use()
        .tool(tool("broken").input_schema(broken_schema()).handler(raw))
        .tool(
            tool("broken_output")
                .output_schema(broken_schema())
                .handler(raw),
        )
        .tool(
            tool("book")
                .handler(|Args(s): Args<Seats>| async move { format!("{} booked", s.count) }),
        )
        .build()
        .expect("schemas are not compiled while building");
    let client = connect(&server, ProtocolVersion::V2025_11_25).await;
    for name in ["broken", "broken_output"] {
        for _ in 0..2 {
            let e = client.call_tool(name, json!({"n": 1})).await.unwrap_err();
            let e = e.remote().expect("an error answer");
            assert_eq!(e.code, -32603, "{e:?}");
            assert!(
                e.message.contains(name) && e.message.contains("does not compile"),
                "{e:?}"
            );
        }
    }
    // A schema that compiles is compiled on the first call and checks it.
    let zero = client.call_tool("book", json!({"count": 0})).await.unwrap();
    assert_eq!(zero.is_error, Some(true));
    assert!(zero.content[0].as_text().unwrap().contains("minimum"));
    let two = client.call_tool("book", json!({"count": 2})).await.unwrap();
    assert_eq!(two.content[0].as_text(), Some("2 booked"));
}
