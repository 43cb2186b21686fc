//! What a resource handler may return ([`IntoResourceContents`]) and how it
//! fails ([`ResourceError`]).

use std::borrow::Cow;

use serde::Serialize;
use serde_json::json;
use tessera_types::{
    BlobResourceContents, Era, ErrorCode, ErrorObject, ReadResourceResult, ResourceContents,
    TextResourceContents,
};

/// The most bytes of a requested URI echoed in an error's `data.uri`: a
/// peer's multi-megabyte URI is not sent back whole.
pub const MAX_ECHOED_URI: usize = 2048;

/// Why reading (or listing) resources failed. Each kind becomes a JSON-RPC
/// error response:
///
/// - [`NotFound`](ResourceError::NotFound): the "resource not found" error
///   of the negotiated version, `-32002` up to 2025-11-25 and `-32602` in
///   2026-07-28, both with `data: {"uri": …}`.
/// - [`InvalidParams`](ResourceError::InvalidParams): `-32602` with
///   `data: {"uri": …}`.
/// - [`Internal`](ResourceError::Internal): `-32603`.
/// - [`Rpc`](ResourceError::Rpc): that error object, as is.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ResourceError {
    /// The resource does not exist.
    #[error("Resource not found")]
    NotFound,
    /// The request is wrong (a malformed URI, variables that do not fit).
    #[error("Invalid params: {0}")]
    InvalidParams(String),
    /// The server failed.
    #[error("Internal error: {0}")]
    Internal(String),
    /// Any JSON-RPC error.
    #[error("{}", .0.message)]
    Rpc(ErrorObject),
}

impl ResourceError {
    /// An internal error (`-32603`) with a message.
    pub fn internal(message: impl std::fmt::Display) -> Self {
        ResourceError::Internal(message.to_string())
    }

    /// An invalid-params error (`-32602`) with a message.
    pub fn invalid_params(message: impl std::fmt::Display) -> Self {
        ResourceError::InvalidParams(message.to_string())
    }

    /// The JSON-RPC error for a request about `uri` (if any) in `era`. The
    /// URI is echoed in `data.uri` up to [`MAX_ECHOED_URI`] bytes; a longer
    /// one is cut there, and `data.uriBytes` says how long it was.
    pub(crate) fn into_error_object(self, uri: Option<&str>, era: Era) -> ErrorObject {
        let with_uri = |e: ErrorObject| match uri {
            Some(u) => e.with_data(uri_data(u)),
            None => e,
        };
        match self {
            ResourceError::NotFound if uri.is_some() => {
                let code = match era {
                    Era::Modern => ErrorCode::INVALID_PARAMS,
                    Era::Legacy => ErrorCode::RESOURCE_NOT_FOUND,
                };
                with_uri(ErrorObject::new(code, "Resource not found"))
            }
            ResourceError::NotFound => {
                ErrorObject::internal("Internal error: a resource source was not found")
            }
            e @ ResourceError::InvalidParams(_) => {
                with_uri(ErrorObject::invalid_params(e.to_string()))
            }
            e @ ResourceError::Internal(_) => ErrorObject::internal(e.to_string()),
            ResourceError::Rpc(e) => e,
        }
    }
}

/// `uri` as far as it is echoed to a peer: its first [`MAX_ECHOED_URI`]
/// bytes (at a character boundary).
pub(crate) fn echoed_uri(uri: &str) -> &str {
    let mut end = uri.len().min(MAX_ECHOED_URI);
    while !uri.is_char_boundary(end) {
        end -= 1;
    }
    &uri[..end]
}

/// An error's `data` naming the requested `uri`: `{"uri": …}`, cut at
/// [`MAX_ECHOED_URI`] bytes with `uriBytes` giving the length when longer.
pub(crate) fn uri_data(uri: &str) -> serde_json::Value {
    if uri.len() > MAX_ECHOED_URI {
        json!({ "uri": echoed_uri(uri), "uriBytes": uri.len() })
    } else {
        json!({ "uri": uri })
    }
}

impl From<ErrorObject> for ResourceError {
    fn from(e: ErrorObject) -> Self {
        ResourceError::Rpc(e)
    }
}

impl From<std::io::Error> for ResourceError {
    /// `NotFound` for a missing file, an internal error otherwise.
    fn from(e: std::io::Error) -> Self {
        match e.kind() {
            std::io::ErrorKind::NotFound => ResourceError::NotFound,
            _ => ResourceError::Internal(e.to_string()),
        }
    }
}

impl From<String> for ResourceError {
    /// An internal error with this message.
    fn from(message: String) -> Self {
        ResourceError::Internal(message)
    }
}

impl From<&str> for ResourceError {
    /// An internal error with this message.
    fn from(message: &str) -> Self {
        ResourceError::Internal(message.to_owned())
    }
}

