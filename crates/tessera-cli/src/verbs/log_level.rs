//! `tessera log-level LEVEL TARGET`: sets the server's log level
//! (`logging/setLevel`), then prints what the server logs until it closes
//! the connection, `--for SECS` pass, or the user interrupts.

use std::process::ExitCode;
use std::time::Duration;
use tessera::types::methods;

use clap::Args;
use tessera::types::{Era, LoggingLevel, SetLevelRequestParams};

use crate::connect::{ClientOptions, LevelArg};
use crate::exit::{Exit, Failure};
use crate::output;

/// `tessera log-level`.
#[derive(Debug, Args)]
pub struct LogLevelArgs {
    /// The lowest level to receive.
    #[arg(value_enum)]
    level: LevelArg,
    /// The server's http(s) URL (or `-- COMMAND ARGS...` or --server NAME).
    #[arg(value_name = "URL")]
    positional: Vec<String>,
    /// Stop printing logs after this many seconds (default: until the server
    /// closes the connection or Ctrl-C).
    #[arg(long = "for", value_name = "SECS")]
    for_secs: Option<f64>,
    #[command(flatten)]
    opts: ClientOptions,
}

/// Runs `tessera log-level`.
pub async fn run(a: LogLevelArgs) -> Result<ExitCode, Failure> {
    let opts = a.opts;
    let mut words = a.positional;
    let target = opts.target.resolve(&mut words, 0)?;
    super::no_more(words.into_iter())?;
    let wait = match a.for_secs {
        Some(s) if !(s.is_finite() && (0.0..=1e7).contains(&s)) => {
            return Err(Failure::Usage(format!(
                "--for {s}: not a number of seconds"
            )));
        }
        Some(s) => Some(Duration::from_secs_f64(s)),
        None => None,
    };
    let level: LoggingLevel = a.level.into();
    let s = opts.connect_to(target).await?;
    if s.client.era() == Era::Modern {
        s.close().await;
        return Err(Failure::Coded(
            Exit::Unsupported,
            anyhow::anyhow!(
                "2026-07-28 has no session log level: logs come with each request; \
                 give --log-level {} to the verb instead (e.g. tessera call --log-level {} ...)",
                level.as_str(),
                level.as_str()
            ),
        ));
    }
    if s.client.server_capabilities().logging.is_none() {
        s.close().await;
        return Err(Failure::Coded(
            Exit::Unsupported,
            anyhow::anyhow!("the server does not declare the logging capability"),
        ));
    }
    let params = super::params_object(&SetLevelRequestParams { meta: None, level });
    let call = opts.call_options(&s);
    let r = s
        .client
        .request_raw_with(methods::LOGGING_SET_LEVEL, Some(params), &call)
        .await;
    let r = match r {
        Ok(r) => r,
        Err(e) => {
            s.close().await;
            return Err(Failure::client(e, methods::LOGGING_SET_LEVEL));
        }
    };
    if opts.json {
        output::json_object(&r);
    } else {
        eprintln!(
            "log level set to {}; printing the server's logs",
            level.as_str()
        );
    }
    let until = async {
        match wait {
            Some(d) => tokio::time::sleep(d).await,
            None => std::future::pending().await,
        }
    };
    let broke = tokio::select! {
        _ = s.client.closed() => true,
        _ = tokio::signal::ctrl_c() => false,
        _ = until => false,
    };
    s.close().await;
    if broke && wait.is_some() {
        return Err(Failure::Coded(
            Exit::Connection,
            anyhow::anyhow!("the server closed the connection"),
        ));
    }
    Ok(ExitCode::SUCCESS)
}
