//! `tessera call TOOL [JSON-ARGS] TARGET`.

use std::process::ExitCode;
use tessera::types::methods;

use clap::Args;
use tessera::types::CallToolRequestParams;

use crate::connect::ClientOptions;
use crate::exit::{Exit, Failure};
use crate::output;
use crate::peer_text;

/// `tessera call`.
#[derive(Debug, Args)]
pub struct CallArgs {
    /// The tool to call, then optionally its JSON arguments, then the
    /// server's http(s) URL (or `-- COMMAND ARGS...` after everything).
    #[arg(value_name = "TOOL [JSON-ARGS] [URL]", required = true, num_args = 1..=3)]
    positional: Vec<String>,
    /// Run the call as a task: print its id and how to follow it, show its
    /// progress (a bar on a terminal) and status changes, print its result;
    /// Ctrl-C cancels it.
    #[arg(long)]
    pub(crate) task: bool,
    /// The task's lifetime in milliseconds (2025-11-25 servers; with --task).
    #[arg(long, value_name = "MS", requires = "task")]
    ttl: Option<u64>,
    #[command(flatten)]
    pub(crate) opts: ClientOptions,
}

/// The `tools/call` params for a tool and its JSON arguments text.
pub fn params(tool: &str, args: Option<&str>) -> Result<CallToolRequestParams, Failure> {
    let mut p = CallToolRequestParams::new(tool);
    if let Some(text) = args {
        p.arguments = Some(super::json_object(text, "JSON-ARGS", r#"{"text":"hi"}"#)?);
    }
    Ok(p)
}

/// Runs `tessera call`.
pub async fn run(a: CallArgs) -> Result<ExitCode, Failure> {
    let mut words = a.positional;
    let target = a.opts.target.resolve(&mut words, 1)?;
    let mut words = words.into_iter();
    let tool = words
        .next()
        .ok_or_else(|| Failure::Usage("missing the tool name".into()))?;
    let args = words.next();
    let params = params(&tool, args.as_deref())?;
    super::no_more(words)?;
    let url = match &target {
        crate::target::Target::Url { url, .. } => Some(url.clone()),
        crate::target::Target::Command { .. } => None,
    };
    let s = a.opts.connect_with_tasks(target, a.task).await?;
    if a.task {
        let args = params.arguments.unwrap_or_default();
        return crate::task_cmd::call(s.client, &tool, args, a.ttl, a.opts.json, url).await;
    }
    let call = a.opts.call_options(&s);
    let r = s
        .client
        .request_with_input(methods::TOOLS_CALL, super::params_object(&params), &call)
        .await;
    s.close().await;
    let r = r.map_err(|e| Failure::client(e, format!("calling {tool}")))?;
    let failed = output::is_tool_error(&r);
    if a.opts.json {
        output::json_object(&r);
    } else if failed {
        peer_text::eprint(&format!("tool error: {}", output::tool_result(&r)));
    } else {
        peer_text::print(&output::tool_result(&r));
    }
    Ok(if failed {
        Exit::ToolError.into()
    } else {
        ExitCode::SUCCESS
    })
}
