//! `tessera serve`.

use std::process::ExitCode;

use anyhow::Context as _;
use clap::Args;

use crate::Failure;

/// `tessera serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Serve on stdin/stdout (newline-delimited JSON-RPC).
    #[arg(long)]
    stdio: bool,
}

/// Runs the reference server.
pub async fn run(a: ServeArgs) -> Result<ExitCode, Failure> {
    if !a.stdio {
        return Err(Failure::Usage("choose a transport: --stdio".into()));
    }
    let server = crate::reference::server().context("building the reference server")?;
    server.serve_stdio().await.context("serving on stdio")?;
    Ok(ExitCode::SUCCESS)
}
