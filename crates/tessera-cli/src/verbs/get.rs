//! `tessera get PROMPT [ARGS_JSON] TARGET`.

use std::process::ExitCode;
use tessera::types::methods;

use clap::Args;
use tessera::types::GetPromptRequestParams;

use crate::connect::ClientOptions;
use crate::exit::Failure;
use crate::output;
use crate::peer_text;

/// `tessera get`.
#[derive(Debug, Args)]
pub struct GetArgs {
    /// The prompt's name, then optionally its arguments as a JSON object of
    /// strings, then the server's http(s) URL (or `-- COMMAND ARGS...` or
    /// --server NAME).
    #[arg(value_name = "PROMPT [ARGS_JSON] [URL]", required = true, num_args = 1..=3)]
    positional: Vec<String>,
    #[command(flatten)]
    pub(crate) opts: ClientOptions,
}

/// Runs `tessera get`.
pub async fn run(a: GetArgs) -> Result<ExitCode, Failure> {
    let mut words = a.positional;
    let target = a.opts.target.resolve(&mut words, 1)?;
    let mut words = words.into_iter();
    let name = words
        .next()
        .ok_or_else(|| Failure::Usage("missing the prompt name".into()))?;
    let mut prompt = GetPromptRequestParams::new(name.clone());
    if let Some(text) = words.next() {
        prompt.arguments = Some(super::string_map(&text, "ARGS_JSON")?);
    }
    let params = super::params_object(&prompt);
    super::no_more(words)?;
    let s = a.opts.connect_to(target).await?;
    let call = a.opts.call_options(&s);
    let r = s
        .client
        .request_with_input(methods::PROMPTS_GET, params, &call)
        .await;
    s.close().await;
    let r = r.map_err(|e| Failure::client(e, format!("getting the prompt {name}")))?;
    if a.opts.json {
        output::json_object(&r);
    } else {
        peer_text::print(&output::prompt_result(&r));
    }
    Ok(ExitCode::SUCCESS)
}
