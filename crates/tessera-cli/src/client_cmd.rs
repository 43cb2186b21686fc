//! The client verbs: `tessera list` and `tessera call`.

use std::ffi::OsString;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Args, ValueEnum};
use serde_json::Value;
use tessera::client::{ChildCommand, Client, ClientError};
use tessera::types::{CallToolResult, ContentBlock};

use crate::Failure;
use crate::era::EraOption;
use crate::http_opts::HttpOptions;
use crate::target::Target;

/// What `tessera list` lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ListWhat {
    /// Tools.
    Tools,
}

/// `tessera list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// What to list.
    what: ListWhat,
    /// Print the raw JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// The server: an http(s) URL (positional), or `-- COMMAND ARGS...`.
    #[arg(value_name = "URL")]
    positional: Vec<String>,
    /// The stdio server to start.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<OsString>,
    #[command(flatten)]
    http: HttpOptions,
    #[command(flatten)]
    era: EraOption,
}

/// `tessera call`.
#[derive(Debug, Args)]
pub struct CallArgs {
    /// The tool to call, then optionally its JSON arguments, then an http(s) URL
    /// (or `-- COMMAND ARGS...` after everything).
    #[arg(value_name = "TOOL [JSON-ARGS] [URL]", required = true, num_args = 1..=3)]
    positional: Vec<String>,
    /// Print the raw JSON result.
    #[arg(long)]
    json: bool,
    /// Run the call as a task: print its id, show its status changes, print
    /// its result; Ctrl-C cancels it.
    #[arg(long)]
    task: bool,
    /// The task's lifetime in milliseconds (2025-11-25 servers; with --task).
    #[arg(long, value_name = "MS", requires = "task")]
    ttl: Option<u64>,
    /// The stdio server to start.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<OsString>,
    #[command(flatten)]
    http: HttpOptions,
    #[command(flatten)]
    era: EraOption,
}

pub(crate) async fn connect(target: Target, http: &HttpOptions) -> Result<Client, Failure> {
    connect_in_era(target, http, EraOption::default()).await
}

/// Connects to `target`, speaking the era `era` asks for.
pub(crate) async fn connect_in_era(
    target: Target,
    http: &HttpOptions,
    era: EraOption,
) -> Result<Client, Failure> {
    connect_with(target, http, era, false).await
}

/// [`connect_in_era`]; with `tasks` the client declares the Tasks extension
/// (2026-07-28 servers may then answer with tasks).
pub(crate) async fn connect_with(
    target: Target,
    http: &HttpOptions,
    era: EraOption,
    tasks: bool,
) -> Result<Client, Failure> {
    let builder = era.apply(Client::builder("tessera-cli", env!("CARGO_PKG_VERSION")));
    let builder = if tasks { builder.tasks() } else { builder };
    match target {
        Target::Command(words) => {
            http.only_for_http()?;
            let mut words = words.into_iter();
            let program = words
                .next()
                .ok_or_else(|| Failure::Usage("empty command after --".into()))?;
            let cmd = ChildCommand::new(program.clone(), words);
            builder.connect_child(&cmd).await.map_err(|e| {
                Failure::Runtime(
                    anyhow::Error::new(e)
                        .context(format!("connecting to {}", program.to_string_lossy())),
                )
            })
        }
        Target::Url(url) => {
            let transport = http.transport(&url)?;
            // A token given with `-H Authorization: ...` wins over one stored by `tessera login`.
            let transport = if http.header_map()?.contains_key("authorization") {
                transport
            } else {
                crate::login::with_stored_auth(transport, &url)
            };
            builder.connect_transport(transport).await.map_err(|e| {
                Failure::Runtime(anyhow::Error::new(e).context(format!("connecting to {url}")))
            })
        }
    }
}

pub(crate) fn remote_failure(e: ClientError) -> Failure {
    match e.remote() {
        Some(r) => Failure::Runtime(anyhow::anyhow!("server error {}: {}", r.code, r.message)),
        None => Failure::Runtime(anyhow::Error::new(e)),
    }
}

/// Runs `tessera list`.
pub async fn list(a: ListArgs) -> Result<ExitCode, Failure> {
    let mut positional = a.positional;
    let target = Target::resolve(&mut positional, a.command)?;
    if let Some(extra) = positional.first() {
        return Err(Failure::Usage(format!("unexpected argument {extra:?}")));
    }
    let client = connect_in_era(target, &a.http, a.era).await?;
    let outcome = match a.what {
        ListWhat::Tools => client.list_tools().await,
    };
    client.close().await;
    let tools = outcome.map_err(remote_failure)?;
    if a.json {
        let v = serde_json::json!({ "tools": tools });
        println!(
            "{}",
            serde_json::to_string_pretty(&v).context("serialising")?
        );
    } else if tools.is_empty() {
        println!("(no tools)");
    } else {
        let width = tools.iter().map(|t| t.name.len()).max().unwrap_or(0);
        for t in &tools {
            let desc = t
                .description
                .as_deref()
                .unwrap_or("")
                .lines()
                .next()
                .unwrap_or("");
            println!("{:width$}  {}", t.name, desc);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs `tessera call`.
pub async fn call(a: CallArgs) -> Result<ExitCode, Failure> {
    let mut positional = a.positional;
    let target = Target::resolve(&mut positional, a.command)?;
    let mut words = positional.into_iter();
    let tool = words
        .next()
        .ok_or_else(|| Failure::Usage("missing the tool name".into()))?;
    let args = match words.next() {
        None => Value::Object(Default::default()),
        Some(text) => {
            let v: Value = serde_json::from_str(&text)
                .map_err(|e| Failure::Usage(format!("JSON-ARGS is not valid JSON: {e}")))?;
            if !v.is_object() {
                return Err(Failure::Usage(
                    "JSON-ARGS must be a JSON object, like '{\"text\":\"hi\"}'".into(),
                ));
            }
            v
        }
    };
    if let Some(extra) = words.next() {
        return Err(Failure::Usage(format!("unexpected argument {extra:?}")));
    }
    let client = connect_with(target, &a.http, a.era, a.task).await?;
    if a.task {
        let Value::Object(args) = args else {
            return Err(Failure::Usage("JSON-ARGS must be a JSON object".into()));
        };
        return crate::task_cmd::call(client, &tool, args, a.ttl, a.json).await;
    }
    let outcome = client.call_tool(&tool, args).await;
    client.close().await;
    let result = outcome.map_err(remote_failure)?;
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&result).context("serialising")?
        );
    } else {
        print_result(&result);
    }
    Ok(if result.is_error == Some(true) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

pub(crate) fn print_result(r: &CallToolResult) {
    let failed = r.is_error == Some(true);
    let mut out = String::new();
    for block in &r.content {
        match block {
            ContentBlock::Text(t) => out.push_str(&t.text),
            ContentBlock::Image(i) => out.push_str(&format!(
                "[image {}, {} base64 chars]",
                i.mime_type,
                i.data.len()
            )),
            ContentBlock::Audio(a) => out.push_str(&format!(
                "[audio {}, {} base64 chars]",
                a.mime_type,
                a.data.len()
            )),
            ContentBlock::ResourceLink(l) => out.push_str(&format!("[resource link {}]", l.uri)),
            other => out.push_str(&serde_json::to_string(other).unwrap_or_default()),
        }
        out.push('\n');
    }
    if r.content.is_empty() {
        if let Some(s) = &r.structured_content {
            out.push_str(&serde_json::to_string_pretty(s).unwrap_or_default());
            out.push('\n');
        }
    }
    if failed {
        eprint!("tool error: {out}");
    } else {
        print!("{out}");
    }
}
