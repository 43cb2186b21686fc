//! The keep-alive HTTP/1.1 connections to the connection's own server over
//! `http://`: hyper's connection type itself, pooled here rather than by
//! hyper_util's general client, whose pool keys every checkout by scheme
//! and authority (hashed per request), races a new connection against the
//! checkout and spawns a task per answer to take the connection back.
//!
//! A connection is taken back when its answer's body has been read to the
//! end (an answer without a body at once), checked again when it is taken
//! out, and dropped after [`IDLE_TIMEOUT`] unused. A request that an idle
//! connection could not send (the server closed it meanwhile) goes on a new
//! connection, as hyper_util's client does.

use std::pin::Pin;
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::Request;
use http::uri::Authority;
use http_body::{Body, Frame, SizeHint};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::client::conn::http1::SendRequest;

use super::shared::lock;

/// How long an unused connection is kept (as reqwest and hyper_util's client
/// were set to).
pub(crate) const IDLE_TIMEOUT: Duration = Duration::from_secs(90);

/// The sending side of one connection.
type Sender = SendRequest<Full<Bytes>>;

/// The idle connections to one `host:port`.
#[derive(Debug)]
pub(crate) struct Pool {
    /// Where the connections go, as the URL names it.
    authority: Authority,
    /// The host to connect to (an IPv6 address without its brackets).
    host: String,
    /// The port to connect to.
    port: u16,
    /// What is kept, with whether the task that drops expired connections
    /// runs.
    idle: Mutex<Idle>,
}

#[derive(Debug, Default)]
struct Idle {
    /// Most recently used last (taken first).
    conns: Vec<(Sender, Instant)>,
    /// Whether the expiry task runs.
    reaping: bool,
}

impl Pool {
    /// A pool for the `http://` URL `url`'s host and port (`None` for
    /// another scheme or a URL without a host).
    pub(crate) fn for_url(url: &http::Uri) -> Option<Arc<Pool>> {
        if url.scheme_str() != Some("http") {
            return None;
        }
        let authority = url.authority()?.clone();
        let host = authority.host();
        let host = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host)
            .to_owned();
        Some(Arc::new(Pool {
            port: authority.port_u16().unwrap_or(80),
            authority,
            host,
            idle: Mutex::default(),
        }))
    }

    /// Whether `uri` goes to this pool's server over `http://`.
    pub(crate) fn serves(&self, uri: &http::Uri) -> bool {
        uri.scheme_str() == Some("http") && uri.authority() == Some(&self.authority)
    }

    /// Sends `req` (an absolute URI this pool [`serves`](Pool::serves), with
    /// its `Host` header) on an idle connection, or a new one, and waits for
    /// the answer's head. The URI is sent in origin form (`/path?query`).
    pub(crate) async fn send(
        self: &Arc<Self>,
        req: Request<Full<Bytes>>,
    ) -> Result<http::Response<PooledBody>, String> {
        let mut req = req;
        let origin = req
            .uri()
            .path_and_query()
            .cloned()
            .unwrap_or_else(|| http::uri::PathAndQuery::from_static("/"));
        *req.uri_mut() = http::Uri::from(origin);
        loop {
            let (mut conn, reused) = match self.checkout().await {
                Some(conn) => (conn, true),
                // Boxed: the rare way, kept out of every request's future.
                None => (Box::pin(self.connect()).await?, false),
            };
            match conn.try_send_request(req).await {
                Ok(response) => {
                    let pool = Arc::downgrade(self);
                    return Ok(response.map(|body| PooledBody::new(body, conn, pool)));
                }
                Err(mut e) => match e.take_message() {
                    // Not sent: the idle connection had closed meanwhile.
                    Some(unsent) if reused => req = unsent,
                    _ => return Err(super::shared::error_chain(&e.into_error())),
                },
            }
        }
    }

    /// An idle connection that is still open and ready, if any.
    async fn checkout(&self) -> Option<Sender> {
        loop {
            let (mut conn, since) = lock(&self.idle).conns.pop()?;
            if conn.is_closed() || since.elapsed() >= IDLE_TIMEOUT {
                continue;
            }
            if conn.ready().await.is_ok() {
                return Some(conn);
            }
        }
    }

    /// A new connection (its task spawned).
    async fn connect(&self) -> Result<Sender, String> {
        let failed = |what: &str, e: &dyn std::error::Error| {
            format!(
                "{what} {}: {}",
                self.authority,
                super::shared::error_chain(e)
            )
        };
        let stream = tokio::net::TcpStream::connect((self.host.as_str(), self.port))
            .await
            .map_err(|e| failed("connecting to", &e))?;
        let _ = stream.set_nodelay(true);
        let (conn, task) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
                .await
                .map_err(|e| failed("starting HTTP/1.1 with", &e))?;
        tokio::spawn(async move {
            if let Err(e) = task.await {
                tracing::debug!("an HTTP connection ended: {e}");
            }
        });
        Ok(conn)
    }

    /// Keeps `conn` for the next request, and starts the task that drops
    /// unused connections if it is not running.
    fn put(self: Arc<Self>, conn: Sender) {
        if conn.is_closed() {
            return;
        }
        let start = {
            let mut idle = lock(&self.idle);
            idle.conns.push((conn, Instant::now()));
            !std::mem::replace(&mut idle.reaping, true)
        };
        if start {
            match tokio::runtime::Handle::try_current() {
                Ok(rt) => {
                    rt.spawn(reap(Arc::downgrade(&self)));
                }
                Err(_) => lock(&self.idle).reaping = false,
            }
        }
    }

    /// How many connections are kept (tests).
    #[cfg(test)]
    pub(crate) fn idle_count(&self) -> usize {
        lock(&self.idle).conns.len()
    }
}

