//! Tasks from the command line: `tessera call … --task` and
//! `tessera tasks list|get|result|cancel`.

use std::ffi::OsString;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Args, Subcommand};
use serde_json::Value;
use tessera::client::task::TaskState;
use tessera::client::{CallOptions, Client, ClientError, TaskOptions, ToolCallOutcome};
use tessera::types::{CallToolResult, Era, ErrorCode, JsonObject, ProtocolVersion};

use crate::Failure;
use crate::connect::{EraChoice, connect_pinned, parse_version, remote_failure};
use crate::exit::Exit;
use crate::http_opts::HttpOptions;
use crate::notices::Notices;
use crate::output::print_result;
use crate::peer_text;
use crate::target::Target;

/// `tessera tasks`.
#[derive(Debug, Args)]
pub struct TasksArgs {
    #[command(subcommand)]
    what: TasksCommand,
}

#[derive(Debug, Subcommand)]
enum TasksCommand {
    /// List your tasks (2025-11-25 servers; the 2026-07-28 extension has no listing).
    List(TaskTarget),
    /// Show a task's status.
    Get(TaskIdTarget),
    /// Wait for a task to end and print its result.
    Result(TaskIdTarget),
    /// Cancel a task.
    Cancel(TaskIdTarget),
}

/// A server, as for `tessera call`.
#[derive(Debug, Args)]
struct TaskTarget {
    /// An http(s) URL (or `-- COMMAND ARGS...` after everything).
    #[arg(value_name = "URL")]
    url: Option<String>,
    /// Print raw JSON.
    #[arg(long)]
    json: bool,
    /// Which era to speak: legacy (initialize handshake; 2025-11-25 tasks),
    /// auto (probe with server/discover, fall back), modern (2026-07-28,
    /// the tasks extension).
    #[arg(long, value_enum, default_value_t = EraChoice::Auto)]
    era: EraChoice,
    /// Pin the protocol version (its era follows).
    #[arg(long, value_name = "VERSION", value_parser = parse_version)]
    protocol_version: Option<ProtocolVersion>,
    /// The stdio server to start.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<OsString>,
    #[command(flatten)]
    http: HttpOptions,
}

/// A task id and its server.
#[derive(Debug, Args)]
struct TaskIdTarget {
    /// The task id.
    #[arg(value_name = "TASK-ID", allow_hyphen_values = true)]
    id: String,
    #[command(flatten)]
    target: TaskTarget,
}

async fn open(t: TaskTarget) -> Result<(Client, bool), Failure> {
    let mut positional: Vec<String> = t.url.into_iter().collect();
    let target = Target::resolve(&mut positional, t.command)?;
    let client = connect_pinned(target, &t.http, true, t.era, t.protocol_version).await?;
    Ok((client, t.json))
}

