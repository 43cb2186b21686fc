//! `tessera ping TARGET`: checks that the server answers, and how fast.
//! Legacy: `ping`. 2026-07-28 has no `ping`; `server/discover` serves.

use std::process::ExitCode;
use std::time::Instant;
use tessera::types::methods;

use clap::Args;
use tessera::types::Era;

use crate::connect::ClientOptions;
use crate::exit::Failure;
use crate::output;

/// `tessera ping`.
#[derive(Debug, Args)]
pub struct PingArgs {
    /// The server's http(s) URL (or `-- COMMAND ARGS...` or --server NAME).
    #[arg(value_name = "URL")]
    positional: Vec<String>,
    #[command(flatten)]
    pub(crate) opts: ClientOptions,
}

/// Runs `tessera ping`; `--json` prints the result of the request sent
/// (`{}` for `ping`, the `server/discover` result in 2026-07-28).
pub async fn run(a: PingArgs) -> Result<ExitCode, Failure> {
    let mut words = a.positional;
    let target = a.opts.target.resolve(&mut words, 0)?;
    super::no_more(words.into_iter())?;
    let s = a.opts.connect_to(target).await?;
    let method = match s.client.era() {
        Era::Legacy => methods::PING,
        Era::Modern => methods::SERVER_DISCOVER,
    };
    let call = a.opts.call_options(&s);
    let started = Instant::now();
    let r = s.client.request_raw_with(method, None, &call).await;
    let took = started.elapsed();
    let target = s.target.clone();
    s.close().await;
    let r = r.map_err(|e| Failure::client(e, method))?;
    if a.opts.json {
        output::json_object(&r);
    } else {
        println!(
            "{target} answered {method} in {:.1} ms",
            took.as_secs_f64() * 1000.0
        );
    }
    Ok(ExitCode::SUCCESS)
}
