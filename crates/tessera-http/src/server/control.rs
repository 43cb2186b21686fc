//! Stream control from a request handler (SEP-1699 polling).
//!
//! A handler cannot see the HTTP connection its request came on, but it can
//! send a notification tied to its request. [`close_sse_stream`] sends one
//! with a reserved method that the HTTP router intercepts (it never reaches
//! the client): the request's SSE connection is closed after a `retry:` field,
//! without ending the stream. The client reconnects with `GET` and
//! `Last-Event-ID`, and the rest of the stream, including the response,
//! arrives there.
//!
//! ```no_run
//! use std::time::Duration;
//! use tessera_server::{RequestContext, tool};
//!
//! async fn test_reconnection(ctx: RequestContext) -> String {
//!     let _ = tessera_http::close_sse_stream(ctx.peer(), ctx.request_id(), Some(Duration::from_millis(500)));
//!     tokio::time::sleep(Duration::from_millis(200)).await;
//!     "reconnected".to_owned()
//! }
//! # let _: tessera_server::ToolRoute<()> = tool("test_reconnection").handler(test_reconnection);
//! ```
//!
//! Over other transports the notification is not intercepted: only call it
//! when the request came over tessera-http (e.g. a tool that exists to test
//! HTTP polling). It has no effect in stateless mode, for 2026-07-28
//! requests (their streams are not resumable) or when resumability is off.

use std::time::Duration;

use serde_json::json;
use tessera_runtime::{Peer, PeerError};
use tessera_types::{JsonObject, RequestId};

/// The reserved notification method the HTTP router intercepts.
pub const CLOSE_SSE_STREAM_METHOD: &str = "notifications/tessera/http/closeSseStream";

/// An `experimental` client capability: the client (a Tessera proxy whose own
/// client is on Streamable HTTP) applies [`CLOSE_SSE_STREAM_METHOD`] to the
/// HTTP stream of the request it forwarded. A handler whose request did not
/// come over HTTP may send the notification when the client declares it.
pub const CLOSE_SSE_STREAM_CAPABILITY: &str = "io.tessera/closeSseStream";

/// Asks the HTTP transport to close the SSE connection of `request` (after a
/// `retry:` field of `retry`, or the server's default) while the request goes
/// on; the client resumes with `GET` + `Last-Event-ID`.
pub fn close_sse_stream(
    peer: &Peer,
    request: &RequestId,
    retry: Option<Duration>,
) -> Result<(), PeerError> {
    let params = retry.map(|r| {
        let mut p = JsonObject::new();
        p.insert(
            "retryMs".into(),
            json!(u64::try_from(r.as_millis()).unwrap_or(u64::MAX)),
        );
        p
    });
    peer.notify(CLOSE_SSE_STREAM_METHOD, params, Some(request.clone()))
}

/// The `retryMs` of a close-stream notification.
pub(crate) fn retry_of(params: Option<&JsonObject>) -> Option<Duration> {
    params?
        .get("retryMs")
        .and_then(serde_json::Value::as_u64)
        .map(Duration::from_millis)
}
