//! The tools of a server: registered routes, checked and compiled when they
//! are added or, for a server that compiles schemas on first use, when their
//! schemas are first needed.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use tessera_types::tool::TaskSupport;
use tessera_types::{ServerCapabilities, Tool, ToolsCapability, methods};

use super::{RegisteredTool, ToolRoute, check_tool_name};
use crate::error::BuildError;

/// One registered tool: checked and compiled, or still the route it was
/// added as until something needs its schemas.
struct Slot<S> {
    name: String,
    /// The declared task support, known without the schemas (`tools/list`
    /// is not needed to answer `initialize`).
    task_support: TaskSupport,
    /// The route, until [`Slot::tool`] first checks it.
    pending: Mutex<Option<ToolRoute<S>>>,
    /// The checked tool, or why its schemas are refused.
    ready: OnceLock<Result<Arc<RegisteredTool<S>>, BuildError>>,
}

impl<S> Slot<S> {
    /// A tool checked now.
    fn checked(tool: RegisteredTool<S>) -> Self {
        Slot {
            name: tool.tool.name.clone(),
            task_support: tool.task_support(),
            pending: Mutex::new(None),
            ready: OnceLock::from(Ok(Arc::new(tool))),
        }
    }

    /// A tool checked when first needed (a registry that compiles schemas
    /// on first use).
    fn pending(route: ToolRoute<S>) -> Self {
        Slot {
            name: route.tool.name.clone(),
            task_support: route
                .tool
                .execution
                .as_ref()
                .and_then(|e| e.task_support)
                .unwrap_or(TaskSupport::Forbidden),
            pending: Mutex::new(Some(route)),
            ready: OnceLock::new(),
        }
    }

    /// The checked tool: its schemas derived, checked and ready to compile
    /// (the first time, from the pending route).
    fn tool(&self) -> Result<Arc<RegisteredTool<S>>, BuildError> {
        self.ready
            .get_or_init(|| {
                let route = self
                    .pending
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .take();
                let checked = match route {
                    Some(route) => RegisteredTool::new(route, true).map(Arc::new),
                    // Only if deriving the schemas panicked on an earlier try.
                    None => Err(BuildError::InvalidSchema {
                        tool: self.name.clone(),
                        problem: "deriving the schemas failed".into(),
                    }),
                };
                if let Err(e) = &checked {
                    tracing::error!("{e}");
                }
                checked
            })
            .clone()
    }
}

/// The tools of a server, in registration order (a deterministic order, so
/// clients and model prompt caches see a stable list).
pub(crate) struct ToolRegistry<S> {
    tools: Vec<Arc<Slot<S>>>,
    /// By name; hashed with foldhash (names are the server's own, and a
    /// call looks one up: SipHash cost more than the rest of the lookup).
    index: HashMap<String, usize, foldhash::fast::RandomState>,
    /// Whether the schemas of tools added from now on are derived and
    /// compiled when first needed ([`ServerBuilder::compile_schemas_on_first_use`](crate::ServerBuilder::compile_schemas_on_first_use)).
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
    /// Registers a route. Its name is checked now; its schemas too, unless
    /// the registry compiles on first use and they are to be derived from
    /// the handler's types (a schema given on the builder is checked now).
    pub fn add(&mut self, route: ToolRoute<S>) -> Result<(), BuildError> {
        if self.index.contains_key(&route.tool.name) {
            return Err(BuildError::DuplicateTool(route.tool.name));
        }
        check_tool_name(&route.tool.name)?;
        let slot = if self.compile_on_first_use && route.derives_schemas() {
            Slot::pending(route)
        } else {
            Slot::checked(RegisteredTool::new(route, self.compile_on_first_use)?)
        };
        self.index.insert(slot.name.clone(), self.tools.len());
        self.tools.push(Arc::new(slot));
        Ok(())
    }

    pub fn remove(&mut self, name: &str) -> bool {
        let Some(i) = self.index.remove(name) else {
            return false;
        };
        self.tools.remove(i);
        for (n, t) in self.tools.iter().enumerate().skip(i) {
            self.index.insert(t.name.clone(), n);
        }
        true
    }

    /// Tool `name`, checked (`Err`: its schemas were refused when first
    /// needed); `None` if there is no such tool.
    pub fn get(&self, name: &str) -> Option<Result<Arc<RegisteredTool<S>>, BuildError>> {
        self.index.get(name).map(|i| self.tools[*i].tool())
    }

    /// Every tool's definition; the first tool whose schemas are refused
    /// fails the list.
    pub fn definitions(&self) -> Result<Vec<Tool>, BuildError> {
        self.tools
            .iter()
            .map(|t| t.tool().map(|t| t.tool.clone()))
            .collect()
    }

    /// Whether some tool can run as a task.
    pub fn offers_tasks(&self) -> bool {
        self.tools
            .iter()
            .any(|t| t.task_support != TaskSupport::Forbidden)
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
