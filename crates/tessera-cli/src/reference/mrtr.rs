//! The reference server's input-asking tools: they ask the client with
//! `ctx.elicit`, `ctx.sample` and `ctx.roots`, which send requests to a legacy
//! client and answer a 2026-07-28 client with an `InputRequiredResult`.

use serde::de::DeserializeOwned;
use tessera::server::{RequestContext, ServerBuilder, tool};
use tessera::types::{
    BooleanSchema, CreateMessageRequestParams, ElicitRequestFormParams, ElicitRequestParams,
    ElicitResult, ElicitValue, ElicitationSchema, SamplingMessage, SamplingMessageContentBlock,
    StringSchema,
};

/// A form-mode elicitation from a message and a schema.
pub fn form(message: &str, schema: ElicitationSchema) -> Result<ElicitRequestParams, String> {
    Ok(ElicitRequestFormParams::new(message, schema).into())
}

/// A one-message sampling request.
pub fn sampling(prompt: &str, max_tokens: u64) -> Result<CreateMessageRequestParams, String> {
    Ok(CreateMessageRequestParams::new(
        vec![SamplingMessage::user_text(prompt)],
        max_tokens,
    ))
}

/// The text of a sampling answer that is one text block.
pub fn answer_text(content: &tessera::types::SamplingContent) -> Option<&str> {
    match content {
        tessera::types::SamplingContent::Single(SamplingMessageContentBlock::Text(t)) => {
            Some(&t.text)
        }
        _ => None,
    }
}

/// The submitted values of an elicitation, read as `T` (`None` when there
/// are none, or they do not fit).
pub fn answers<T: DeserializeOwned>(r: &ElicitResult) -> Option<T> {
    let content = r.content.as_ref()?;
    serde_json::to_value(content)
        .ok()
        .and_then(|v| serde_json::from_value(v).ok())
}

