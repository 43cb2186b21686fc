//! The ways a request can be refused, and how each is answered.

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, StatusCode, header};

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
    /// A bounded store of the layer is full (the DPoP replay cache): `503`
    /// with `Retry-After`, the text naming the limit.
    #[error("busy: {0}")]
    Busy(String),
    /// The DPoP proof was refused (`401 invalid_dpop_proof`, RFC 9449 §7.1).
    #[error("invalid DPoP proof: {0}")]
    InvalidDpopProof(String),
    /// The DPoP proof lacks the server's current nonce (`401
    /// use_dpop_nonce`, RFC 9449 §9); the answer carries a `DPoP-Nonce`.
    #[error("DPoP nonce needed: {0}")]
    UseDpopNonce(String),
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
            AuthError::MissingToken
            | AuthError::InvalidToken(_)
            | AuthError::InvalidDpopProof(_)
            | AuthError::UseDpopNonce(_) => StatusCode::UNAUTHORIZED,
            AuthError::InvalidRequest(_) => StatusCode::BAD_REQUEST,
            AuthError::InsufficientScope { .. } => StatusCode::FORBIDDEN,
            AuthError::Unavailable(_) | AuthError::Busy(_) => StatusCode::SERVICE_UNAVAILABLE,
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
            AuthError::InvalidDpopProof(why) => {
                with_scope(base.error("invalid_dpop_proof", Some(why.clone())), scope)
            }
            AuthError::UseDpopNonce(why) => {
                with_scope(base.error("use_dpop_nonce", Some(why.clone())), scope)
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
            AuthError::Unavailable(_) | AuthError::Busy(_) => return None,
        };
        Some(c.resource_metadata(resource_metadata))
    }
}

/// The HTTP answer to a refusal: status, headers (one `WWW-Authenticate`
/// field per challenge, in order, and `Access-Control-Expose-Headers`; or,
/// with no challenge, `Retry-After` for a `503`) and a JSON body with
/// `error` and `error_description`.
pub(crate) fn http_answer(
    e: &AuthError,
    challenges: &[BearerChallenge],
) -> (StatusCode, HeaderMap, Bytes) {
    let (code, description) = match e {
        AuthError::MissingToken => ("unauthorized", e.to_string()),
        AuthError::InvalidRequest(d) => ("invalid_request", d.clone()),
        AuthError::InvalidToken(d) => ("invalid_token", d.clone()),
        AuthError::InvalidDpopProof(d) => ("invalid_dpop_proof", d.clone()),
        AuthError::UseDpopNonce(d) => ("use_dpop_nonce", d.clone()),
        AuthError::InsufficientScope { .. } => ("insufficient_scope", e.to_string()),
        AuthError::Busy(why) => ("temporarily_unavailable", why.clone()),
        AuthError::Unavailable(_) => (
            "temporarily_unavailable",
            "the access token cannot be verified now; try again later".to_owned(),
        ),
    };
    let body = ErrorBody {
        error: code,
        error_description: &description,
    };
    // Two strings: always serialised.
    let body = serde_json::to_string(&body).unwrap_or_default();
    let mut h = HeaderMap::new();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    if !challenges.is_empty() {
        for c in challenges {
            if let Ok(v) = HeaderValue::from_str(&c.to_string()) {
                h.append(header::WWW_AUTHENTICATE, v);
            }
        }
        // Let browser-based clients read the challenge (and a DPoP nonce).
        h.insert(
            header::ACCESS_CONTROL_EXPOSE_HEADERS,
            HeaderValue::from_static("WWW-Authenticate, DPoP-Nonce"),
        );
    } else {
        h.insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
    }
    (e.status(), h, Bytes::from(body))
}

/// The body of a refusal (RFC 6750 §3, RFC 6749 §5.2).
#[derive(serde::Serialize)]
struct ErrorBody<'a> {
    error: &'a str,
    error_description: &'a str,
}
