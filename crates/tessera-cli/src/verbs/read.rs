//! `tessera read URI TARGET`.

use std::process::ExitCode;
use tessera::types::methods;

use clap::Args;
use tessera::types::ReadResourceRequestParams;

use crate::connect::ClientOptions;
use crate::exit::Failure;
use crate::output;
use crate::peer_text;

/// `tessera read`.
#[derive(Debug, Args)]
pub struct ReadArgs {
    /// The resource's URI, then the server's http(s) URL (or `-- COMMAND
    /// ARGS...` or --server NAME).
    #[arg(value_name = "URI [URL]", required = true, num_args = 1..=2)]
    positional: Vec<String>,
    #[command(flatten)]
    pub(crate) opts: ClientOptions,
}

/// Runs `tessera read`.
pub async fn run(a: ReadArgs) -> Result<ExitCode, Failure> {
    let mut words = a.positional;
    let target = a.opts.target.resolve(&mut words, 1)?;
    let mut words = words.into_iter();
    let uri = words
        .next()
        .ok_or_else(|| Failure::Usage("missing the resource URI".into()))?;
    super::no_more(words)?;
    let params = super::params_object(&ReadResourceRequestParams::new(uri.clone()));
    let s = a.opts.connect_to(target).await?;
    let call = a.opts.call_options(&s);
    let r = s
        .client
        .request_with_input(methods::RESOURCES_READ, params, &call)
        .await;
    s.close().await;
    let r = r.map_err(|e| Failure::client(e, format!("reading {uri}")))?;
    if a.opts.json {
        output::json_object(&r);
    } else {
        peer_text::print(&output::read_result(&r));
    }
    Ok(ExitCode::SUCCESS)
}
