//! Serving on this process's standard input and output.
//!
//! tokio's `Stdin` and `Stdout` hand every read and every write to a thread
//! of the blocking pool (a terminal or a file cannot be polled). When stdin
//! and stdout are pipes, as they are for a server started by a client, they
//! are read and written directly on the runtime instead (the pipe is put in
//! non-blocking mode and registered with the reactor): no helper thread and
//! no thread switch per message.
//!
//! Measured (`bench/run.sh` and `bench/proxy.sh`, 2-core machine): polled
//! pipes cost 46 µs of CPU per sequential round trip against 73 on the
//! blocking pool, and 22–24 µs per call against 43–51 for a server behind
//! `tessera proxy` at concurrency 16, where the proxied calls per second rise
//! by 15–45%. The blocking pool answers one lone client about 10% sooner on
//! an idle machine.
//!
//! The environment variable `TESSERA_STDIO_PIPES=blocking` turns that off
//! (pipes then go through tokio's `Stdin`/`Stdout` too): for a parent that
//! shares its own stdin or stdout with the server and must not see them
//! switched to non-blocking mode (the mode belongs to the open pipe, which
//! both processes hold), and for comparing the two (`bench/run.sh` measures
//! both).

use std::os::fd::AsFd;

use tessera_proto::EngineConfig;
use tokio::io::{Stdin, Stdout};
use tokio::net::unix::pipe;
use tokio::task::JoinHandle;
use tokio_util::either::Either;

use crate::connection::ConnectionOptions;
use crate::driver::spawn;
use crate::peer::Peer;
use crate::service::Service;

/// This process's stdin: a pipe polled by the reactor, or tokio's `Stdin`.
pub(crate) type StdinReader = Either<pipe::Receiver, Stdin>;

/// This process's stdout: a pipe polled by the reactor, or tokio's `Stdout`.
pub(crate) type StdoutWriter = Either<pipe::Sender, Stdout>;

/// The environment variable that keeps stdio pipes on tokio's blocking
/// `Stdin`/`Stdout` when set to `blocking`.
pub const STDIO_PIPES_ENV: &str = "TESSERA_STDIO_PIPES";

/// Whether pipes may be polled by the reactor (see [`STDIO_PIPES_ENV`]).
fn reactor_pipes() -> bool {
    std::env::var_os(STDIO_PIPES_ENV).is_none_or(|v| v != "blocking")
}

/// Stdin as an async reader; a pipe is read without the blocking pool.
/// Must run inside a tokio runtime with I/O enabled.
pub(crate) fn stdin() -> StdinReader {
    if !reactor_pipes() {
        return Either::Right(tokio::io::stdin());
    }
    let pipe = std::io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .and_then(|fd| pipe::Receiver::from_file(std::fs::File::from(fd)));
    match pipe {
        Ok(p) => Either::Left(p),
        Err(_) => Either::Right(tokio::io::stdin()),
    }
}

/// Stdout as an async writer; a pipe is written without the blocking pool.
/// Must run inside a tokio runtime with I/O enabled.
pub(crate) fn stdout() -> StdoutWriter {
    if !reactor_pipes() {
        return Either::Right(tokio::io::stdout());
    }
    let pipe = std::io::stdout()
        .as_fd()
        .try_clone_to_owned()
        .and_then(|fd| pipe::Sender::from_file(std::fs::File::from(fd)));
    match pipe {
        Ok(p) => Either::Left(p),
        Err(_) => Either::Right(tokio::io::stdout()),
    }
}

/// Serves `service` on stdin/stdout (newline-delimited JSON-RPC). Logs belong
/// on stderr: nothing but MCP messages is ever written to stdout.
///
/// When stdin and stdout are pipes (a server started by its client) they are
/// switched to non-blocking mode and polled by the runtime's reactor; anything
/// else (a terminal, a file) goes through tokio's blocking `Stdin`/`Stdout`,
/// and so do pipes when [`STDIO_PIPES_ENV`] is `blocking`.
///
/// The connection ends when stdin reaches end of file (after requests in
/// progress finish, within [`ConnectionOptions::drain_timeout`]).
pub fn serve_stdio<S: Service>(
    config: EngineConfig,
    service: S,
    options: ConnectionOptions,
) -> (Peer, JoinHandle<std::io::Result<()>>) {
    spawn(config, stdin(), stdout(), service, options)
}
