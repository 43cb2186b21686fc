//! The reference server's task tools: `sleep`, and the fixtures the tasks
//! scenarios of the official conformance suite name. A tool declares its
//! task support on the builder; the handler stays a plain async function,
//! and the server runs it as a task when the client can take one.

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use tessera::server::task::TaskStart;
use tessera::server::{Args, ProtocolError, RequestContext, ServerBuilder, tool};
use tessera::types::tool::TaskSupport;
use tessera::types::{ElicitationSchema, ErrorObject};

use super::mrtr::form;

/// The longest `sleep`, in milliseconds.
pub const MAX_SLEEP_MS: u64 = 60_000;

#[derive(Deserialize, JsonSchema)]
struct SleepArgs {
    /// How long to sleep, in milliseconds (at most 60000).
    #[schemars(range(min = 0, max = 60000))]
    ms: u64,
}

/// Sleeps `ms` milliseconds, reporting progress every 100 ms.
async fn sleep(ctx: RequestContext, Args(a): Args<SleepArgs>) -> Result<String, String> {
    if a.ms > MAX_SLEEP_MS {
        return Err(format!("ms must be at most {MAX_SLEEP_MS}, got {}", a.ms));
    }
    let start = tokio::time::Instant::now();
    let end = start + Duration::from_millis(a.ms);
    let mut tick = tokio::time::interval_at(
        start + Duration::from_millis(100),
        Duration::from_millis(100),
    );
    loop {
        tokio::select! {
            _ = tokio::time::sleep_until(end) => break,
            _ = tick.tick() => {
                let done = start.elapsed().as_millis().min(u128::from(a.ms));
                ctx.progress(done as f64, Some(a.ms as f64), None);
            }
        }
    }
    ctx.progress(a.ms as f64, Some(a.ms as f64), None);
    Ok(format!("slept {} ms", a.ms))
}

#[derive(Deserialize, JsonSchema)]
struct GreetArgs {
    /// Who to greet.
    name: String,
}

async fn greet(Args(a): Args<GreetArgs>) -> String {
    format!("Hello, {}!", a.name)
}

#[derive(Deserialize, JsonSchema)]
struct ComputeArgs {
    /// How long the computation takes, in seconds (at most 600).
    #[schemars(range(min = 0.0, max = 600.0))]
    seconds: f64,
    /// A label echoed in the result.
    #[serde(default)]
    label: Option<String>,
}

async fn slow_compute(Args(a): Args<ComputeArgs>) -> String {
    let secs = a.seconds.clamp(0.0, 600.0);
    if secs > 0.0 {
        tokio::time::sleep(Duration::from_secs_f64(secs)).await;
    }
    format!(
        "computed {} in {secs} s",
        a.label.as_deref().unwrap_or("result")
    )
}

async fn failing_job() -> Result<String, String> {
    tokio::time::sleep(Duration::from_secs(1)).await;
    Err("the job failed (as it always does)".into())
}

async fn protocol_error_job() -> Result<String, ProtocolError> {
    tokio::time::sleep(Duration::from_millis(200)).await;
    Err(ErrorObject::internal("Internal error: protocol_error_job always fails").into())
}

#[derive(Deserialize, JsonSchema)]
struct DeleteArgs {
    /// The file to delete.
    filename: String,
}

fn confirm_schema() -> ElicitationSchema {
    super::mrtr::one_boolean("confirm")
}

/// The answer to [`confirm_schema`].
#[derive(Deserialize)]
struct Confirmed {
    confirm: bool,
}

/// The answer to [`name_schema`].
#[derive(Deserialize)]
struct Named {
    name: String,
}

async fn confirm_delete(ctx: RequestContext, Args(a): Args<DeleteArgs>) -> Result<String, String> {
    let answer = ctx
        .elicit_with(form(&format!("Delete {}?", a.filename), confirm_schema())?)
        .await
        .map_err(|e| e.to_string())?;
    let confirmed = super::mrtr::answers::<Confirmed>(&answer).is_some_and(|c| c.confirm);
    if answer.action == tessera::types::ElicitAction::Accept && confirmed {
        Ok(format!("deleted {}", a.filename))
    } else {
        Ok(format!("kept {}", a.filename))
    }
}

fn name_schema() -> ElicitationSchema {
    super::mrtr::one_field("name")
}

fn name_of(r: &tessera::types::ElicitResult) -> String {
    super::mrtr::answers::<Named>(r)
        .map(|n| n.name)
        .unwrap_or_default()
}

async fn multi_input(ctx: RequestContext) -> Result<String, String> {
    let (a, b) = tokio::join!(
        ctx.elicit_with(form("First name?", name_schema())?),
        ctx.elicit_with(form("Second name?", name_schema())?),
    );
    let (a, b) = (a.map_err(|e| e.to_string())?, b.map_err(|e| e.to_string())?);
    Ok(format!("got {} and {}", name_of(&a), name_of(&b)))
}

async fn tool_with_task(ctx: RequestContext) -> Result<String, String> {
    let r = ctx
        .elicit_as("user_name", form("What is your name?", name_schema())?)
        .await
        .map_err(|e| e.to_string())?;
    tokio::time::sleep(Duration::from_millis(100)).await;
    Ok(format!("Hello, {}! (from a task)", name_of(&r)))
}

/// Registers the task tools.
pub fn register(b: ServerBuilder<()>) -> ServerBuilder<()> {
    b.tool(
        tool("sleep")
            .description("Sleeps ms milliseconds (at most 60000), reporting progress every 100 ms")
            .task_support(TaskSupport::Optional)
            .handler(sleep),
    )
    .tool(
        tool("greet")
            .description("Greets someone; never a task")
            .handler(greet),
    )
    .tool(
        tool("slow_compute")
            .description("Computes for `seconds` seconds; runs as a task")
            .task_support(TaskSupport::Optional)
            .handler(slow_compute),
    )
    .tool(
        tool("failing_job")
            .description("Fails with a tool error after about a second; only as a task")
            .task_support(TaskSupport::Required)
            .handler(failing_job),
    )
    .tool(
        tool("protocol_error_job")
            .description("Fails with a JSON-RPC error; runs as a task")
            .task_support(TaskSupport::Optional)
            .handler(protocol_error_job),
    )
    .tool(
        tool("confirm_delete")
            .description(
                "Asks for a confirmation (elicitation) before deleting a file; runs as a task",
            )
            .task_support(TaskSupport::Optional)
            .handler(confirm_delete),
    )
    .tool(
        tool("multi_input")
            .description("Asks two questions at once; runs as a task")
            .task_support(TaskSupport::Optional)
            .handler(multi_input),
    )
    .tool(
        tool("test_tool_with_task")
            .description(
                "Asks the user's name (multi round-trip), then becomes a task that greets them",
            )
            .task_support(TaskSupport::Required)
            .task_start(TaskStart::AfterInput)
            .handler(tool_with_task),
    )
}
