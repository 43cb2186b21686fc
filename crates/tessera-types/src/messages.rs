//! Requests and notifications decoded by method name: the schema unions
//! `ClientRequest`, `ServerRequest`, `ClientNotification` and
//! `ServerNotification`, across all versions.
//!
//! ```
//! use tessera_types::{ClientRequest, JsonObject, Params};
//!
//! let mut params = JsonObject::new();
//! params.insert("name".into(), "get_weather".into());
//! match ClientRequest::decode("tools/call", Some(&Params::from(params))).unwrap() {
//!     ClientRequest::CallTool(p) => assert_eq!(p.name, "get_weather"),
//!     other => panic!("unexpected {other:?}"),
//! }
//! ```

use std::fmt;

use crate::JsonObject;
use crate::method::{decode_params, encode_params};

/// Why a method and its params could not be decoded.
#[derive(Debug)]
#[non_exhaustive]
pub enum DecodeError {
    /// No such method (JSON-RPC `-32601`).
    UnknownMethod(String),
    /// The params do not fit the method (JSON-RPC `-32602`).
    InvalidParams(serde_json::Error),
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::UnknownMethod(m) => write!(f, "unknown method {m:?}"),
            DecodeError::InvalidParams(e) => write!(f, "invalid params: {e}"),
        }
    }
}

impl std::error::Error for DecodeError {}

