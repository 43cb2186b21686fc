//! Typed JSON-RPC errors: each error definition of the schemas is a marker
//! type implementing [`McpError`], which fixes its code and the type of its
//! `data`.
//!
//! ```
//! use tessera_types::{McpError, UnsupportedProtocolVersionError, UnsupportedProtocolVersionData};
//!
//! let e = UnsupportedProtocolVersionError::error(
//!     "Unsupported protocol version",
//!     &UnsupportedProtocolVersionData { supported: vec!["2026-07-28".into()], requested: "1900-01-01".into() },
//! );
//! assert_eq!(e.code, -32022);
//! assert_eq!(UnsupportedProtocolVersionError::data(&e).unwrap().unwrap().requested, "1900-01-01");
//! ```

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::JsonObject;
use crate::capabilities::ClientCapabilities;
use crate::elicitation::ElicitRequestURLParams;
use crate::jsonrpc::{ErrorCode, ErrorObject};

/// An error kind: its code and the type of its `data`.
pub trait McpError {
    /// The error code.
    const CODE: ErrorCode;
    /// The type of `data` (`serde_json::Value` where the schema leaves it open).
    type Data: Serialize + DeserializeOwned;

    /// Builds the error object with `data`.
    fn error(message: impl Into<String>, data: &Self::Data) -> ErrorObject {
        let e = ErrorObject::new(Self::CODE, message);
        match serde_json::to_value(data) {
            Ok(Value::Null) | Err(_) => e,
            Ok(v) => e.with_data(v),
        }
    }

    /// Whether `e` has this kind's code.
    fn matches(e: &ErrorObject) -> bool {
        e.code == Self::CODE.0
    }

    /// Decodes `data` when `e` has this kind's code and carries data.
    fn data(e: &ErrorObject) -> Option<Result<Self::Data, serde_json::Error>> {
        if !Self::matches(e) {
            return None;
        }
        e.data.clone().map(serde_json::from_value)
    }
}

/// `data` of [`UnsupportedProtocolVersionError`].
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct UnsupportedProtocolVersionData {
    /// The versions the server supports.
    pub supported: Vec<String>,
    /// The version the client asked for.
    pub requested: String,
}

/// `data` of [`MissingRequiredClientCapabilityError`].
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MissingRequiredClientCapabilityData {
    /// The capabilities the request needs but the client did not declare.
    pub required_capabilities: ClientCapabilities,
}

/// `data` of [`URLElicitationRequiredError`]. 2025-11-25 only.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct URLElicitationRequiredData {
    /// The URL elicitations to complete before retrying.
    pub elicitations: Vec<ElicitRequestURLParams>,
    /// Other members.
    #[serde(flatten)]
    pub extra: JsonObject,
}

macro_rules! error_kinds {
    ( $( $(#[$attr:meta])* $name:ident: $code:expr, $data:ty; )+ ) => {
        $(
            $(#[$attr])*
            #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
            pub struct $name;

            impl McpError for $name {
                const CODE: ErrorCode = $code;
                type Data = $data;
            }
        )+
    };
}

error_kinds! {
    /// `-32700`: the message was not JSON.
    ParseError: ErrorCode::PARSE_ERROR, Value;
    /// `-32600`: not a valid request.
    InvalidRequestError: ErrorCode::INVALID_REQUEST, Value;
    /// `-32601`: unknown method.
    MethodNotFoundError: ErrorCode::METHOD_NOT_FOUND, Value;
    /// `-32602`: bad parameters (also "resource not found" in 2026-07-28).
    InvalidParamsError: ErrorCode::INVALID_PARAMS, Value;
    /// `-32603`: the receiver failed.
    InternalError: ErrorCode::INTERNAL_ERROR, Value;
    /// `-32002`: resource not found. 2024-11-05 through 2025-11-25 (prose
    /// only; 2026-07-28 uses `-32602`).
    ResourceNotFoundError: ErrorCode::RESOURCE_NOT_FOUND, Value;
    /// `-32020`: HTTP headers disagree with the body. 2026-07-28.
    HeaderMismatchError: ErrorCode::HEADER_MISMATCH, Value;
    /// `-32021`: the request needs a client capability that was not
    /// declared. 2026-07-28.
    MissingRequiredClientCapabilityError: ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY, MissingRequiredClientCapabilityData;
    /// `-32022`: the requested protocol version is not supported. 2026-07-28.
    UnsupportedProtocolVersionError: ErrorCode::UNSUPPORTED_PROTOCOL_VERSION, UnsupportedProtocolVersionData;
    /// `-32042`: URL elicitation must happen first. 2025-11-25 only.
    URLElicitationRequiredError: ErrorCode::URL_ELICITATION_REQUIRED, URLElicitationRequiredData;
}

impl ErrorObject {
    /// `-32022` with the supported and requested versions (2026-07-28).
    pub fn unsupported_protocol_version(
        requested: impl Into<String>,
        supported: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        UnsupportedProtocolVersionError::error(
            "Unsupported protocol version",
            &UnsupportedProtocolVersionData {
                supported: supported.into_iter().map(Into::into).collect(),
                requested: requested.into(),
            },
        )
    }

    /// `-32021` naming the missing capabilities (2026-07-28).
    pub fn missing_required_client_capability(
        message: impl Into<String>,
        required: ClientCapabilities,
    ) -> Self {
        MissingRequiredClientCapabilityError::error(
            message,
            &MissingRequiredClientCapabilityData {
                required_capabilities: required,
            },
        )
    }
}
