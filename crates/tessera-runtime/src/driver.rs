//! The driver: runs a [`Connection`] core over a [`Transport`] in its own
//! tokio task (stdio, a child process, the client, a socket).

use std::sync::Arc;

use tessera_proto::EngineConfig;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::task::JoinHandle;

use crate::connection::{Connection, ConnectionOptions};
use crate::peer::Peer;
use crate::service::Service;
use crate::transport::{LineTransport, Transport};

/// Starts a connection over a reader and a writer of newline-delimited JSON-RPC
/// (stdio, a child process, a socket). Returns the [`Peer`] handle and the task
/// that runs it; the task ends when either side closes.
pub fn spawn<R, W, S>(
    config: EngineConfig,
    reader: R,
    writer: W,
    service: S,
    options: ConnectionOptions,
) -> (Peer, JoinHandle<std::io::Result<()>>)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
    S: Service,
{
    let transport = LineTransport::new(reader, writer, options.max_message_size);
    spawn_transport(config, transport, service, options)
}

/// Starts a connection over any [`Transport`].
pub fn spawn_transport<T, S>(
    config: EngineConfig,
    transport: T,
    service: S,
    options: ConnectionOptions,
) -> (Peer, JoinHandle<std::io::Result<()>>)
where
    T: Transport,
    S: Service,
{
    let core = Connection::for_service(config, service, &options);
    drive(core, transport, options)
}

/// Starts a connection over any [`Transport`] with a configuration and a
/// service shared between connections (nothing is rebuilt per connection).
/// `config.methods` must already list the methods the service serves.
pub fn spawn_shared<T, S>(
    config: Arc<EngineConfig>,
    transport: T,
    service: Arc<S>,
    options: ConnectionOptions,
) -> (Peer, JoinHandle<std::io::Result<()>>)
where
    T: Transport,
    S: Service,
{
    let core = Connection::with_options(config, service, &options);
    drive(core, transport, options)
}

/// Like [`spawn_shared`], for a server connection that carries on a legacy
/// session from its stored `state` (begun in another process, or in a
/// connection since closed): the engine starts as the handshake left it
/// ([`Engine::restore_session`](tessera_proto::Engine::restore_session)) and
/// the service takes its data back ([`Service::on_restored`]). The client
/// notices nothing.
pub fn spawn_restored<T, S>(
    config: Arc<EngineConfig>,
    transport: T,
    service: Arc<S>,
    options: ConnectionOptions,
    state: &crate::SessionState,
) -> (Peer, JoinHandle<std::io::Result<()>>)
where
    T: Transport,
    S: Service,
{
    let mut core = Connection::with_options(config, service, &options);
    core.restore_state(state);
    drive(core, transport, options)
}

/// Runs `core` over `transport` in a new task.
pub fn drive<T, S>(
    core: Connection<S>,
    transport: T,
    options: ConnectionOptions,
) -> (Peer, JoinHandle<std::io::Result<()>>)
where
    T: Transport,
    S: Service,
{
    let peer = core.peer().clone();
    let handle = tokio::spawn(run(core, transport, options));
    (peer, handle)
}

async fn run<T: Transport, S: Service>(
    mut core: Connection<S>,
    mut transport: T,
    options: ConnectionOptions,
) -> std::io::Result<()> {
    let mut out = Vec::new();
    let mut eof_at: Option<tokio::time::Instant> = None;
    let mut result = Ok(());
    loop {
        while let Some(t) = core.poll_transmit() {
            out.push(t);
        }
        if !out.is_empty() && core.engine().pending_requests() > 1 {
            coalesce(&mut core, &mut out).await;
        }
        if !out.is_empty() {
            if let Err(e) = transport.send(&mut out).await {
                if e.kind() != std::io::ErrorKind::BrokenPipe {
                    result = Err(e);
                }
                break;
            }
        }
        if core.is_closed() {
            break;
        }
        if let Some(at) = eof_at {
            // The peer closed its side: finish what is in progress, then stop.
            if core.handling() == 0 || tokio::time::Instant::now() >= at {
                break;
            }
        }
        tokio::select! {
            biased;
            // Before new frames, so that a busy peer cannot starve the handlers.
            () = core.work() => {}
            frame = transport.recv(), if eof_at.is_none() => match frame {
                Ok(Some(frame)) => core.handle(frame),
                Ok(None) => {
                    eof_at = Some(tokio::time::Instant::now() + options.drain_timeout);
                    core.peer_closed();
                }
                // The connection's task ends with the reason (a lost
                // session, for one).
                Err(e) => {
                    result = Err(e);
                    eof_at = Some(tokio::time::Instant::now() + options.drain_timeout);
                    core.peer_closed();
                }
            },
            () = sleep_until(eof_at), if eof_at.is_some() => {}
        }
    }
    core.close();
    transport.close().await;
    result
}

/// At most this many turns of the scheduler are given to other tasks before
/// a write.
const COALESCE_TURNS: usize = 32;

/// Other tasks are sending requests through this connection too: lets those
/// that are ready now queue theirs, turn after turn while each turn brings
/// more, so that a burst goes out in one write (and the peer reads it in one)
/// instead of one write, and one wake-up of the peer, per request. A task
/// woken by another runs right after it on the same worker, so one turn
/// alone would collect a single request.
async fn coalesce<S: Service>(core: &mut Connection<S>, out: &mut Vec<tessera_proto::Transmit>) {
    for _ in 0..COALESCE_TURNS {
        let before = out.len();
        tokio::task::yield_now().await;
        // Applies what the others queued, without waiting for more.
        std::future::poll_fn(|cx| {
            let _ = core.poll_work(cx);
            std::task::Poll::Ready(())
        })
        .await;
        while let Some(t) = core.poll_transmit() {
            out.push(t);
        }
        if out.len() == before {
            return;
        }
    }
}

async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}