macro_rules! message_union {
    (
        $(#[$attr:meta])*
        $name:ident: $kind:ident {
            $( $(#[$vattr:meta])* $variant:ident($marker:ty) ),+ $(,)?
        }
    ) => {
        $(#[$attr])*
        // Short-lived values decoded once per message: boxing the larger
        // params would only add allocations.
        #[allow(clippy::large_enum_variant)]
        #[derive(Debug, Clone, PartialEq)]
        pub enum $name {
            $( $(#[$vattr])* $variant(<$marker as $crate::method::$kind>::Params), )+
        }

        impl $name {
            /// Every method this union knows.
            pub const METHODS: &'static [&'static str] = &[
                $( <$marker as $crate::method::$kind>::METHOD, )+
            ];

            /// The method name.
            pub fn method(&self) -> &'static str {
                match self {
                    $( $name::$variant(_) => <$marker as $crate::method::$kind>::METHOD, )+
                }
            }

            /// Decodes a method name and its params.
            pub fn decode(method: &str, params: Option<&$crate::Params>) -> Result<Self, DecodeError> {
                $(
                    if method == <$marker as $crate::method::$kind>::METHOD {
                        return decode_params(params)
                            .map($name::$variant)
                            .map_err(DecodeError::InvalidParams);
                    }
                )+
                Err(DecodeError::UnknownMethod(method.to_owned()))
            }

            /// Encodes the params.
            pub fn encode_params(&self) -> Result<JsonObject, serde_json::Error> {
                match self {
                    $( $name::$variant(p) => encode_params(p), )+
                }
            }
        }
    };
}

message_union! {
    /// A request from client to server, any version.
    ClientRequest: RequestMethod {
        /// `initialize` (legacy).
        Initialize(crate::lifecycle::InitializeRequest),
        /// `ping` (legacy).
        Ping(crate::lifecycle::PingRequest),
        /// `server/discover` (2026-07-28).
        Discover(crate::discover::DiscoverRequest),
        /// `resources/list`.
        ListResources(crate::resource::ListResourcesRequest),
        /// `resources/templates/list`.
        ListResourceTemplates(crate::resource::ListResourceTemplatesRequest),
        /// `resources/read`.
        ReadResource(crate::resource::ReadResourceRequest),
        /// `resources/subscribe` (legacy).
        Subscribe(crate::resource::SubscribeRequest),
        /// `resources/unsubscribe` (legacy).
        Unsubscribe(crate::resource::UnsubscribeRequest),
        /// `subscriptions/listen` (2026-07-28).
        SubscriptionsListen(crate::subscriptions::SubscriptionsListenRequest),
        /// `prompts/list`.
        ListPrompts(crate::prompt::ListPromptsRequest),
        /// `prompts/get`.
        GetPrompt(crate::prompt::GetPromptRequest),
        /// `tools/list`.
        ListTools(crate::tool::ListToolsRequest),
        /// `tools/call`.
        CallTool(crate::tool::CallToolRequest),
        /// `logging/setLevel` (legacy).
        SetLevel(crate::logging::SetLevelRequest),
        /// `completion/complete`.
        Complete(crate::completion::CompleteRequest),
        /// `tasks/get` (2025-11-25 and Tasks extension).
        GetTask(crate::tasks::GetTaskRequest),
        /// `tasks/result` (2025-11-25).
        GetTaskPayload(crate::tasks::legacy::GetTaskPayloadRequest),
        /// `tasks/cancel` (2025-11-25 and Tasks extension).
        CancelTask(crate::tasks::CancelTaskRequest),
        /// `tasks/list` (2025-11-25).
        ListTasks(crate::tasks::legacy::ListTasksRequest),
        /// `tasks/update` (Tasks extension).
        UpdateTask(crate::tasks::UpdateTaskRequest),
    }
}

message_union! {
    /// A request from server to client (legacy versions; in 2026-07-28
    /// these travel as [`InputRequest`](crate::mrtr::InputRequest)s).
    ServerRequest: RequestMethod {
        /// `ping`.
        Ping(crate::lifecycle::PingRequest),
        /// `sampling/createMessage`.
        CreateMessage(crate::sampling::CreateMessageRequest),
        /// `roots/list`.
        ListRoots(crate::roots::ListRootsRequest),
        /// `elicitation/create` (since 2025-06-18).
        Elicit(crate::elicitation::ElicitRequest),
        /// `tasks/get` (2025-11-25).
        GetTask(crate::tasks::legacy::LegacyGetTaskRequest),
        /// `tasks/result` (2025-11-25).
        GetTaskPayload(crate::tasks::legacy::GetTaskPayloadRequest),
        /// `tasks/cancel` (2025-11-25).
        CancelTask(crate::tasks::legacy::LegacyCancelTaskRequest),
        /// `tasks/list` (2025-11-25).
        ListTasks(crate::tasks::legacy::ListTasksRequest),
    }
}

message_union! {
    /// A notification from client to server, any version.
    ClientNotification: NotificationMethod {
        /// `notifications/cancelled`.
        Cancelled(crate::cancel::CancelledNotification),
        /// `notifications/initialized` (legacy).
        Initialized(crate::lifecycle::InitializedNotification),
        /// `notifications/progress` (legacy).
        Progress(crate::progress::ProgressNotification),
        /// `notifications/roots/list_changed` (legacy).
        RootsListChanged(crate::roots::RootsListChangedNotification),
        /// `notifications/tasks/status` (2025-11-25).
        TaskStatus(crate::tasks::legacy::LegacyTaskStatusNotification),
    }
}

message_union! {
    /// A notification from server to client, any version.
    ServerNotification: NotificationMethod {
        /// `notifications/cancelled`.
        Cancelled(crate::cancel::CancelledNotification),
        /// `notifications/progress`.
        Progress(crate::progress::ProgressNotification),
        /// `notifications/message`.
        LoggingMessage(crate::logging::LoggingMessageNotification),
        /// `notifications/resources/list_changed`.
        ResourceListChanged(crate::resource::ResourceListChangedNotification),
        /// `notifications/resources/updated`.
        ResourceUpdated(crate::resource::ResourceUpdatedNotification),
        /// `notifications/prompts/list_changed`.
        PromptListChanged(crate::prompt::PromptListChangedNotification),
        /// `notifications/tools/list_changed`.
        ToolListChanged(crate::tool::ToolListChangedNotification),
        /// `notifications/elicitation/complete` (2025-11-25).
        ElicitationComplete(crate::elicitation::ElicitationCompleteNotification),
        /// `notifications/subscriptions/acknowledged` (2026-07-28).
        SubscriptionsAcknowledged(crate::subscriptions::SubscriptionsAcknowledgedNotification),
        /// `notifications/tasks/status` (2025-11-25).
        TaskStatus(crate::tasks::legacy::LegacyTaskStatusNotification),
        /// `notifications/tasks` (Tasks extension).
        Tasks(crate::tasks::TaskStatusNotification),
    }
}
