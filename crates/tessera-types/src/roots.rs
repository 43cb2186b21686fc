//! Roots: the directories and files a client exposes to a server.
//! Deprecated in 2026-07-28.

use serde::{Deserialize, Serialize};

use crate::JsonObject;
use crate::macros::{notifications, requests};
use crate::method::{NotificationParams, RequestParams};

/// A root directory or file.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Root {
    /// The root's URI (`file://` in current versions).
    pub uri: String,
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Reserved metadata (`_meta`). Since 2025-06-18.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl Root {
    /// A root at `uri`.
    pub fn new(uri: impl Into<String>) -> Self {
        Root {
            uri: uri.into(),
            ..Root::default()
        }
    }

    /// Sets the name.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}

/// Result of `roots/list`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ListRootsResult {
    /// Reserved metadata (`_meta`). Not defined in 2026-07-28, where the
    /// result is embedded in `inputResponses`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// The roots.
    pub roots: Vec<Root>,
}

requests! {
    /// `roots/list`: server to client in legacy versions; an input request
    /// in 2026-07-28.
    ListRootsRequest: crate::methods::ROOTS_LIST, RequestParams => ListRootsResult;
}

notifications! {
    /// `notifications/roots/list_changed`. 2024-11-05 through 2025-11-25.
    RootsListChangedNotification: crate::methods::NOTIFICATIONS_ROOTS_LIST_CHANGED, NotificationParams;
}
