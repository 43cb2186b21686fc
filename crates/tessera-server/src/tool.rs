//! Tools: their definitions, checks and erased handlers.

use std::sync::{Arc, OnceLock};
use tessera_types::methods;

use serde_json::Value;
use tessera_proto::mirror::ParamHeader;
use tessera_runtime::{BoxFuture, ReplyResult, Request};
use tessera_types::{
    CallToolResult, ErrorObject, JsonObject, ListToolsResult, Tool, ToolAnnotations,
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
mod registry;

pub(crate) use call::ToolOutput;
pub(crate) use registry::ToolRegistry;

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
    ///
    /// The schemas the handler's types imply (its arguments', its result's)
    /// are derived when first needed: by [`ToolRoute::definition`], or when
    /// the route is registered (see
    /// [`ServerBuilder::compile_schemas_on_first_use`](crate::ServerBuilder::compile_schemas_on_first_use)
    /// for a server that derives them at its first `tools/list` or call).
    pub fn handler<H, M, S>(self, handler: H) -> ToolRoute<S>
    where
        H: ToolHandler<M, S>,
        S: Send + Sync + 'static,
    {
        let derive = Derive {
            input: (!self.input_schema_set).then_some(H::input_declaration as DeriveInput),
            output: (!self.output_schema_set && self.tool.output_schema.is_none())
                .then_some(H::output_schema as DeriveOutput),
        };
        ToolRoute {
            tool: self.tool,
            derive,
            derived: OnceLock::new(),
            requires: self.requires,
            scopes: self.scopes,
            task_start: self.task_start,
            handler: Arc::new(move |call| handler.call(call)),
        }
    }
}

/// Derives a tool's `inputSchema` from its handler's parameters, with
/// whether decoding the arguments enforces it
/// ([`ToolHandler::input_declaration`]).
type DeriveInput = fn() -> Option<(JsonObject, bool)>;
/// Derives a tool's `outputSchema` from its handler's result.
type DeriveOutput = fn() -> Option<JsonObject>;

/// Where a route's schemas come from when its handler's types imply them
/// (`None`: the builder's schema stands).
#[derive(Clone, Copy)]
struct Derive {
    input: Option<DeriveInput>,
    output: Option<DeriveOutput>,
}

/// A route's definition with its derived schemas.
struct Derived {
    tool: Tool,
    /// Whether the handler's arguments extractor refuses what breaks the
    /// schema it declared ([`ToolHandler::input_declaration`]).
    input_decoded: bool,
}

impl Derive {
    /// Fills `tool`'s schemas in (running schemars for the handler's types).
    fn apply(self, mut tool: Tool) -> Derived {
        let mut input_decoded = false;
        if let Some((schema, decoded)) = self.input.and_then(|f| f()) {
            tool.input_schema = schema;
            input_decoded = decoded;
        }
        if let Some(f) = self.output {
            tool.output_schema = f();
        }
        Derived {
            tool,
            input_decoded,
        }
    }
}

/// A tool ready to register: its definition and its handler.
pub struct ToolRoute<S> {
    /// The definition as built, without the schemas `derive` implies.
    pub(crate) tool: Tool,
    derive: Derive,
    /// `tool` with its derived schemas, once [`ToolRoute::definition`] asked.
    derived: OnceLock<Derived>,
    pub(crate) requires: Vec<String>,
    pub(crate) scopes: Vec<String>,
    pub(crate) task_start: TaskStart,
    pub(crate) handler: ErasedHandler<S>,
}

impl<S> std::fmt::Debug for ToolRoute<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolRoute")
            .field("tool", self.definition())
            .finish_non_exhaustive()
    }
}

impl<S> ToolRoute<S> {
    /// The tool's definition, with the schemas its handler's types imply
    /// (derived on the first call).
    pub fn definition(&self) -> &Tool {
        &self
            .derived
            .get_or_init(|| self.derive.apply(self.tool.clone()))
            .tool
    }

    /// Whether the schemas still have to be derived from the handler's types.
    pub(crate) fn derives_schemas(&self) -> bool {
        self.derived.get().is_none()
            && (self.derive.input.is_some() || self.derive.output.is_some())
    }

    /// The definition with its derived schemas, and whether decoding the
    /// arguments enforces the input schema.
    fn into_derived(self) -> (Derived, RouteRest<S>) {
        let rest = RouteRest {
            requires: self.requires,
            scopes: self.scopes,
            task_start: self.task_start,
            handler: self.handler,
        };
        let derived = match self.derived.into_inner() {
            Some(d) => d,
            None => self.derive.apply(self.tool),
        };
        (derived, rest)
    }
}

/// What a route holds besides its definition.
struct RouteRest<S> {
    requires: Vec<String>,
    scopes: Vec<String>,
    task_start: TaskStart,
    handler: ErasedHandler<S>,
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
    /// Checks a route (deriving its schemas) and compiles its schemas; with
    /// `on_first_use`, a schema is compiled when a call first needs it
    /// instead.
    pub(crate) fn new(route: ToolRoute<S>, on_first_use: bool) -> Result<Self, BuildError> {
        check_tool_name(&route.tool.name)?;
        let (derived, rest) = route.into_derived();
        let Derived {
            tool,
            input_decoded,
        } = derived;
        let name = tool.name.clone();
        if tool.input_schema.get("type") != Some(&Value::String("object".into())) {
            return Err(BuildError::InvalidSchema {
                tool: name,
                problem: "inputSchema must have \"type\": \"object\"".into(),
            });
        }
        let check_input = !schema::decoding_enforces(&tool.input_schema, input_decoded);
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
            compile(&tool.input_schema)?
        } else {
            LazyValidator::deferred(&tool.input_schema)
        };
        let output = match &tool.output_schema {
            Some(s) => Some(compile(s)?),
            None => None,
        };
        Ok(RegisteredTool {
            param_headers: tessera_proto::mirror::param_headers(&tool.input_schema).into(),
            tool,
            requires: rest.requires,
            scopes: rest.scopes,
            task_start: rest.task_start,
            input: Arc::new(input),
            check_input,
            output,
            handler: rest.handler,
        })
    }
}

impl<S: Send + Sync + 'static> Server<S> {
    /// Serves `tools/list`.
    pub(crate) fn list_tools(&self, r: &Request) -> ReplyResult {
        let ctx = RequestContext::from_request(r);
        let cursor = crate::pagination::cursor_of(r.params.as_ref())?;
        // A tool whose schemas, derived on first use, were refused fails
        // the list: the server's bug, which every listing reports.
        let mut all = self
            .read()
            .tools
            .definitions()
            .map_err(|e| ErrorObject::internal(format!("Internal error: {e}")))?;
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
