//! [`SessionHandle`]: what the HTTP handlers hold of a session.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use tessera_proto::decode::Inbound;
use tessera_runtime::{Extensions, Incoming, Peer, Principal, StoreError, StreamHandle};
use tessera_types::RequestId;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, oneshot};

use super::super::client_share::InFlight;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use bytes::Bytes;

use super::super::ResponseMode;
use super::super::event_store::EventId;
use super::super::registry::ClientKey;
use super::{Command, FirstReply, SessionKind, Submit};

/// How a session ended, which decides what is forgotten with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum EndReason {
    /// This instance ended it (idle, evicted, handshake timeout, engine gone).
    Local = 0,
    /// The client deleted it (here).
    Deleted = 1,
    /// The server is shutting down.
    Shutdown = 2,
    /// The client deleted it through another instance, or another instance
    /// ended it to make room under the caps counted in the shared store.
    Remote = 3,
    /// This instance ended it to make room for another session (a cap):
    /// it is over on every instance.
    Evicted = 4,
}

/// What the HTTP handlers hold of a session.
pub(crate) struct SessionHandle {
    pub id: Arc<str>,
    /// The id as an `Mcp-Session-Id` value, made once (`None` when it
    /// cannot be one).
    pub id_header: Option<http::HeaderValue>,
    pub kind: SessionKind,
    pub(super) commands: mpsc::UnboundedSender<Command>,
    pub(super) peer: Peer,
    /// Fires when the session ends (DELETE, expiry, shutdown, engine gone).
    pub ended: CancellationToken,
    /// When the handle was made: [`Self::last_activity`] counts from it.
    pub(super) born: Instant,
    /// The last activity, in nanoseconds after `born` (an atomic: it is
    /// written on every request and read on every turn of the session task).
    pub(super) last_activity: AtomicU64,
    /// The principal that opened the session: every later request must be
    /// made by the same one (`None`: opened without authentication).
    pub owner: Option<Principal>,
    /// Who the session counts against for the per-client cap.
    pub client: ClientKey,
    /// Set once the client has sent anything after `initialize`
    /// (`notifications/initialized`, normally).
    pub(super) handshaken: AtomicBool,
    /// Requests in progress may hold at most this many permits.
    pub(super) permits: Arc<Semaphore>,
    pub(super) max_inflight: usize,
    /// Response streams (SSE bodies) currently open on this session.
    pub(super) streams_open: Arc<AtomicUsize>,
    /// When the stored state was last saved or its TTL refreshed, in ms
    /// since the process's first session.
    pub(super) stored_at: AtomicU64,
    /// Why the session ended ([`EndReason`]).
    pub(super) end: AtomicU8,
    /// Why the state of the handshake could not be stored (it then fails).
    pub(super) store_error: std::sync::OnceLock<Box<StoreError>>,
    /// What every request's handler gets to close its SSE connection (made
    /// once per session, see [`stream_handle`]).
    pub(super) stream_handle: StreamHandle,
    /// What every request's handlers get from the session (its
    /// [`SessionId`](tessera_runtime::SessionId), its [`StreamHandle`], and
    /// the HTTP version most requests come over), made once per session (see
    /// [`request_base`]).
    pub(crate) request_base: Extensions,
    /// The headers of an SSE answer to a request of this session
    /// (`Content-Type`, `Cache-Control`, `X-Accel-Buffering`,
    /// `Mcp-Session-Id`), made once per session.
    pub(crate) sse_headers: http::HeaderMap,
}

/// Counts an open response stream of a session while it is alive.
pub(crate) struct StreamCount(Arc<AtomicUsize>);

impl Drop for StreamCount {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl SessionHandle {
    /// Records activity (a request arrived).
    pub(crate) fn touch(&self) {
        let since = Instant::now().saturating_duration_since(self.born);
        let nanos = u64::try_from(since.as_nanos()).unwrap_or(u64::MAX);
        self.last_activity.store(nanos, Ordering::Relaxed);
    }

    /// Whether the session has neither a request in progress nor an open
    /// stream (it may be evicted to make room).
    pub(crate) fn is_idle(&self) -> bool {
        self.permits.available_permits() == self.max_inflight
            && self.streams_open.load(Ordering::Acquire) == 0
    }

    /// The client sent something after `initialize`: the handshake deadline
    /// no longer applies.
    pub(crate) fn mark_handshaken(&self) {
        self.handshaken.store(true, Ordering::Release);
    }

    pub(super) fn is_handshaken(&self) -> bool {
        self.handshaken.load(Ordering::Acquire)
    }

    /// Counts a response stream until the returned guard is dropped.
    pub(crate) fn stream_opened(&self) -> StreamCount {
        self.streams_open.fetch_add(1, Ordering::AcqRel);
        StreamCount(self.streams_open.clone())
    }

    /// Waits (up to `wait`) for room for `n` more requests in progress.
    /// `None` when the session stayed at its limit for that long.
    pub(crate) async fn reserve(&self, n: usize, wait: Duration) -> Option<OwnedSemaphorePermit> {
        let n = u32::try_from(n.clamp(1, self.max_inflight)).unwrap_or(u32::MAX);
        // Room at once (nearly always): no timer is built.
        if let Ok(p) = self.permits.clone().try_acquire_many_owned(n) {
            return Some(p);
        }
        tokio::time::timeout(wait, self.permits.clone().acquire_many_owned(n))
            .await
            .ok()?
            .ok()
    }

