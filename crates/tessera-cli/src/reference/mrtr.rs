//! The reference server's input-asking tools: they ask the client with
//! `ctx.elicit`, `ctx.sample` and `ctx.roots`, which send requests to a legacy
//! client and answer a 2026-07-28 client with an `InputRequiredResult`.

use serde_json::{Value, json};
use tessera::server::{RequestContext, ServerBuilder, tool};
use tessera::types::{CreateMessageRequestParams, ElicitRequestParams, ElicitResult};

/// A form-mode elicitation from a message and a JSON schema.
pub fn form(message: &str, schema: Value) -> Result<ElicitRequestParams, String> {
    serde_json::from_value(json!({"message": message, "requestedSchema": schema}))
        .map_err(|e| format!("bad elicitation form: {e}"))
}

/// A one-message sampling request.
pub fn sampling(prompt: &str, max_tokens: u64) -> Result<CreateMessageRequestParams, String> {
    serde_json::from_value(json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
        "maxTokens": max_tokens
    }))
    .map_err(|e| format!("bad sampling request: {e}"))
}

fn field(r: &ElicitResult, name: &str) -> String {
    r.content
        .as_ref()
        .and_then(|c| serde_json::to_value(c).ok())
        .and_then(|c| c.get(name).cloned())
        .map(|v| match v {
            Value::String(s) => s,
            other => other.to_string(),
        })
        .unwrap_or_default()
}

fn one_field(prop: &str) -> Value {
    json!({"type": "object", "properties": {prop: {"type": "string"}}, "required": [prop]})
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
    let text = serde_json::to_value(&r.content)
        .ok()
        .and_then(|c| c.get("text").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_default();
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
    let schema =
        json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]});
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
    let schema =
        json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]});
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
