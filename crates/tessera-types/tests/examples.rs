//! Every official example of 2026-07-28 (`schema/2026-07-28/examples/<Type>/*.json`)
//! deserialises into the Rust type for `<Type>` and serialises back to the
//! same JSON. Full JSON-RPC messages go through the envelope and then the
//! typed params or result of the method's marker type.

mod spec;

use std::collections::BTreeSet;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tessera_types::*;

type Check = fn(&Value) -> Result<(), String>;

/// Deserialises `v` as `T` and requires the re-serialisation to equal `v`.
fn plain<T: Serialize + DeserializeOwned>(v: &Value) -> Result<(), String> {
    let typed: T = serde_json::from_value(v.clone()).map_err(|e| format!("decode: {e}"))?;
    let back = serde_json::to_value(&typed).map_err(|e| format!("encode: {e}"))?;
    same(v, &back)
}

fn same(original: &Value, back: &Value) -> Result<(), String> {
    if original == back {
        Ok(())
    } else {
        Err(format!(
            "round trip differs\n original: {original}\n back:     {back}"
        ))
    }
}

/// The envelope round-trips as a [`JsonRpcMessage`].
fn envelope(v: &Value) -> Result<JsonRpcMessage, String> {
    let msg: JsonRpcMessage =
        serde_json::from_value(v.clone()).map_err(|e| format!("envelope decode: {e}"))?;
    same(v, &serde_json::to_value(&msg).unwrap())?;
    Ok(msg)
}

fn object_member<'a>(v: &'a Value, key: &str) -> Option<&'a JsonObject> {
    v.get(key).and_then(Value::as_object)
}

/// Typed params of `P` round-trip (absent params compare as `{}`).
fn params<P: Serialize + DeserializeOwned>(v: &Value) -> Result<(), String> {
    let params = object_member(v, "params");
    // Both forms of params read the same: a tree, and the text as received.
    let tree = params.cloned().map(tessera_types::Params::from);
    let text = params.map(|p| {
        tessera_types::Params::from_raw(serde_json::value::to_raw_value(p).unwrap()).unwrap()
    });
    let typed: P = decode_params(tree.as_ref()).map_err(|e| format!("params decode: {e}"))?;
    let from_text: P =
        decode_params(text.as_ref()).map_err(|e| format!("params decode (text): {e}"))?;
    same(
        &serde_json::to_value(&from_text).unwrap(),
        &serde_json::to_value(&typed).unwrap(),
    )?;
    let back = encode_params(&typed).map_err(|e| format!("params encode: {e}"))?;
    same(
        &Value::Object(params.cloned().unwrap_or_default()),
        &Value::Object(back),
    )
}

/// A request: right method; envelope (when it has one) and typed params.
fn request<R: RequestMethod>(v: &Value) -> Result<(), String> {
    if v.get("method").and_then(Value::as_str) != Some(R::METHOD) {
        return Err(format!("method is not {}", R::METHOD));
    }
    if v.get("jsonrpc").is_some() {
        match envelope(v)? {
            JsonRpcMessage::Request(r) => {
                let typed = r.params_as::<R>().map_err(|e| e.to_string())?;
                let _ = typed;
            }
            other => return Err(format!("not a request: {other:?}")),
        }
    }
    params::<R::Params>(v)
}

/// A server-to-client request as embedded in `inputRequests` (no JSON-RPC
/// envelope): typed params, and the [`InputRequest`] union. A stray `id`
/// (present in the `ListRootsRequest` example) is not part of that shape.
fn input_request<R: RequestMethod>(v: &Value) -> Result<(), String> {
    request::<R>(v)?;
    let typed: InputRequest =
        serde_json::from_value(v.clone()).map_err(|e| format!("InputRequest decode: {e}"))?;
    if typed.method() != R::METHOD {
        return Err(format!("decoded as {}", typed.method()));
    }
    let mut expected = v.clone();
    expected.as_object_mut().unwrap().remove("id");
    same(&expected, &serde_json::to_value(&typed).unwrap())
}

/// A notification: right method, envelope and typed params.
fn notification<N: NotificationMethod>(v: &Value) -> Result<(), String> {
    if v.get("method").and_then(Value::as_str) != Some(N::METHOD) {
        return Err(format!("method is not {}", N::METHOD));
    }
    match envelope(v)? {
        JsonRpcMessage::Notification(n) => {
            n.params_as::<N>().map_err(|e| e.to_string())?;
        }
        other => return Err(format!("not a notification: {other:?}")),
    }
    params::<N::Params>(v)
}