    /// Room for one more request in progress, at once, or `None`.
    pub(crate) fn try_reserve_one(&self) -> Option<OwnedSemaphorePermit> {
        self.permits.clone().try_acquire_owned().ok()
    }

    /// The most requests this session may have in progress.
    pub(crate) fn max_inflight(&self) -> usize {
        self.max_inflight
    }

    /// When a request last arrived (or the session task last found the
    /// session busy), or when the session was made.
    pub(crate) fn last_activity(&self) -> Instant {
        self.born + Duration::from_nanos(self.last_activity.load(Ordering::Relaxed))
    }

    /// Hands a frame to the engine. `false` when the session is gone.
    pub(crate) async fn forward(&self, inbound: Inbound) -> bool {
        self.forward_with(inbound, Extensions::new()).await
    }

    /// Hands a frame to the engine with what its requests' handlers may read
    /// (the HTTP headers). `false` when the session is gone.
    /// It goes through the router, like submitted requests, so that frames
    /// reach the engine in the order they arrived.
    pub(crate) async fn forward_with(&self, inbound: Inbound, extensions: Extensions) -> bool {
        self.touch();
        !self.ended.is_cancelled()
            && self
                .commands
                .send(Command::Forward(
                    Box::new(frame(inbound, extensions)),
                    Vec::new(),
                ))
                .is_ok()
    }

    /// Hands a frame to the engine and waits until it is handled and the
    /// session state it changed is stored (`notifications/initialized`: the
    /// client may send its next request to another instance at once).
    /// `false` when the session is gone.
    pub(crate) async fn forward_synced(&self, inbound: Inbound) -> bool {
        self.touch();
        let (done, handled) = oneshot::channel();
        let frame = Incoming::Synced {
            frame: Box::new(Incoming::Decoded(inbound)),
            done,
        };
        if self.ended.is_cancelled()
            || self
                .commands
                .send(Command::Forward(Box::new(frame), Vec::new()))
                .is_err()
            || handled.await.is_err()
        {
            return !self.ended.is_cancelled();
        }
        let (saved, stored) = oneshot::channel();
        if self.commands.send(Command::Save(saved)).is_ok() {
            let _ = stored.await;
        }
        true
    }

    /// Hands a frame of an HTTP+SSE session to the engine with the in-flight
    /// permits of its requests (released as each is answered).
    pub(crate) fn forward_held(
        &self,
        inbound: Inbound,
        extensions: Extensions,
        held: Vec<(RequestId, InFlight)>,
    ) -> bool {
        self.send_forward(frame(inbound, extensions), held)
    }

    /// [`SessionHandle::forward_held`], waiting until the engine has handled
    /// the frame (its handlers started, their layers' refusals recorded).
    pub(crate) async fn forward_held_handled(
        &self,
        inbound: Inbound,
        extensions: Extensions,
        held: Vec<(RequestId, InFlight)>,
    ) -> bool {
        let (done, handled) = oneshot::channel();
        let synced = Incoming::Synced {
            frame: Box::new(frame(inbound, extensions)),
            done,
        };
        self.send_forward(synced, held) && handled.await.is_ok()
    }

    /// Hands `incoming` to the session's task; false when the session has
    /// ended.
    fn send_forward(&self, incoming: Incoming, held: Vec<(RequestId, InFlight)>) -> bool {
        self.touch();
        !self.ended.is_cancelled()
            && self
                .commands
                .send(Command::Forward(Box::new(incoming), held))
                .is_ok()
    }

    /// Registers a request (or the requests of a batch) and hands its frame
    /// to the engine, both through the router, in one step; the returned
    /// receiver gets its answer (or why it was refused). `None` when the
    /// session is gone.
    pub(crate) fn submit(
        &self,
        ids: Vec<RequestId>,
        batch: bool,
        mode: ResponseMode,
        inbound: Inbound,
        extensions: Extensions,
        permit: InFlight,
    ) -> Option<oneshot::Receiver<FirstReply>> {
        self.touch();
        if self.ended.is_cancelled() {
            return None;
        }
        let (first, first_rx) = oneshot::channel();
        let mut extensions = extensions;
        // A request's extensions made on the session's base have it already.
        if extensions.get::<StreamHandle>().is_none() {
            extensions.insert(self.stream_handle.clone());
        }
        self.commands
            .send(Command::Submit(Box::new(Submit {
                ids,
                batch,
                mode,
                frame: frame(inbound, extensions),
                first,
                permit,
            })))
            .ok()?;
        Some(first_rx)
    }

    /// Opens the standalone stream, or resumes a stream after `last`.
    pub(crate) async fn open_get(&self, last: Option<EventId>) -> Option<mpsc::Receiver<Bytes>> {
        self.touch();
        let (reply, rx) = oneshot::channel();
        self.commands.send(Command::OpenGet { last, reply }).ok()?;
        rx.await.ok()
    }

