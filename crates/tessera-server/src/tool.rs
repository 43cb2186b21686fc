//! Tools: their definitions, checks and erased handlers.

use std::sync::Arc;
use tessera_types::methods;

use std::collections::HashMap;

use serde_json::Value;
use tessera_proto::mirror::ParamHeader;
use tessera_runtime::{BoxFuture, ReplyResult, Request};
use tessera_types::{
    CallToolResult, ErrorObject, JsonObject, ListToolsResult, ServerCapabilities, Tool,
    ToolAnnotations, ToolsCapability,
};

use crate::context::RequestContext;
use crate::error::BuildError;
use crate::extract::{HandlerInput, ToolCall};
use crate::handler::ToolHandler;
use crate::schema::{self, LazyValidator, Validator, empty_object_schema};
use crate::server::Server;
use crate::task::TaskStart;
use tessera_types::tool::TaskSupport;

mod call;

pub(crate) use call::ToolOutput;

type ErasedHandler<S> = Arc<
    dyn Fn(HandlerInput<S, ToolCall>) -> BoxFuture<'static, Result<CallToolResult, ErrorObject>>
        + Send
        + Sync,
>;

/// Starts describing a tool called `name`.
pub fn tool(name: impl Into<String>) -> ToolBuilder {
    ToolBuilder {
        tool: Tool::new(name, empty_object_schema()),
        input_schema_set: false,
        output_schema_set: false,
        requires: Vec::new(),
        scopes: Vec::new(),
        task_start: TaskStart::default(),
    }
}

/// Describes a tool; finish with [`ToolBuilder::handler`].
#[derive(Debug, Clone)]
pub struct ToolBuilder {
    tool: Tool,
    input_schema_set: bool,
    output_schema_set: bool,
    requires: Vec<String>,
    scopes: Vec<String>,
    task_start: TaskStart,
}

impl ToolBuilder {
    /// Whether the tool can run as a task: `Forbidden` (the default),
    /// `Optional` or `Required`. Shown as `execution.taskSupport` to
    /// 2025-11-25 clients. A 2025-11-25 call to a `required` tool without
    /// `task`, or to a `forbidden` one with it, is refused with `-32601`; a
    /// 2026-07-28 call to a `required` tool from a client that did not
    /// declare the tasks extension with `-32021`. For a 2026-07-28 client
    /// that declared it, an `optional` or `required` tool answers with a task
    /// (see [`ToolBuilder::task_start`] for when).
    pub fn task_support(mut self, support: TaskSupport) -> Self {
        self.tool = self.tool.with_task_support(support);
        self
    }

    /// When a 2026-07-28 call becomes a task ([`TaskStart::Immediately`] by
    /// default; [`TaskStart::AfterInput`] gathers input through multi
    /// round-trip rounds first).
    pub fn task_start(mut self, start: TaskStart) -> Self {
        self.task_start = start;
        self
    }

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

    /// Declares that the tool needs a client capability (such as `sampling` or
    /// `elicitation`). A call from a client that did not declare it is refused
    /// before the handler runs: `-32021` with `data.requiredCapabilities` in
    /// 2026-07-28, an `isError` result in earlier versions.
    pub fn requires_client_capability(mut self, capability: impl Into<String>) -> Self {
        self.requires.push(capability.into());
        self
    }

    /// Declares the OAuth scopes a caller's access token needs to call this
    /// tool (all of them; a broader scope that implies one counts, see the
    /// transport's scope rules).
    ///
    /// The server only records them ([`Server::tool_scopes`](crate::Server::tool_scopes));
    /// the HTTP authorization layer enforces them before the request reaches
    /// the server: `tessera_auth::server::BearerAuthLayer` reads them through
    /// its `tool_scopes` rule and answers a `tools/call` whose token lacks one
    /// with `403` and `WWW-Authenticate: Bearer error="insufficient_scope",
    /// scope="…"` (step-up authorization), so the handler never runs.
    /// Transports without authorization (stdio) do not check them.
    pub fn scopes<I, T>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = T>,
        T: Into<String>,
    {
        self.scopes.extend(scopes.into_iter().map(Into::into));
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
            requires: self.requires,
            scopes: self.scopes,
            task_start: self.task_start,
            input_decoded: !self.input_schema_set && H::input_decoded(),
            handler: Arc::new(move |call| handler.call(call)),
        }
    }
}

