//! The ways a request can be refused, and how each is answered.

use http::StatusCode;

use crate::challenge::BearerChallenge;

/// Why a token verifier did not accept a token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum VerifyError {
    /// The token is not valid for this server: bad signature, expired, not
    /// yet valid, another issuer or audience, inactive… (`401
    /// invalid_token`). The text is for logs and `error_description`.
    #[error("invalid token: {0}")]
    Invalid(String),
    /// The token could not be checked: the authorization server's keys or
    /// introspection endpoint could not be reached (`503`).
    #[error("cannot verify the token now: {0}")]
    Unavailable(String),
}

/// Why the layer refused a request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// No bearer token in the `Authorization` header (`401`, a challenge
    /// without an error code, RFC 6750 §3.1).
    #[error("no access token")]
    MissingToken,
    /// The request is malformed: a token in the query string, two
    /// `Authorization` headers, a `Bearer` credential that is not a token
    /// (`400 invalid_request`).
    #[error("invalid request: {0}")]
    InvalidRequest(String),
    /// The token was refused (`401 invalid_token`).
    #[error("invalid token: {0}")]
    InvalidToken(String),
    /// The token lacks scopes (`403 insufficient_scope`); `required` is every
    /// scope the request needs.
    #[error("insufficient scope: needs {}", required.join(" "))]
    InsufficientScope {
        /// The scopes the request needs, all of them.
        required: Vec<String>,
    },
    /// The token could not be verified now (`503`).
    #[error("authorization unavailable: {0}")]
    Unavailable(String),
}

impl From<VerifyError> for AuthError {
    fn from(e: VerifyError) -> Self {
        match e {
            VerifyError::Invalid(why) => AuthError::InvalidToken(why),
            VerifyError::Unavailable(why) => AuthError::Unavailable(why),
        }
    }
}

impl AuthError {
    /// The HTTP status of the refusal.
    pub fn status(&self) -> StatusCode {
        match self {
            AuthError::MissingToken | AuthError::InvalidToken(_) => StatusCode::UNAUTHORIZED,
            AuthError::InvalidRequest(_) => StatusCode::BAD_REQUEST,
            AuthError::InsufficientScope { .. } => StatusCode::FORBIDDEN,
            AuthError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    /// The `WWW-Authenticate` challenge of the refusal (`None` for `503`).
    /// `resource_metadata` is the RFC 9728 metadata URL; `scope` the scopes
    /// to announce on a `401`/`400` (the request's scopes are used on a `403`).
    pub fn challenge(&self, resource_metadata: &str, scope: &[String]) -> Option<BearerChallenge> {
        let base = BearerChallenge::bearer();
        let with_scope = |c: BearerChallenge, s: &[String]| {
            if s.is_empty() {
                c
            } else {
                c.scope(s.join(" "))
            }
        };
        let c = match self {
            AuthError::MissingToken => with_scope(base, scope),
            AuthError::InvalidRequest(why) => {
                with_scope(base.error("invalid_request", Some(why.clone())), scope)
            }
            AuthError::InvalidToken(why) => {
                with_scope(base.error("invalid_token", Some(why.clone())), scope)
            }
            AuthError::InsufficientScope { required } => with_scope(
                base.error(
                    "insufficient_scope",
                    Some(format!(
                        "this request needs the scopes: {}",
                        required.join(" ")
                    )),
                ),
                required,
            ),
            AuthError::Unavailable(_) => return None,
        };
        Some(c.resource_metadata(resource_metadata))
    }
}
