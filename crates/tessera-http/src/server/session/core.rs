//! [`SessionCore`]: the connection core of one legacy session with its
//! service type erased, as the session's task drives it.

use std::task::{Context, Poll};

use tessera_proto::Transmit;
use tessera_runtime::{Connection, Incoming, Peer, Service};
use tessera_types::{ProtocolVersion, RequestId};

/// What a session's task asks of its [`Connection`] core: it feeds it
/// frames, steps it, takes what it writes, and reads protocol state from it
/// (never tracking that state itself).
pub(crate) trait SessionCore: Send {
    /// The core's handle (for the session's handle and its link).
    fn peer(&self) -> &Peer;
    /// Feeds one frame.
    fn handle(&mut self, frame: Incoming);
    /// One step of the core ([`Connection::poll_work`]).
    fn poll_work(&mut self, cx: &mut Context<'_>) -> Poll<()>;
    /// The next message the core writes.
    fn poll_transmit(&mut self) -> Option<Transmit>;
    /// The version the handshake settled on.
    fn negotiated_version(&self) -> Option<ProtocolVersion>;
    /// Whether the client's request `id` is being handled.
    fn is_in_progress(&self, id: &RequestId) -> bool;
    /// Whether the negotiated version allows JSON-RPC batches.
    fn allows_batches(&self) -> bool;
    /// Closes the core (handlers cancelled).
    fn close(&mut self);
    /// Whether the core is closed.
    fn is_closed(&self) -> bool;
}

impl<S: Service> SessionCore for Connection<S> {
    fn peer(&self) -> &Peer {
        Connection::peer(self)
    }
    fn handle(&mut self, frame: Incoming) {
        Connection::handle(self, frame);
    }
    fn poll_work(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        Connection::poll_work(self, cx)
    }
    fn poll_transmit(&mut self) -> Option<Transmit> {
        Connection::poll_transmit(self)
    }
    fn negotiated_version(&self) -> Option<ProtocolVersion> {
        Connection::negotiated_version(self)
    }
    fn is_in_progress(&self, id: &RequestId) -> bool {
        Connection::is_in_progress(self, id)
    }
    fn allows_batches(&self) -> bool {
        Connection::allows_batches(self)
    }
    fn close(&mut self) {
        Connection::close(self);
    }
    fn is_closed(&self) -> bool {
        Connection::is_closed(self)
    }
}
