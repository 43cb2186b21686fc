//! [`ExtensionHost`]: what a server offers its extensions while serving.

use std::sync::{Arc, Weak};

use tessera_types::Tool;

use crate::hub::ListKind;
use crate::task::hub::TaskHub;

/// What a server offers its extensions while serving: change
/// announcements to the connected clients.
#[derive(Clone)]
pub struct ExtensionHost {
    pub(crate) notifier: Weak<dyn Notifier>,
}

impl std::fmt::Debug for ExtensionHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExtensionHost")
            .field("serving", &(self.notifier.strong_count() > 0))
            .finish()
    }
}

/// The server's side of an [`ExtensionHost`].
pub(crate) trait Notifier: Send + Sync {
    fn list_changed(&self, kind: ListKind);
    fn resource_updated(&self, uri: &str);
    /// Runs `f` on tool `name`'s definition where it is kept (no copy).
    fn with_tool(&self, name: &str, f: &mut dyn FnMut(&Tool));
    fn task_hub(&self) -> Option<Arc<TaskHub>>;
}

impl ExtensionHost {
    /// A host that is attached to no server (announcements go nowhere);
    /// for tests of an extension on its own.
    pub fn detached() -> Self {
        let none: Weak<dyn Notifier> = Weak::<Detached>::new();
        ExtensionHost { notifier: none }
    }

    /// Tells every client that asked that a list changed (legacy sessions
    /// get `notifications/*/list_changed`; 2026-07-28 listeners get it on
    /// their `subscriptions/listen` stream).
    pub fn list_changed(&self, kind: ListKind) {
        if let Some(n) = self.notifier.upgrade() {
            n.list_changed(kind);
        }
    }

    /// The server's tasks (for the tasks extension), while it is serving.
    pub(crate) fn task_hub(&self) -> Option<Arc<TaskHub>> {
        self.notifier.upgrade()?.task_hub()
    }

    /// The current definition of tool `name`, if the server has it.
    pub fn tool(&self, name: &str) -> Option<Tool> {
        let mut out = None;
        self.notifier
            .upgrade()?
            .with_tool(name, &mut |t| out = Some(t.clone()));
        out
    }

    /// Tells every client that subscribed to `uri` that it changed.
    pub fn resource_updated(&self, uri: &str) {
        if let Some(n) = self.notifier.upgrade() {
            n.resource_updated(uri);
        }
    }
}

struct Detached;

impl Notifier for Detached {
    fn list_changed(&self, _: ListKind) {}
    fn resource_updated(&self, _: &str) {}
    fn with_tool(&self, _: &str, _: &mut dyn FnMut(&Tool)) {}
    fn task_hub(&self) -> Option<Arc<TaskHub>> {
        None
    }
}