/// Drops connections unused for [`IDLE_TIMEOUT`] (or closed) every
/// [`IDLE_TIMEOUT`], until none is kept or the pool is gone.
async fn reap(pool: Weak<Pool>) {
    loop {
        tokio::time::sleep(IDLE_TIMEOUT).await;
        let Some(pool) = pool.upgrade() else { return };
        let mut idle = lock(&pool.idle);
        idle.conns
            .retain(|(c, since)| !c.is_closed() && since.elapsed() < IDLE_TIMEOUT);
        if idle.conns.is_empty() {
            idle.reaping = false;
            return;
        }
    }
}

/// An answer's body, which gives its connection back to the pool once read
/// to the end.
pub(crate) struct PooledBody {
    body: Incoming,
    /// The connection, until it is given back (or dropped with an unread
    /// or failed body).
    conn: Option<(Sender, Weak<Pool>)>,
}

impl PooledBody {
    fn new(body: Incoming, conn: Sender, pool: Weak<Pool>) -> Self {
        let mut b = PooledBody {
            body,
            conn: Some((conn, pool)),
        };
        b.give_back_if_done();
        b
    }

    fn give_back_if_done(&mut self) {
        if self.body.is_end_stream() {
            self.give_back();
        }
    }

    fn give_back(&mut self) {
        if let Some((conn, pool)) = self.conn.take() {
            if let Some(pool) = pool.upgrade() {
                pool.put(conn);
            }
        }
    }
}

