//! Tools: their definitions, checks and erased handlers.

use std::sync::Arc;

use serde_json::Value;
use tessera_runtime::BoxFuture;
use tessera_types::{CallToolResult, JsonObject, Tool, ToolAnnotations};

use crate::error::BuildError;
use crate::extract::ToolCall;
use crate::handler::ToolHandler;
use crate::schema::{Validator, empty_object_schema};

type ErasedHandler<S> =
    Arc<dyn Fn(ToolCall<S>) -> BoxFuture<'static, CallToolResult> + Send + Sync>;

/// Starts describing a tool called `name`.
pub fn tool(name: impl Into<String>) -> ToolBuilder {
    ToolBuilder {
        tool: Tool::new(name, empty_object_schema()),
        input_schema_set: false,
        output_schema_set: false,
    }
}

/// Describes a tool; finish with [`ToolBuilder::handler`].
#[derive(Debug, Clone)]
pub struct ToolBuilder {
    tool: Tool,
    input_schema_set: bool,
    output_schema_set: bool,
}

impl ToolBuilder {
    /// The description shown to the model.
    pub fn description(mut self, d: impl Into<String>) -> Self {
        self.tool.description = Some(d.into());
        self
    }

    /// A human-readable title (2025-06-18 and later).
    pub fn title(mut self, t: impl Into<String>) -> Self {
        self.tool.title = Some(t.into());
        self
    }

    /// Behaviour hints (read-only, destructive, idempotent, open-world).
    pub fn annotations(mut self, a: ToolAnnotations) -> Self {
        self.tool.annotations = Some(a);
        self
    }

    /// Overrides the input schema derived from the handler's [`Args`](crate::Args).
    pub fn input_schema(mut self, schema: JsonObject) -> Self {
        self.tool.input_schema = schema;
        self.input_schema_set = true;
        self
    }

    /// Overrides the output schema derived from the handler's return type.
    pub fn output_schema(mut self, schema: JsonObject) -> Self {
        self.tool.output_schema = Some(schema);
        self.output_schema_set = true;
        self
    }

    /// Edits the definition directly (icons, `_meta`, execution, …).
    pub fn edit(mut self, f: impl FnOnce(&mut Tool)) -> Self {
        f(&mut self.tool);
        self
    }

    /// Attaches the handler: an async function whose parameters are extractors.
    pub fn handler<H, M, S>(mut self, handler: H) -> ToolRoute<S>
    where
        H: ToolHandler<M, S>,
        S: Send + Sync + 'static,
    {
        if !self.input_schema_set {
            if let Some(s) = H::input_schema() {
                self.tool.input_schema = s;
            }
        }
        if !self.output_schema_set && self.tool.output_schema.is_none() {
            self.tool.output_schema = H::output_schema();
        }
        ToolRoute {
            tool: self.tool,
            handler: Arc::new(move |call| handler.call(call)),
        }
    }
}

/// A tool ready to register: its definition and its handler.
pub struct ToolRoute<S> {
    pub(crate) tool: Tool,
    pub(crate) handler: ErasedHandler<S>,
}

impl<S> std::fmt::Debug for ToolRoute<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolRoute")
            .field("tool", &self.tool)
            .finish_non_exhaustive()
    }
}

impl<S> ToolRoute<S> {
    /// The tool's definition.
    pub fn definition(&self) -> &Tool {
        &self.tool
    }
}

/// A registered tool: definition, compiled validators, handler.
pub(crate) struct RegisteredTool<S> {
    pub tool: Tool,
    pub input: Validator,
    pub output: Option<Validator>,
    pub handler: ErasedHandler<S>,
}

/// Checks a tool name: 1 to 128 characters of `A-Z a-z 0-9 _ - .`.
pub fn check_tool_name(name: &str) -> Result<(), BuildError> {
    let ok = (1..=128).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    if ok {
        Ok(())
    } else {
        Err(BuildError::InvalidToolName(name.to_owned()))
    }
}

impl<S> RegisteredTool<S> {
    pub(crate) fn new(route: ToolRoute<S>) -> Result<Self, BuildError> {
        check_tool_name(&route.tool.name)?;
        let name = route.tool.name.clone();
        if route.tool.input_schema.get("type") != Some(&Value::String("object".into())) {
            return Err(BuildError::InvalidSchema {
                tool: name,
                problem: "inputSchema must have \"type\": \"object\"".into(),
            });
        }
        let input = Validator::new(&route.tool.input_schema).map_err(|problem| {
            BuildError::InvalidSchema {
                tool: name.clone(),
                problem,
            }
        })?;
        let output = match &route.tool.output_schema {
            Some(s) => Some(
                Validator::new(s).map_err(|problem| BuildError::InvalidSchema {
                    tool: name.clone(),
                    problem,
                })?,
            ),
            None => None,
        };
        Ok(RegisteredTool {
            tool: route.tool,
            input,
            output,
            handler: route.handler,
        })
    }
}
