//! [`serve`]: a ready-made hyper server (HTTP/1.1 and HTTP/2) for an
//! [`McpHttp`], with graceful shutdown.

use std::future::Future;
use std::time::Duration;

use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;

use super::McpHttp;

/// Serves `app` on `listener` until `shutdown` completes, then shuts down
/// gracefully: no new connections, requests in progress finish (up to the
/// drain timeout), then open streams close and connections end.
///
/// Every accepted connection gets `TCP_NODELAY` (SSE events are small and
/// must not wait for Nagle's algorithm).
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
    let graceful = GracefulShutdown::new();
    let builder = auto::Builder::new(TokioExecutor::new());
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
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!(%e, %peer, "could not set TCP_NODELAY");
        }
        let service = TowerToHyperService::new(service.clone());
        let conn = builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
        let conn = graceful.watch(conn.into_owned());
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!(%e, %peer, "connection ended with an error");
            }
        });
    }
    drop(listener);
    let grace = app.shared.config.drain_timeout + Duration::from_secs(1);
    let connections = async {
        if tokio::time::timeout(grace, graceful.shutdown())
            .await
            .is_err()
        {
            tracing::warn!("connections still open after the grace period; closing");
        }
    };
    tokio::join!(app.shutdown(), connections);
    Ok(())
}
