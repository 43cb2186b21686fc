//! The hook through which a debugging tool sees every HTTP exchange of the
//! client transport: the request as sent (after the credentials were added)
//! and the status and headers of the answer, or why there was none. The
//! transport calls [`HttpObserver::exchange`] once per attempt, when the
//! answer's headers arrive; then [`HttpObserver::response_body`] with each
//! piece of the answer's body as the transport reads it (its JSON-RPC
//! messages go to the engine as usual), and [`HttpObserver::response_end`]
//! once, when the body ended or was given up. Without an observer nothing
//! is copied.

use std::time::Duration;

use http::{HeaderMap, Method, StatusCode, Uri};

/// One HTTP request and what came back.
#[derive(Debug)]
#[non_exhaustive]
pub struct HttpExchange<'a> {
    /// Names this exchange in the later [`HttpObserver::response_body`] and
    /// [`HttpObserver::response_end`] calls (unique within the process).
    pub id: u64,
    /// The request's method.
    pub method: &'a Method,
    /// Its URL.
    pub url: &'a Uri,
    /// Its headers, credentials included.
    pub request_headers: &'a HeaderMap,
    /// Its body (empty for a GET or DELETE).
    pub request_body: &'a [u8],
    /// The answer's status and headers, or why the request failed.
    pub outcome: Result<(StatusCode, &'a HeaderMap), &'a str>,
    /// From sending to the answer's headers.
    pub elapsed: Duration,
    /// 1 for the first attempt, 2 and on when an authorization challenge
    /// made the transport send the request again.
    pub attempt: usize,
}

/// Sees the HTTP exchanges of a client transport (set with
/// `HttpClientTransport::with_observer`). Called on the transport's task:
/// it must not block.
pub trait HttpObserver: Send + Sync + 'static {
    /// One exchange happened.
    fn exchange(&self, exchange: &HttpExchange<'_>);

    /// A piece of the body of exchange `id`'s answer, as read (an SSE
    /// stream arrives piece by piece for as long as it lasts). Not called
    /// when the request failed.
    fn response_body(&self, id: u64, chunk: &[u8]) {
        let _ = (id, chunk);
    }

    /// The body of exchange `id`'s answer ended: `Ok` when read to its end,
    /// `Err` with why reading stopped (a read error, or the transport
    /// dropped the answer before its end). Called exactly once for each
    /// exchange that got an answer.
    fn response_end(&self, id: u64, outcome: Result<(), &str>) {
        let _ = (id, outcome);
    }
}

/// A fresh exchange id.
pub(crate) fn next_exchange_id() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}
