//! What a tool handler may return: anything that converts into a
//! `CallToolResult`.

use schemars::JsonSchema;
use serde::Serialize;
use tessera_types::{CallToolResult, ContentBlock, ErrorObject, JsonObject};

use crate::schema::schema_for;

/// Converts a handler's return value into a tool result.
///
/// - `String` / `&str`: one text block.
/// - [`ContentBlock`] / `Vec<ContentBlock>`: those blocks.
/// - [`Structured<T>`]: `structuredContent` (and the same JSON as a text block,
///   for clients that do not read structured content); `T`'s schema becomes
///   the tool's `outputSchema`.
/// - `Result<T, E>`: `Ok` converts `T`; `Err` becomes an `isError` result
///   with the error's message, which the model can read and act on.
/// - [`CallToolResult`]: as is.
/// - `Result<T, ProtocolError>`: `Err` becomes a JSON-RPC error response
///   instead of a tool result (for errors about the request, not the tool's work).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned by a tool handler",
    label = "not a tool result",
    note = "a tool handler returns a type that implements `IntoToolResult`: `String`, `&'static str`, `()`, `ContentBlock`, `Vec<ContentBlock>`, `CallToolResult`, `Structured<T>` (structured output, `T: Serialize + JsonSchema`), or a `Result` of one of these"
)]
pub trait IntoToolResult {
    /// The conversion.
    fn into_tool_result(self) -> CallToolResult;

    /// The conversion, for return types that may also answer with a JSON-RPC error.
    fn into_outcome(self) -> Result<CallToolResult, ErrorObject>
    where
        Self: Sized,
    {
        Ok(self.into_tool_result())
    }

    /// The `outputSchema` implied by the return type.
    fn output_schema() -> Option<JsonObject> {
        None
    }
}

impl IntoToolResult for CallToolResult {
    fn into_tool_result(self) -> CallToolResult {
        self
    }
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::text(self)
    }
}

impl IntoToolResult for &'static str {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::text(self)
    }
}

impl IntoToolResult for ContentBlock {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::new(vec![self])
    }
}

impl IntoToolResult for Vec<ContentBlock> {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::new(self)
    }
}

impl IntoToolResult for () {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::new(Vec::new())
    }
}

impl<T: IntoToolResult, E: std::fmt::Display> IntoToolResult for Result<T, E> {
    fn into_tool_result(self) -> CallToolResult {
        match self {
            Ok(t) => t.into_tool_result(),
            Err(e) => CallToolResult::error(e.to_string()),
        }
    }

    fn output_schema() -> Option<JsonObject> {
        T::output_schema()
    }
}

/// Structured tool output: serialised into `structuredContent`, with `T`'s
/// JSON Schema as the tool's `outputSchema`.
#[derive(Debug, Clone, PartialEq)]
pub struct Structured<T>(pub T);

impl<T: Serialize + JsonSchema> IntoToolResult for Structured<T> {
    fn into_tool_result(self) -> CallToolResult {
        match serde_json::to_value(&self.0) {
            Ok(v) => {
                let text = serde_json::to_string(&v).unwrap_or_default();
                let mut r = CallToolResult::text(text);
                r.structured_content = Some(v);
                r
            }
            Err(e) => CallToolResult::error(format!("could not serialise the tool's output: {e}")),
        }
    }

    fn output_schema() -> Option<JsonObject> {
        Some(schema_for::<T>())
    }
}

/// A JSON-RPC error returned by a handler: the request itself fails (for
/// example `-32602`), rather than the tool reporting an `isError` result.
///
/// Return `Result<T, ProtocolError>` from a handler to use it. (It does not
/// implement `Display`, so that it is told apart from ordinary errors, which
/// become `isError` results.)
#[derive(Debug, Clone, PartialEq)]
pub struct ProtocolError(pub ErrorObject);

impl From<ErrorObject> for ProtocolError {
    fn from(e: ErrorObject) -> Self {
        ProtocolError(e)
    }
}

impl<T: IntoToolResult> IntoToolResult for Result<T, ProtocolError> {
    fn into_tool_result(self) -> CallToolResult {
        match self {
            Ok(t) => t.into_tool_result(),
            Err(e) => CallToolResult::error(e.0.message),
        }
    }

    fn into_outcome(self) -> Result<CallToolResult, ErrorObject> {
        match self {
            Ok(t) => t.into_outcome(),
            Err(e) => Err(e.0),
        }
    }

    fn output_schema() -> Option<JsonObject> {
        T::output_schema()
    }
}
