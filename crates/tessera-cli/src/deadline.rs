//! `--timeout` as the wall-clock bound of a whole command: starting a stdio
//! server, the era probe, the handshake, the request, the progress a server
//! reports and printing the result all happen within it, so a server that
//! floods progress or ignores the probe cannot stretch a command past it.

use std::future::Future;
use std::process::ExitCode;
use std::time::Duration;

use crate::exit::{Exit, Failure};

/// Runs `command` for at most `limit` (`0` = no bound); past it the command
/// is dropped (its connection closed, a child server shut down with the
/// runtime) and it fails with exit 6.
pub async fn within(
    limit: Duration,
    command: impl Future<Output = Result<ExitCode, Failure>>,
) -> Result<ExitCode, Failure> {
    if limit.is_zero() {
        return command.await;
    }
    match tokio::time::timeout(limit, command).await {
        Ok(outcome) => outcome,
        Err(_) => Err(Failure::Coded(
            Exit::Timeout,
            anyhow::anyhow!(
                "no answer within --timeout {} s (it bounds the whole command: connecting, \
                 the probe, the request and its progress); give a larger --timeout, or 0 for none",
                limit.as_secs_f64()
            ),
        )),
    }
}