/// A submitted value as text (a string as it is, anything else as JSON).
fn shown(v: &ElicitValue) -> String {
    match v {
        ElicitValue::String(s) => s.clone(),
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}

fn field(r: &ElicitResult, name: &str) -> String {
    r.content
        .as_ref()
        .and_then(|c| c.get(name))
        .map(shown)
        .unwrap_or_default()
}

/// A schema of one required string property.
pub fn one_field(prop: &str) -> ElicitationSchema {
    ElicitationSchema::new().property(prop, StringSchema::default(), true)
}

/// A schema of one required boolean property.
pub fn one_boolean(prop: &str) -> ElicitationSchema {
    ElicitationSchema::new().property(prop, BooleanSchema::default(), true)
}

async fn elicitation(ctx: RequestContext) -> Result<String, String> {
    let r = ctx
        .elicit_as("user_name", form("What is your name?", one_field("name"))?)
        .await
        .map_err(|e| e.to_string())?;
    Ok(format!("Hello, {}!", field(&r, "name")))
}

async fn sampling_tool(ctx: RequestContext) -> Result<String, String> {
    let r = ctx
        .sample_as(
            "capital_question",
            sampling("What is the capital of France?", 100)?,
        )
        .await
        .map_err(|e| e.to_string())?;
    let text = answer_text(&r.content).unwrap_or_default();
    Ok(format!("The model said: {text}"))
}

async fn list_roots(ctx: RequestContext) -> Result<String, String> {
    let r = ctx
        .roots_as("client_roots")
        .await
        .map_err(|e| e.to_string())?;
    let uris: Vec<&str> = r.roots.iter().map(|r| r.uri.as_str()).collect();
    Ok(format!("Roots: {}", uris.join(", ")))
}

async fn request_state(ctx: RequestContext) -> Result<String, String> {
    let schema = one_boolean("ok");
    let r = ctx
        .elicit_as("confirm", form("Please confirm", schema)?)
        .await
        .map_err(|e| e.to_string())?;
    Ok(format!("state-ok: confirmed={}", field(&r, "ok")))
}

async fn multiple_inputs(ctx: RequestContext) -> Result<String, String> {
    let name = form("What is your name?", one_field("name"))?;
    let greeting = sampling("Generate a greeting", 50)?;
    let (a, b, c) = tokio::join!(
        ctx.elicit_as("user_name", name),
        ctx.sample_as("greeting", greeting),
        ctx.roots_as("client_roots"),
    );
    let (a, _b, c) = (
        a.map_err(|e| e.to_string())?,
        b.map_err(|e| e.to_string())?,
        c.map_err(|e| e.to_string())?,
    );
    Ok(format!(
        "Got name {}, a greeting and {} root(s)",
        field(&a, "name"),
        c.roots.len()
    ))
}

async fn multi_round(ctx: RequestContext) -> Result<String, String> {
    let name = ctx
        .elicit_as(
            "step1",
            form("Step 1: What is your name?", one_field("name"))?,
        )
        .await
        .map_err(|e| e.to_string())?;
    let color = ctx
        .elicit_as(
            "step2",
            form("Step 2: What is your favorite color?", one_field("color"))?,
        )
        .await
        .map_err(|e| e.to_string())?;
    Ok(format!(
        "{} likes {}",
        field(&name, "name"),
        field(&color, "color")
    ))
}

async fn tampered_state(ctx: RequestContext) -> Result<String, String> {
    let schema = one_boolean("ok");
    ctx.elicit_as("confirm", form("Please confirm", schema)?)
        .await
        .map_err(|e| e.to_string())?;
    Ok("state verified".into())
}

async fn capabilities(ctx: RequestContext) -> Result<String, String> {
    // Asks only for what the client declared.
    let mut got = Vec::new();
    if ctx.client_has("elicitation") {
        ctx.elicit_as("user_name", form("What is your name?", one_field("name"))?)
            .await
            .map_err(|e| e.to_string())?;
        got.push("elicitation");
    }
    if ctx.client_has("sampling") {
        ctx.sample_as("greeting", sampling("Generate a greeting", 50)?)
            .await
            .map_err(|e| e.to_string())?;
        got.push("sampling");
    }
    if ctx.client_has("roots") {
        ctx.roots_as("client_roots")
            .await
            .map_err(|e| e.to_string())?;
        got.push("roots");
    }
    Ok(format!(
        "Asked for: {}",
        if got.is_empty() {
            "nothing".into()
        } else {
            got.join(", ")
        }
    ))
}

async fn streaming_elicitation(ctx: RequestContext) -> Result<String, String> {
    ctx.progress(0.0, Some(2.0), Some("asking"));
    let r = ctx
        .elicit_as("confirmation", form("Continue?", one_field("answer"))?)
        .await
        .map_err(|e| e.to_string())?;
    ctx.progress(2.0, Some(2.0), Some("done"));
    Ok(format!("Answer: {}", field(&r, "answer")))
}

/// Registers the input-asking tools.
pub fn register(b: ServerBuilder<()>) -> ServerBuilder<()> {
    b.tool(
        tool("test_input_required_result_elicitation")
            .description("Asks the user's name (elicitation), then greets them")
            .handler(elicitation),
    )
    .tool(
        tool("test_input_required_result_sampling")
            .description("Asks the client's model a question (sampling)")
            .handler(sampling_tool),
    )
    .tool(
        tool("test_input_required_result_list_roots")
            .description("Asks the client for its roots")
            .handler(list_roots),
    )
    .tool(
        tool("test_input_required_result_request_state")
            .description("Asks for a confirmation and checks the sealed request state")
            .handler(request_state),
    )
    .tool(
        tool("test_input_required_result_multiple_inputs")
            .description("Asks for a name, a greeting and the roots at once")
            .handler(multiple_inputs),
    )
    .tool(
        tool("test_input_required_result_multi_round")
            .description("Asks two questions, one per round")
            .handler(multi_round),
    )
    .tool(
        tool("test_input_required_result_tampered_state")
            .description("Asks for a confirmation; a tampered request state is refused")
            .handler(tampered_state),
    )
    .tool(
        tool("test_input_required_result_capabilities")
            .description("Asks only for what the client declared it supports")
            .handler(capabilities),
    )
    .tool(
        tool("test_streaming_elicitation")
            .description("Reports progress and asks the user to continue")
            .handler(streaming_elicitation),
    )
}