/// A successful response whose result is a `T`.
fn response<T: Serialize + DeserializeOwned>(v: &Value) -> Result<(), String> {
    match envelope(v)? {
        JsonRpcMessage::Result(_) => plain::<T>(&v["result"]),
        other => Err(format!("not a result response: {other:?}")),
    }
}

/// An error response of kind `E`, with typed `data`.
fn error_response<E: McpError>(v: &Value) -> Result<(), String> {
    match envelope(v)? {
        JsonRpcMessage::Error(e) => error_object_of::<E>(&e.error, &v["error"]),
        other => Err(format!("not an error response: {other:?}")),
    }
}

/// An error object of kind `E`.
fn error_object<E: McpError>(v: &Value) -> Result<(), String> {
    plain::<ErrorObject>(v)?;
    let e: ErrorObject = serde_json::from_value(v.clone()).unwrap();
    error_object_of::<E>(&e, v)
}

fn error_object_of<E: McpError>(e: &ErrorObject, raw: &Value) -> Result<(), String> {
    if !E::matches(e) {
        return Err(format!("code {} is not {}", e.code, E::CODE.0));
    }
    match E::data(e) {
        None => Ok(()),
        Some(Err(err)) => Err(format!("data decode: {err}")),
        Some(Ok(data)) => same(&raw["data"], &serde_json::to_value(&data).unwrap()),
    }
}

