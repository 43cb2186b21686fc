//! Serving on this process's standard input and output.

use tessera_proto::EngineConfig;
use tokio::task::JoinHandle;

use crate::connection::ConnectionOptions;
use crate::driver::spawn;
use crate::peer::Peer;
use crate::service::Service;

/// Serves `service` on stdin/stdout (newline-delimited JSON-RPC). Logs belong
/// on stderr: nothing but MCP messages is ever written to stdout.
///
/// The connection ends when stdin reaches end of file (after requests in
/// progress finish, within [`ConnectionOptions::drain_timeout`]).
pub fn serve_stdio<S: Service>(
    config: EngineConfig,
    service: S,
    options: ConnectionOptions,
) -> (Peer, JoinHandle<std::io::Result<()>>) {
    spawn(
        config,
        tokio::io::stdin(),
        tokio::io::stdout(),
        service,
        options,
    )
}
