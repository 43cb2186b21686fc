//! The reference server's tools: `echo`, `add`, and every tool the official
//! conformance suite calls.

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tessera::server::{
    Args, ProtocolError, RequestContext, Server, ServerBuilder, ToolRoute, tool,
};
use tessera::types::{
    BooleanSchema, ContentBlock, ElicitAction, ElicitationSchema, EmbeddedResource, EnumOption,
    ErrorObject, ImageContent, JsonObject, LegacyTitledEnumSchema, NumberSchema, NumberType,
    StringSchema, TextResourceContents, TitledEnumItems, TitledMultiSelectEnumSchema,
    TitledSingleSelectEnumSchema, UntitledEnumItems, UntitledMultiSelectEnumSchema,
    UntitledSingleSelectEnumSchema,
};

use super::media::{PNG, png_base64, wav_base64};

/// Arguments of `echo`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct EchoArgs {
    /// The text to send back.
    pub text: String,
}

/// Arguments of `add`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct AddArgs {
    /// The first addend.
    pub a: f64,
    /// The second addend.
    pub b: f64,
}

/// Arguments of `test_sampling`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SamplingArgs {
    /// The prompt to send to the client's model.
    pub prompt: String,
}

/// Arguments of `test_elicitation`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ElicitationArgs {
    /// The message to show the user.
    pub message: String,
}

async fn echo(Args(a): Args<EchoArgs>) -> String {
    a.text
}

async fn add(Args(x): Args<AddArgs>) -> String {
    format_number(x.a + x.b)
}

/// Prints whole numbers without a fractional part (`5`, not `5.0`).
pub fn format_number(n: f64) -> String {
    if n.is_finite() && n.fract() == 0.0 && n.abs() < 9.0e15 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

async fn simple_text() -> &'static str {
    "This is a simple text response for testing."
}

async fn image_content() -> ContentBlock {
    ContentBlock::Image(ImageContent::from_bytes(PNG, "image/png"))
}

async fn audio_content() -> ContentBlock {
    ContentBlock::audio(wav_base64(), "audio/wav")
}

fn embedded() -> ContentBlock {
    ContentBlock::Resource(EmbeddedResource::new(
        TextResourceContents::new(
            "test://embedded-resource",
            "This is an embedded resource content.",
        )
        .with_mime_type("text/plain"),
    ))
}

async fn embedded_resource() -> ContentBlock {
    embedded()
}

async fn multiple_content_types() -> Vec<ContentBlock> {
    vec![
        ContentBlock::text("Multiple content types test:"),
        ContentBlock::image(png_base64(), "image/png"),
        embedded(),
    ]
}

async fn tool_with_logging(ctx: RequestContext) -> &'static str {
    for (i, line) in [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ]
    .into_iter()
    .enumerate()
    {
        if i > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        ctx.log(
            tessera::types::LoggingLevel::Info,
            Some("test_tool_with_logging"),
            Value::from(line),
        );
    }
    "Logging test completed"
}

async fn tool_with_progress(ctx: RequestContext) -> String {
    for (i, p) in [0.0, 50.0, 100.0].into_iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        ctx.progress(p, Some(100.0), Some(&format!("Completed step {}", i + 1)));
    }
    format!(
        "Progress test completed ({} progress token)",
        if ctx.wants_progress() {
            "with"
        } else {
            "without"
        }
    )
}

async fn error_handling() -> Result<String, String> {
    Err("This tool intentionally returns an error for testing".into())
}

async fn sampling(ctx: RequestContext, Args(a): Args<SamplingArgs>) -> Result<String, String> {
    let r = ctx
        .sample(super::mrtr::sampling(&a.prompt, 100)?)
        .await
        .map_err(|e| format!("sampling failed: {e}"))?;
    let text = super::mrtr::answer_text(&r.content).unwrap_or("(no text)");
    Ok(format!("LLM response: {text}"))
}

async fn elicit(
    ctx: &RequestContext,
    message: &str,
    schema: ElicitationSchema,
) -> Result<String, String> {
    let r = ctx
        .elicit_with(super::mrtr::form(message, schema)?)
        .await
        .map_err(|e| format!("elicitation failed: {e}"))?;
    let action = match r.action {
        ElicitAction::Accept => "accept",
        ElicitAction::Decline => "decline",
        ElicitAction::Cancel => "cancel",
    };
    let content = serde_json::to_string(&r.content).unwrap_or_else(|_| "null".into());
    Ok(format!("User response: action={action}, content={content}"))
}

/// A string property with a description.
fn described(description: &str) -> StringSchema {
    StringSchema {
        description: Some(description.into()),
        ..StringSchema::default()
    }
}

/// Enum options with titles.
fn options(titled: &[(&str, &str)]) -> Vec<EnumOption> {
    titled
        .iter()
        .map(|(v, t)| EnumOption::new(*v, *t))
        .collect()
}

