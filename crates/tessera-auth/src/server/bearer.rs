//! Reading the access token of a request (RFC 6750 §2, RFC 9449 §7.1).

use http::{HeaderMap, Uri, header::AUTHORIZATION};

use super::error::AuthError;

/// A bearer token read from the `Authorization` header.
#[derive(Clone, PartialEq, Eq)]
pub struct BearerToken(pub String);

impl std::fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never log a credential.
        f.write_str("BearerToken(…)")
    }
}

/// The bearer token of a request, from the `Authorization` header only
/// (MCP: tokens must not travel in the URI).
///
/// - no `Authorization` header, or one with another scheme:
///   [`AuthError::MissingToken`];
/// - a token in the query string (`access_token=`), several `Authorization`
///   headers, or a `Bearer` credential that is not an RFC 6750 `b64token`:
///   [`AuthError::InvalidRequest`].
pub fn bearer_token(headers: &HeaderMap, uri: &Uri) -> Result<BearerToken, AuthError> {
    access_token(headers, uri, false).map(|(_, t)| t)
}

/// How an access token was presented.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TokenScheme {
    /// `Authorization: Bearer <token>`.
    Bearer,
    /// `Authorization: DPoP <token>`, with a `DPoP` proof header.
    Dpop,
}

/// The access token of a request and its scheme: as [`bearer_token`], and
/// when `dpop` is set also `Authorization: DPoP <token>` (same syntax).
pub fn access_token(
    headers: &HeaderMap,
    uri: &Uri,
    dpop: bool,
) -> Result<(TokenScheme, BearerToken), AuthError> {
    if let Some(q) = uri.query() {
        let in_query = q
            .split('&')
            .any(|kv| kv.split('=').next() == Some("access_token"));
        if in_query {
            return Err(AuthError::InvalidRequest(
                "access tokens must be sent in the Authorization header, not the URI".into(),
            ));
        }
    }
    let mut values = headers.get_all(AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return Err(AuthError::MissingToken);
    };
    if values.next().is_some() {
        return Err(AuthError::InvalidRequest(
            "more than one Authorization header".into(),
        ));
    }
    let value = value
        .to_str()
        .map_err(|_| AuthError::InvalidRequest("the Authorization header is not ASCII".into()))?;
    let (scheme, rest) = match value.split_once(' ') {
        Some((s, r)) => (s, r),
        None => (value, ""),
    };
    let scheme = if scheme.eq_ignore_ascii_case("bearer") {
        TokenScheme::Bearer
    } else if dpop && scheme.eq_ignore_ascii_case("dpop") {
        TokenScheme::Dpop
    } else {
        // Another scheme (Basic, DPoP without DPoP support…): no access
        // token was presented.
        return Err(AuthError::MissingToken);
    };
    let token = rest.trim_matches(' ');
    let b64token = !token.is_empty()
        && token.trim_end_matches('=').bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'/')
        });
    if !b64token {
        return Err(AuthError::InvalidRequest(match scheme {
            TokenScheme::Bearer => "the Authorization header must be `Bearer <token>`".into(),
            TokenScheme::Dpop => "the Authorization header must be `DPoP <token>`".into(),
        }));
    }
    Ok((scheme, BearerToken(token.to_owned())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(auth: &[&str], uri: &str) -> Result<BearerToken, AuthError> {
        let mut h = HeaderMap::new();
        for a in auth {
            h.append(AUTHORIZATION, a.parse().unwrap());
        }
        bearer_token(&h, &uri.parse().unwrap())
    }

    #[test]
    fn header_forms() {
        assert_eq!(
            read(&["Bearer abc.DEF-_~+/=="], "/mcp").unwrap().0,
            "abc.DEF-_~+/=="
        );
        assert_eq!(read(&["bearer  tok "], "/mcp").unwrap().0, "tok");
        assert_eq!(read(&[], "/mcp"), Err(AuthError::MissingToken));
        assert_eq!(
            read(&["Basic dXNlcjpwYXNz"], "/mcp"),
            Err(AuthError::MissingToken)
        );
        for bad in ["Bearer", "Bearer ", "Bearer a b", "Bearer a=b", "Bearer ü"] {
            let mut h = HeaderMap::new();
            if let Ok(v) = http::HeaderValue::from_bytes(bad.as_bytes()) {
                h.insert(AUTHORIZATION, v);
            }
            let r = bearer_token(&h, &"/mcp".parse().unwrap());
            assert!(
                matches!(r, Err(AuthError::InvalidRequest(_))),
                "{bad}: {r:?}"
            );
        }
        assert!(matches!(
            read(&["Bearer a", "Bearer b"], "/mcp"),
            Err(AuthError::InvalidRequest(_))
        ));
    }

    #[test]
    fn dpop_scheme_only_when_asked() {
        let mut h = HeaderMap::new();
        h.insert(AUTHORIZATION, "DPoP abc.def".parse().unwrap());
        let uri: Uri = "/mcp".parse().unwrap();
        assert_eq!(bearer_token(&h, &uri), Err(AuthError::MissingToken));
        let (scheme, token) = access_token(&h, &uri, true).unwrap();
        assert_eq!((scheme, token.0.as_str()), (TokenScheme::Dpop, "abc.def"));
        h.insert(AUTHORIZATION, "dpop a b".parse().unwrap());
        assert!(matches!(
            access_token(&h, &uri, true),
            Err(AuthError::InvalidRequest(m)) if m.contains("DPoP <token>")
        ));
    }

    #[test]
    fn query_tokens_are_refused() {
        assert!(matches!(
            read(&["Bearer a"], "/mcp?x=1&access_token=abc"),
            Err(AuthError::InvalidRequest(_))
        ));
        assert!(read(&["Bearer a"], "/mcp?not_access_token=1").is_ok());
    }
}
