//! [`MethodRouter`]: every request method a server answers, in one table.
//!
//! The core features (tools, resources, prompts, completion, listen and the
//! 2025-11-25 tasks) are routes keyed by their `tessera_types` request
//! markers, next to the routes extensions and the application add
//! ([`ExtensionRoutes`](crate::ExtensionRoutes)). A request costs one hash
//! lookup: the entry names the handler for the request's era and the
//! extensions that guard the method. The engine answers `initialize`,
//! `ping`, `logging/setLevel` and `server/discover` itself, below this
//! table, because they change the session rather than ask the server.

use std::collections::HashMap;
use std::sync::Arc;

use tessera_runtime::{BoxFuture, ReplyResult, Request};
use tessera_types::{Era, RequestMethod};

use crate::extension::ExtensionSet;
use crate::extension::routes::{Route, RouteFn};
use crate::server::{Server, done};

/// A core feature's method. A match rather than a function pointer, so
/// that the request is handed on without another move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Core {
    ListTools,
    CallTool,
    ListResources,
    ListResourceTemplates,
    ReadResource,
    Subscribe,
    Unsubscribe,
    ListPrompts,
    GetPrompt,
    Complete,
    Listen,
    LegacyTasks,
}

impl<S: Send + Sync + 'static> Server<S> {
    /// Serves a core method.
    #[inline]
    pub(crate) fn serve_core(&self, core: Core, r: Request) -> BoxFuture<'static, ReplyResult> {
        match core {
            Core::CallTool => self.call_tool::<tessera_proto::Reply>(r),
            Core::ListTools => done(self.list_tools(&r)),
            Core::ListResources => self.list_resources(r),
            Core::ListResourceTemplates => done(self.list_resource_templates(&r)),
            Core::ReadResource => self.read_resource(r),
            Core::Subscribe => done(
                self.resource_subscription(&r, true)
                    .map(tessera_proto::Reply::Object),
            ),
            Core::Unsubscribe => done(
                self.resource_subscription(&r, false)
                    .map(tessera_proto::Reply::Object),
            ),
            Core::ListPrompts => done(self.list_prompts(&r)),
            Core::GetPrompt => self.get_prompt(r),
            Core::Complete => self.handle_completion(r),
            Core::Listen => self.listen(r),
            Core::LegacyTasks => self.handle_tasks_legacy(r),
        }
    }
}

/// What answers one method in one era.
pub(crate) enum Target<'a> {
    /// A core feature.
    Core(Core),
    /// A typed route of an extension or of the application.
    Route(&'a Arc<RouteFn>),
}

/// One method's handlers and guards.
#[derive(Default)]
struct Entry {
    /// The core's handler for legacy sessions (`initialize` eras).
    legacy: Option<Core>,
    /// The core's handler for 2026-07-28 requests.
    modern: Option<Core>,
    /// A route added by an extension or the application; it answers its
    /// era (every era when it names none) before the core.
    route: Option<Route>,
    /// The extensions (indices into the set) whose guards see the request
    /// first.
    guards: Vec<usize>,
}

/// The routes of one server: what answers each method, per era.
pub(crate) struct MethodRouter {
    methods: HashMap<Box<str>, Entry>,
    /// `tools/call`'s entry, taken out of the map.
    tools_call: Option<Entry>,
}

/// A lookup's answer.
pub(crate) struct Found<'a> {
    /// The handler, or `None`: method not found.
    pub target: Option<Target<'a>>,
    /// The guarding extensions' indices.
    pub guards: &'a [usize],
}

impl MethodRouter {
    /// The core routes plus the extensions' and the application's routes and
    /// guards.
    ///
    /// An extension's route answers before the core in its era (the
    /// extension set already refused two extensions on one method). The
    /// application's routes add methods: one that the core or an extension
    /// serves is refused.
    /// The error names the method and the clash.
    pub fn new(
        extensions: &ExtensionSet,
        application: Vec<Route>,
    ) -> Result<Self, (String, &'static str)> {
        let mut router = MethodRouter {
            methods: HashMap::new(),
            tools_call: None,
        };
        router.core_routes();
        for (route, _) in &extensions.routes {
            router.entry(&route.method).route = Some(route.clone());
        }
        for route in application {
            if router.is_core(&route.method) {
                return Err((route.method, "the core serves it"));
            }
            if router.entry(&route.method).route.is_some() {
                return Err((
                    route.method,
                    "an extension serves it, or it is routed twice",
                ));
            }
            let method = route.method.clone();
            router.entry(&method).route = Some(route);
        }
        for (method, index) in &extensions.guards {
            router.entry(method).guards.push(*index);
        }
        router.tools_call = router.methods.remove(tessera_types::methods::TOOLS_CALL);
        Ok(router)
    }

