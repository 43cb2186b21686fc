//! What a tool handler may return: anything that converts into a
//! `CallToolResult`.

use schemars::JsonSchema;
use serde::Serialize;
use tessera_types::{CallToolResult, ContentBlock, JsonObject};

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
pub trait IntoToolResult {
    /// The conversion.
    fn into_tool_result(self) -> CallToolResult;

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
