//! [`TokenVerifier`]: how an access token is checked.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use super::auth_info::AuthInfo;
use super::error::VerifyError;

/// Checks an access token and says what it grants.
///
/// An implementation must establish that the token was issued by the
/// expected authorization server, for this resource server (audience, RFC
/// 8707), and is currently valid; scopes are checked by the layer.
///
/// Implement it with an `async fn`:
///
/// ```
/// use tessera_auth::server::{AuthInfo, BearerAuthLayer, TokenVerifier, VerifyError};
///
/// /// Accepts one fixed token (for a test server).
/// struct Fixed(String);
///
/// impl TokenVerifier for Fixed {
///     async fn verify(&self, token: &str) -> Result<AuthInfo, VerifyError> {
///         if token == self.0 {
///             let mut claims = serde_json::Map::new();
///             claims.insert("sub".into(), "tester".into());
///             Ok(AuthInfo::from_claims(claims))
///         } else {
///             Err(VerifyError::Invalid("unknown token".into()))
///         }
///     }
/// }
///
/// let layer = BearerAuthLayer::builder("https://mcp.example.com/mcp", Fixed("s3cret".into()));
/// # let _ = layer;
/// ```
pub trait TokenVerifier: Send + Sync + 'static {
    /// Verifies `token`.
    fn verify(&self, token: &str) -> impl Future<Output = Result<AuthInfo, VerifyError>> + Send;
}

impl<T: TokenVerifier + ?Sized> TokenVerifier for Arc<T> {
    fn verify(&self, token: &str) -> impl Future<Output = Result<AuthInfo, VerifyError>> + Send {
        (**self).verify(token)
    }
}

impl<T: TokenVerifier + ?Sized> TokenVerifier for Box<T> {
    fn verify(&self, token: &str) -> impl Future<Output = Result<AuthInfo, VerifyError>> + Send {
        (**self).verify(token)
    }
}

/// A boxed future of [`HeldVerifier::verify_boxed`].
type VerifyFuture<'a> = Pin<Box<dyn Future<Output = Result<AuthInfo, VerifyError>> + Send + 'a>>;

/// [`TokenVerifier`] as the layer holds it (behind a trait object, one box
/// per call).
pub(crate) trait HeldVerifier: Send + Sync + 'static {
    fn verify_boxed<'a>(&'a self, token: &'a str) -> VerifyFuture<'a>;
}

impl<T: TokenVerifier> HeldVerifier for T {
    fn verify_boxed<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
        Box::pin(self.verify(token))
    }
}