/// Strings.
fn strings(values: &[&str]) -> Vec<String> {
    values.iter().map(|v| (*v).to_owned()).collect()
}

/// The form of `test_elicitation` (properties in name order, as the
/// schema has always been sent).
fn elicitation_schema() -> ElicitationSchema {
    let mut schema = ElicitationSchema::new()
        .property("email", described("User's email address"), false)
        .property("username", described("User's response"), false);
    schema.required = Some(strings(&["username", "email"]));
    schema
}

/// The form of `test_elicitation_sep1034_defaults` (properties in name
/// order, as the schema has always been sent).
fn defaults_schema() -> ElicitationSchema {
    ElicitationSchema::new()
        .property(
            "age",
            NumberSchema {
                kind: NumberType::Integer,
                description: Some("User age".into()),
                default: Some(30.0),
                ..NumberSchema::default()
            },
            false,
        )
        .property(
            "name",
            StringSchema {
                default: Some("John Doe".into()),
                ..described("User name")
            },
            false,
        )
        .property(
            "score",
            NumberSchema {
                kind: NumberType::Number,
                description: Some("User score".into()),
                default: Some(95.5),
                ..NumberSchema::default()
            },
            false,
        )
        .property(
            "status",
            UntitledSingleSelectEnumSchema {
                description: Some("User status".into()),
                values: strings(&["active", "inactive", "pending"]),
                default: Some("active".into()),
                ..UntitledSingleSelectEnumSchema::default()
            },
            false,
        )
        .property(
            "verified",
            BooleanSchema {
                description: Some("Verification status".into()),
                default: Some(true),
                ..BooleanSchema::default()
            },
            false,
        )
}

/// The form of `test_elicitation_sep1330_enums` (properties in name
/// order, as the schema has always been sent).
fn enums_schema() -> ElicitationSchema {
    ElicitationSchema::new()
        .property(
            "legacyEnum",
            LegacyTitledEnumSchema {
                description: Some("Choose a legacy option".into()),
                values: strings(&["opt1", "opt2", "opt3"]),
                enum_names: Some(strings(&["Option One", "Option Two", "Option Three"])),
                ..LegacyTitledEnumSchema::default()
            },
            false,
        )
        .property(
            "titledMulti",
            TitledMultiSelectEnumSchema {
                description: Some("Choose multiple titled options".into()),
                items: TitledEnumItems {
                    any_of: options(&[
                        ("value1", "First Choice"),
                        ("value2", "Second Choice"),
                        ("value3", "Third Choice"),
                    ]),
                },
                ..TitledMultiSelectEnumSchema::default()
            },
            false,
        )
        .property(
            "titledSingle",
            TitledSingleSelectEnumSchema {
                description: Some("Choose a titled option".into()),
                one_of: options(&[
                    ("value1", "First Option"),
                    ("value2", "Second Option"),
                    ("value3", "Third Option"),
                ]),
                ..TitledSingleSelectEnumSchema::default()
            },
            false,
        )
        .property(
            "untitledMulti",
            UntitledMultiSelectEnumSchema {
                description: Some("Choose multiple options".into()),
                items: UntitledEnumItems {
                    values: strings(&["option1", "option2", "option3"]),
                },
                ..UntitledMultiSelectEnumSchema::default()
            },
            false,
        )
        .property(
            "untitledSingle",
            UntitledSingleSelectEnumSchema {
                description: Some("Choose an option".into()),
                values: strings(&["option1", "option2", "option3"]),
                ..UntitledSingleSelectEnumSchema::default()
            },
            false,
        )
}

async fn elicitation(
    ctx: RequestContext,
    Args(a): Args<ElicitationArgs>,
) -> Result<String, String> {
    elicit(&ctx, &a.message, elicitation_schema()).await
}

async fn elicitation_defaults(ctx: RequestContext) -> Result<String, String> {
    elicit(
        &ctx,
        "Please review and update the form fields with defaults",
        defaults_schema(),
    )
    .await
}

async fn elicitation_enums(ctx: RequestContext) -> Result<String, String> {
    elicit(
        &ctx,
        "Please select options from the enum fields",
        enums_schema(),
    )
    .await
}

/// The input schema of `json_schema_2020_12_tool`: 2020-12 keywords that a
/// server must pass through untouched.
fn schema_2020_12() -> JsonObject {
    object(json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
            }
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"}
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false
    }))
}

async fn json_schema_tool(tessera::server::RawArgs(args): tessera::server::RawArgs) -> String {
    format!("Received: {}", Value::Object(args))
}

