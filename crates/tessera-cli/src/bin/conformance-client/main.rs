//! The client the official MCP conformance suite drives:
//! `conformance-client <server-url>`, with the scenario in
//! `MCP_CONFORMANCE_SCENARIO` and, from suite 0.2, the protocol version in
//! `MCP_CONFORMANCE_PROTOCOL_VERSION`. It uses the public client API only.
//!
//! - [`scenarios`]: every scenario but the OAuth ones.
//! - [`auth`]: the `auth/*` scenarios.

use std::process::ExitCode;

mod auth;
mod scenarios;

async fn run(url: &str, scenario: &str) -> Result<(), String> {
    if scenario.starts_with("auth/") {
        auth::run(url, scenario).await
    } else {
        scenarios::run(url, scenario).await
    }
}

fn main() -> ExitCode {
    let Some(url) = std::env::args().nth(1).filter(|u| u.starts_with("http")) else {
        eprintln!("usage: conformance-client <server-url> (scenario in MCP_CONFORMANCE_SCENARIO)");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("TESSERA_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("cannot start the runtime: {e}");
            return ExitCode::from(1);
        }
    };
    match rt.block_on(run(&url, &scenario)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("conformance-client ({scenario}): {e}");
            ExitCode::from(1)
        }
    }
}
