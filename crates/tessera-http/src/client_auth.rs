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
use std::sync::Arc;

use http::{HeaderMap, Method, StatusCode, Uri};
use tessera_runtime::BoxFuture;

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
///
/// Implement it with `async fn`s:
///
/// ```
/// use http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};
/// use tessera_http::{ChallengeOutcome, HttpAuth};
///
/// /// Sends a fixed API key; a refusal is final.
/// struct ApiKey(HeaderValue);
///
/// impl HttpAuth for ApiKey {
///     async fn authorize(
///         &self,
///         _method: &Method,
///         _uri: &Uri,
///         headers: &mut HeaderMap,
///     ) -> Result<(), String> {
///         headers.insert("x-api-key", self.0.clone());
///         Ok(())
///     }
///
///     async fn challenge(
///         &self,
///         _uri: &Uri,
///         status: StatusCode,
///         _headers: &HeaderMap,
///     ) -> ChallengeOutcome {
///         ChallengeOutcome::Fail(format!("the API key was refused ({status})"))
///     }
/// }
///
/// let builder = tessera_http::HttpClientTransport::builder("https://mcp.example.com/mcp")
///     .auth(ApiKey(HeaderValue::from_static("k")));
/// # let _ = builder;
/// ```
pub trait HttpAuth: Send + Sync + 'static {
    /// Adds the credentials for a request (`method` to `uri`) to `headers`.
    /// Called for every request the transport sends, so an implementation
    /// can refresh an expiring token here. An `Err` fails the request with
    /// that message.
    fn authorize(
        &self,
        method: &Method,
        uri: &Uri,
        headers: &mut HeaderMap,
    ) -> impl Future<Output = Result<(), String>> + Send;

    /// The server answered `status` (401 or 403) with `headers` to a request
    /// sent to `uri`. Returns whether to send the request again.
    fn challenge(
        &self,
        uri: &Uri,
        status: StatusCode,
        headers: &HeaderMap,
    ) -> impl Future<Output = ChallengeOutcome> + Send;
}

impl<A: HttpAuth + ?Sized> HttpAuth for Arc<A> {
    fn authorize(
        &self,
        method: &Method,
        uri: &Uri,
        headers: &mut HeaderMap,
    ) -> impl Future<Output = Result<(), String>> + Send {
        (**self).authorize(method, uri, headers)
    }
    fn challenge(
        &self,
        uri: &Uri,
        status: StatusCode,
        headers: &HeaderMap,
    ) -> impl Future<Output = ChallengeOutcome> + Send {
        (**self).challenge(uri, status, headers)
    }
}

/// [`HttpAuth`] as the transport holds it (behind a trait object, one box
/// per call).
pub(crate) trait HeldAuth: Send + Sync + 'static {
    fn authorize_boxed<'a>(
        &'a self,
        method: &'a Method,
        uri: &'a Uri,
        headers: &'a mut HeaderMap,
    ) -> BoxFuture<'a, Result<(), String>>;
    fn challenge_boxed<'a>(
        &'a self,
        uri: &'a Uri,
        status: StatusCode,
        headers: &'a HeaderMap,
    ) -> BoxFuture<'a, ChallengeOutcome>;
}

impl<A: HttpAuth> HeldAuth for A {
    fn authorize_boxed<'a>(
        &'a self,
        method: &'a Method,
        uri: &'a Uri,
        headers: &'a mut HeaderMap,
    ) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(self.authorize(method, uri, headers))
    }
    fn challenge_boxed<'a>(
        &'a self,
        uri: &'a Uri,
        status: StatusCode,
        headers: &'a HeaderMap,
    ) -> BoxFuture<'a, ChallengeOutcome> {
        Box::pin(self.challenge(uri, status, headers))
    }
}