/// Binary contents: sent base64-encoded as a `blob`, with the resource's
/// declared MIME type (or `application/octet-stream`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Blob(pub Vec<u8>);

/// JSON contents: `T` serialised as the text of an `application/json`
/// resource (whatever MIME type was declared).
#[derive(Debug, Clone, PartialEq)]
pub struct JsonContents<T>(pub T);

/// Converts a resource handler's return value into a `resources/read`
/// result.
///
/// - `String`, `&'static str`, `Cow<'static, str>`: one text item with the
///   requested URI and the declared MIME type (or `text/plain`).
/// - `Vec<u8>`, `&'static [u8]`, [`Blob`]: one base64 `blob` item with the
///   declared MIME type (or `application/octet-stream`).
/// - [`JsonContents<T>`]: one `application/json` text item.
/// - [`ResourceContents`], [`TextResourceContents`],
///   [`BlobResourceContents`], `Vec<ResourceContents>`: those items; an empty
///   `uri` is filled in with the requested URI and a missing `mimeType` with
///   the declared one.
/// - [`ReadResourceResult`]: as is.
/// - `Option<T>`: `None` is "resource not found".
/// - `Result<T, E>` where `E: Into<ResourceError>` (for example
///   [`ResourceError`], `std::io::Error`, [`ErrorObject`], `String`): `Err`
///   becomes a JSON-RPC error response (see [`ResourceError`]).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned by a resource handler",
    label = "not resource contents",
    note = "a resource handler returns a type that implements `IntoResourceContents`: text (`String`, `&'static str`), bytes (`Vec<u8>`, `Blob`), `JsonContents<T>`, `ResourceContents`, `ReadResourceResult`, or an `Option` or `Result` of one of these"
)]
pub trait IntoResourceContents {
    /// The conversion, for a read of `uri` whose definition declares
    /// `mime_type`.
    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<ReadResourceResult, ResourceError>;
}

fn text(uri: &str, mime_type: Option<&str>, body: String) -> ReadResourceResult {
    ReadResourceResult::new(vec![
        TextResourceContents::new(uri, body)
            .with_mime_type(mime_type.unwrap_or("text/plain"))
            .into(),
    ])
}

fn blob(uri: &str, mime_type: Option<&str>, bytes: &[u8]) -> ReadResourceResult {
    ReadResourceResult::new(vec![
        BlobResourceContents::from_bytes(uri, bytes)
            .with_mime_type(mime_type.unwrap_or("application/octet-stream"))
            .into(),
    ])
}

fn fill_in(mut c: ResourceContents, uri: &str, mime_type: Option<&str>) -> ResourceContents {
    let (u, m) = match &mut c {
        ResourceContents::Text(t) => (&mut t.uri, &mut t.mime_type),
        ResourceContents::Blob(b) => (&mut b.uri, &mut b.mime_type),
    };
    if u.is_empty() {
        uri.clone_into(u);
    }
    if m.is_none() {
        *m = mime_type.map(str::to_owned);
    }
    c
}

impl IntoResourceContents for String {
    fn into_contents(
        self,
        uri: &str,
        mime: Option<&str>,
    ) -> Result<ReadResourceResult, ResourceError> {
        Ok(text(uri, mime, self))
    }
}

impl IntoResourceContents for &'static str {
    fn into_contents(
        self,
        uri: &str,
        mime: Option<&str>,
    ) -> Result<ReadResourceResult, ResourceError> {
        Ok(text(uri, mime, self.to_owned()))
    }
}

impl IntoResourceContents for Cow<'static, str> {
    fn into_contents(
        self,
        uri: &str,
        mime: Option<&str>,
    ) -> Result<ReadResourceResult, ResourceError> {
        Ok(text(uri, mime, self.into_owned()))
    }
}

impl IntoResourceContents for Vec<u8> {
    fn into_contents(
        self,
        uri: &str,
        mime: Option<&str>,
    ) -> Result<ReadResourceResult, ResourceError> {
        Ok(blob(uri, mime, &self))
    }
}

impl IntoResourceContents for &'static [u8] {
    fn into_contents(
        self,
        uri: &str,
        mime: Option<&str>,
    ) -> Result<ReadResourceResult, ResourceError> {
        Ok(blob(uri, mime, self))
    }
}

impl IntoResourceContents for Blob {
    fn into_contents(
        self,
        uri: &str,
        mime: Option<&str>,
    ) -> Result<ReadResourceResult, ResourceError> {
        Ok(blob(uri, mime, &self.0))
    }
}

