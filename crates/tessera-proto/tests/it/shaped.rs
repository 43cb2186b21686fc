//! The one-pass writer of 2026-07-28 results ([`RawResult::shaped`]): for
//! every typed result a server answers with, the bytes it writes are the
//! bytes the engine wrote by reading the bare result's text again and adding
//! `resultType` and the server's `_meta` (`shape_modern`), with and without
//! the server's identity; results it must not shape are refused.

use crate::harness;

use std::time::Instant;

use harness::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tessera_proto::{Engine, EngineConfig, Event, RawResult, Reply, ResultShape};
use tessera_types::RequestId;

/// A modern server engine with request 5 in flight, and its shape.
fn engine(config: EngineConfig) -> (Engine, ResultShape) {
    let mut s = Engine::new(config);
    feed(
        &mut s,
        Instant::now(),
        &modern_request(json!(5), "tools/call"),
    );
    let shape = match events(&mut s).as_slice() {
        [Event::Request(r)] => r.context.result_shape.clone().expect("a shape"),
        other => panic!("expected the request, got {other:?}"),
    };
    (s, shape)
}

/// What the engine writes for `result` as a text (the old path) and as
/// written by the one-pass writer.
fn old_and_new<T: Serialize>(config: &EngineConfig, result: &T) -> (String, String) {
    let text = serde_json::to_string(result).unwrap();
    let (mut s, _) = engine(config.clone());
    let bare = RawResult::new(RawValue::from_string(text.clone()).unwrap()).unwrap();
    assert!(s.respond_raw(&RequestId::Number(5), bare));
    let old = s.poll_transmit().expect("an answer").message.to_bytes();
    let (mut s, shape) = engine(config.clone());
    // As the server answers: the text shaped in one pass, or (its own
    // `_meta`, a named server) the tree the engine merges the identity into.
    let reply = match RawResult::shaped(result, &shape) {
        Some(shaped) => Reply::Raw(shaped),
        None => {
            assert!(shape.adds_server_info(), "not shaped: {text}");
            let tree = serde_json::to_value(result).unwrap();
            assert!(tree.get("_meta").is_some(), "not shaped: {text}");
            Reply::Object(tree.as_object().unwrap().clone())
        }
    };
    assert!(s.respond_reply(&RequestId::Number(5), Ok(reply)));
    let new = s.poll_transmit().expect("an answer").message.to_bytes();
    (
        String::from_utf8(old).unwrap(),
        String::from_utf8(new).unwrap(),
    )
}

fn configs() -> [EngineConfig; 2] {
    let mut nameless = server_config();
    nameless.server.info.name = String::new();
    [server_config(), nameless]
}

/// `value` read as a `T` (a typed result as a handler builds it).
fn typed<T: DeserializeOwned>(value: Value) -> T {
    serde_json::from_value(value).expect("the typed result")
}

/// Asserts that `result` is written by the one-pass writer byte for byte as
/// by the old path, for both configurations.
fn same_bytes<T: Serialize>(name: &str, result: &T) {
    for config in configs() {
        let (old, new) = old_and_new(&config, result);
        assert_eq!(new, old, "{name}");
    }
}

