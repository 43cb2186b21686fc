//! What [`serve`](super::serve) bounds per connection: the peer's address
//! handed to the service ([`RemoteAddr`]), a watchdog that closes a
//! connection idle for too long or whose peer stops reading, and the default
//! cap on open connections (from the file-descriptor limit).
//!
//! The watchdog sees the connection through two small wrappers: the socket
//! ([`WatchedIo`]) records since when a write has been unable to make
//! progress and when the bytes of a new request head began, and the service
//! ([`Tracked`]) counts the requests whose response (body included) is not
//! finished yet.
//!
//! The header read timeout is kept here rather than by hyper: hyper arms it
//! only once it parses HTTP/1 (after the protocol is detected from the first
//! bytes, so a connection that sends nothing was held until the idle
//! timeout), and re-arms it as soon as a keep-alive connection goes idle (so
//! idle keep-alive connections closed at the header timeout, not the idle
//! one). Here a head must arrive within the header timeout of the
//! connection's opening, and of its first byte later on; a keep-alive
//! connection that sends nothing is idle.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use http_body::{Body, Frame, SizeHint};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Instant;

use super::Config;

/// The address of the peer a request came from. [`serve`](super::serve)
/// puts it into every request's extensions; the per-client session cap keys
/// on it when the request carries no authenticated principal. When you mount
/// [`McpHttp`](super::McpHttp) in your own server, insert it yourself (from
/// axum's `ConnectInfo`, say) to get the per-address cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RemoteAddr(pub SocketAddr);

/// What the watchdog of one connection reads.
pub(crate) struct Activity {
    /// Requests whose response is not finished (or dropped) yet.
    active: AtomicUsize,
    /// When the last response finished (or the connection opened).
    idle_since: Mutex<Instant>,
    /// Since when a write has been waiting for the peer to read.
    write_blocked_since: Mutex<Option<Instant>>,
    /// Since when a request head has been awaited: from the opening until
    /// the first request, then from the first byte read while no request
    /// is active (HTTP/1 only) until that request starts.
    head_since: Mutex<Option<Instant>>,
    /// Whether the connection speaks HTTP/2 (its frames between requests
    /// are not request heads).
    h2: std::sync::atomic::AtomicBool,
    /// Whether any byte was read yet.
    read_any: std::sync::atomic::AtomicBool,
}

impl Activity {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Activity {
            active: AtomicUsize::new(0),
            idle_since: Mutex::new(Instant::now()),
            write_blocked_since: Mutex::new(None),
            head_since: Mutex::new(Some(Instant::now())),
            h2: std::sync::atomic::AtomicBool::new(false),
            read_any: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// Bytes arrived: the first ones tell HTTP/2 (its preface) from HTTP/1;
    /// on HTTP/1, bytes while no request is active begin a new head.
    fn read(&self, first: &[u8]) {
        if !self.read_any.swap(true, Ordering::AcqRel) {
            self.h2
                .store(first.starts_with(b"PRI * HTTP/2"), Ordering::Release);
        }
        if self.active.load(Ordering::Acquire) == 0 && !self.h2.load(Ordering::Acquire) {
            let mut h = self
                .head_since
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if h.is_none() {
                *h = Some(Instant::now());
            }
        }
    }

    /// A request started: no head is awaited.
    fn head_done(&self) {
        *self
            .head_since
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = None;
    }

    fn write_blocked(&self) {
        let mut b = self
            .write_blocked_since
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if b.is_none() {
            *b = Some(Instant::now());
        }
    }

    fn write_progressed(&self) {
        *self
            .write_blocked_since
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = None;
    }

