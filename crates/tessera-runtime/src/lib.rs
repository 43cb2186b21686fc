//! The tokio runtime of Tessera: drives the sans-IO [`tessera_proto::Engine`]
//! over real transports.
//!
//! - [`spawn`] runs a connection over any newline-delimited byte stream pair
//!   and returns a [`Peer`] handle; [`serve_stdio`] does it on stdin/stdout.
//! - [`ChildProcess`] starts a server as a child process for the client side
//!   of stdio, and shuts it down the way the spec asks (close stdin, wait,
//!   SIGTERM, SIGKILL).
//! - A [`Service`] handles what the peer sends: requests concurrently, each with
//!   a cancellation token that fires on `notifications/cancelled`;
//!   notifications in order. Its handling methods are written as `async fn`
//!   (or return `impl Future`); the connection keeps each request's future in
//!   one box of its own.
//! - [`Connection`] is the connection core every one of these drives: the
//!   engine, its running handlers and its command queue in one value with a
//!   poll-style step. [`spawn`] runs it in a task of its own; a per-request
//!   HTTP engine or an HTTP session runs it inside its own task.
//! - [`shared`]: the [`SessionState`] of a legacy session, the [`SessionStore`]
//!   that keeps it and the [`Bus`] between instances, for serving one
//!   endpoint from several processes.
//!
//! ```no_run
//! use tessera_proto::{EngineConfig, ServerIdentity};
//! use tessera_runtime::{ConnectionOptions, NoService, serve_stdio};
//!
//! # async fn run() -> std::io::Result<()> {
//! let (_peer, task) = serve_stdio(EngineConfig::server(ServerIdentity::default()), NoService, ConnectionOptions::default());
//! task.await.expect("driver task")?;
//! # Ok(()) }
//! ```

mod child;
mod command_queue;
mod connection;
mod driver;
mod extensions;
mod handlers;
pub mod lines;
mod link;
pub mod middleware;
pub mod outgoing;
mod oversized;
mod peer;
mod peer_shared;
mod service;
pub mod shared;
mod stdio;
mod stream_control;
pub mod tally;
#[cfg(feature = "testing")]
pub mod testing;
mod transport;

/// The `data` member of an error a transport made up itself because the
/// peer gave no JSON-RPC answer (an HTTP error status, a failed
/// connection): an object with the HTTP `status`, if any, and
/// [`SESSION_LOST_KEY`].
pub const TRANSPORT_FAILURE_KEY: &str = "io.tessera/transportFailure";

/// The member of a [`TRANSPORT_FAILURE_KEY`] marker that is `true` when the
/// server forgot the session: the request was not served and the connection
/// ended, so sending it again on a new session cannot act twice.
pub const SESSION_LOST_KEY: &str = "sessionLost";

/// Why a transport ended: the server forgot the session (Streamable HTTP
/// answered `404`). A transport's `recv` fails with an [`std::io::Error`]
/// carrying it; the connection's task then ends with that error, and a
/// client that can reconnect sets up a new session before its next request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SessionLost;

impl std::fmt::Display for SessionLost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the server forgot the session")
    }
}

impl std::error::Error for SessionLost {}

impl SessionLost {
    /// The error a transport's `recv` returns for it.
    pub fn io_error() -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::ConnectionReset, SessionLost)
    }

    /// Whether `e` says the session was lost.
    pub fn is(e: &std::io::Error) -> bool {
        e.get_ref().is_some_and(|inner| inner.is::<SessionLost>())
    }
}

pub use child::{ChildCommand, ChildPipes, ChildProcess};
pub use connection::{Connection, ConnectionOptions};
pub use driver::{drive, spawn, spawn_restored, spawn_shared, spawn_transport};
pub use extensions::{Extensions, HttpVersion, PeerAddr, Principal, SessionId};
pub use stream_control::{
    CLOSE_SSE_STREAM_CAPABILITY, CLOSE_SSE_STREAM_NOTIFICATION, StreamControl, StreamHandle,
    close_retry,
};
/// The per-request use of the [`Connection`] core (its former name): feed it
/// a message with [`Connection::handle_message`] and await
/// [`Connection::next`].
pub type OneShot<S> = Connection<S>;
pub use link::{Link, LinkState};
pub use peer::{Outstanding, Peer, PeerError, PeerInfo};
pub use service::{
    BoxFuture, HandlerResult, Message, NoService, Notification, ReplyResult, Request, Service,
};
pub use shared::{
    Bus, BusSubscription, DynBus, DynSessionStore, LocalBus, MemorySessionStore, SessionCaps,
    SessionExport, SessionState, SessionStore, StoreError,
};
pub use stdio::{STDIO_PIPES_ENV, serve_stdio};
pub use tessera_proto::{RawResult, Reply};
pub use transport::{ChannelTransport, Incoming, LineTransport, Transport};
