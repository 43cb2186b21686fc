//! What a tower error stands for as a JSON-RPC error, and how an HTTP
//! transport answers a shed request.

use tessera_types::{ErrorCode, ErrorObject, RequestId};
use tower::BoxError;

use super::refusal::{MessageScope, Refusal};

/// The JSON-RPC error a stack's error stands for: the
/// [`ErrorObject`] a layer or handler answered with, `-32603` "Request timed
/// out" for `tower::timeout`, `-32603` "Server busy" for
/// `tower::load_shed`, and `-32603` with the error's text for anything else.
pub fn error_object(e: BoxError) -> ErrorObject {
    match e.downcast::<ErrorObject>() {
        Ok(o) => *o,
        Err(e) if e.is::<tower::timeout::error::Elapsed>() => {
            ErrorObject::internal("Request timed out")
        }
        Err(e) if e.is::<tower::load_shed::error::Overloaded>() => busy(),
        Err(e) => ErrorObject::internal(format!("Internal error: {e}")),
    }
}

/// The JSON-RPC error code of a stack's error (see [`error_object`]).
pub fn error_code(e: &BoxError) -> ErrorCode {
    match e.downcast_ref::<ErrorObject>() {
        Some(o) => ErrorCode(o.code),
        None => ErrorCode::INTERNAL_ERROR,
    }
}

fn busy() -> ErrorObject {
    ErrorObject::internal("Server busy: too many requests in progress; retry in 1 s")
}

/// [`error_object`] for request `id`; a shed request is also recorded in
/// its `frame` as a refusal an HTTP transport answers with `429` and
/// `Retry-After: 1`.
pub(super) fn answer(e: BoxError, frame: Option<&MessageScope>, id: RequestId) -> ErrorObject {
    let shed = e.is::<tower::load_shed::error::Overloaded>();
    let error = error_object(e);
    if let (true, Some(frame)) = (shed, frame) {
        frame.refuse(
            Refusal::new(error.clone())
                .http_status(http::StatusCode::TOO_MANY_REQUESTS)
                .http_header(http::header::RETRY_AFTER, "1")
                .for_request(id),
        );
    }
    error
}