fn describe(s: &TaskState) -> String {
    let status = serde_json::to_value(s.status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    let text = match &s.status_message {
        Some(m) => format!("{} {status}: {m}", s.task_id),
        None => format!("{} {status}", s.task_id),
    };
    peer_text::line(&text).into_owned()
}

/// Runs `tessera tasks …`.
pub async fn tasks(a: TasksArgs) -> Result<ExitCode, Failure> {
    match a.what {
        TasksCommand::List(t) => {
            let (client, json) = open(t).await?;
            let mut all = Vec::new();
            let mut cursor: Option<String> = None;
            // Bounded: a server that keeps handing out cursors is stopped.
            for _ in 0..1000 {
                let (page, next) = client
                    .list_tasks(cursor.as_deref())
                    .await
                    .map_err(list_failure)?;
                all.extend(page);
                match next {
                    Some(n) if Some(&n) != cursor.as_ref() => cursor = Some(n),
                    _ => break,
                }
            }
            let legacy = client.era() == Era::Legacy;
            client.close().await;
            if all.is_empty() && legacy {
                return Err(Failure::Coded(
                    Exit::Unsupported,
                    anyhow::anyhow!("no tasks in this session: {SESSION_BOUND}"),
                ));
            }
            for t in &all {
                if json {
                    println!(
                        "{}",
                        peer_text::json(&Value::Object(t.raw.clone()).to_string())
                    );
                } else {
                    println!("{}", describe(t));
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        TasksCommand::Get(t) => {
            let (client, json) = open(t.target).await?;
            let s = client.task(&t.id).status().await;
            let legacy = client.era() == Era::Legacy;
            client.close().await;
            let s = s.map_err(|e| task_failure(e, &t.id, legacy))?;
            if json {
                let text = serde_json::to_string_pretty(&s.raw).context("serialising")?;
                println!("{}", peer_text::json(&text));
            } else {
                println!("{}", describe(&s));
            }
            Ok(ExitCode::SUCCESS)
        }
        TasksCommand::Result(t) => {
            let (client, json) = open(t.target).await?;
            let out = client.task(&t.id).wait_raw(|_| {}).await;
            let legacy = client.era() == Era::Legacy;
            client.close().await;
            show(out.map_err(|e| task_failure(e, &t.id, legacy))?, json)
        }
        TasksCommand::Cancel(t) => {
            let (client, _) = open(t.target).await?;
            let out = client.task(&t.id).cancel().await;
            let legacy = client.era() == Era::Legacy;
            client.close().await;
            out.map_err(|e| task_failure(e, &t.id, legacy))?;
            println!("{} cancelled", peer_text::line(&t.id));
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Why a 2025-11-25 task cannot be reached from a new command.
const SESSION_BOUND: &str = "2025-11-25 tasks belong to the session that created them, and each \
     tessera command opens a session of its own that ends with it (a server that binds tasks to \
     an authenticated user is the exception). `tessera call --task` waits for its task in its \
     own session; a 2026-07-28 server's tasks can be followed from any command";

/// A failed `tasks/get|result|cancel`: in a 2025-11-25 session the server's
/// refusal (invalid params: no such task) is explained (exit 9).
fn task_failure(e: ClientError, id: &str, legacy: bool) -> Failure {
    let unknown = e
        .remote()
        .is_some_and(|r| r.code == ErrorCode::INVALID_PARAMS.0);
    if legacy && unknown {
        return Failure::Coded(
            Exit::Unsupported,
            anyhow::anyhow!("task {id} is not in this session: {SESSION_BOUND}"),
        );
    }
    remote_failure(e)
}

/// A failed `tasks/list`: a server without it (`-32601`) or a 2026-07-28
/// session (the tasks extension has no listing) is "unsupported" (exit 9).
fn list_failure(e: ClientError) -> Failure {
    const HINT: &str = "`tessera tasks get TASK-ID` follows one task, and a server that also \
                        speaks 2025-11-25 lists with `--protocol-version 2025-11-25`";
    let not_found = e
        .remote()
        .is_some_and(|r| r.code == ErrorCode::METHOD_NOT_FOUND.0);
    if not_found {
        return Failure::Coded(
            Exit::Unsupported,
            anyhow::anyhow!("the server does not support tasks/list; {HINT}"),
        );
    }
    if matches!(e, ClientError::Unsupported(_)) {
        return Failure::Coded(Exit::Unsupported, anyhow::anyhow!("{e}; {HINT}"));
    }
    remote_failure(e)
}

fn show(result: JsonObject, json: bool) -> Result<ExitCode, Failure> {
    if json {
        let text = serde_json::to_string_pretty(&result).context("serialising")?;
        println!("{}", peer_text::json(&text));
        return Ok(ExitCode::SUCCESS);
    }
    let r: CallToolResult = serde_json::from_value(Value::Object(result))
        .context("the task's result is not a tool result")?;
    print_result(&r);
    Ok(if r.is_error == Some(true) {
        Exit::ToolError.into()
    } else {
        ExitCode::SUCCESS
    })
}

/// `tessera call TOOL ARGS --task TARGET`: prints the task id, shows each
/// status change (a spinner on a terminal, one line per change otherwise),
/// prints the result; Ctrl-C cancels the task.
pub async fn call(
    client: Client,
    tool: &str,
    args: JsonObject,
    ttl: Option<u64>,
    json: bool,
    url: Option<String>,
) -> Result<ExitCode, Failure> {
    // The Ctrl-C handler is in place before the task is asked for, so that a
    // Ctrl-C from now on cancels the task instead of killing the process.
    let mut interrupt = std::pin::pin!(tokio::signal::ctrl_c());
    std::future::poll_fn(|cx| {
        let _ = interrupt.as_mut().poll(cx);
        std::task::Poll::Ready(())
    })
    .await;
    let bar = Notices::new(json);
    let options = {
        let bar = bar.clone();
        CallOptions::new().on_progress(move |p| bar.progress(&p))
    };
    let outcome = tokio::select! {
        o = client.call_tool_as_task(tool, args, TaskOptions { ttl, call: options }) => o,
        _ = interrupt.as_mut() => {
            // Dropping the request tells the server it is cancelled.
            bar.finish();
            client.close().await;
            eprintln!("interrupted before the server answered");
            return Ok(Exit::Interrupted.into());
        }
    };
    let handle = match outcome.map_err(remote_failure) {
        Ok(ToolCallOutcome::Done(result)) => {
            bar.finish();
            eprintln!("the server answered without a task");
            client.close().await;
            let result = match serde_json::to_value(&result) {
                Ok(serde_json::Value::Object(o)) => o,
                _ => tessera::types::JsonObject::new(),
            };
            return show(result, json);
        }
        Ok(ToolCallOutcome::Task(h)) => h,
        Err(e) => {
            bar.finish();
            return Err(e);
        }
    };
    bar.line(&format!("task {}", peer_text::line(handle.id())));
    bar.line(&peer_text::line(&follow_up(
        handle.id(),
        client.era(),
        url.as_deref(),
    )));
    let on_change = |s: &TaskState| bar.status(&describe(s));
    let out = tokio::select! {
        r = handle.wait_raw(on_change) => r,
        _ = interrupt.as_mut() => {
            bar.finish();
            let c = handle.cancel().await;
            client.close().await;
            c.map_err(remote_failure)?;
            eprintln!("task {} cancelled", peer_text::line(handle.id()));
            return Ok(Exit::Interrupted.into());
        }
    };
    bar.finish();
    client.close().await;
    show(out.map_err(remote_failure)?, json)
}

/// What `tessera call --task` tells the user about following the task from
/// elsewhere: the command that works, or why none does.
fn follow_up(id: &str, era: Era, url: Option<&str>) -> String {
    match (era, url) {
        (Era::Legacy, _) => format!(
            "task {id} lives in this command's 2025-11-25 session: it is followed here until it \
             ends (Ctrl-C cancels it); other tessera commands open sessions of their own and \
             cannot see it"
        ),
        (Era::Modern, Some(url)) => format!(
            "follow it from another shell: tessera tasks get {id} {url} (the result: tessera \
             tasks result {id} {url})"
        ),
        (Era::Modern, None) => format!(
            "task {id} lives in the server this command started: it is followed here until it \
             ends (Ctrl-C cancels it)"
        ),
    }
}
