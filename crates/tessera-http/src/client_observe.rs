//! The hook through which a debugging tool sees every HTTP exchange of the
//! client transport: the request as sent (after the credentials were added)
//! and the status and headers of the answer, or why there was none. The
//! transport calls [`HttpObserver::exchange`] once per attempt, when the
//! answer's headers arrive (the body is then still to be read: its JSON-RPC
//! messages go to the engine as usual). Without an observer nothing is
//! copied.

use std::time::Duration;

use http::{HeaderMap, Method, StatusCode, Uri};

/// One HTTP request and what came back.
#[derive(Debug)]
#[non_exhaustive]
pub struct HttpExchange<'a> {
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
}