#[test]
fn every_typed_result_is_shaped_byte_for_byte_as_its_text_was_completed() {
    use tessera_types::*;
    let tool = json!({"name": "echo", "description": "Echoes \"it\"",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}});
    same_bytes::<ListToolsResult>(
        "tools/list",
        &typed(json!({"tools": [tool], "nextCursor": "c2", "ttlMs": 1000, "cacheScope": "public"})),
    );
    same_bytes::<ListToolsResult>("tools/list, empty", &typed(json!({"tools": []})));
    same_bytes::<CallToolResult>(
        "tools/call",
        &typed(
            json!({"content": [{"type": "text", "text": "h\u{e9} \u{1}"}],
            "structuredContent": {"b": 1, "a": [null, 1.5]}, "isError": false}),
        ),
    );
    same_bytes::<ListResourcesResult>(
        "resources/list",
        &typed(
            json!({"resources": [{"uri": "docs://readme", "name": "readme",
            "mimeType": "text/markdown"}], "ttlMs": 5}),
        ),
    );
    same_bytes::<ListResourceTemplatesResult>(
        "resources/templates/list",
        &typed(json!({"resourceTemplates": [{"uriTemplate": "users://{id}", "name": "p"}]})),
    );
    same_bytes::<ReadResourceResult>(
        "resources/read",
        &typed(
            json!({"contents": [{"uri": "docs://readme", "text": "read me"},
            {"uri": "data://logo", "blob": "iVBORw0K", "mimeType": "image/png"}]}),
        ),
    );
    same_bytes::<ListPromptsResult>(
        "prompts/list",
        &typed(json!({"prompts": [{"name": "greet", "arguments":
            [{"name": "who", "required": true}]}]})),
    );
    same_bytes::<GetPromptResult>(
        "prompts/get",
        &typed(json!({"description": "Greets", "messages":
            [{"role": "user", "content": {"type": "text", "text": "hello"}}]})),
    );
    same_bytes::<CompleteResult>(
        "completion/complete",
        &typed(json!({"completion": {"values": ["ada", "alan"], "total": 2, "hasMore": false}})),
    );
    same_bytes(
        "subscriptions/listen",
        &SubscriptionsListenResult::new(&RequestId::from("l1")),
    );
    // A task's own `resultType` is kept (only `_meta` is written in front),
    // through a flattened task, and a flattened result in a flattened map.
    let task = json!({"taskId": "t1", "status": "working", "createdAt": "2026-01-01T00:00:00Z",
        "lastUpdatedAt": "2026-01-01T00:00:01Z", "ttlMs": 60000});
    let mut created = task.clone();
    created["resultType"] = json!("task");
    same_bytes::<tasks::CreateTaskResult>("task created", &typed(created));
    same_bytes::<tasks::GetTaskResult>("tasks/get", &typed(task.clone()));
    let mut get: tasks::GetTaskResult = typed(task);
    get.result_type = Some(ResultType::Complete);
    same_bytes("tasks/get, complete", &get);
    #[derive(Serialize)]
    struct WithInputs<T> {
        #[serde(flatten)]
        shape: T,
        #[serde(rename = "inputRequests")]
        input_requests: Value,
    }
    same_bytes(
        "tasks/get with input requests",
        &WithInputs {
            shape: get,
            input_requests: json!({"r1": {"method": "roots/list"}}),
        },
    );
    same_bytes::<EmptyResult>(
        "empty, flattened extras",
        &typed(json!({"x": 1, "y": {"z": [1]}})),
    );
    same_bytes("a map", &json!({"a": 1, "b": "two"}));
}

/// With its own `_meta`: a nameless server's shape writes it as the engine
/// kept it (`resultType` in front); a named server's refuses it, and the
/// server answers with the tree the engine would have read the text into,
/// which the engine writes byte for byte as it wrote the text.
#[test]
fn a_result_with_its_own_meta_is_written_as_before() {
    let [named, nameless] = configs();
    let results = [
        json!({"content": [], "_meta": {"k": 1}}),
        json!({"_meta": {"z": [1, {"b": 2, "a": 1}]}, "content": [{"type": "text", "text": "x"}],
               "isError": false}),
        json!({"resultType": "complete", "_meta": null, "a": 1}),
    ];
    for result in &results {
        let (old, new) = old_and_new(&nameless, result);
        assert_eq!(new, old, "{result}");
        // Named: the tree (as a server builds it from the typed result).
        let (mut s, shape) = engine(named.clone());
        assert!(RawResult::shaped(result, &shape).is_none(), "{result}");
        let tree = result.as_object().unwrap().clone();
        assert!(s.respond_reply(&RequestId::Number(5), Ok(Reply::Object(tree))));
        let new = s.poll_transmit().expect("an answer").message.to_bytes();
        let (mut s, _) = engine(named.clone());
        let text = serde_json::to_string(result).unwrap();
        let bare = RawResult::new(RawValue::from_string(text).unwrap()).unwrap();
        assert!(s.respond_raw(&RequestId::Number(5), bare));
        let old = s.poll_transmit().expect("an answer").message.to_bytes();
        assert_eq!(
            String::from_utf8(new).unwrap(),
            String::from_utf8(old).unwrap(),
            "{result}"
        );
    }
}

/// A result with its own `_meta`, or one that is not an object, is refused
/// by a named server's shape (its writer returns `None`) and keeps the old
/// path.
#[test]
fn a_result_with_its_own_meta_or_not_an_object_is_not_shaped() {
    let (_, shape) = engine(server_config());
    for refused in [
        json!({"content": [], "_meta": {"k": 1}}),
        json!({"_meta": null}),
        json!([1, 2]),
        json!("text"),
        json!(null),
    ] {
        assert!(RawResult::shaped(&refused, &shape).is_none(), "{refused}");
    }
    let mut call = tessera_types::CallToolResult::text("hi");
    call.meta = Some(tessera_types::JsonObject::new());
    assert!(RawResult::shaped(&call, &shape).is_none());
    let raw = RawValue::from_string(r#"{"a":1}"#.into()).unwrap();
    assert!(
        RawResult::shaped(&raw, &shape).is_none(),
        "serde_json's RawValue is text, not members"
    );
}
