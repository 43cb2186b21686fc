//! [`ExtensionSet`]: a server's extensions, with their routes and guards
//! indexed by method.

use std::sync::Arc;

use tessera_types::{ListToolsResult, ServerCapabilities};

use super::ServerExtension;
use super::routes::{ExtensionRoutes, NotifyFn, Route};
use crate::context::RequestContext;

/// The extensions of a server, with the method index.
#[derive(Clone, Default)]
pub(crate) struct ExtensionSet {
    pub list: Vec<Arc<dyn ServerExtension>>,
    /// Request routes, with the index of their extension in `list`.
    pub routes: Vec<(Route, usize)>,
    /// Notification method → handler.
    pub notifications: Vec<(String, Arc<NotifyFn>)>,
    /// Guarded method → index in `list`.
    pub guards: Vec<(String, usize)>,
}

impl ExtensionSet {
    /// Adds an extension; a second extension with the same identifier or a
    /// method another extension serves is refused.
    pub fn add(&mut self, ext: Arc<dyn ServerExtension>) -> Result<(), String> {
        let id = ext.id().to_owned();
        if id.is_empty() {
            return Err("an extension identifier must not be empty".into());
        }
        if self.list.iter().any(|e| e.id() == id) {
            return Err(format!("extension {id} is registered twice"));
        }
        let index = self.list.len();
        let mut routes = ExtensionRoutes::default();
        ext.routes(&mut routes);
        for (i, r) in routes.requests.iter().enumerate() {
            if let Some((_, other)) = self.routes.iter().find(|(o, _)| o.method == r.method) {
                return Err(format!(
                    "extensions {id} and {} both serve {}",
                    self.list[*other].id(),
                    r.method
                ));
            }
            if routes.requests[..i].iter().any(|o| o.method == r.method) {
                return Err(format!("extension {id} routes {} twice", r.method));
            }
        }
        self.routes
            .extend(routes.requests.into_iter().map(|r| (r, index)));
        self.notifications.extend(
            routes
                .notifications
                .into_iter()
                .map(|n| (n.method, n.handler)),
        );
        self.guards
            .extend(ext.guarded_methods().into_iter().map(|m| (m, index)));
        self.list.push(ext);
        Ok(())
    }

    pub fn declare(&self, caps: &mut ServerCapabilities) {
        for e in &self.list {
            caps.extensions
                .get_or_insert_with(Default::default)
                .insert(e.id().to_owned(), e.settings().into_object());
        }
        for e in &self.list {
            e.declare(caps);
        }
    }

    pub fn notification_takers(&self, method: &str) -> Vec<Arc<NotifyFn>> {
        self.notifications
            .iter()
            .filter(|(m, _)| m == method)
            .map(|(_, h)| h.clone())
            .collect()
    }

    /// Lets every extension edit a `tools/list` answer.
    pub fn on_tools_list(&self, context: &RequestContext, result: &mut ListToolsResult) {
        for e in &self.list {
            e.on_tools_list(context, result);
        }
    }
}