/// The folder name → check table.
fn checks() -> Vec<(&'static str, Check)> {
    vec![
        ("AudioContent", plain::<AudioContent>),
        ("BlobResourceContents", plain::<BlobResourceContents>),
        ("BooleanSchema", plain::<BooleanSchema>),
        ("CallToolRequest", request::<CallToolRequest>),
        ("CallToolRequestParams", plain::<CallToolRequestParams>),
        ("CallToolResult", plain::<CallToolResult>),
        (
            "CallToolResultResponse",
            response::<MrtrResult<CallToolResult>>,
        ),
        (
            "CancelledNotification",
            notification::<CancelledNotification>,
        ),
        (
            "CancelledNotificationParams",
            plain::<CancelledNotificationParams>,
        ),
        ("ClientCapabilities", plain::<ClientCapabilities>),
        ("CompleteRequest", request::<CompleteRequest>),
        ("CompleteRequestParams", plain::<CompleteRequestParams>),
        ("CompleteResult", plain::<CompleteResult>),
        ("CompleteResultResponse", response::<CompleteResult>),
        (
            "CreateMessageRequest",
            input_request::<CreateMessageRequest>,
        ),
        (
            "CreateMessageRequestParams",
            plain::<CreateMessageRequestParams>,
        ),
        ("CreateMessageResult", plain::<CreateMessageResult>),
        ("DiscoverRequest", request::<DiscoverRequest>),
        ("DiscoverResult", plain::<DiscoverResult>),
        ("DiscoverResultResponse", response::<DiscoverResult>),
        ("ElicitRequest", input_request::<ElicitRequest>),
        ("ElicitRequestFormParams", plain::<ElicitRequestFormParams>),
        ("ElicitRequestURLParams", plain::<ElicitRequestURLParams>),
        ("ElicitResult", plain::<ElicitResult>),
        ("EmbeddedResource", plain::<EmbeddedResource>),
        ("GetPromptRequest", request::<GetPromptRequest>),
        ("GetPromptRequestParams", plain::<GetPromptRequestParams>),
        ("GetPromptResult", plain::<GetPromptResult>),
        (
            "GetPromptResultResponse",
            response::<MrtrResult<GetPromptResult>>,
        ),
        ("HeaderMismatchError", error_response::<HeaderMismatchError>),
        ("ImageContent", plain::<ImageContent>),
        ("InputRequests", plain::<InputRequests>),
        ("InputRequiredResult", plain::<InputRequiredResult>),
        ("InputResponses", plain::<InputResponses>),
        ("InternalError", error_object::<InternalError>),
        ("InvalidParamsError", error_object::<InvalidParamsError>),
        ("ListPromptsRequest", request::<ListPromptsRequest>),
        ("ListPromptsResult", plain::<ListPromptsResult>),
        ("ListPromptsResultResponse", response::<ListPromptsResult>),
        (
            "ListResourceTemplatesRequest",
            request::<ListResourceTemplatesRequest>,
        ),
        (
            "ListResourceTemplatesResult",
            plain::<ListResourceTemplatesResult>,
        ),
        (
            "ListResourceTemplatesResultResponse",
            response::<ListResourceTemplatesResult>,
        ),
        ("ListResourcesRequest", request::<ListResourcesRequest>),
        ("ListResourcesResult", plain::<ListResourcesResult>),
        (
            "ListResourcesResultResponse",
            response::<ListResourcesResult>,
        ),
        ("ListRootsRequest", input_request::<ListRootsRequest>),
        ("ListRootsResult", plain::<ListRootsResult>),
        ("ListToolsRequest", request::<ListToolsRequest>),
        ("ListToolsResult", plain::<ListToolsResult>),
        ("ListToolsResultResponse", response::<ListToolsResult>),
        (
            "LoggingMessageNotification",
            notification::<LoggingMessageNotification>,
        ),
        (
            "LoggingMessageNotificationParams",
            plain::<LoggingMessageNotificationParams>,
        ),
        ("MethodNotFoundError", error_object::<MethodNotFoundError>),
        (
            "MissingRequiredClientCapabilityError",
            error_response::<MissingRequiredClientCapabilityError>,
        ),
        ("ModelPreferences", plain::<ModelPreferences>),
        ("NumberSchema", plain::<NumberSchema>),
        ("PaginatedRequestParams", plain::<PaginatedRequestParams>),
        ("ParseError", error_object::<ParseError>),
        ("ProgressNotification", notification::<ProgressNotification>),
        (
            "ProgressNotificationParams",
            plain::<ProgressNotificationParams>,
        ),
        (
            "PromptListChangedNotification",
            notification::<PromptListChangedNotification>,
        ),
        ("ReadResourceRequest", request::<ReadResourceRequest>),
        ("ReadResourceResult", plain::<ReadResourceResult>),
        (
            "ReadResourceResultResponse",
            response::<MrtrResult<ReadResourceResult>>,
        ),
        ("Resource", plain::<Resource>),
        ("ResourceLink", plain::<ResourceLink>),
        (
            "ResourceListChangedNotification",
            notification::<ResourceListChangedNotification>,
        ),
        (
            "ResourceUpdatedNotification",
            notification::<ResourceUpdatedNotification>,
        ),
        (
            "ResourceUpdatedNotificationParams",
            plain::<ResourceUpdatedNotificationParams>,
        ),
        ("Root", plain::<Root>),
        ("SamplingMessage", plain::<SamplingMessage>),
        ("ServerCapabilities", plain::<ServerCapabilities>),
        ("StringSchema", plain::<StringSchema>),
        (
            "SubscriptionsAcknowledgedNotification",
            notification::<SubscriptionsAcknowledgedNotification>,
        ),
        (
            "SubscriptionsListenRequest",
            request::<SubscriptionsListenRequest>,
        ),
        (
            "SubscriptionsListenResult",
            plain::<SubscriptionsListenResult>,
        ),
        (
            "SubscriptionsListenResultResponse",
            response::<SubscriptionsListenResult>,
        ),
        ("TextContent", plain::<TextContent>),
        ("TextResourceContents", plain::<TextResourceContents>),
        (
            "TitledMultiSelectEnumSchema",
            plain::<TitledMultiSelectEnumSchema>,
        ),
        (
            "TitledSingleSelectEnumSchema",
            plain::<TitledSingleSelectEnumSchema>,
        ),
        ("Tool", plain::<Tool>),
        (
            "ToolListChangedNotification",
            notification::<ToolListChangedNotification>,
        ),
        ("ToolResultContent", plain::<ToolResultContent>),
        ("ToolUseContent", plain::<ToolUseContent>),
        (
            "UnsupportedProtocolVersionError",
            error_response::<UnsupportedProtocolVersionError>,
        ),
        (
            "UntitledMultiSelectEnumSchema",
            plain::<UntitledMultiSelectEnumSchema>,
        ),
        (
            "UntitledSingleSelectEnumSchema",
            plain::<UntitledSingleSelectEnumSchema>,
        ),
    ]
}