    fn entry(&mut self, method: &str) -> &mut Entry {
        self.methods.entry(method.into()).or_default()
    }

    /// Serves `R` in every era.
    fn core<R: RequestMethod>(&mut self, f: Core) {
        let e = self.entry(R::METHOD);
        e.legacy = Some(f);
        e.modern = Some(f);
    }

    /// Serves `R` to one era only.
    fn core_in<R: RequestMethod>(&mut self, era: Era, f: Core) {
        let e = self.entry(R::METHOD);
        match era {
            Era::Legacy => e.legacy = Some(f),
            Era::Modern => e.modern = Some(f),
        }
    }

    fn core_routes(&mut self) {
        use tessera_types::tasks::legacy::{GetTaskPayloadRequest, ListTasksRequest};
        use tessera_types::{
            CallToolRequest, CancelTaskRequest, CompleteRequest, GetPromptRequest, GetTaskRequest,
            ListPromptsRequest, ListResourceTemplatesRequest, ListResourcesRequest,
            ListToolsRequest, ReadResourceRequest, SubscribeRequest, SubscriptionsListenRequest,
            UnsubscribeRequest, UpdateTaskRequest,
        };

        self.core::<ListToolsRequest>(Core::ListTools);
        self.core::<CallToolRequest>(Core::CallTool);
        self.core::<ListResourcesRequest>(Core::ListResources);
        self.core::<ListResourceTemplatesRequest>(Core::ListResourceTemplates);
        self.core::<ReadResourceRequest>(Core::ReadResource);
        self.core::<SubscribeRequest>(Core::Subscribe);
        self.core::<UnsubscribeRequest>(Core::Unsubscribe);
        self.core::<ListPromptsRequest>(Core::ListPrompts);
        self.core::<GetPromptRequest>(Core::GetPrompt);
        self.core::<CompleteRequest>(Core::Complete);
        self.core_in::<SubscriptionsListenRequest>(Era::Modern, Core::Listen);
        // 2025-11-25 tasks; in 2026-07-28 the tasks extension serves get,
        // update and cancel, and result and list are gone.
        self.core_in::<GetTaskRequest>(Era::Legacy, Core::LegacyTasks);
        self.core_in::<UpdateTaskRequest>(Era::Legacy, Core::LegacyTasks);
        self.core_in::<CancelTaskRequest>(Era::Legacy, Core::LegacyTasks);
        self.core_in::<GetTaskPayloadRequest>(Era::Legacy, Core::LegacyTasks);
        self.core_in::<ListTasksRequest>(Era::Legacy, Core::LegacyTasks);
    }

    /// What answers `method` in `era`.
    pub fn find(&self, method: &str, era: Era) -> Found<'_> {
        let Some(e) = self.entry_of(method) else {
            return Found {
                target: None,
                guards: &[],
            };
        };
        let route = e
            .route
            .as_ref()
            .filter(|r| r.era.is_none_or(|x| x == era))
            .map(|r| Target::Route(&r.handler));
        let core = match era {
            Era::Legacy => e.legacy,
            Era::Modern => e.modern,
        };
        Found {
            target: route.or(core.map(Target::Core)),
            guards: &e.guards,
        }
    }

    /// Whether the core serves `method` in some era.
    pub fn is_core(&self, method: &str) -> bool {
        self.entry_of(method)
            .is_some_and(|e| e.legacy.is_some() || e.modern.is_some())
    }

    /// The entry of `method`; the hot method skips hashing its name.
    fn entry_of(&self, method: &str) -> Option<&Entry> {
        if method == tessera_types::methods::TOOLS_CALL {
            if let Some(e) = &self.tools_call {
                return Some(e);
            }
        }
        self.methods.get(method)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn router() -> MethodRouter {
        MethodRouter::new(&ExtensionSet::default(), Vec::new()).expect("no conflicts")
    }

    #[test]
    fn core_methods_are_routed_by_their_markers_in_their_eras() {
        let r = router();
        for m in ["tools/list", "tools/call", "resources/read", "prompts/get"] {
            for era in [Era::Legacy, Era::Modern] {
                assert!(
                    matches!(r.find(m, era).target, Some(Target::Core(_))),
                    "{m}"
                );
            }
        }
        assert!(r.find("subscriptions/listen", Era::Legacy).target.is_none());
        assert!(r.find("subscriptions/listen", Era::Modern).target.is_some());
        assert!(r.find("tasks/result", Era::Legacy).target.is_some());
        assert!(r.find("tasks/result", Era::Modern).target.is_none());
        assert!(r.find("resources/unknown", Era::Legacy).target.is_none());
        assert!(r.is_core("completion/complete"));
        assert!(r.is_core("tools/call"));
        assert!(!r.is_core("ping"));
    }
}