impl Body for PooledBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let this = &mut *self;
        let polled = Pin::new(&mut this.body).poll_frame(cx);
        match &polled {
            Poll::Ready(None) => this.give_back(),
            Poll::Ready(Some(Ok(_))) => this.give_back_if_done(),
            // A failed body leaves its connection unusable.
            Poll::Ready(Some(Err(_))) => this.conn = None,
            Poll::Pending => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

impl Drop for PooledBody {
    fn drop(&mut self) {
        // An answer read to its end (or without a body) leaves a usable
        // connection; one dropped before its end does not.
        self.give_back_if_done();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// What the test server saw of one request.
    #[derive(Debug, Clone)]
    struct Seen {
        target: String,
        host: Option<String>,
        connection: usize,
    }

    /// A local HTTP/1.1 server that answers each request as `answer` says
    /// (given the request's path) and notes what it saw; its URL and what it
    /// saw.
    async fn server(
        answer: fn(&str) -> http::Response<Full<Bytes>>,
    ) -> (http::Uri, Arc<Mutex<Vec<Seen>>>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        tokio::spawn(async move {
            let accepted = Arc::new(AtomicUsize::new(0));
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let connection = accepted.fetch_add(1, Ordering::SeqCst);
                let log = log.clone();
                let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                    lock(&log).push(Seen {
                        target: req.uri().to_string(),
                        host: req
                            .headers()
                            .get(http::header::HOST)
                            .map(|h| h.to_str().unwrap().to_owned()),
                        connection,
                    });
                    let path = req.uri().path().to_owned();
                    async move { Ok::<_, std::convert::Infallible>(answer(&path)) }
                });
                tokio::spawn(
                    hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), service),
                );
            }
        });
        (url.parse().unwrap(), seen)
    }

    fn request(uri: &http::Uri, host: Option<&str>) -> Request<Full<Bytes>> {
        let mut req = Request::new(Full::new(Bytes::from_static(b"{}")));
        *req.method_mut() = http::Method::POST;
        *req.uri_mut() = uri.clone();
        if let Some(h) = host {
            req.headers_mut()
                .insert(http::header::HOST, h.parse().unwrap());
        }
        req
    }

    fn ok(path: &str) -> http::Response<Full<Bytes>> {
        match path {
            // An answer without a body.
            "/accepted" => http::Response::builder()
                .status(202)
                .body(Full::new(Bytes::new()))
                .unwrap(),
            _ => http::Response::new(Full::new(Bytes::from_static(b"answer"))),
        }
    }

    #[tokio::test]
    async fn one_connection_serves_requests_one_after_another() {
        let (url, seen) = server(ok).await;
        let pool = Pool::for_url(&url).unwrap();
        let host = url.authority().unwrap().as_str().to_owned();
        let accepted: http::Uri = format!("http://{host}/accepted").parse().unwrap();
        for uri in [&url, &accepted, &url, &accepted, &url] {
            let r = pool.send(request(uri, Some(&host))).await.unwrap();
            let body = r.into_body().collect().await.unwrap().to_bytes();
            assert_eq!(body.is_empty(), uri == &accepted);
            assert_eq!(pool.idle_count(), 1, "the connection went back");
        }
        // An answer without a body gives its connection back unread.
        let r = pool.send(request(&accepted, Some(&host))).await.unwrap();
        drop(r);
        assert_eq!(pool.idle_count(), 1);
        let seen = lock(&seen).clone();
        assert_eq!(seen.len(), 6);
        assert!(seen.iter().all(|s| s.connection == 0), "{seen:?}");
        // Sent in origin form, with the Host header given.
        assert_eq!(seen[0].target, "/mcp");
        assert_eq!(seen[1].target, "/accepted");
        assert_eq!(seen[0].host.as_deref(), Some(host.as_str()));
    }

    #[tokio::test]
    async fn a_body_left_unread_takes_its_connection_away() {
        let (url, seen) = server(ok).await;
        let pool = Pool::for_url(&url).unwrap();
        let host = url.authority().unwrap().as_str().to_owned();
        let r = pool.send(request(&url, Some(&host))).await.unwrap();
        drop(r);
        assert_eq!(pool.idle_count(), 0);
        // The next request opens a connection of its own.
        let r = pool.send(request(&url, Some(&host))).await.unwrap();
        assert_eq!(r.into_body().collect().await.unwrap().to_bytes(), "answer");
        let connections: Vec<usize> = lock(&seen).iter().map(|s| s.connection).collect();
        assert_eq!(connections, [0, 1]);
    }

    #[tokio::test]
    async fn a_connection_the_server_closes_is_not_used_again() {
        fn closing(_: &str) -> http::Response<Full<Bytes>> {
            http::Response::builder()
                .header(http::header::CONNECTION, "close")
                .body(Full::new(Bytes::from_static(b"bye")))
                .unwrap()
        }
        let (url, seen) = server(closing).await;
        let pool = Pool::for_url(&url).unwrap();
        let host = url.authority().unwrap().as_str().to_owned();
        for _ in 0..3 {
            let r = pool.send(request(&url, Some(&host))).await.unwrap();
            assert_eq!(r.into_body().collect().await.unwrap().to_bytes(), "bye");
        }
        let connections: Vec<usize> = lock(&seen).iter().map(|s| s.connection).collect();
        assert_eq!(connections, [0, 1, 2]);
    }

    #[tokio::test]
    async fn a_pool_serves_only_its_own_host_and_port_over_http() {
        let pool = Pool::for_url(&"http://[::1]:8000/mcp".parse().unwrap()).unwrap();
        assert_eq!((pool.host.as_str(), pool.port), ("::1", 8000));
        assert!(pool.serves(&"http://[::1]:8000/message?s=1".parse().unwrap()));
        assert!(!pool.serves(&"http://[::1]:8001/mcp".parse().unwrap()));
        assert!(!pool.serves(&"https://[::1]:8000/mcp".parse().unwrap()));
        let pool = Pool::for_url(&"http://example.com/mcp".parse().unwrap()).unwrap();
        assert_eq!((pool.host.as_str(), pool.port), ("example.com", 80));
        assert!(Pool::for_url(&"https://example.com/mcp".parse().unwrap()).is_none());
    }

    #[tokio::test]
    async fn a_refused_connection_says_where_it_went() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url: http::Uri = format!("http://{}/mcp", listener.local_addr().unwrap())
            .parse()
            .unwrap();
        drop(listener);
        let pool = Pool::for_url(&url).unwrap();
        let Err(e) = pool.send(request(&url, None)).await else {
            panic!("no server there");
        };
        assert!(e.starts_with("connecting to 127.0.0.1:"), "{e}");
    }
}
