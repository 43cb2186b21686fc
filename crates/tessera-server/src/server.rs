//! [`Server`] and [`ServerBuilder`].

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use serde::Serialize;
use serde_json::Value;
use tessera_proto::{EngineConfig, ServerIdentity};
use tessera_runtime::{BoxFuture, ConnectionOptions, HandlerResult, Peer, Request, Service};
use tessera_types::{
    CallToolRequestParams, CallToolResult, ErrorObject, Implementation, JsonObject,
    ListToolsResult, ServerCapabilities, ToolsCapability,
};

use crate::context::RequestContext;
use crate::error::BuildError;
use crate::extract::ToolCall;
use crate::tool::{RegisteredTool, ToolRoute};

/// Builds a [`Server`].
pub struct ServerBuilder<S = ()> {
    info: Implementation,
    instructions: Option<String>,
    state: Arc<S>,
    tools: Vec<ToolRoute<S>>,
}

impl<S> std::fmt::Debug for ServerBuilder<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerBuilder")
            .field("info", &self.info)
            .field("tools", &self.tools.len())
            .finish_non_exhaustive()
    }
}

impl<S: Send + Sync + 'static> ServerBuilder<S> {
    /// Sets the server's `Implementation` info (name, version, title…).
    pub fn info(mut self, info: Implementation) -> Self {
        self.info = info;
        self
    }

    /// Sets the name and version.
    pub fn name_version(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.info.name = name.into();
        self.info.version = version.into();
        self
    }

    /// Instructions for the model on how to use this server.
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.instructions = Some(text.into());
        self
    }

    /// Registers a tool (see [`tool`](crate::tool())).
    pub fn tool(mut self, route: ToolRoute<S>) -> Self {
        self.tools.push(route);
        self
    }

    /// Checks every definition and builds the server.
    pub fn build(self) -> Result<Server<S>, BuildError> {
        let mut tools = Vec::with_capacity(self.tools.len());
        let mut index = HashMap::new();
        for route in self.tools {
            let name = route.tool.name.clone();
            if index.contains_key(&name) {
                return Err(BuildError::DuplicateTool(name));
            }
            index.insert(name, tools.len());
            tools.push(Arc::new(RegisteredTool::new(route)?));
        }
        Ok(Server {
            inner: Arc::new(Inner {
                info: self.info,
                instructions: self.instructions,
                state: self.state,
                registry: RwLock::new(Registry { tools, index }),
            }),
        })
    }
}

struct Registry<S> {
    tools: Vec<Arc<RegisteredTool<S>>>,
    index: HashMap<String, usize>,
}

struct Inner<S> {
    info: Implementation,
    instructions: Option<String>,
    state: Arc<S>,
    registry: RwLock<Registry<S>>,
}

/// An MCP server: what it offers and how it answers. Cheap to clone; serve it
/// on stdio with [`Server::serve_stdio`] or on any transport through
/// [`tessera_runtime::spawn`].
pub struct Server<S = ()> {
    inner: Arc<Inner<S>>,
}

impl<S> Clone for Server<S> {
    fn clone(&self) -> Self {
        Server {
            inner: self.inner.clone(),
        }
    }
}

impl<S> std::fmt::Debug for Server<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("info", &self.inner.info)
            .finish_non_exhaustive()
    }
}

impl Server<()> {
    /// Starts building a server without shared state.
    pub fn builder() -> ServerBuilder<()> {
        Server::with_state(())
    }
}