/// Arguments of the `x-mcp-header` tool.
async fn custom_header(tessera::server::RawArgs(args): tessera::server::RawArgs) -> String {
    /// The member mirrored into the header.
    #[derive(Deserialize)]
    struct Mirrored {
        #[serde(default)]
        value: Option<Value>,
    }
    let args = Mirrored::deserialize(&args).ok();
    let value = args
        .as_ref()
        .and_then(|a| a.value.as_ref())
        .and_then(Value::as_str)
        .unwrap_or("");
    format!("value={value}")
}

async fn missing_capability() -> &'static str {
    "sampling capability present"
}

async fn logging_tool(ctx: RequestContext) -> &'static str {
    ctx.log(
        tessera::types::LoggingLevel::Info,
        Some("test_logging_tool"),
        Value::from("test_logging_tool was called"),
    );
    "Logged (if the request asked for a log level)"
}

async fn trigger_tool_change(server: Server) -> Result<String, ProtocolError> {
    // Toggle a tool so the list really changes.
    if !server.remove_tool("test_dynamic_tool") {
        server
            .add_tool(dynamic_tool())
            .map_err(|e| ProtocolError(ErrorObject::internal(e.to_string())))?;
    }
    Ok("Tool list changed".into())
}

async fn trigger_prompt_change(server: Server) -> Result<String, ProtocolError> {
    server.notify_list_changed(tessera::server::hub::ListKind::Prompts);
    Ok("Prompt list changed".into())
}

async fn reconnection(ctx: RequestContext) -> &'static str {
    // Over Streamable HTTP, close this request's SSE connection (with
    // `retry: 500`) while the call goes on: the client resumes with GET +
    // Last-Event-ID and gets the result there (SEP-1699). Over stdio to a
    // proxy that serves the request over HTTP, the proxy closes its stream;
    // elsewhere nothing happens.
    ctx.stream_control()
        .close_sse_stream(Some(Duration::from_millis(500)));
    tokio::time::sleep(Duration::from_millis(1000)).await;
    "Reconnection test completed"
}

async fn dynamic() -> &'static str {
    "This tool was added at run time"
}

fn dynamic_tool() -> ToolRoute<()> {
    tool("test_dynamic_tool")
        .description("A tool added and removed at run time by test_trigger_tool_change")
        .handler(dynamic)
}

fn object(v: Value) -> JsonObject {
    match v {
        Value::Object(o) => o,
        _ => JsonObject::new(),
    }
}