    /// Why the connection should be closed now, if it should.
    pub(crate) fn expired(&self, limits: &ConnLimits, now: Instant) -> Option<&'static str> {
        if let (Some(t), Some(since)) = (
            limits.header_timeout,
            *self
                .head_since
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        ) {
            if now.saturating_duration_since(since) >= t {
                return Some(NO_HEAD);
            }
        }
        if let (Some(t), Some(since)) = (
            limits.write_timeout,
            *self
                .write_blocked_since
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        ) {
            if now.saturating_duration_since(since) >= t {
                return Some("the peer did not read for the write timeout");
            }
        }
        if let Some(t) = limits.idle_timeout {
            let idle_since = *self
                .idle_since
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if self.active.load(Ordering::Acquire) == 0
                && now.saturating_duration_since(idle_since) >= t
            {
                return Some("idle for the connection idle timeout");
            }
        }
        None
    }
}

/// Why a connection that sent no request head in time is closed.
const NO_HEAD: &str = "no request head within the header read timeout";

/// Decrements the active count (and restarts the idle clock) when dropped.
pub(crate) struct ActiveGuard(Arc<Activity>);

impl ActiveGuard {
    fn new(a: Arc<Activity>) -> Self {
        a.active.fetch_add(1, Ordering::AcqRel);
        a.head_done();
        ActiveGuard(a)
    }
}

