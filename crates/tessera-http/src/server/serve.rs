//! [`serve`]: a ready-made hyper server (HTTP/1.1 and HTTP/2) for an
//! [`McpHttp`], with graceful shutdown and the connection-level limits.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulConnection;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::futures::OwnedNotified;
use tokio::sync::{Notify, Semaphore, watch};

use super::McpHttp;
use super::addr_slots::{self, AddrSlots};
use super::connection::{self, Activity, ConnLimits, Tracked, WatchedIo};

/// Serves `app` on `listener` until `shutdown` completes, then shuts down
/// gracefully: no new connections, requests in progress finish (up to the
/// drain timeout), then open streams close and connections end.
///
/// Every accepted connection gets `TCP_NODELAY` (SSE events are small and
/// must not wait for Nagle's algorithm) and the connection limits set on the
/// [`McpHttpBuilder`](super::McpHttpBuilder): the header-read, idle and write
/// timeouts, the cap on open connections (beyond it a new connection gets
/// `503` and is closed at once), on those of one peer address (beyond it,
/// `429`) and on HTTP/2 streams per connection. Each
/// request carries the peer's [`RemoteAddr`](super::RemoteAddr).
pub async fn serve<F>(listener: TcpListener, app: McpHttp, shutdown: F) -> std::io::Result<()>
where
    F: Future<Output = ()> + Send,
{
    serve_with(listener, app.clone(), app, shutdown).await
}

/// Like [`serve`], but each connection runs `service`: `app` wrapped in tower
/// layers (an authentication layer, for example). `app` is the [`McpHttp`]
/// inside it, shut down gracefully with the server.
pub async fn serve_with<S, B, F>(
    listener: TcpListener,
    app: McpHttp,
    service: S,
    shutdown: F,
) -> std::io::Result<()>
where
    S: tower::Service<http::Request<hyper::body::Incoming>, Response = http::Response<B>>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    B: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    F: Future<Output = ()> + Send,
{
    let graceful = Graceful::default();
    let config = &app.shared.config;
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        // Kept by the connection watchdog instead (see `connection`): hyper's
        // misses silent connections and closes idle keep-alive ones early.
        .header_read_timeout(None);
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(config.max_streams_per_connection);
    let limits = ConnLimits::from_config(config);
    let max_connections = config
        .max_connections
        .unwrap_or_else(connection::default_max_connections);
    let slots = Arc::new(Semaphore::new(max_connections));
    let per_addr = config
        .max_connections_per_client
        .unwrap_or_else(|| addr_slots::default_per_addr(max_connections));
    let addr_slots = AddrSlots::default();
    let over_per_addr = addr_slots::over_cap_response(per_addr);
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of file descriptors and the like: back off and go on.
                    tracing::warn!(%e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            // At the cap: say so and close, without waiting for the peer.
            tracing::debug!(%peer, max_connections, "connection refused: too many open connections");
            app.shared.stats.refuse(super::limit::MAX_CONNECTIONS);
            let _ = stream.try_write(connection::OVER_CAPACITY);
            drop(stream);
            continue;
        };
        let Some(addr_slot) = addr_slots.take(peer.ip(), per_addr) else {
            tracing::debug!(%peer, per_addr, "connection refused: its address holds too many open connections");
            app.shared
                .stats
                .refuse(super::limit::MAX_CONNECTIONS_PER_CLIENT);
            let _ = stream.try_write(&over_per_addr);
            drop(stream);
            continue;
        };
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!(%e, %peer, "could not set TCP_NODELAY");
        }
        let open = app.shared.stats.connection();
        let stats = app.shared.stats.clone();
        let activity = Activity::new();
        let io = TokioIo::new(WatchedIo::new(stream, activity.clone()));
        let service = TowerToHyperService::new(Tracked {
            inner: service.clone(),
            activity: activity.clone(),
            peer,
        });
        let conn = builder.serve_connection_with_upgrades(io, service);
        let conn = graceful.watch(conn.into_owned());
        tokio::spawn(async move {
            connection::watch(conn, activity, limits, peer, &stats).await;
            drop(addr_slot);
            drop((slot, open));
        });
    }
    drop(listener);
    let grace = app.shared.config.drain_timeout + Duration::from_secs(1);
    let connections = async {
        if tokio::time::timeout(grace, graceful.shut_down())
            .await
            .is_err()
        {
            tracing::warn!("connections still open after the grace period; closing");
        }
    };
    tokio::join!(app.shutdown(), connections);
    Ok(())
}

/// The graceful shutdown of the server's connections: when it starts, each
/// connection stops taking requests and ends once those in progress are
/// answered; [`Graceful::shut_down`] waits for every connection to end.
///
/// hyper-util's `GracefulShutdown` does the same but polls its signal (a
/// `watch` channel) on every poll of every connection, two per request; here
/// the signal is polled once per connection, to leave the task's waker with
/// it, and a flag is read on the later polls.
struct Graceful {
    started: Arc<AtomicBool>,
    signal: Arc<Notify>,
    /// One receiver per connection, held until it ends: the count of open
    /// connections (none is ever sent or read).
    open: watch::Sender<()>,
}

impl Default for Graceful {
    fn default() -> Self {
        Graceful {
            started: Arc::default(),
            signal: Arc::default(),
            open: watch::channel(()).0,
        }
    }
}

impl Graceful {
    /// `conn`, shut down gracefully with the server.
    fn watch<C: GracefulConnection>(&self, conn: C) -> Watched<C> {
        Watched {
            conn,
            signal: self.signal.clone().notified_owned(),
            started: self.started.clone(),
            state: WatchState::Fresh,
            _open: self.open.subscribe(),
        }
    }

    /// Starts the shutdown of every connection and waits until all have ended.
    async fn shut_down(self) {
        self.started.store(true, Ordering::Release);
        self.signal.notify_waiters();
        self.open.closed().await;
    }
}

/// Where a watched connection is in its watch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WatchState {
    /// Not polled yet: the signal does not know the task.
    Fresh,
    /// The signal will wake the task: the flag tells.
    Armed,
    /// Its graceful shutdown has started.
    Told,
}

pin_project_lite::pin_project! {
    /// A connection watched by [`Graceful`].
    struct Watched<C> {
        #[pin]
        conn: C,
        #[pin]
        signal: OwnedNotified,
        started: Arc<AtomicBool>,
        state: WatchState,
        _open: watch::Receiver<()>,
    }
}

impl<C: GracefulConnection> Future for Watched<C> {
    type Output = C::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        if *this.state == WatchState::Fresh {
            // Registers the task's waker: the shutdown wakes it (the flag is
            // set before the signal, so a shutdown begun before this poll is
            // seen below).
            let _ = this.signal.poll(cx);
            *this.state = WatchState::Armed;
        }
        if *this.state == WatchState::Armed && this.started.load(Ordering::Acquire) {
            *this.state = WatchState::Told;
            this.conn.as_mut().graceful_shutdown();
        }
        this.conn.poll(cx)
    }
}