/// Registers every tool.
pub fn register(b: ServerBuilder<()>) -> ServerBuilder<()> {
    let header_schema = object(json!({
        "type": "object",
        "properties": {
            "value": {"type": "string", "description": "Mirrored into the Mcp-Param-Value header", "x-mcp-header": "Value"}
        },
        "required": ["value"]
    }));
    b.tool(
        tool("echo")
            .description("Sends the given text back")
            .handler(echo),
    )
    .tool(
        tool("add")
            .description("Adds two numbers and returns the sum as text")
            .handler(add),
    )
    .tool(
        tool("test_simple_text")
            .description("Returns a simple text response")
            .handler(simple_text),
    )
    .tool(
        tool("test_image_content")
            .description("Returns a PNG image")
            .handler(image_content),
    )
    .tool(
        tool("test_audio_content")
            .description("Returns a WAV audio clip")
            .handler(audio_content),
    )
    .tool(
        tool("test_embedded_resource")
            .description("Returns an embedded text resource")
            .handler(embedded_resource),
    )
    .tool(
        tool("test_multiple_content_types")
            .description("Returns text, an image and an embedded resource")
            .handler(multiple_content_types),
    )
    .tool(
        tool("test_tool_with_logging")
            .description("Sends three log messages while it runs")
            .handler(tool_with_logging),
    )
    .tool(
        tool("test_tool_with_progress")
            .description("Reports progress 0, 50 and 100 of 100")
            .handler(tool_with_progress),
    )
    .tool(
        tool("test_error_handling")
            .description("Always fails with an isError result")
            .handler(error_handling),
    )
    .tool(
        tool("test_sampling")
            .description("Asks the client's model to answer a prompt (sampling)")
            .handler(sampling),
    )
    .tool(
        tool("test_elicitation")
            .description("Asks the user for a username and an email (elicitation)")
            .handler(elicitation),
    )
    .tool(
        tool("test_elicitation_sep1034_defaults")
            .description("Elicits a form whose fields have default values (SEP-1034)")
            .handler(elicitation_defaults),
    )
    .tool(
        tool("test_elicitation_sep1330_enums")
            .description("Elicits every kind of enum field (SEP-1330)")
            .handler(elicitation_enums),
    )
    .tool(
        tool("json_schema_2020_12_tool")
            .description("Takes arguments described with JSON Schema 2020-12 keywords")
            .input_schema(schema_2020_12())
            .handler(json_schema_tool),
    )
    .tool(
        tool("test_custom_header")
            .description("Takes a value mirrored into an HTTP header (x-mcp-header)")
            .input_schema(header_schema)
            .handler(custom_header),
    )
    .tool(
        tool("test_missing_capability")
            .description("Needs the client's sampling capability")
            .requires_client_capability("sampling")
            .handler(missing_capability),
    )
    .tool(
        tool("test_logging_tool")
            .description("Logs one message, only if the request asked for a log level")
            .handler(logging_tool),
    )
    .tool(
        tool("test_trigger_tool_change")
            .description("Adds or removes test_dynamic_tool, changing the tool list")
            .handler(trigger_tool_change),
    )
    .tool(
        tool("test_reconnection")
            .description("Closes its SSE stream mid-call so the client resumes it (HTTP)")
            .handler(reconnection),
    )
    .tool(
        tool("test_trigger_prompt_change")
            .description("Announces a prompt list change")
            .handler(trigger_prompt_change),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_print_plainly() {
        assert_eq!(format_number(5.0), "5");
        assert_eq!(format_number(2.5), "2.5");
        assert_eq!(format_number(-3.0), "-3");
    }

    /// The forms are sent as they were when they were written as JSON.
    #[test]
    fn the_forms_keep_their_shape() {
        let same = |built: ElicitationSchema, written: Value| {
            let written: ElicitationSchema = serde_json::from_value(written).unwrap();
            assert_eq!(built, written);
            assert_eq!(
                serde_json::to_string(&built).unwrap(),
                serde_json::to_string(&written).unwrap()
            );
        };
        same(
            elicitation_schema(),
            json!({
                "type": "object",
                "properties": {
                    "username": {"type": "string", "description": "User's response"},
                    "email": {"type": "string", "description": "User's email address"}
                },
                "required": ["username", "email"]
            }),
        );
        same(
            defaults_schema(),
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "User name", "default": "John Doe"},
                    "age": {"type": "integer", "description": "User age", "default": 30},
                    "score": {"type": "number", "description": "User score", "default": 95.5},
                    "status": {
                        "type": "string",
                        "description": "User status",
                        "enum": ["active", "inactive", "pending"],
                        "default": "active"
                    },
                    "verified": {"type": "boolean", "description": "Verification status", "default": true}
                }
            }),
        );
        same(
            enums_schema(),
            json!({
                "type": "object",
                "properties": {
                    "untitledSingle": {
                        "type": "string",
                        "description": "Choose an option",
                        "enum": ["option1", "option2", "option3"]
                    },
                    "titledSingle": {
                        "type": "string",
                        "description": "Choose a titled option",
                        "oneOf": [
                            {"const": "value1", "title": "First Option"},
                            {"const": "value2", "title": "Second Option"},
                            {"const": "value3", "title": "Third Option"}
                        ]
                    },
                    "legacyEnum": {
                        "type": "string",
                        "description": "Choose a legacy option",
                        "enum": ["opt1", "opt2", "opt3"],
                        "enumNames": ["Option One", "Option Two", "Option Three"]
                    },
                    "untitledMulti": {
                        "type": "array",
                        "description": "Choose multiple options",
                        "items": {"type": "string", "enum": ["option1", "option2", "option3"]}
                    },
                    "titledMulti": {
                        "type": "array",
                        "description": "Choose multiple titled options",
                        "items": {
                            "anyOf": [
                                {"const": "value1", "title": "First Choice"},
                                {"const": "value2", "title": "Second Choice"},
                                {"const": "value3", "title": "Third Choice"}
                            ]
                        }
                    }
                }
            }),
        );
        let one = |prop: &str, ty: &str| json!({"type": "object", "properties": {prop: {"type": ty}}, "required": [prop]});
        same(super::super::mrtr::one_field("name"), one("name", "string"));
        same(super::super::mrtr::one_boolean("ok"), one("ok", "boolean"));
    }

    /// The sampling request and the prompt messages are what their JSON
    /// form was.
    #[test]
    fn requests_keep_their_shape() {
        let built = super::super::mrtr::sampling("hi", 100).unwrap();
        let written: tessera::types::CreateMessageRequestParams = serde_json::from_value(json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
            "maxTokens": 100
        }))
        .unwrap();
        assert_eq!(built, written);
        let form = super::super::mrtr::form("m", super::super::mrtr::one_field("x")).unwrap();
        let written: tessera::types::ElicitRequestParams = serde_json::from_value(json!({
            "message": "m",
            "requestedSchema": {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}
        }))
        .unwrap();
        assert_eq!(
            serde_json::to_value(form).unwrap(),
            serde_json::to_value(written).unwrap()
        );
    }

    #[test]
    fn the_2020_12_schema_compiles() {
        tessera::server::schema::Validator::new(&schema_2020_12()).unwrap();
    }
}