/// A tool ready to register: its definition and its handler.
pub struct ToolRoute<S> {
    pub(crate) tool: Tool,
    pub(crate) requires: Vec<String>,
    pub(crate) scopes: Vec<String>,
    pub(crate) task_start: TaskStart,
    /// Whether the handler's arguments extractor refuses what breaks the
    /// schema it declared ([`ToolHandler::input_decoded`]).
    pub(crate) input_decoded: bool,
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
    /// The arguments `tool.input_schema` marks with `x-mcp-header`, read
    /// once here for transports that check them per call.
    pub param_headers: Arc<[ParamHeader]>,
    pub requires: Vec<String>,
    pub scopes: Vec<String>,
    pub task_start: TaskStart,
    /// The tool's input schema, compiled.
    pub input: Arc<LazyValidator>,
    /// Whether the arguments are checked against `input` before the handler
    /// runs; `false` when decoding them checks everything the schema says
    /// (the schema then only explains a call that did not decode).
    pub check_input: bool,
    /// The tool's output schema, compiled.
    pub output: Option<LazyValidator>,
    pub handler: ErasedHandler<S>,
}

impl<S> RegisteredTool<S> {
    /// The declared task support (`Forbidden` when absent).
    pub fn task_support(&self) -> TaskSupport {
        self.tool
            .execution
            .as_ref()
            .and_then(|e| e.task_support)
            .unwrap_or(TaskSupport::Forbidden)
    }
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
    /// Checks a route and compiles its schemas; with `on_first_use`, a
    /// schema is compiled when a call first needs it instead.
    pub(crate) fn new(route: ToolRoute<S>, on_first_use: bool) -> Result<Self, BuildError> {
        check_tool_name(&route.tool.name)?;
        let name = route.tool.name.clone();
        if route.tool.input_schema.get("type") != Some(&Value::String("object".into())) {
            return Err(BuildError::InvalidSchema {
                tool: name,
                problem: "inputSchema must have \"type\": \"object\"".into(),
            });
        }
        let check_input = !schema::decoding_enforces(&route.tool.input_schema, route.input_decoded);
        // A schema every call is checked against is compiled now (and a bad
        // one refused); one that decoding enforces (derived from a Rust type)
        // only when a call that did not decode needs explaining.
        let compile = |s: &JsonObject| -> Result<LazyValidator, BuildError> {
            if on_first_use {
                return Ok(LazyValidator::deferred(s));
            }
            Validator::new(s)
                .map(LazyValidator::ready)
                .map_err(|problem| BuildError::InvalidSchema {
                    tool: name.clone(),
                    problem,
                })
        };
        let input = if check_input {
            compile(&route.tool.input_schema)?
        } else {
            LazyValidator::deferred(&route.tool.input_schema)
        };
        let output = match &route.tool.output_schema {
            Some(s) => Some(compile(s)?),
            None => None,
        };
        Ok(RegisteredTool {
            param_headers: tessera_proto::mirror::param_headers(&route.tool.input_schema).into(),
            tool: route.tool,
            requires: route.requires,
            scopes: route.scopes,
            task_start: route.task_start,
            input: Arc::new(input),
            check_input,
            output,
            handler: route.handler,
        })
    }
}

