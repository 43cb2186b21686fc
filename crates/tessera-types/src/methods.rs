//! The wire names of every MCP method and notification, as constants.
//!
//! The request and notification marker types (for example
//! [`CallToolRequest`](crate::tool::CallToolRequest)) carry these names as
//! their `METHOD`; code that matches on a method name uses the constants
//! here instead of string literals, so a misspelt name fails to compile:
//!
//! ```
//! use tessera_types::{CallToolRequest, RequestMethod, methods};
//!
//! assert_eq!(CallToolRequest::METHOD, methods::TOOLS_CALL);
//! let kind = match "tools/call" {
//!     methods::TOOLS_CALL | methods::PROMPTS_GET => "named",
//!     _ => "other",
//! };
//! assert_eq!(kind, "named");
//! ```

// Requests.
/// `completion/complete`.
pub const COMPLETION_COMPLETE: &str = "completion/complete";
/// `elicitation/create`.
pub const ELICITATION_CREATE: &str = "elicitation/create";
/// `initialize`.
pub const INITIALIZE: &str = "initialize";
/// `logging/setLevel`.
pub const LOGGING_SET_LEVEL: &str = "logging/setLevel";
/// `ping`.
pub const PING: &str = "ping";
/// `prompts/get`.
pub const PROMPTS_GET: &str = "prompts/get";
/// `prompts/list`.
pub const PROMPTS_LIST: &str = "prompts/list";
/// `resources/directory/read`.
pub const RESOURCES_DIRECTORY_READ: &str = "resources/directory/read";
/// `resources/list`.
pub const RESOURCES_LIST: &str = "resources/list";
/// `resources/read`.
pub const RESOURCES_READ: &str = "resources/read";
/// `resources/subscribe`.
pub const RESOURCES_SUBSCRIBE: &str = "resources/subscribe";
/// `resources/templates/list`.
pub const RESOURCES_TEMPLATES_LIST: &str = "resources/templates/list";
/// `resources/unsubscribe`.
pub const RESOURCES_UNSUBSCRIBE: &str = "resources/unsubscribe";
/// `roots/list`.
pub const ROOTS_LIST: &str = "roots/list";
/// `sampling/createMessage`.
pub const SAMPLING_CREATE_MESSAGE: &str = "sampling/createMessage";
/// `server/discover`.
pub const SERVER_DISCOVER: &str = "server/discover";
/// `skills/get`.
pub const SKILLS_GET: &str = "skills/get";
/// `skills/list`.
pub const SKILLS_LIST: &str = "skills/list";
/// `subscriptions/listen`.
pub const SUBSCRIPTIONS_LISTEN: &str = "subscriptions/listen";
/// `tasks/cancel`.
pub const TASKS_CANCEL: &str = "tasks/cancel";
/// `tasks/get`.
pub const TASKS_GET: &str = "tasks/get";
/// `tasks/list`.
pub const TASKS_LIST: &str = "tasks/list";
/// `tasks/result`.
pub const TASKS_RESULT: &str = "tasks/result";
/// `tasks/update`.
pub const TASKS_UPDATE: &str = "tasks/update";
/// `tools/call`.
pub const TOOLS_CALL: &str = "tools/call";
/// `tools/list`.
pub const TOOLS_LIST: &str = "tools/list";

// Notifications.
/// `notifications/cancelled`.
pub const NOTIFICATIONS_CANCELLED: &str = "notifications/cancelled";
/// `notifications/elicitation/complete`.
pub const NOTIFICATIONS_ELICITATION_COMPLETE: &str = "notifications/elicitation/complete";
/// `notifications/initialized`.
pub const NOTIFICATIONS_INITIALIZED: &str = "notifications/initialized";
/// `notifications/message`.
pub const NOTIFICATIONS_MESSAGE: &str = "notifications/message";
/// `notifications/progress`.
pub const NOTIFICATIONS_PROGRESS: &str = "notifications/progress";
/// `notifications/prompts/list_changed`.
pub const NOTIFICATIONS_PROMPTS_LIST_CHANGED: &str = "notifications/prompts/list_changed";
/// `notifications/resources/list_changed`.
pub const NOTIFICATIONS_RESOURCES_LIST_CHANGED: &str = "notifications/resources/list_changed";
/// `notifications/resources/updated`.
pub const NOTIFICATIONS_RESOURCES_UPDATED: &str = "notifications/resources/updated";
/// `notifications/roots/list_changed`.
pub const NOTIFICATIONS_ROOTS_LIST_CHANGED: &str = "notifications/roots/list_changed";
/// `notifications/subscriptions/acknowledged`.
pub const NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED: &str =
    "notifications/subscriptions/acknowledged";
/// `notifications/tasks`.
pub const NOTIFICATIONS_TASKS: &str = "notifications/tasks";
/// `notifications/tasks/status`.
pub const NOTIFICATIONS_TASKS_STATUS: &str = "notifications/tasks/status";
/// `notifications/tools/list_changed`.
pub const NOTIFICATIONS_TOOLS_LIST_CHANGED: &str = "notifications/tools/list_changed";
