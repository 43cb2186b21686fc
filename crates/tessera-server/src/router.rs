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

use tessera_runtime::{Handling, Request};
use tessera_types::{Era, RequestMethod};

use crate::extension::ExtensionSet;
use crate::extension::routes::{Route, RouteFn};
use crate::server::{Server, ready};

/// A core feature's handler.
pub(crate) type CoreFn<S> = fn(&Server<S>, Request) -> Handling;

/// A finished future for an answer written at once.
fn done(
    r: tessera_runtime::ReplyResult,
) -> tessera_runtime::BoxFuture<'static, tessera_runtime::ReplyResult> {
    Box::pin(std::future::ready(r))
}

/// What answers one method in one era.
pub(crate) enum Target<'a, S> {
    /// A core feature.
    Core(CoreFn<S>),
    /// A typed route of an extension or of the application.
    Route(&'a Arc<RouteFn>),
}

/// One method's handlers and guards.
struct Entry<S> {
    /// The core's handler for legacy sessions (`initialize` eras).
    legacy: Option<CoreFn<S>>,
    /// The core's handler for 2026-07-28 requests.
    modern: Option<CoreFn<S>>,
    /// A route added by an extension or the application; it answers its
    /// era (every era when it names none) before the core.
    route: Option<Route>,
    /// The extensions (indices into the set) whose guards see the request
    /// first.
    guards: Vec<usize>,
}

impl<S> Default for Entry<S> {
    fn default() -> Self {
        Entry {
            legacy: None,
            modern: None,
            route: None,
            guards: Vec::new(),
        }
    }
}

/// The routes of one server: what answers each method, per era.
pub(crate) struct MethodRouter<S> {
    methods: HashMap<Box<str>, Entry<S>>,
}

/// A lookup's answer.
pub(crate) struct Found<'a, S> {
    /// The handler, or `None`: method not found.
    pub target: Option<Target<'a, S>>,
    /// The guarding extensions' indices.
    pub guards: &'a [usize],
}

impl<S: Send + Sync + 'static> MethodRouter<S> {
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
        Ok(router)
    }

    fn entry(&mut self, method: &str) -> &mut Entry<S> {
        self.methods.entry(method.into()).or_default()
    }

    /// Serves `R` in every era.
    fn core<R: RequestMethod>(&mut self, f: CoreFn<S>) {
        let e = self.entry(R::METHOD);
        e.legacy = Some(f);
        e.modern = Some(f);
    }

    /// Serves `R` to one era only.
    fn core_in<R: RequestMethod>(&mut self, era: Era, f: CoreFn<S>) {
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

        self.core::<ListToolsRequest>(|s, r| Handling::Reply(done(s.list_tools(&r))));
        self.core::<CallToolRequest>(|s, r| {
            Handling::Reply(s.call_tool::<tessera_proto::Reply>(r))
        });
        self.core::<ListResourcesRequest>(|s, r| Handling::Reply(s.list_resources(r)));
        self.core::<ListResourceTemplatesRequest>(|s, r| {
            Handling::Reply(done(s.list_resource_templates(&r)))
        });
        self.core::<ReadResourceRequest>(|s, r| Handling::Object(s.read_resource(r)));
        self.core::<SubscribeRequest>(|s, r| {
            Handling::Object(ready(s.resource_subscription(&r, true)))
        });
        self.core::<UnsubscribeRequest>(|s, r| {
            Handling::Object(ready(s.resource_subscription(&r, false)))
        });
        self.core::<ListPromptsRequest>(|s, r| Handling::Reply(done(s.list_prompts(&r))));
        self.core::<GetPromptRequest>(|s, r| Handling::Object(s.get_prompt(r)));
        self.core::<CompleteRequest>(|s, r| Handling::Object(s.handle_completion(r)));
        self.core_in::<SubscriptionsListenRequest>(Era::Modern, |s, r| {
            Handling::Object(s.listen(r))
        });
        // 2025-11-25 tasks; in 2026-07-28 the tasks extension serves get,
        // update and cancel, and result and list are gone.
        let legacy_tasks: CoreFn<S> = |s, r| Handling::Object(s.handle_tasks_legacy(r));
        self.core_in::<GetTaskRequest>(Era::Legacy, legacy_tasks);
        self.core_in::<UpdateTaskRequest>(Era::Legacy, legacy_tasks);
        self.core_in::<CancelTaskRequest>(Era::Legacy, legacy_tasks);
        self.core_in::<GetTaskPayloadRequest>(Era::Legacy, legacy_tasks);
        self.core_in::<ListTasksRequest>(Era::Legacy, legacy_tasks);
    }

    /// What answers `method` in `era`.
    pub fn find(&self, method: &str, era: Era) -> Found<'_, S> {
        let Some(e) = self.methods.get(method) else {
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
        self.methods
            .get(method)
            .is_some_and(|e| e.legacy.is_some() || e.modern.is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn router() -> MethodRouter<()> {
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
        assert!(!r.is_core("ping"));
    }
}