/// The tools of a server, in registration order (a deterministic order, so
/// clients and model prompt caches see a stable list).
pub(crate) struct ToolRegistry<S> {
    tools: Vec<Arc<RegisteredTool<S>>>,
    /// By name; hashed with foldhash (names are the server's own, and a
    /// call looks one up: SipHash cost more than the rest of the lookup).
    index: HashMap<String, usize, foldhash::fast::RandomState>,
    /// Whether the schemas of tools added from now on are compiled when a
    /// call first needs them ([`ServerBuilder::compile_schemas_on_first_use`](crate::ServerBuilder::compile_schemas_on_first_use)).
    pub(crate) compile_on_first_use: bool,
}

impl<S> Default for ToolRegistry<S> {
    fn default() -> Self {
        ToolRegistry {
            tools: Vec::new(),
            index: HashMap::default(),
            compile_on_first_use: false,
        }
    }
}

impl<S> ToolRegistry<S> {
    pub fn add(&mut self, route: ToolRoute<S>) -> Result<(), BuildError> {
        if self.index.contains_key(&route.tool.name) {
            return Err(BuildError::DuplicateTool(route.tool.name));
        }
        let t = RegisteredTool::new(route, self.compile_on_first_use)?;
        self.index.insert(t.tool.name.clone(), self.tools.len());
        self.tools.push(Arc::new(t));
        Ok(())
    }

    pub fn remove(&mut self, name: &str) -> bool {
        let Some(i) = self.index.remove(name) else {
            return false;
        };
        self.tools.remove(i);
        for (n, t) in self.tools.iter().enumerate().skip(i) {
            self.index.insert(t.tool.name.clone(), n);
        }
        true
    }

    pub fn get(&self, name: &str) -> Option<Arc<RegisteredTool<S>>> {
        self.index.get(name).map(|i| self.tools[*i].clone())
    }

    pub fn definitions(&self) -> Vec<Tool> {
        self.tools.iter().map(|t| t.tool.clone()).collect()
    }

    /// Whether some tool can run as a task.
    pub fn offers_tasks(&self) -> bool {
        self.tools
            .iter()
            .any(|t| t.task_support() != TaskSupport::Forbidden)
    }

    pub fn declare(&self, caps: &mut ServerCapabilities) {
        if !self.tools.is_empty() {
            caps.tools = Some(ToolsCapability {
                list_changed: Some(true),
                ..Default::default()
            });
        }
    }

    pub fn methods(&self) -> Vec<&'static str> {
        if self.tools.is_empty() {
            Vec::new()
        } else {
            vec![methods::TOOLS_LIST, methods::TOOLS_CALL]
        }
    }
}

impl<S: Send + Sync + 'static> Server<S> {
    /// Serves `tools/list`.
    pub(crate) fn list_tools(&self, r: &Request) -> ReplyResult {
        let ctx = RequestContext::from_request(r);
        let cursor = crate::pagination::cursor_of(r.params.as_ref())?;
        let mut all = self.read().tools.definitions();
        // `execution` (task support) exists in 2025-11-25 only.
        if ctx.era() == tessera_types::Era::Modern
            || ctx.protocol_version() < tessera_types::ProtocolVersion::V2025_11_25
        {
            for t in &mut all {
                t.execution = None;
            }
        }
        if self
            .inner
            .settings
            .draft07_before
            .is_some_and(|v| ctx.protocol_version() < v)
        {
            for t in &mut all {
                t.input_schema = crate::schema::to_draft07(&t.input_schema);
                if let Some(o) = &t.output_schema {
                    t.output_schema = Some(crate::schema::to_draft07(o));
                }
            }
        }
        // Extensions edit the whole list, before it is cut into pages.
        let mut listed = ListToolsResult {
            tools: all,
            ..ListToolsResult::default()
        };
        self.inner.extensions.on_tools_list(&ctx, &mut listed);
        let (page, next) =
            self.pager()
                .page(methods::TOOLS_LIST, &listed.tools, cursor.as_deref())?;
        listed.tools = page;
        listed.next_cursor = next;
        self.hint(&ctx, &mut listed);
        crate::extension::routes::write_result(&listed, r.context.result_shape.as_ref())
    }
}