    /// The client cancelled `id`: its stream ends without a response.
    pub(crate) fn cancelled(&self, id: RequestId) {
        let _ = self.commands.send(Command::Cancelled(id));
    }

    /// Ends the session: its engine is closed (handlers cancelled), its
    /// streams end, and its id is forgotten.
    pub(crate) fn terminate(&self) {
        self.terminate_as(EndReason::Local);
    }

    /// Ends the session for `reason` (see [`EndReason`]).
    pub(crate) fn terminate_as(&self, reason: EndReason) {
        let _ = self.end.compare_exchange(
            EndReason::Local as u8,
            reason as u8,
            Ordering::AcqRel,
            Ordering::Acquire,
        );
        self.ended.cancel();
        // The session's task does not await `ended`: this wakes it.
        let _ = self.commands.send(Command::End);
        self.peer.close();
    }

    pub(super) fn end_reason(&self) -> EndReason {
        match self.end.load(Ordering::Acquire) {
            1 => EndReason::Deleted,
            2 => EndReason::Shutdown,
            3 => EndReason::Remote,
            4 => EndReason::Evicted,
            _ => EndReason::Local,
        }
    }

    /// Why the handshake's state could not be stored, if it could not.
    pub(crate) fn store_error(&self) -> Option<StoreError> {
        self.store_error.get().map(|e| (**e).clone())
    }

    pub(super) fn millis(&self) -> u64 {
        static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
        let epoch = *EPOCH.get_or_init(Instant::now);
        u64::try_from(epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// The stored state was just saved (its TTL starts again).
    pub(super) fn stored_now(&self) {
        self.stored_at.store(self.millis(), Ordering::Release);
    }

    /// Refreshes the stored state's TTL when a quarter of it has passed
    /// since the last save or refresh (in the background: the request does
    /// not wait for it).
    /// With a bus, a session whose stored state is gone (deleted through an
    /// instance whose note did not arrive, or expired unused everywhere) ends
    /// here too.
    pub(crate) fn refresh_stored(self: &Arc<Self>, cluster: &Arc<super::super::cluster::Cluster>) {
        if self.kind != SessionKind::Streamable || !cluster.stores {
            return;
        }
        let now = self.millis();
        let last = self.stored_at.load(Ordering::Acquire);
        let every = u64::try_from(cluster.touch_every().as_millis()).unwrap_or(u64::MAX);
        if now.saturating_sub(last) < every
            || self
                .stored_at
                .compare_exchange(last, now, Ordering::AcqRel, Ordering::Acquire)
                .is_err()
        {
            return;
        }
        let cluster = cluster.clone();
        let id = self.id.clone();
        let handle = Arc::downgrade(self);
        tokio::spawn(async move {
            match cluster.store.touch(&id, cluster.ttl).await {
                Ok(true) => {}
                Ok(false) if cluster.bus.is_some() => {
                    tracing::debug!(session = %id, "stored session state is gone: the session ended elsewhere");
                    if let Some(h) = handle.upgrade() {
                        h.terminate_as(EndReason::Remote);
                    }
                }
                Ok(false) => tracing::debug!(session = %id, "stored session state is gone"),
                Err(e) => {
                    tracing::warn!(session = %id, %e, "could not refresh the session's stored state")
                }
            }
        });
    }
}

pub(super) fn frame(inbound: Inbound, extensions: Extensions) -> Incoming {
    if extensions.is_empty() {
        Incoming::Decoded(inbound)
    } else {
        Incoming::WithExtensions {
            frame: Box::new(Incoming::Decoded(inbound)),
            extensions,
        }
    }
}

/// [`SessionHandle::request_base`] of the session `id`, but for its
/// [`StreamHandle`] (added by the session's start): its
/// [`SessionId`](tessera_runtime::SessionId) and HTTP/1.1 as the version (a
/// request over another version has its own put over it).
pub(crate) fn request_base(id: &str) -> Extensions {
    let mut e = Extensions::new();
    e.insert(tessera_runtime::SessionId(id.to_owned()));
    e.insert(tessera_runtime::HttpVersion::of(http::Version::HTTP_11));
    e
}

/// [`SessionHandle::sse_headers`] of a session whose id, as a header value,
/// is `id` (`None` when the id cannot be one).
pub(super) fn sse_headers(id: Option<&http::HeaderValue>) -> http::HeaderMap {
    let mut r = super::super::reply::sse(super::super::body::McpBody::empty());
    if let Some(v) = id {
        r = super::super::reply::with_session(r, Some(v));
    }
    std::mem::take(r.headers_mut())
}

/// What a handler's [`StreamControl`](tessera_runtime::StreamControl) uses
/// to close its request's SSE connection: a command to the session's task
/// on `commands` (it does not keep the session alive).
pub(super) fn stream_handle(commands: &mpsc::UnboundedSender<Command>) -> StreamHandle {
    let commands = commands.downgrade();
    StreamHandle::new(move |id, retry| {
        commands
            .upgrade()
            .is_some_and(|c| c.send(Command::CloseStream(id.clone(), retry)).is_ok())
    })
}