impl<S: Send + Sync + 'static> Server<S> {
    /// Starts building a server whose handlers can extract
    /// [`State<S>`](crate::State).
    pub fn with_state(state: S) -> ServerBuilder<S> {
        ServerBuilder {
            info: Implementation::new("tessera-server", env!("CARGO_PKG_VERSION")),
            instructions: None,
            state: Arc::new(state),
            tools: Vec::new(),
        }
    }

    /// The server's `Implementation` info.
    pub fn info(&self) -> &Implementation {
        &self.inner.info
    }

    /// The capabilities, derived from what is registered.
    pub fn capabilities(&self) -> ServerCapabilities {
        let reg = self.read();
        let mut caps = ServerCapabilities::default();
        if !reg.tools.is_empty() {
            caps.tools = Some(ToolsCapability::default());
        }
        caps
    }

    /// The engine configuration that serves this server (identity and capabilities).
    pub fn engine_config(&self) -> EngineConfig {
        EngineConfig::server(ServerIdentity {
            info: to_object(&self.inner.info),
            capabilities: to_object(&self.capabilities()),
            instructions: self.inner.instructions.clone(),
            discover_ttl: std::time::Duration::from_secs(300),
        })
    }

    /// Serves on stdin/stdout until stdin closes.
    pub async fn serve_stdio(self) -> std::io::Result<()> {
        let config = self.engine_config();
        let (_peer, task) =
            tessera_runtime::serve_stdio(config, self, ConnectionOptions::default());
        task.await.map_err(std::io::Error::other)?
    }

    /// Serves over any reader/writer pair of newline-delimited JSON-RPC.
    pub fn serve_io<R, W>(
        self,
        reader: R,
        writer: W,
    ) -> (Peer, tokio::task::JoinHandle<std::io::Result<()>>)
    where
        R: tokio::io::AsyncRead + Unpin + Send + 'static,
        W: tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let config = self.engine_config();
        tessera_runtime::spawn(config, reader, writer, self, ConnectionOptions::default())
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Registry<S>> {
        // A poisoned lock only means a panic elsewhere mid-update; the data is still usable.
        self.inner
            .registry
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn list_tools(&self) -> HandlerResult {
        let reg = self.read();
        let result = ListToolsResult::new(reg.tools.iter().map(|t| t.tool.clone()).collect());
        Ok(to_object(&result))
    }

    fn call_tool(&self, r: Request) -> BoxFuture<'static, HandlerResult> {
        let params: CallToolRequestParams = match tessera_types::decode_params(r.params.as_ref()) {
            Ok(p) => p,
            Err(e) => {
                return Box::pin(async move {
                    Err(ErrorObject::invalid_params(format!(
                        "Invalid params for tools/call: {e}"
                    )))
                });
            }
        };
        let tool = {
            let reg = self.read();
            reg.index.get(&params.name).map(|i| reg.tools[*i].clone())
        };
        let Some(tool) = tool else {
            let name = params.name;
            return Box::pin(async move {
                Err(ErrorObject::invalid_params(format!("Unknown tool: {name}")))
            });
        };
        let args = Value::Object(params.arguments.clone().unwrap_or_default());
        if let Err(problem) = tool.input.check(&args) {
            let name = params.name;
            return Box::pin(async move {
                Ok(to_object(&CallToolResult::error(format!(
                    "Invalid arguments for tool {name}: {problem}"
                ))))
            });
        }
        let call = ToolCall {
            arguments: params.arguments,
            context: RequestContext::from_request(&r),
            state: self.inner.state.clone(),
        };
        let fut = (tool.handler)(call);
        Box::pin(async move {
            let result = fut.await;
            if let (Some(v), false) = (&tool.output, result.is_error == Some(true)) {
                let structured = result.structured_content.clone().unwrap_or(Value::Null);
                if let Err(problem) = v.check(&structured) {
                    return Err(ErrorObject::internal(format!(
                        "Internal error: tool {} returned output that does not match its outputSchema: {problem}",
                        tool.tool.name
                    )));
                }
            }
            Ok(to_object(&result))
        })
    }
}

fn to_object<T: Serialize>(v: &T) -> JsonObject {
    match serde_json::to_value(v) {
        Ok(Value::Object(o)) => o,
        _ => JsonObject::new(),
    }
}

impl<S: Send + Sync + 'static> Service for Server<S> {
    fn methods(&self) -> Vec<String> {
        let mut m = Vec::new();
        if !self.read().tools.is_empty() {
            m.extend(["tools/list".to_owned(), "tools/call".to_owned()]);
        }
        m
    }

    fn handle_request(&self, request: Request) -> BoxFuture<'static, HandlerResult> {
        match request.method.as_str() {
            "tools/list" => {
                let r = self.list_tools();
                Box::pin(async move { r })
            }
            "tools/call" => self.call_tool(request),
            other => {
                let e = ErrorObject::method_not_found(other);
                Box::pin(async move { Err(e) })
            }
        }
    }
}