/// Additional checks for folders whose type is a union member: the union
/// must also read the example and keep it intact.
fn union_checks() -> Vec<(&'static str, Check)> {
    vec![
        ("TextContent", plain::<ContentBlock>),
        ("ImageContent", plain::<ContentBlock>),
        ("AudioContent", plain::<ContentBlock>),
        ("ResourceLink", plain::<ContentBlock>),
        ("EmbeddedResource", plain::<ContentBlock>),
        ("TextContent", plain::<SamplingMessageContentBlock>),
        ("ToolUseContent", plain::<SamplingMessageContentBlock>),
        ("ToolResultContent", plain::<SamplingMessageContentBlock>),
        ("TextResourceContents", plain::<ResourceContents>),
        ("BlobResourceContents", plain::<ResourceContents>),
        ("ElicitRequestFormParams", plain::<ElicitRequestParams>),
        ("ElicitRequestURLParams", plain::<ElicitRequestParams>),
        ("StringSchema", plain::<PrimitiveSchemaDefinition>),
        ("NumberSchema", plain::<PrimitiveSchemaDefinition>),
        ("BooleanSchema", plain::<PrimitiveSchemaDefinition>),
        (
            "UntitledSingleSelectEnumSchema",
            plain::<PrimitiveSchemaDefinition>,
        ),
        (
            "TitledSingleSelectEnumSchema",
            plain::<PrimitiveSchemaDefinition>,
        ),
        (
            "UntitledMultiSelectEnumSchema",
            plain::<PrimitiveSchemaDefinition>,
        ),
        (
            "TitledMultiSelectEnumSchema",
            plain::<PrimitiveSchemaDefinition>,
        ),
        ("UntitledSingleSelectEnumSchema", plain::<EnumSchema>),
        ("TitledSingleSelectEnumSchema", plain::<EnumSchema>),
        ("UntitledMultiSelectEnumSchema", plain::<EnumSchema>),
        ("TitledMultiSelectEnumSchema", plain::<EnumSchema>),
        (
            "UntitledSingleSelectEnumSchema",
            plain::<SingleSelectEnumSchema>,
        ),
        (
            "TitledSingleSelectEnumSchema",
            plain::<SingleSelectEnumSchema>,
        ),
        (
            "UntitledMultiSelectEnumSchema",
            plain::<MultiSelectEnumSchema>,
        ),
        (
            "TitledMultiSelectEnumSchema",
            plain::<MultiSelectEnumSchema>,
        ),
        ("InputRequiredResult", plain::<MrtrResult<CallToolResult>>),
        ("CallToolResult", plain::<MrtrResult<CallToolResult>>),
        ("CreateMessageResult", plain::<InputResponse>),
        ("ElicitResult", plain::<InputResponse>),
        ("ListRootsResult", plain::<InputResponse>),
    ]
}

fn examples_dir() -> std::path::PathBuf {
    spec::spec_dir().join("schema/2026-07-28/examples")
}

fn folders() -> BTreeSet<String> {
    std::fs::read_dir(examples_dir())
        .expect("examples directory")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

fn files(folder: &str) -> Vec<(String, Value)> {
    let mut out: Vec<_> = std::fs::read_dir(examples_dir().join(folder))
        .expect("example folder")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            let v: Value = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("{} is not JSON: {e}", p.display()));
            (p.file_name().unwrap().to_string_lossy().into_owned(), v)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn run(table: &[(&'static str, Check)]) -> (usize, Vec<String>) {
    let mut count = 0;
    let mut failures = Vec::new();
    for (folder, check) in table {
        for (file, value) in files(folder) {
            count += 1;
            if let Err(e) = check(&value) {
                failures.push(format!("{folder}/{file}: {e}"));
            }
        }
    }
    (count, failures)
}

#[test]
fn every_example_folder_has_a_check() {
    let table: BTreeSet<&str> = checks().iter().map(|(f, _)| *f).collect();
    let on_disk = folders();
    let unchecked: Vec<&String> = on_disk
        .iter()
        .filter(|f| !table.contains(f.as_str()))
        .collect();
    assert!(
        unchecked.is_empty(),
        "example folders without a check: {unchecked:?}"
    );
    let stale: Vec<&&str> = table.iter().filter(|f| !on_disk.contains(**f)).collect();
    assert!(stale.is_empty(), "checks for missing folders: {stale:?}");
    for (f, _) in union_checks() {
        assert!(on_disk.contains(f), "union check for missing folder {f}");
    }
}

#[test]
fn every_example_round_trips() {
    let (count, failures) = run(&checks());
    assert!(
        failures.is_empty(),
        "{} of {count} examples failed:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    assert!(count >= 120, "only {count} examples found");
}

#[test]
fn union_types_read_their_members_examples() {
    let (_, failures) = run(&union_checks());
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
