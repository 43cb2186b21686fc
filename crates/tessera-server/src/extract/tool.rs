//! The body of a tool call and the extractors that read it.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tessera_types::JsonObject;

use super::{FromRequest, HandlerInput, Rejection, RequestBody};
use crate::schema::schema_for;

/// The body of a `tools/call`: what a tool call carries beyond the
/// [`RequestParts`](super::RequestParts).
#[derive(Debug, Clone, Default)]
pub struct ToolCall {
    /// The `arguments` object (taken by [`Args`] or [`RawArgs`]).
    pub arguments: Option<JsonObject>,
}

impl RequestBody for ToolCall {
    /// The tool's `inputSchema`.
    type Declaration = JsonObject;
}

/// The tool's arguments, deserialised into `T`. `T`'s JSON Schema (generated
/// with schemars) is the tool's `inputSchema`, and arguments are validated
/// against it before the handler runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Args<T>(pub T);

impl<S, T> FromRequest<S, ToolCall> for Args<T>
where
    T: DeserializeOwned + JsonSchema + Send,
{
    fn from_request(input: &mut HandlerInput<S, ToolCall>) -> Result<Self, Rejection> {
        let args = Value::Object(input.body.arguments.take().unwrap_or_default());
        serde_json::from_value(args)
            .map(Args)
            .map_err(|e| Rejection::InvalidParams(format!("Invalid arguments: {e}")))
    }

    fn declaration() -> Option<JsonObject> {
        Some(schema_for::<T>())
    }
}

/// The raw `arguments` object, unchecked (the tool's schema says any object).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RawArgs(pub JsonObject);

impl<S> FromRequest<S, ToolCall> for RawArgs {
    fn from_request(input: &mut HandlerInput<S, ToolCall>) -> Result<Self, Rejection> {
        Ok(RawArgs(input.body.arguments.take().unwrap_or_default()))
    }
}
