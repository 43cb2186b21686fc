//! `tessera complete prompt NAME ARG [VALUE] TARGET` and
//! `tessera complete resource URI_TEMPLATE VAR [VALUE] TARGET`.

use std::process::ExitCode;
use tessera::types::methods;

use clap::{Args, ValueEnum};
use tessera::types::{CompleteRequestParams, JsonObject};

use crate::connect::ClientOptions;
use crate::exit::Failure;
use crate::output;
use crate::peer_text;

/// What is completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompleteWhat {
    /// An argument of a prompt (ref/prompt).
    Prompt,
    /// A variable of a resource template (ref/resource).
    Resource,
}

/// `tessera complete`.
#[derive(Debug, Args)]
pub struct CompleteArgs {
    /// A prompt argument or a resource template variable.
    what: CompleteWhat,
    /// The prompt name (or URI template), the argument (or variable) name,
    /// optionally the value typed so far, then the server's http(s) URL (or
    /// `-- COMMAND ARGS...` or --server NAME).
    #[arg(value_name = "NAME ARG [VALUE] [URL]", required = true, num_args = 1..=4)]
    positional: Vec<String>,
    /// Values of other arguments already chosen, as a JSON object of strings
    /// (completion context).
    #[arg(long, value_name = "JSON")]
    context: Option<String>,
    #[command(flatten)]
    pub(crate) opts: ClientOptions,
}

/// The `completion/complete` params.
pub fn params(
    what: CompleteWhat,
    name: &str,
    arg: &str,
    value: &str,
    context: Option<&str>,
) -> Result<JsonObject, Failure> {
    let mut p = match what {
        CompleteWhat::Prompt => CompleteRequestParams::prompt(name, arg, value),
        CompleteWhat::Resource => CompleteRequestParams::resource_template(name, arg, value),
    };
    if let Some(text) = context {
        p = p.with_context(super::string_map(text, "--context")?);
    }
    Ok(super::params_object(&p))
}

/// Runs `tessera complete`.
pub async fn run(a: CompleteArgs) -> Result<ExitCode, Failure> {
    let mut words = a.positional;
    let target = a.opts.target.resolve(&mut words, 2)?;
    let mut words = words.into_iter();
    let (Some(name), Some(arg)) = (words.next(), words.next()) else {
        return Err(Failure::Usage(
            "give the prompt name (or URI template) and the argument name".into(),
        ));
    };
    let value = words.next().unwrap_or_default();
    super::no_more(words)?;
    let params = params(a.what, &name, &arg, &value, a.context.as_deref())?;
    let s = a.opts.connect_to(target).await?;
    let call = a.opts.call_options(&s);
    let r = s
        .client
        .request_raw_with(methods::COMPLETION_COMPLETE, Some(params), &call)
        .await;
    s.close().await;
    let r = r.map_err(|e| Failure::client(e, methods::COMPLETION_COMPLETE))?;
    if a.opts.json {
        output::json_object(&r);
    } else {
        peer_text::print(&output::completion_result(&r));
    }
    Ok(ExitCode::SUCCESS)
}
