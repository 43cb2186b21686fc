//! Multi round-trip requests (2026-07-28).
//!
//! Instead of sending requests to the client, a server answers
//! `tools/call`, `prompts/get` or `resources/read` with an
//! [`InputRequiredResult`] listing [`InputRequests`] (sampling, roots,
//! elicitation) and optional opaque `requestState`. The client fulfils them
//! and retries the original request with [`InputResponses`] under the same
//! keys, echoing `requestState`.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::JsonObject;
use crate::elicitation::ElicitRequest;
use crate::elicitation::{ElicitRequestParams, ElicitResult};
use crate::method::{RequestMethod, RequestParams};
use crate::result::ResultType;
use crate::roots::{ListRootsRequest, ListRootsResult};
use crate::sampling::{CreateMessageRequest, CreateMessageRequestParams, CreateMessageResult};

/// A request the server needs the client to fulfil (schema `InputRequest`):
/// `{method, params}` without JSON-RPC envelope.
#[derive(Debug, Clone, PartialEq)]
pub enum InputRequest {
    /// `sampling/createMessage`.
    CreateMessage(CreateMessageRequestParams),
    /// `roots/list` (params optional).
    ListRoots(Option<RequestParams>),
    /// `elicitation/create`.
    Elicit(ElicitRequestParams),
}

impl InputRequest {
    /// The method name.
    pub fn method(&self) -> &'static str {
        match self {
            InputRequest::CreateMessage(_) => CreateMessageRequest::METHOD,
            InputRequest::ListRoots(_) => ListRootsRequest::METHOD,
            InputRequest::Elicit(_) => ElicitRequest::METHOD,
        }
    }

    /// A `roots/list` request without params.
    pub fn list_roots() -> Self {
        InputRequest::ListRoots(None)
    }
}

impl From<CreateMessageRequestParams> for InputRequest {
    fn from(p: CreateMessageRequestParams) -> Self {
        InputRequest::CreateMessage(p)
    }
}

impl From<ElicitRequestParams> for InputRequest {
    fn from(p: ElicitRequestParams) -> Self {
        InputRequest::Elicit(p)
    }
}

#[derive(Serialize)]
struct InputRequestRef<'a, P: Serialize> {
    method: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<&'a P>,
}

impl Serialize for InputRequest {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let method = self.method();
        match self {
            InputRequest::CreateMessage(p) => InputRequestRef {
                method,
                params: Some(p),
            }
            .serialize(s),
            InputRequest::ListRoots(p) => InputRequestRef {
                method,
                params: p.as_ref(),
            }
            .serialize(s),
            InputRequest::Elicit(p) => InputRequestRef {
                method,
                params: Some(p),
            }
            .serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for InputRequest {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Raw {
            method: String,
            #[serde(default)]
            params: Option<Value>,
        }
        use serde::de::Error;
        let raw = Raw::deserialize(d)?;
        let need = |p: Option<Value>| p.ok_or_else(|| D::Error::missing_field("params"));
        match raw.method.as_str() {
            m if m == CreateMessageRequest::METHOD => serde_json::from_value(need(raw.params)?)
                .map(InputRequest::CreateMessage)
                .map_err(D::Error::custom),
            m if m == ListRootsRequest::METHOD => raw
                .params
                .map(serde_json::from_value)
                .transpose()
                .map(InputRequest::ListRoots)
                .map_err(D::Error::custom),
            m if m == ElicitRequest::METHOD => serde_json::from_value(need(raw.params)?)
                .map(InputRequest::Elicit)
                .map_err(D::Error::custom),
            other => Err(D::Error::custom(format!(
                "unknown input request method {other:?}"
            ))),
        }
    }
}

/// Input requests by server-chosen key (schema `InputRequests`).
pub type InputRequests = BTreeMap<String, InputRequest>;

/// The client's answer to one [`InputRequest`] (schema `InputResponse`):
/// the result of the corresponding request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum InputResponse {
    /// An elicitation answer.
    Elicit(ElicitResult),
    /// The roots.
    ListRoots(ListRootsResult),
    /// A sampling reply.
    CreateMessage(CreateMessageResult),
}

impl From<ElicitResult> for InputResponse {
    fn from(r: ElicitResult) -> Self {
        InputResponse::Elicit(r)
    }
}

impl From<ListRootsResult> for InputResponse {
    fn from(r: ListRootsResult) -> Self {
        InputResponse::ListRoots(r)
    }
}

impl From<CreateMessageResult> for InputResponse {
    fn from(r: CreateMessageResult) -> Self {
        InputResponse::CreateMessage(r)
    }
}

/// Input responses by the keys of the [`InputRequests`] they answer
/// (schema `InputResponses`).
pub type InputResponses = BTreeMap<String, InputResponse>;

/// An interim result asking for input before the request can complete
/// (`resultType: "input_required"`). 2026-07-28.
///
/// At least one of `inputRequests` and `requestState` must be present.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputRequiredResult {
    /// Reserved metadata (`_meta`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// Always `input_required`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// The requests to fulfil.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<InputRequests>,
    /// Opaque state the client must echo on the retry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
}

impl InputRequiredResult {
    /// A result asking for `requests`.
    pub fn new(requests: InputRequests) -> Self {
        InputRequiredResult {
            meta: None,
            result_type: Some(ResultType::InputRequired),
            input_requests: Some(requests),
            request_state: None,
        }
    }

    /// A result carrying only state (the client retries at once).
    pub fn with_state_only(state: impl Into<String>) -> Self {
        InputRequiredResult {
            meta: None,
            result_type: Some(ResultType::InputRequired),
            input_requests: None,
            request_state: Some(state.into()),
        }
    }

    /// Sets the request state.
    pub fn with_request_state(mut self, state: impl Into<String>) -> Self {
        self.request_state = Some(state.into());
        self
    }
}

/// The members a retried request adds to its params (schema
/// `InputResponseRequestParams`). 2026-07-28.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputResponseRequestParams {
    /// Reserved metadata (`_meta`); required.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// Responses to the previous attempt's input requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<InputResponses>,
    /// The previous attempt's `requestState`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
}

/// The result of a request that may ask for input (2026-07-28
/// `*ResultResponse` results of `tools/call`, `prompts/get`,
/// `resources/read`): told apart by `resultType`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum MrtrResult<T> {
    /// The final result.
    Complete(T),
    /// More input is needed.
    InputRequired(InputRequiredResult),
}

impl<'de, T: serde::de::DeserializeOwned> Deserialize<'de> for MrtrResult<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        let input_required = crate::probe::Probe::of(&v)
            .result_type
            .valid()
            .map(String::as_str)
            == Some("input_required");
        let r = if input_required {
            serde_json::from_value(v).map(MrtrResult::InputRequired)
        } else {
            serde_json::from_value(v).map(MrtrResult::Complete)
        };
        r.map_err(serde::de::Error::custom)
    }
}

crate::result::impl_result_fields!(InputRequiredResult);
