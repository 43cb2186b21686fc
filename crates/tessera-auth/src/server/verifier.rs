//! [`TokenVerifier`]: how an access token is checked.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use super::auth_info::AuthInfo;
use super::error::VerifyError;

/// The future of [`TokenVerifier::verify`].
pub type VerifyFuture<'a> =
    Pin<Box<dyn Future<Output = Result<AuthInfo, VerifyError>> + Send + 'a>>;

/// Checks an access token and says what it grants.
///
/// An implementation must establish that the token was issued by the
/// expected authorization server, for this resource server (audience, RFC
/// 8707), and is currently valid; scopes are checked by the layer.
pub trait TokenVerifier: Send + Sync + 'static {
    /// Verifies `token`.
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a>;
}

impl<T: TokenVerifier + ?Sized> TokenVerifier for Arc<T> {
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
        (**self).verify(token)
    }
}

impl<T: TokenVerifier + ?Sized> TokenVerifier for Box<T> {
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
        (**self).verify(token)
    }
}
