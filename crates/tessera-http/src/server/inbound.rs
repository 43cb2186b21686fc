//! Reading a POST body into messages: the body limits and timeouts, and a
//! batch counted (and refused past `max_batch`) while its body streams in.

// Handlers refuse with a ready HTTP response; it is large, but built once per refused request.
#![allow(clippy::result_large_err)]

use bytes::Bytes;
use http::{HeaderMap, StatusCode};
use tessera_proto::decode::{self, Inbound};

use super::Shared;
use super::body::{BODY_RATE_GRACE, BodyTimeouts, ReadError, read_message_body};
use super::connection::ConnectionBusy;
use super::reply::{self, HttpResponse};

/// Reads and decodes a POST body: 413 past the limit, 400 (`-32700`) for bad
/// JSON, 400 with the decoder's error for an invalid message. A batch over
/// the limit is refused (400, `-32600`) as soon as its element past the
/// limit arrives, before the rest of the body is read.
pub(crate) async fn read_message<B>(
    shared: &Shared,
    headers: &HeaderMap,
    extensions: &http::Extensions,
    body: B,
) -> Result<Inbound, HttpResponse>
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let limit = shared.config.max_body;
    let too_large = || {
        shared.stats.refuse(super::limit::MAX_BODY_BYTES);
        reply::refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "Payload Too Large: the body exceeds the limit of {limit} bytes \
                 (tessera serve --max-body-bytes, or McpHttpBuilder::max_body_bytes)"
            ),
        )
    };
    let declared = headers
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    let timeouts = BodyTimeouts {
        stall: shared.config.body_read_timeout,
        total: shared.config.body_total_timeout,
        min_rate: shared.config.body_min_rate,
    };
    // A body too slow in any way gets 408 and its connection closed.
    let timed_out = |limit: &'static str, why: String| {
        shared.stats.refuse(limit);
        let mut r = reply::refuse(
            StatusCode::REQUEST_TIMEOUT,
            format!("Request Timeout: {why}"),
        );
        r.headers_mut().insert(
            http::header::CONNECTION,
            http::HeaderValue::from_static("close"),
        );
        r
    };
    let busy = extensions.get::<ConnectionBusy>();
    let bytes = match read_message_body(body, limit, timeouts, shared.config.max_batch, busy).await
    {
        Ok(b) => b,
        Err(ReadError::TooLarge) => return Err(too_large()),
        Err(ReadError::BatchTooLarge { seen, whole }) => {
            return Err(refuse_batch(shared, seen, !whole));
        }
        Err(ReadError::Stalled(after)) => {
            return Err(timed_out(
                super::limit::BODY_READ_TIMEOUT,
                format!(
                    "the body stopped arriving for {} s \
                 (tessera serve --body-read-timeout, or McpHttpBuilder::body_read_timeout)",
                    after.as_secs_f64()
                ),
            ));
        }
        Err(ReadError::Deadline(after)) => {
            return Err(timed_out(
                super::limit::BODY_TOTAL_TIMEOUT,
                format!(
                    "the body did not arrive within {} s \
                 (tessera serve --body-total-timeout, or McpHttpBuilder::body_total_timeout)",
                    after.as_secs_f64()
                ),
            ));
        }
        Err(ReadError::TooSlow {
            min_rate,
            received,
            elapsed,
        }) => {
            return Err(timed_out(
                super::limit::BODY_MIN_RATE,
                format!(
                    "the body arrived slower than {min_rate} bytes/s ({received} bytes in {:.1} s, \
                 after a grace of {} s; tessera serve --body-min-rate, or \
                 McpHttpBuilder::body_min_rate)",
                    elapsed.as_secs_f64(),
                    BODY_RATE_GRACE.as_secs()
                ),
            ));
        }
        Err(ReadError::Io(e)) => {
            return Err(reply::refuse(
                StatusCode::BAD_REQUEST,
                format!("Bad Request: could not read the body: {e}"),
            ));
        }
    };
    // The body is checked as JSON and a batch is split into its elements
    // (counted before any is read), so a batch over the limit is refused
    // without building a tree of it.
    let inbound = match decode::split(&bytes) {
        Ok(Some(frame)) => {
            if frame.is_batch() {
                if let Some(r) = batch_too_large(shared, frame.len()) {
                    return Err(r);
                }
            }
            decode::decode_frame(frame)
        }
        // A body that may hold a key reserved by the JSON parser is read as
        // a tree, which is checked for such keys.
        Ok(None) => match decode::parse(&bytes) {
            Ok(v) => {
                if let Some(r) = v.as_array().and_then(|a| batch_too_large(shared, a.len())) {
                    return Err(r);
                }
                decode::decode_value(v)
            }
            Err(r) => return Err(reply::rpc_error(StatusCode::BAD_REQUEST, r.id, r.error)),
        },
        Err(r) => return Err(reply::rpc_error(StatusCode::BAD_REQUEST, r.id, r.error)),
    };
    match inbound {
        Inbound::Invalid(r) => Err(reply::rpc_error(StatusCode::BAD_REQUEST, r.id, r.error)),
        other => Ok(other),
    }
}

/// The refusal of a batch larger than the limit (nothing of it runs).
pub(crate) fn batch_too_large(shared: &Shared, len: usize) -> Option<HttpResponse> {
    (len > shared.config.max_batch).then(|| refuse_batch(shared, len, false))
}

/// The refusal of a batch of `len` messages, or of at least `len` when its
/// body was not read to the end.
fn refuse_batch(shared: &Shared, len: usize, at_least: bool) -> HttpResponse {
    let max = shared.config.max_batch;
    shared.stats.refuse(super::limit::MAX_BATCH);
    let at_least = if at_least { "at least " } else { "" };
    reply::refuse(
        StatusCode::BAD_REQUEST,
        format!(
            "Invalid Request: a batch of {at_least}{len} messages exceeds the limit of {max} \
             (tessera serve --max-batch, or McpHttpBuilder::max_batch)"
        ),
    )
}
