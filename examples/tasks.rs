//! A tool that runs long, called as a task, in both task designs.
//!
//! A task-capable tool keeps a plain async handler. When a client asks for a
//! task, the server answers at once with a task id and runs the handler in
//! the background; the client polls the task, waits for its result or
//! cancels it:
//!
//! - a 2025-11-25 client asks for a task (`task: {ttl}` in `tools/call`);
//! - a 2026-07-28 client declares the `io.modelcontextprotocol/tasks`
//!   extension (`ClientBuilder::tasks()`) and the server decides.
//!
//! `cargo run -p tessera-examples --example tasks` runs the server and one
//! client per design in this process. With `--stdio` it only serves, so any
//! client can drive it:
//! `tessera call crunch '{"steps":3}' --task -- target/debug/examples/tasks --stdio`.

use std::time::Duration;

use tessera::client::{Client, TaskOptions, ToolCallOutcome};
use tessera::server::task::TaskStart;
use tessera::server::{Args, RequestContext, Server, tool};
use tessera::types::ProtocolVersion;
use tessera::types::tasks::TaskStatus;
use tessera::types::tool::TaskSupport;

/// The arguments of `crunch`.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Crunch {
    /// How many 100 ms steps to take.
    steps: u32,
}

/// The long job: one step every 100 ms, with progress, stopping as soon as
/// the task is cancelled. Nothing in it is specific to tasks.
async fn crunch(ctx: RequestContext, Args(a): Args<Crunch>) -> Result<String, String> {
    for step in 1..=a.steps {
        tokio::select! {
            _ = ctx.cancelled() => return Err("cancelled".into()),
            _ = tokio::time::sleep(Duration::from_millis(100)) => {}
        }
        ctx.progress(f64::from(step), Some(f64::from(a.steps)), Some("crunching"));
    }
    Ok(format!("crunched {} steps", a.steps))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::builder()
        .tool(
            tool("crunch")
                .description("Crunches numbers for a while")
                // May run as a task (`Required` would refuse a plain call).
                .task_support(TaskSupport::Optional)
                .task_start(TaskStart::Immediately)
                .handler(crunch),
        )
        .build()?;
    if std::env::args().nth(1).as_deref() == Some("--stdio") {
        server.serve_stdio().await?;
        return Ok(());
    }

    for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
        // An in-memory pipe stands for stdio or HTTP.
        let (client_io, server_io) = tokio::io::duplex(1 << 16);
        let (sr, sw) = tokio::io::split(server_io);
        let _serving = server.clone().serve_io(sr, sw);
        let (cr, cw) = tokio::io::split(client_io);
        let client = Client::builder("tasks-example", "1.0.0")
            .protocol_version(version)
            .tasks() // declares the 2026-07-28 extension; harmless before
            .connect_io(cr, cw)
            .await?;
        println!("{version}:");

        // 1. Run a call as a task and wait for it. The server keeps the
        //    result for 60 s (the ttl) after the task ends.
        let options = TaskOptions::default().ttl(Duration::from_secs(60));
        let ToolCallOutcome::Task(task) = client
            .call_tool_as_task("crunch", serde_json::json!({"steps": 3}), options)
            .await?
        else {
            return Err("the server answered without a task".into());
        };
        println!("  task {} started", task.id());
        // `wait` polls at the server's interval and reports each change.
        let result = task.wait(|s| println!("  status: {:?}", s.status)).await?;
        let text = result.content[0].as_text().unwrap_or_default();
        println!("  result: {text}");

        // 2. Start a long one, look at it, then cancel it.
        let args = serde_json::json!({"steps": 600});
        let ToolCallOutcome::Task(task) = client
            .call_tool_as_task("crunch", args, TaskOptions::default())
            .await?
        else {
            return Err("the server answered without a task".into());
        };
        println!("  second task: {:?}", task.status().await?.status);
        task.cancel().await?;
        let after = task.status().await?.status;
        println!("  after cancel: {after:?}");
        if after != TaskStatus::Cancelled || text != "crunched 3 steps" {
            return Err("the tasks did not end as expected".into());
        }

        // 3. 2025-11-25 servers also list a client's tasks.
        if version == ProtocolVersion::V2025_11_25 {
            let (tasks, _next_page) = client.list_tasks(None).await?;
            println!("  tasks/list: {} tasks", tasks.len());
        }
        client.close().await;
    }
    Ok(())
}