impl Drop for ActiveGuard {
    fn drop(&mut self) {
        *self
            .0
            .idle_since
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Instant::now();
        self.0.active.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The socket of a connection, noting when writes stall.
pub(crate) struct WatchedIo<T> {
    inner: T,
    activity: Arc<Activity>,
}

impl<T> WatchedIo<T> {
    pub(crate) fn new(inner: T, activity: Arc<Activity>) -> Self {
        WatchedIo { inner, activity }
    }

    fn note<R>(&self, p: &Poll<R>) {
        match p {
            Poll::Pending => self.activity.write_blocked(),
            Poll::Ready(_) => self.activity.write_progressed(),
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for WatchedIo<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let p = Pin::new(&mut this.inner).poll_read(cx, buf);
        if matches!(p, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            this.activity.read(&buf.filled()[before..]);
        }
        p
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for WatchedIo<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let p = Pin::new(&mut this.inner).poll_write(cx, buf);
        this.note(&p);
        p
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let p = Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
        this.note(&p);
        p
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let p = Pin::new(&mut this.inner).poll_flush(cx);
        this.note(&p);
        p
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

/// Keeps the connection of a request busy while work on the request goes
/// on after its response (the rest of a refused body being read and
/// dropped): not idle, and not awaiting a request head, whatever it reads.
/// [`serve`](super::serve) puts one in each request's extensions.
#[derive(Clone)]
pub(crate) struct ConnectionBusy(Arc<Activity>);

impl ConnectionBusy {
    /// Counts the connection's work as in progress until the guard is dropped.
    pub(crate) fn hold(&self) -> ActiveGuard {
        ActiveGuard::new(self.0.clone())
    }
}

/// The service of one connection: adds [`RemoteAddr`] and a
/// [`ConnectionBusy`] to each request and counts requests until their
/// response body is finished.
#[derive(Clone)]
pub(crate) struct Tracked<S> {
    pub(crate) inner: S,
    pub(crate) activity: Arc<Activity>,
    pub(crate) peer: SocketAddr,
}

impl<S, ReqB, B> tower::Service<http::Request<ReqB>> for Tracked<S>
where
    S: tower::Service<http::Request<ReqB>, Response = http::Response<B>>,
    S::Future: Send + 'static,
{
    type Response = http::Response<TrackedBody<B>>;
    type Error = S::Error;
    type Future = TrackedFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: http::Request<ReqB>) -> Self::Future {
        req.extensions_mut().insert(RemoteAddr(self.peer));
        req.extensions_mut()
            .insert(ConnectionBusy(self.activity.clone()));
        let guard = ActiveGuard::new(self.activity.clone());
        TrackedFuture {
            inner: self.inner.call(req),
            guard: Some(guard),
        }
    }
}

pin_project_lite::pin_project! {
    /// The inner service's future; its response body keeps the request
    /// counted as active (no box of its own: the inner future is one).
    pub(crate) struct TrackedFuture<F> {
        #[pin]
        inner: F,
        guard: Option<ActiveGuard>,
    }
}

impl<F, B, E> Future for TrackedFuture<F>
where
    F: Future<Output = Result<http::Response<B>, E>>,
{
    type Output = Result<http::Response<TrackedBody<B>>, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let out = std::task::ready!(this.inner.poll(cx));
        // The guard goes with the body (or now, on an error). Polled again
        // after `Ready` only by a broken caller: the request then counts as
        // finished already.
        let guard = this.guard.take();
        Poll::Ready(out.map(|resp| {
            resp.map(|inner| TrackedBody {
                inner,
                _guard: guard,
            })
        }))
    }
}

pin_project_lite::pin_project! {
    /// A response body that keeps its request counted as active until it
    /// is finished or dropped.
    pub(crate) struct TrackedBody<B> {
        #[pin]
        inner: B,
        _guard: Option<ActiveGuard>,
    }
}

impl<B: Body> Body for TrackedBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        self.project().inner.poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// The connection-level limits [`serve`](super::serve) applies.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ConnLimits {
    pub header_timeout: Option<Duration>,
    pub idle_timeout: Option<Duration>,
    pub write_timeout: Option<Duration>,
}

impl ConnLimits {
    pub(crate) fn from_config(c: &Config) -> Self {
        ConnLimits {
            header_timeout: c.header_read_timeout,
            idle_timeout: c.connection_idle_timeout,
            write_timeout: c.write_timeout,
        }
    }

    /// How often the watchdog looks: a quarter of the shortest timeout,
    /// between 10 ms and 5 s; `None` when nothing is watched.
    pub(crate) fn tick(&self) -> Option<Duration> {
        let shortest = [self.header_timeout, self.idle_timeout, self.write_timeout]
            .into_iter()
            .flatten()
            .min()?;
        Some((shortest / 4).clamp(Duration::from_millis(10), Duration::from_secs(5)))
    }
}

/// Drives a connection to its end, closing it (by dropping it) when the
/// watchdog finds it idle too long or stuck on a peer that does not read.
pub(crate) async fn watch<F, E>(
    conn: F,
    activity: Arc<Activity>,
    limits: ConnLimits,
    peer: SocketAddr,
    stats: &super::HttpStats,
) where
    F: Future<Output = Result<(), E>>,
    E: std::fmt::Display,
{
    let mut conn = std::pin::pin!(conn);
    let Some(tick) = limits.tick() else {
        if let Err(e) = conn.await {
            tracing::debug!(%e, %peer, "connection ended with an error");
        }
        return;
    };
    // One timer, moved on at each tick. It is polled (its waker registered)
    // when set and again only when it has gone off or the task's waker
    // changed, not on every wake of the connection (two or more per
    // request).
    let mut timer = std::pin::pin!(tokio::time::sleep(tick));
    let mut registered: Option<std::task::Waker> = None;
    loop {
        let ended = std::future::poll_fn(|cx| {
            if let Poll::Ready(r) = conn.as_mut().poll(cx) {
                return Poll::Ready(Some(r));
            }
            let stale = registered.as_ref().is_none_or(|w| !w.will_wake(cx.waker()));
            if stale || timer.is_elapsed() {
                // With the task's budget spent, the poll registers nothing
                // (the task yields): it is polled again next time.
                let counted = tokio::task::coop::has_budget_remaining();
                if timer.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(None);
                }
                if counted {
                    registered = Some(cx.waker().clone());
                }
            }
            Poll::Pending
        })
        .await;
        if let Some(r) = ended {
            if let Err(e) = r {
                tracing::debug!(%e, %peer, "connection ended with an error");
            }
            return;
        }
        if let Some(why) = activity.expired(&limits, Instant::now()) {
            tracing::debug!(%peer, why, "closing the connection");
            if why == NO_HEAD {
                stats.refuse(super::limit::HEADER_READ_TIMEOUT);
            }
            return;
        }
        timer.as_mut().reset(Instant::now() + tick);
        registered = None;
    }
}

/// The default cap on open connections: the soft file-descriptor limit less
/// a tenth of it (at least 64) kept for everything else the process opens.
pub(crate) fn default_max_connections() -> usize {
    let soft = fd_limit().unwrap_or(1024);
    let headroom = (soft / 10).max(64);
    usize::try_from(soft.saturating_sub(headroom).max(16)).unwrap_or(usize::MAX)
}

#[cfg(unix)]
fn fd_limit() -> Option<u64> {
    let (soft, _hard) =
        nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE).ok()?;
    // RLIM_INFINITY: no real limit; keep a sane cap.
    Some(soft.min(1 << 20))
}

