//! The HTTP headers of the MCP Streamable HTTP transport, and the Base64
//! sentinel encoding (`=?base64?…?=`) of `Mcp-Name` and `Mcp-Param-*` values.
//!
//! ```
//! use tessera_http::headers::{decode_header_value, encode_header_value};
//!
//! assert_eq!(encode_header_value("us-west1"), "us-west1");
//! assert_eq!(encode_header_value("Hello, 世界"), "=?base64?SGVsbG8sIOS4lueVjA==?=");
//! assert_eq!(decode_header_value("=?base64?SGVsbG8sIOS4lueVjA==?=").unwrap(), "Hello, 世界");
//! assert!(decode_header_value("=?base64?SGVsbG8?=").is_err()); // bad padding
//! ```

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

/// `Mcp-Session-Id`: the session of a 2025-03-26…2025-11-25 client.
pub const MCP_SESSION_ID: &str = "mcp-session-id";
/// `MCP-Protocol-Version`: the protocol version of the request.
pub const MCP_PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// `Mcp-Method`: mirrors the JSON-RPC `method` (2026-07-28).
pub const MCP_METHOD: &str = "mcp-method";
/// `Mcp-Name`: mirrors `params.name` or `params.uri` (2026-07-28).
pub const MCP_NAME: &str = "mcp-name";
/// The prefix of the headers that mirror `x-mcp-header` tool parameters (2026-07-28).
pub const MCP_PARAM_PREFIX: &str = "mcp-param-";
/// `Last-Event-ID`: where a client resumes an SSE stream.
pub const LAST_EVENT_ID: &str = "last-event-id";

/// The names above as [`http::HeaderName`]s: a lookup by one of these skips
/// parsing the name (a lookup by `&str` parses it every time).
pub(crate) mod names {
    use http::HeaderName;

    /// [`MCP_SESSION_ID`](super::MCP_SESSION_ID).
    pub(crate) static MCP_SESSION_ID: HeaderName = HeaderName::from_static(super::MCP_SESSION_ID);
    /// [`MCP_PROTOCOL_VERSION`](super::MCP_PROTOCOL_VERSION).
    pub(crate) static MCP_PROTOCOL_VERSION: HeaderName =
        HeaderName::from_static(super::MCP_PROTOCOL_VERSION);
    /// [`MCP_METHOD`](super::MCP_METHOD).
    pub(crate) static MCP_METHOD: HeaderName = HeaderName::from_static(super::MCP_METHOD);
    /// [`MCP_NAME`](super::MCP_NAME).
    pub(crate) static MCP_NAME: HeaderName = HeaderName::from_static(super::MCP_NAME);
    /// [`LAST_EVENT_ID`](super::LAST_EVENT_ID).
    pub(crate) static LAST_EVENT_ID: HeaderName = HeaderName::from_static(super::LAST_EVENT_ID);
}

const PREFIX: &str = "=?base64?";
const SUFFIX: &str = "?=";

/// Why a mirrored header value could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HeaderValueError {
    /// The value is wrapped in `=?base64?…?=` but is not valid padded Base64.
    #[error("invalid Base64 in {0:?}")]
    InvalidBase64(String),
    /// The Base64 payload is not UTF-8.
    #[error("the Base64 payload of {0:?} is not UTF-8")]
    NotUtf8(String),
}

/// Decodes a mirrored header value: a value wrapped in `=?base64?…?=` is
/// Base64 (standard alphabet, padding required); anything else is literal.
/// Optional whitespace around the value is not part of it.
pub fn decode_header_value(raw: &str) -> Result<String, HeaderValueError> {
    let v = raw.trim_matches([' ', '\t']);
    match v
        .strip_prefix(PREFIX)
        .and_then(|rest| rest.strip_suffix(SUFFIX))
    {
        Some(payload) if v.len() >= PREFIX.len() + SUFFIX.len() => {
            let bytes = STANDARD
                .decode(payload)
                .map_err(|_| HeaderValueError::InvalidBase64(v.to_owned()))?;
            String::from_utf8(bytes).map_err(|_| HeaderValueError::NotUtf8(v.to_owned()))
        }
        _ => Ok(v.to_owned()),
    }
}

/// Encodes a value for a mirrored header: plain when it is safe visible ASCII
/// without surrounding whitespace and does not look like the sentinel,
/// Base64-wrapped otherwise.
pub fn encode_header_value(value: &str) -> String {
    let visible = value.bytes().all(|b| (0x20..=0x7e).contains(&b));
    let padded = value.starts_with(' ') || value.ends_with(' ');
    let looks_encoded = value.starts_with(PREFIX) && value.ends_with(SUFFIX);
    if value.is_empty() || (visible && !padded && !looks_encoded) {
        value.to_owned()
    } else {
        format!("{PREFIX}{}{SUFFIX}", STANDARD.encode(value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentinel_rules() {
        assert_eq!(decode_header_value("  plain  ").unwrap(), "plain");
        assert_eq!(decode_header_value("=?base64?SGVsbG8=?=").unwrap(), "Hello");
        assert_eq!(
            decode_header_value("=?base64?SGVsbG8=").unwrap(),
            "=?base64?SGVsbG8="
        );
        assert_eq!(decode_header_value("SGVsbG8=").unwrap(), "SGVsbG8=");
        assert!(decode_header_value("=?base64?SGVs!!!bG8=?=").is_err());
        assert_eq!(encode_header_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(
            encode_header_value("=?base64?literal?="),
            "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
        );
        assert_eq!(
            encode_header_value("line1\nline2"),
            "=?base64?bGluZTEKbGluZTI=?="
        );
    }
}
