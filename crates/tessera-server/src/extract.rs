//! Extractors: the parameters a handler function can take.
//!
//! A tool handler is an async function whose parameters each implement
//! [`FromToolCall`]: [`Args`] (the typed arguments, whose JSON Schema becomes
//! the tool's `inputSchema`), [`RequestContext`](crate::RequestContext),
//! [`State`], [`Peer`](tessera_runtime::Peer),
//! [`CancellationToken`](tokio_util::sync::CancellationToken) and
//! [`Extension`] (a value the transport attached, such as the verified
//! `tessera_auth::server::AuthInfo` of an HTTP request).

use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tessera_types::{CallToolResult, JsonObject};
use tokio_util::sync::CancellationToken;

use crate::context::RequestContext;
use crate::schema::schema_for;

/// Everything a tool call carries, before extraction.
#[derive(Debug)]
pub struct ToolCall<S> {
    /// The `arguments` object (taken by [`Args`]).
    pub arguments: Option<JsonObject>,
    /// The request context.
    pub context: RequestContext,
    /// The server's shared state.
    pub state: Arc<S>,
    /// The server itself (to add or remove tools while serving).
    pub server: crate::Server<S>,
}

/// Something a tool handler can take as a parameter.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a parameter of a tool handler",
    label = "not a tool extractor",
    note = "each parameter of a tool handler is an extractor (`FromToolCall<S>`), such as `Args<T>`, `RawArgs`, `RequestContext`, `State<S>`, `Peer` or `CancellationToken`",
    note = "to take the tool's arguments, put them in a struct that derives `Deserialize` and `JsonSchema` and take `Args<ThatStruct>`"
)]
pub trait FromToolCall<S>: Sized + Send {
    /// Extracts the value; an `Err` becomes the call's result (an `isError` result).
    fn from_tool_call(call: &mut ToolCall<S>) -> Result<Self, CallToolResult>;

    /// The `inputSchema` this extractor implies, if it reads the arguments.
    fn input_schema() -> Option<JsonObject> {
        None
    }
}

/// The tool's arguments, deserialised into `T`. `T`'s JSON Schema (generated
/// with schemars) is the tool's `inputSchema`, and arguments are validated
/// against it before the handler runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Args<T>(pub T);

impl<S, T> FromToolCall<S> for Args<T>
where
    T: DeserializeOwned + JsonSchema + Send,
{
    fn from_tool_call(call: &mut ToolCall<S>) -> Result<Self, CallToolResult> {
        let args = Value::Object(call.arguments.take().unwrap_or_default());
        serde_json::from_value(args)
            .map(Args)
            .map_err(|e| CallToolResult::error(format!("Invalid arguments: {e}")))
    }

    fn input_schema() -> Option<JsonObject> {
        Some(schema_for::<T>())
    }
}

/// The raw `arguments` object, unchecked (the tool's schema says any object).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RawArgs(pub JsonObject);

impl<S> FromToolCall<S> for RawArgs {
    fn from_tool_call(call: &mut ToolCall<S>) -> Result<Self, CallToolResult> {
        Ok(RawArgs(call.arguments.take().unwrap_or_default()))
    }
}

/// The server's shared state, as given to `Server::with_state`.
#[derive(Debug)]
pub struct State<S>(pub Arc<S>);

impl<S> Clone for State<S> {
    fn clone(&self) -> Self {
        State(self.0.clone())
    }
}

impl<S> std::ops::Deref for State<S> {
    type Target = S;
    fn deref(&self) -> &S {
        &self.0
    }
}

impl<S: Send + Sync> FromToolCall<S> for State<S> {
    fn from_tool_call(call: &mut ToolCall<S>) -> Result<Self, CallToolResult> {
        Ok(State(call.state.clone()))
    }
}

impl<S> FromToolCall<S> for RequestContext {
    fn from_tool_call(call: &mut ToolCall<S>) -> Result<Self, CallToolResult> {
        Ok(call.context.clone())
    }
}

impl<S> FromToolCall<S> for tessera_runtime::Peer {
    fn from_tool_call(call: &mut ToolCall<S>) -> Result<Self, CallToolResult> {
        Ok(call.context.peer().clone())
    }
}

impl<S> FromToolCall<S> for CancellationToken {
    fn from_tool_call(call: &mut ToolCall<S>) -> Result<Self, CallToolResult> {
        Ok(call.context.cancellation().clone())
    }
}

impl<S: Send + Sync + 'static> FromToolCall<S> for crate::Server<S> {
    fn from_tool_call(call: &mut ToolCall<S>) -> Result<Self, CallToolResult> {
        Ok(call.server.clone())
    }
}

/// A value of type `T` that the transport attached to the request (see
/// [`RequestContext::extension`](crate::RequestContext::extension)), cloned.
/// Over HTTP behind `tessera_auth::server::BearerAuthLayer`,
/// `Extension<AuthInfo>` is the verified access token's claims and scopes.
///
/// A call without one is answered with an `isError` result before the
/// handler runs; take `Option<Extension<T>>` to accept both.
#[derive(Debug, Clone, PartialEq)]
pub struct Extension<T>(pub T);

impl<S, T> FromToolCall<S> for Extension<T>
where
    T: Clone + Send + Sync + 'static,
{
    fn from_tool_call(call: &mut ToolCall<S>) -> Result<Self, CallToolResult> {
        call.context
            .extension::<T>()
            .cloned()
            .map(Extension)
            .ok_or_else(|| {
                CallToolResult::error(format!(
                    "This tool needs request information that is missing ({})",
                    std::any::type_name::<T>()
                ))
            })
    }
}

impl<S, T> FromToolCall<S> for Option<Extension<T>>
where
    T: Clone + Send + Sync + 'static,
{
    fn from_tool_call(call: &mut ToolCall<S>) -> Result<Self, CallToolResult> {
        Ok(call.context.extension::<T>().cloned().map(Extension))
    }
}
