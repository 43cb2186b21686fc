//! Method names and the typed link between a method, its parameters and its
//! result.
//!
//! Every request and notification definition of the schemas has a
//! zero-sized marker type named after it (for example
//! [`CallToolRequest`](crate::tool::CallToolRequest)) implementing
//! [`RequestMethod`] or [`NotificationMethod`]. The marker carries the wire method name
//! and the Rust types of `params` (and, for requests, of `result`), so
//! generic code can encode and decode messages without string matching:
//!
//! ```
//! use tessera_types::{CallToolRequest, CallToolRequestParams, JsonRpcMessage, RequestMethod, RequestId};
//!
//! let params = CallToolRequestParams::new("get_weather");
//! let msg = JsonRpcMessage::typed_request::<CallToolRequest>(RequestId::Number(1), &params).unwrap();
//! assert_eq!(msg.method(), Some(CallToolRequest::METHOD));
//! ```

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::JsonObject;
use crate::jsonrpc::{
    JsonRpcMessage, JsonRpcNotification, JsonRpcRequest, JsonRpcResultResponse, RequestId,
};

/// A request method: its name, parameter type and result type.
///
/// Implemented by zero-sized marker types named after the schema's request
/// definitions. `Params` and `Result` are the version-neutral types; fields
/// that a given protocol version does not know are optional.
pub trait RequestMethod {
    /// The JSON-RPC `method` string.
    const METHOD: &'static str;
    /// The type of `params`.
    type Params: Serialize + DeserializeOwned;
    /// The type of a successful `result`.
    ///
    /// In 2026-07-28, `tools/call`, `prompts/get` and `resources/read` may
    /// instead be answered with an
    /// [`InputRequiredResult`](crate::mrtr::InputRequiredResult); decode
    /// those responses with [`MrtrResult`](crate::mrtr::MrtrResult).
    type Result: Serialize + DeserializeOwned;
}

/// A notification method: its name and parameter type.
pub trait NotificationMethod {
    /// The JSON-RPC `method` string.
    const METHOD: &'static str;
    /// The type of `params`.
    type Params: Serialize + DeserializeOwned;
}

/// Serialises typed parameters into the `params` object of a message.
///
/// Fails if `params` does not serialise to a JSON object.
pub fn encode_params<P: Serialize>(params: &P) -> Result<JsonObject, serde_json::Error> {
    match serde_json::to_value(params)? {
        Value::Object(map) => Ok(map),
        other => Err(serde::de::Error::custom(format!(
            "params must serialise to a JSON object, not {other}"
        ))),
    }
}

/// Decodes params held as a tree into a typed value (without copying the
/// tree). Absent params decode like an empty object.
pub fn decode_object_params<P: DeserializeOwned>(
    params: Option<&JsonObject>,
) -> Result<P, serde_json::Error> {
    match params {
        Some(o) => crate::params::decode_tree(o),
        None => serde_json::from_str("{}"),
    }
}

/// Decodes a message's `params` into a typed value. Absent params decode
/// like an empty object, so types whose fields are all optional accept them.
pub fn decode_params<P: DeserializeOwned>(
    params: Option<&crate::params::Params>,
) -> Result<P, serde_json::Error> {
    match params {
        Some(p) => p.decode(),
        None => serde_json::from_str("{}"),
    }
}

impl JsonRpcMessage {
    /// Builds a request for the method `R` with typed parameters.
    pub fn typed_request<R: RequestMethod>(
        id: RequestId,
        params: &R::Params,
    ) -> Result<Self, serde_json::Error> {
        Ok(JsonRpcMessage::request(
            id,
            R::METHOD,
            Some(encode_params(params)?),
        ))
    }

    /// Builds a notification for the method `N` with typed parameters.
    pub fn typed_notification<N: NotificationMethod>(
        params: &N::Params,
    ) -> Result<Self, serde_json::Error> {
        Ok(JsonRpcMessage::notification(
            N::METHOD,
            Some(encode_params(params)?),
        ))
    }

    /// Builds a successful response with a typed result.
    pub fn typed_result<T: Serialize>(
        id: RequestId,
        result: &T,
    ) -> Result<Self, serde_json::Error> {
        Ok(JsonRpcMessage::result(id, encode_params(result)?))
    }
}

impl JsonRpcRequest {
    /// Whether this request is for method `R`.
    pub fn is<R: RequestMethod>(&self) -> bool {
        self.method == R::METHOD
    }

    /// Decodes `params` as the parameters of method `R` (the method name is
    /// not checked; see [`JsonRpcRequest::is`]).
    pub fn params_as<R: RequestMethod>(&self) -> Result<R::Params, serde_json::Error> {
        decode_params(self.params.as_ref())
    }
}

impl JsonRpcNotification {
    /// Whether this notification is for method `N`.
    pub fn is<N: NotificationMethod>(&self) -> bool {
        self.method == N::METHOD
    }

    /// Decodes `params` as the parameters of method `N` (the method name is
    /// not checked; see [`JsonRpcNotification::is`]).
    pub fn params_as<N: NotificationMethod>(&self) -> Result<N::Params, serde_json::Error> {
        decode_params(self.params.as_ref())
    }
}

impl JsonRpcResultResponse {
    /// Decodes `result` as the result of method `R`.
    pub fn result_as<R: RequestMethod>(&self) -> Result<R::Result, serde_json::Error> {
        serde_json::from_value(Value::Object(self.result.clone()))
    }
}

/// Parameters with nothing but `_meta` (schema `RequestParams`): the
/// parameters of `ping`, `server/discover` and `roots/list`.
///
/// In 2026-07-28 `_meta` is required on client requests and carries the
/// protocol version and client capabilities; see
/// [`RequestMeta`](crate::meta::RequestMeta).
#[derive(Debug, Clone, PartialEq, Default, Serialize, serde::Deserialize)]
pub struct RequestParams {
    /// Reserved metadata (`_meta`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl RequestParams {
    /// Parameters with the given `_meta`.
    pub fn with_meta(meta: JsonObject) -> Self {
        RequestParams { meta: Some(meta) }
    }
}

/// Parameters with nothing but `_meta` (schema `NotificationParams`): the
/// parameters of the `list_changed` notifications and of
/// `notifications/initialized`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, serde::Deserialize)]
pub struct NotificationParams {
    /// Reserved metadata (`_meta`); in 2026-07-28 it may carry
    /// `io.modelcontextprotocol/subscriptionId`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}
