//! [`StreamControl`]: what a handler may ask of the transport its request
//! came on, as a typed handle rather than a protocol message.

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tessera_types::{JsonObject, RequestId, decode_object_params, encode_params};

use crate::Extensions;
use crate::peer::Peer;
use crate::service::Request;

/// An `experimental` client capability of Tessera peers: the client (a
/// Tessera proxy whose own client is on Streamable HTTP) closes the HTTP
/// stream of a request it forwarded when the server sends
/// [`CLOSE_SSE_STREAM_NOTIFICATION`] tied to that request. A server's
/// [`StreamControl`] uses it when its request did not come over HTTP itself.
pub const CLOSE_SSE_STREAM_CAPABILITY: &str = "io.tessera/closeSseStream";

/// The notification of the [`CLOSE_SSE_STREAM_CAPABILITY`] extension
/// (params: optional `retryMs`), sent only to clients that declare it.
pub const CLOSE_SSE_STREAM_NOTIFICATION: &str = "notifications/io.tessera/closeSseStream";

type CloseFn = dyn Fn(&RequestId, Option<Duration>) -> bool + Send + Sync;

/// The transport's side of stream control: a transport that can act on a
/// request's stream puts one in the request's [`Extensions`](crate::Extensions).
#[derive(Clone)]
pub struct StreamHandle {
    close: Arc<CloseFn>,
}

impl std::fmt::Debug for StreamHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StreamHandle")
    }
}

impl StreamHandle {
    /// A handle whose `close(request, retry)` closes the SSE stream of
    /// `request` (after a `retry` hint, or the transport's default) and
    /// says whether it did.
    pub fn new(
        close: impl Fn(&RequestId, Option<Duration>) -> bool + Send + Sync + 'static,
    ) -> Self {
        StreamHandle {
            close: Arc::new(close),
        }
    }
}

impl StreamHandle {
    /// A handle that asks the client on `peer` to close the stream of the
    /// request (the [`CLOSE_SSE_STREAM_CAPABILITY`] extension).
    pub fn relay(peer: Peer) -> Self {
        StreamHandle::new(move |id, retry| {
            let params = retry.map(|r| {
                let retry_ms = Some(u64::try_from(r.as_millis()).unwrap_or(u64::MAX));
                // A number: always encoded.
                encode_params(&CloseStream { retry_ms }).unwrap_or_default()
            });
            peer.notify(CLOSE_SSE_STREAM_NOTIFICATION, params, Some(id.clone()))
                .is_ok()
        })
    }
}

/// The `retryMs` of a [`CLOSE_SSE_STREAM_NOTIFICATION`].
pub fn close_retry(params: Option<&JsonObject>) -> Option<Duration> {
    let p: CloseStream = decode_object_params(Some(params?)).ok()?;
    p.retry_ms.map(Duration::from_millis)
}

/// The params of a [`CLOSE_SSE_STREAM_NOTIFICATION`].
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
struct CloseStream {
    /// When the client may reconnect, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    retry_ms: Option<u64>,
}

/// Stream control for one request (SEP-1699 polling): over Streamable HTTP
/// with resumable streams, [`StreamControl::close_sse_stream`] closes the
/// request's SSE connection while the request goes on; the client resumes
/// with `GET` + `Last-Event-ID` and gets the rest of the stream there.
/// Elsewhere (stdio, stateless HTTP, 2026-07-28 requests, resumability off)
/// it does nothing and says so.
#[derive(Debug, Clone)]
pub struct StreamControl {
    handle: Option<StreamHandle>,
    request: RequestId,
}

impl StreamControl {
    /// The stream control of `request`, from what its transport attached.
    pub fn of(request: &Request) -> Self {
        Self::from_extensions(&request.extensions, &request.id)
    }

    /// The stream control of request `id` whose transport attached
    /// `extensions`.
    pub fn from_extensions(extensions: &Extensions, id: &RequestId) -> Self {
        StreamControl {
            handle: extensions.get::<StreamHandle>().cloned(),
            request: id.clone(),
        }
    }

    /// Whether the transport can act on this request's stream.
    pub fn is_available(&self) -> bool {
        self.handle.is_some()
    }

    /// Closes this request's SSE connection (after a `retry:` field of
    /// `retry`, or the server's default) without ending the stream; returns
    /// whether the transport did.
    pub fn close_sse_stream(&self, retry: Option<Duration>) -> bool {
        self.handle
            .as_ref()
            .is_some_and(|h| (h.close)(&self.request, retry))
    }
}