impl<T: Serialize> IntoResourceContents for JsonContents<T> {
    fn into_contents(
        self,
        uri: &str,
        _mime: Option<&str>,
    ) -> Result<ReadResourceResult, ResourceError> {
        let body = serde_json::to_string(&self.0).map_err(|e| {
            ResourceError::internal(format!("could not serialise the resource: {e}"))
        })?;
        Ok(text(uri, Some("application/json"), body))
    }
}

impl IntoResourceContents for ResourceContents {
    fn into_contents(
        self,
        uri: &str,
        mime: Option<&str>,
    ) -> Result<ReadResourceResult, ResourceError> {
        Ok(ReadResourceResult::new(vec![fill_in(self, uri, mime)]))
    }
}

impl IntoResourceContents for TextResourceContents {
    fn into_contents(
        self,
        uri: &str,
        mime: Option<&str>,
    ) -> Result<ReadResourceResult, ResourceError> {
        ResourceContents::Text(self).into_contents(uri, mime)
    }
}

impl IntoResourceContents for BlobResourceContents {
    fn into_contents(
        self,
        uri: &str,
        mime: Option<&str>,
    ) -> Result<ReadResourceResult, ResourceError> {
        ResourceContents::Blob(self).into_contents(uri, mime)
    }
}

impl IntoResourceContents for Vec<ResourceContents> {
    fn into_contents(
        self,
        uri: &str,
        mime: Option<&str>,
    ) -> Result<ReadResourceResult, ResourceError> {
        Ok(ReadResourceResult::new(
            self.into_iter().map(|c| fill_in(c, uri, mime)).collect(),
        ))
    }
}

impl IntoResourceContents for ReadResourceResult {
    fn into_contents(
        self,
        _uri: &str,
        _mime: Option<&str>,
    ) -> Result<ReadResourceResult, ResourceError> {
        Ok(self)
    }
}

impl<T: IntoResourceContents> IntoResourceContents for Option<T> {
    fn into_contents(
        self,
        uri: &str,
        mime: Option<&str>,
    ) -> Result<ReadResourceResult, ResourceError> {
        match self {
            Some(t) => t.into_contents(uri, mime),
            None => Err(ResourceError::NotFound),
        }
    }
}

impl<T: IntoResourceContents, E: Into<ResourceError>> IntoResourceContents for Result<T, E> {
    fn into_contents(
        self,
        uri: &str,
        mime: Option<&str>,
    ) -> Result<ReadResourceResult, ResourceError> {
        match self {
            Ok(t) => t.into_contents(uri, mime),
            Err(e) => Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions() {
        let r = "hi".into_contents("x://a", Some("text/markdown")).unwrap();
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"contents": [{"uri": "x://a", "mimeType": "text/markdown", "text": "hi"}]})
        );
        let r = vec![1u8, 2, 3].into_contents("x://b", None).unwrap();
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"contents": [{"uri": "x://b", "mimeType": "application/octet-stream", "blob": "AQID"}]})
        );
        let r = JsonContents(json!({"a": 1}))
            .into_contents("x://c", Some("text/plain"))
            .unwrap();
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"contents": [{"uri": "x://c", "mimeType": "application/json", "text": "{\"a\":1}"}]})
        );
        let r = vec![ResourceContents::from(TextResourceContents::new("", "t"))]
            .into_contents("x://d", Some("text/csv"))
            .unwrap();
        assert_eq!(r.contents[0].uri(), "x://d");
        assert_eq!(
            None::<String>.into_contents("x://e", None),
            Err(ResourceError::NotFound)
        );
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "gone");
        assert_eq!(
            Err::<String, _>(io).into_contents("x://f", None),
            Err(ResourceError::NotFound)
        );
        assert_eq!(
            Err::<String, _>("boom").into_contents("x://g", None),
            Err(ResourceError::Internal("boom".into()))
        );
    }

    #[test]
    fn error_codes_per_era() {
        let e = ResourceError::NotFound.into_error_object(Some("x://a"), Era::Legacy);
        assert_eq!((e.code, e.data), (-32002, Some(json!({"uri": "x://a"}))));
        let e = ResourceError::NotFound.into_error_object(Some("x://a"), Era::Modern);
        assert_eq!((e.code, e.data), (-32602, Some(json!({"uri": "x://a"}))));
        let e = ResourceError::invalid_params("bad").into_error_object(Some("x://a"), Era::Legacy);
        assert_eq!(e.code, -32602);
        assert_eq!(e.message, "Invalid params: bad");
        let e = ResourceError::internal("disk").into_error_object(Some("x://a"), Era::Modern);
        assert_eq!((e.code, e.data), (-32603, None));
        let e = ResourceError::Rpc(ErrorObject::new(-32099, "custom"))
            .into_error_object(Some("x://a"), Era::Modern);
        assert_eq!(e.code, -32099);
    }
}
