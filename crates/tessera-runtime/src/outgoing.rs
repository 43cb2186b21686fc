//! Observers of the requests a connection sends: the sending side of a
//! request, as telemetry sees it (an OpenTelemetry `CLIENT` span, a duration
//! histogram).
//!
//! The middleware stack ([`crate::middleware`]) sees the requests a
//! connection *receives*; what it sends goes through [`Peer::request`] and
//! friends, in either role (a client's `tools/call`, a server's
//! `sampling/createMessage`, a proxy's forwarded call). An
//! [`OutgoingObserver`] is told of each such request before it is sent (and
//! may add entries to its `params._meta`, such as a W3C `traceparent`), and
//! of its end. A connection asks its service for its observer when it is
//! made ([`Service::outgoing_observer`](crate::Service::outgoing_observer):
//! a server's or client's middleware stack gives the one set with
//! [`MiddlewareStack::observe_outgoing`](crate::middleware::MiddlewareStack::observe_outgoing));
//! one without falls back to the observer installed once for the process
//! with [`observe_outgoing`] (for a program with no stack, such as a
//! command-line client). With no observer a request costs a pointer check
//! and an atomic load.

use std::sync::{Arc, OnceLock};

use tessera_proto::Reply;
use tessera_types::{JsonObject, RequestId};

use crate::peer::{Peer, PeerError};

/// Told of every request, and every notification sent with
/// [`Peer::notify`], that a connection sends, in either role. (Progress
/// and log messages, which the connection writes itself, are not told.)
pub trait OutgoingObserver: Send + Sync + 'static {
    /// Called on the sender's task before `method` is sent on `peer`;
    /// `params` may be changed (the observer adds its `_meta` entries).
    /// Returns what to tell when the request ends, or `None` to ignore it.
    /// A notification ends as soon as it is handed to the connection
    /// ([`OutgoingEnd::Sent`]) or refused by a closed one.
    fn start(
        &self,
        peer: &Peer,
        method: &str,
        params: &mut Option<JsonObject>,
    ) -> Option<Box<dyn OutgoingCall>>;

    /// Called when a client starts connecting ([`Peer::connect`]: the era
    /// probe and the handshake, which the engine sends itself). Returns
    /// what to tell when the connection is established or fails. The
    /// default observes nothing.
    fn connecting(&self, peer: &Peer) -> Option<Box<dyn ConnectCall>> {
        let _ = peer;
        None
    }
}

/// One observed connection attempt, told of its outcome exactly once
/// (dropped unfinished when the caller gave up).
pub trait ConnectCall: Send {
    /// The connection is established (`Ok`, with the era and version it
    /// speaks) or failed.
    fn finish(self: Box<Self>, peer: &Peer, outcome: Result<&tessera_proto::Connected, &PeerError>);
}

/// One observed request, told of its end exactly once (also when the
/// caller gives up on it: the end is then [`OutgoingEnd::Abandoned`]).
pub trait OutgoingCall: Send {
    /// The request ended; `id` is the JSON-RPC id it was sent with, when it
    /// was sent.
    fn finish(self: Box<Self>, id: Option<&RequestId>, end: OutgoingEnd<'_>);
}

/// How an observed request ended.
#[derive(Debug)]
pub enum OutgoingEnd<'a> {
    /// The peer answered with a result.
    Result(&'a Reply),
    /// The request failed: an error answer, a timeout, a closed connection.
    Failed(&'a PeerError),
    /// The caller dropped the request before its answer (it was cancelled).
    Abandoned,
    /// A notification was handed to the connection to write (none is
    /// answered).
    Sent,
}

static OBSERVER: OnceLock<Arc<dyn OutgoingObserver>> = OnceLock::new();

/// Installs the process's outgoing observer. Only the first call takes
/// effect; returns whether this one did.
pub fn observe_outgoing(observer: Arc<dyn OutgoingObserver>) -> bool {
    OBSERVER.set(observer).is_ok()
}

/// The installed observer, if any.
pub(crate) fn observer() -> Option<&'static Arc<dyn OutgoingObserver>> {
    OBSERVER.get()
}

/// Tells an observed call of its end when dropped unfinished.
pub(crate) struct Watched {
    pub(crate) call: Option<Box<dyn OutgoingCall>>,
    pub(crate) id: Option<tokio::sync::oneshot::Receiver<RequestId>>,
}

impl Watched {
    /// The id the driver assigned, once it has.
    fn id(&mut self) -> Option<RequestId> {
        self.id.as_mut().and_then(|rx| rx.try_recv().ok())
    }

    /// Tells the call how the request ended.
    pub(crate) fn finish(mut self, out: &Result<Reply, PeerError>) {
        let id = self.id();
        if let Some(call) = self.call.take() {
            match out {
                Ok(r) => call.finish(id.as_ref(), OutgoingEnd::Result(r)),
                Err(e) => call.finish(id.as_ref(), OutgoingEnd::Failed(e)),
            }
        }
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        let id = self.id();
        if let Some(call) = self.call.take() {
            call.finish(id.as_ref(), OutgoingEnd::Abandoned);
        }
    }
}

tokio::task_local! {
    static ROUND: Round;
}

/// Which round of a multi round-trip call a request is: the client's MRTR
/// loop sends each round inside [`Round::scope`], and an observer reads it
/// with [`Round::current`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Round {
    /// A number shared by the rounds of one call, unique in the process.
    pub call: u64,
    /// The round's number within its call, from 0.
    pub round: u32,
}

static NEXT_CALL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl Round {
    /// A new call's number, unique in the process.
    pub fn next_call() -> u64 {
        NEXT_CALL.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }

    /// The round the current task is sending, if any.
    pub fn current() -> Option<Round> {
        ROUND.try_with(|r| *r).ok()
    }

    /// Runs `f` (which sends the round's request) as this round.
    pub async fn scope<F: std::future::Future>(self, f: F) -> F::Output {
        ROUND.scope(self, f).await
    }
}
