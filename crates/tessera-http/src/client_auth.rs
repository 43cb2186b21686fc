//! The hook through which the HTTP client transport gets credentials and
//! reacts to authorization challenges.
//!
//! The transport itself knows nothing of OAuth: before every request it asks
//! the [`HttpAuth`] for the headers to add (an `Authorization: Bearer …`, and
//! for DPoP a fresh proof), and when the server answers `401 Unauthorized` or
//! `403 Forbidden` it hands the response's status and headers to
//! [`HttpAuth::challenge`], which may obtain new credentials (discovery,
//! registration, a browser flow, a refresh, a step-up) and ask for the request
//! to be sent again. `tessera-auth` provides the OAuth 2.1 implementation.

use std::future::Future;
use std::pin::Pin;

use http::{HeaderMap, Method, StatusCode, Uri};

/// A boxed, sendable future, as [`HttpAuth`] methods return.
pub type AuthFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What to do after an authorization challenge.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChallengeOutcome {
    /// New credentials are in place: send the request again.
    Retry,
    /// Nothing to do: hand the server's answer to the caller as it is.
    Pass,
    /// Authorization failed or was refused: fail the request with this message.
    Fail(String),
}

/// Supplies credentials to the HTTP client transport and answers challenges.
pub trait HttpAuth: Send + Sync + 'static {
    /// Adds the credentials for a request (`method` to `uri`) to `headers`.
    /// Called for every request the transport sends, so an implementation
    /// can refresh an expiring token here. An `Err` fails the request with
    /// that message.
    fn authorize<'a>(
        &'a self,
        method: &'a Method,
        uri: &'a Uri,
        headers: &'a mut HeaderMap,
    ) -> AuthFuture<'a, Result<(), String>>;

    /// The server answered `status` (401 or 403) with `headers` to a request
    /// sent to `uri`. Returns whether to send the request again.
    fn challenge<'a>(
        &'a self,
        uri: &'a Uri,
        status: StatusCode,
        headers: &'a HeaderMap,
    ) -> AuthFuture<'a, ChallengeOutcome>;
}
