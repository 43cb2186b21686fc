//! The body of a tool call and the extractors that read it.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tessera_types::JsonObject;

use super::{FromRequest, HandlerInput, Rejection, RequestBody};
use crate::schema::{LazyValidator, schema_for};

/// The body of a `tools/call`: the tool's name and its arguments, as they
/// came. The arguments are kept as JSON text until an extractor reads them
/// ([`Args<T>`] decodes `T` straight from that text); they are a tree only
/// when the server had to check them against the tool's schema first, or
/// when the request was built as a tree.
#[derive(Debug, Clone, Default)]
pub struct ToolCall {
    name: String,
    arguments: Arguments,
    /// The tool's input schema when the arguments were not checked against
    /// it before the handler: it explains a call that does not decode.
    unchecked: Option<Arc<LazyValidator>>,
}

/// A tool call's `arguments`, in the form they are held.
#[derive(Debug, Clone, Default)]
pub(crate) enum Arguments {
    /// None came (absent or `null`): read as `{}`.
    #[default]
    None,
    /// The object's JSON text, not parsed yet.
    Text(Box<str>),
    /// The object, parsed.
    Tree(JsonObject),
}

impl ToolCall {
    /// A call of tool `name` with `arguments`.
    pub(crate) fn new(
        name: String,
        arguments: Arguments,
        unchecked: Option<Arc<LazyValidator>>,
    ) -> Self {
        ToolCall {
            name,
            arguments,
            unchecked,
        }
    }

    /// Takes the arguments decoded into `T`, or the message of an `isError`
    /// result saying why they do not fit: the schema's problems, each with
    /// its path, when the arguments were not checked against it yet.
    fn decode<T: DeserializeOwned>(&mut self) -> Result<T, String> {
        let given = std::mem::take(&mut self.arguments);
        let decoded = match &given {
            Arguments::None => serde_json::from_str("{}"),
            Arguments::Text(text) => serde_json::from_str(text),
            Arguments::Tree(tree) => T::deserialize(tree),
        };
        decoded.map_err(|e| {
            let explained = match (&given, &self.unchecked) {
                (Arguments::Text(text), Some(schema)) => {
                    let value = serde_json::from_str::<Value>(text).ok();
                    schema.get().zip(value).and_then(|(s, v)| s.check(&v).err())
                }
                (Arguments::None, Some(schema)) => schema
                    .get()
                    .and_then(|s| s.check(&Value::Object(JsonObject::new())).err()),
                _ => None,
            };
            format!(
                "Invalid arguments for tool {}: {}",
                self.name,
                explained.unwrap_or_else(|| e.to_string())
            )
        })
    }

    /// The name of the tool called.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether the call carried arguments (an object; absent and `null`
    /// count as none).
    pub fn has_arguments(&self) -> bool {
        !matches!(self.arguments, Arguments::None)
    }

    /// Takes the arguments, decoded into `T` (from their text when they are
    /// still text). What no call carried reads as `{}`; a second take reads
    /// `{}` too.
    pub fn take_arguments<T: DeserializeOwned>(&mut self) -> Result<T, serde_json::Error> {
        match std::mem::take(&mut self.arguments) {
            Arguments::None => serde_json::from_str("{}"),
            Arguments::Text(text) => serde_json::from_str(&text),
            Arguments::Tree(tree) => T::deserialize(&tree),
        }
    }

    /// Takes the arguments as an object (parsed here when they are still
    /// text; `{}` when none came).
    pub fn take_arguments_object(&mut self) -> JsonObject {
        match std::mem::take(&mut self.arguments) {
            Arguments::None => JsonObject::new(),
            // The call's params were checked to hold an object here.
            Arguments::Text(text) => serde_json::from_str(&text).unwrap_or_default(),
            Arguments::Tree(tree) => tree,
        }
    }
}

impl RequestBody for ToolCall {
    /// The tool's `inputSchema`.
    type Declaration = JsonObject;
}

/// The tool's arguments, deserialised into `T` straight from the request's
/// JSON text. `T`'s JSON Schema (generated with schemars) is the tool's
/// `inputSchema`.
///
/// When that schema says nothing that decoding `T` does not check itself
/// (types, required and known properties, enums, tuples, integer ranges of
/// the integer types; see the guide's tools chapter), the server does not
/// validate the arguments against the schema: a call that does not decode is
/// answered with an `isError` result naming the problem, as a schema
/// violation is. Otherwise (say `#[schemars(range(min = 1))]`, `length`,
/// `regex`, or a schema set with
/// [`ToolBuilder::input_schema`](crate::ToolBuilder::input_schema)) the
/// arguments are checked against the schema first.
#[derive(Debug, Clone, PartialEq)]
pub struct Args<T>(pub T);

impl<S, T> FromRequest<S, ToolCall> for Args<T>
where
    T: DeserializeOwned + JsonSchema + Send,
{
    fn from_request(input: &mut HandlerInput<S, ToolCall>) -> Result<Self, Rejection> {
        input
            .body
            .decode()
            .map(Args)
            .map_err(Rejection::InvalidParams)
    }

    fn declaration() -> Option<JsonObject> {
        Some(schema_for::<T>())
    }

    fn decodes_declaration() -> bool {
        true
    }
}

/// The raw `arguments` object, unchecked (the tool's schema says any object).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RawArgs(pub JsonObject);

impl<S> FromRequest<S, ToolCall> for RawArgs {
    fn from_request(input: &mut HandlerInput<S, ToolCall>) -> Result<Self, Rejection> {
        Ok(RawArgs(input.body.take_arguments_object()))
    }
}