#[cfg(not(unix))]
fn fd_limit() -> Option<u64> {
    None
}

/// What a connection beyond the cap gets before it is closed.
pub(crate) const OVER_CAPACITY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\n\
connection: close\r\ncontent-type: text/plain\r\nretry-after: 1\r\ncontent-length: 96\r\n\r\n\
Service Unavailable: too many open connections (tessera serve --max-connections raises the cap)\n";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn over_capacity_length_is_right() {
        let text = std::str::from_utf8(OVER_CAPACITY).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(head.contains(&format!("content-length: {}", body.len())));
    }

    #[test]
    fn the_default_cap_leaves_headroom() {
        let n = default_max_connections() as u64;
        let soft = fd_limit().unwrap_or(1024);
        assert!(n < soft || soft < 80);
        assert!(n >= 16);
    }

    #[tokio::test(start_paused = true)]
    async fn idle_and_write_expiry() {
        let limits = ConnLimits {
            header_timeout: None,
            idle_timeout: Some(Duration::from_secs(60)),
            write_timeout: Some(Duration::from_secs(30)),
        };
        let a = Activity::new();
        assert!(a.expired(&limits, Instant::now()).is_none());
        let g = ActiveGuard::new(a.clone());
        tokio::time::advance(Duration::from_secs(61)).await;
        assert!(a.expired(&limits, Instant::now()).is_none(), "busy");
        a.write_blocked();
        tokio::time::advance(Duration::from_secs(31)).await;
        assert!(
            a.expired(&limits, Instant::now()).is_some(),
            "write stalled"
        );
        a.write_progressed();
        drop(g);
        assert!(
            a.expired(&limits, Instant::now()).is_none(),
            "just finished"
        );
        tokio::time::advance(Duration::from_secs(60)).await;
        assert!(a.expired(&limits, Instant::now()).is_some(), "idle");
    }

    #[tokio::test(start_paused = true)]
    async fn head_expiry() {
        let limits = ConnLimits {
            header_timeout: Some(Duration::from_secs(10)),
            idle_timeout: Some(Duration::from_secs(60)),
            write_timeout: None,
        };
        // Silent from the start: closed at the header timeout.
        let a = Activity::new();
        tokio::time::advance(Duration::from_secs(9)).await;
        assert!(a.expired(&limits, Instant::now()).is_none());
        tokio::time::advance(Duration::from_secs(1)).await;
        assert!(a.expired(&limits, Instant::now()).unwrap().contains("head"));
        // A request, then keep-alive silence: idle, not a head.
        let a = Activity::new();
        a.read(b"GET / HTTP/1.1\r\n");
        drop(ActiveGuard::new(a.clone()));
        tokio::time::advance(Duration::from_secs(59)).await;
        assert!(
            a.expired(&limits, Instant::now()).is_none(),
            "idle keep-alive"
        );
        // A byte of a next head starts its clock.
        a.read(b"P");
        tokio::time::advance(Duration::from_millis(500)).await;
        assert!(a.expired(&limits, Instant::now()).is_none());
        tokio::time::advance(Duration::from_secs(10)).await;
        assert!(a.expired(&limits, Instant::now()).unwrap().contains("head"));
        // HTTP/2 frames between requests are not heads.
        let a = Activity::new();
        a.read(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
        drop(ActiveGuard::new(a.clone()));
        a.read(b"ping");
        tokio::time::advance(Duration::from_secs(30)).await;
        assert!(a.expired(&limits, Instant::now()).is_none());
    }
}
