//! Every definition of every schema has a Rust counterpart (or a reasoned
//! place on the short omission list), and the table names no definition
//! that exists nowhere.

mod spec;

use std::any::type_name;
use std::collections::BTreeSet;

use spec::{EXT_TASKS, SOURCES, definitions};
use tessera_types::*;

/// Which schema sources an entry applies to.
#[derive(Clone, Copy)]
enum Src {
    /// Every source defining the name.
    All,
    /// Only these sources.
    Only(&'static [&'static str]),
}

impl Src {
    fn covers(self, source: &str) -> bool {
        match self {
            Src::All => true,
            Src::Only(list) => list.contains(&source),
        }
    }
}

struct Entry {
    def: &'static str,
    src: Src,
    /// The Rust type (or marker type) standing for the definition. Taking
    /// it from `type_name` proves at compile time that the type exists.
    rust: &'static str,
}

const LEGACY_TASKS: Src = Src::Only(&["2025-11-25"]);
const EXT: Src = Src::Only(&[EXT_TASKS]);
const UNTIL_2025_06_18: Src = Src::Only(&["2024-11-05", "2025-03-26", "2025-06-18"]);
const SINCE_2025_11_25: Src = Src::Only(&["2025-11-25", "2026-07-28", EXT_TASKS]);

macro_rules! table {
    ( $( $def:literal $( [$src:expr] )? => $ty:ty ),+ $(,)? ) => {
        vec![ $( Entry { def: $def, src: table!(@src $($src)?), rust: type_name::<$ty>() } ),+ ]
    };
    (@src) => { Src::All };
    (@src $src:expr) => { $src };
}

/// Definition name → Rust type.
fn mapping() -> Vec<Entry> {
    table! {
        // JSON-RPC envelope and primitives.
        "JSONRPCMessage" => JsonRpcMessage,
        "JSONRPCRequest" => JsonRpcRequest,
        "JSONRPCNotification" => JsonRpcNotification,
        "JSONRPCResultResponse" => JsonRpcResultResponse,
        "JSONRPCErrorResponse" => JsonRpcErrorResponse,
        // Before 2025-11-25 `JSONRPCResponse` is the success case and
        // `JSONRPCError` the error case; since then `JSONRPCResponse` is the union.
        "JSONRPCResponse" [UNTIL_2025_06_18] => JsonRpcResultResponse,
        "JSONRPCResponse" [SINCE_2025_11_25] => JsonRpcResponse,
        "JSONRPCError" => JsonRpcErrorResponse,
        "JSONRPCBatchRequest" => JsonRpcBatch,
        "JSONRPCBatchResponse" => JsonRpcBatch,
        // The generic `Request`/`Notification` bases are the envelope types;
        // `Result`/`EmptyResult` the open generic result.
        "Request" => JsonRpcRequest,
        "Notification" => JsonRpcNotification,
        "Result" => EmptyResult,
        "EmptyResult" => EmptyResult,
        "RequestId" => RequestId,
        "ProgressToken" => ProgressToken,
        "Cursor" => Cursor,
        "Error" => ErrorObject,
        "JSONValue" => serde_json::Value,
        "JSONObject" => JsonObject,
        "JSONArray" => Vec<serde_json::Value>,
        "ResultType" => ResultType,
        // Bases and mixins.
        "BaseMetadata" => BaseMetadata,
        "Icons" => Icons,
        "Icon" => Icon,
        "Annotated" => Annotations,
        "Annotations" => Annotations,
        "RequestParams" => RequestParams,
        "NotificationParams" => NotificationParams,
        "PaginatedRequest" => PaginatedRequestParams,
        "PaginatedRequestParams" => PaginatedRequestParams,
        "PaginatedResult" => PaginatedResult,
        "CacheableResult" => CacheableResult,
        "MetaObject" => MetaObject,
        "RequestMetaObject" => RequestMeta,
        "ResultMetaObject" => ResultMeta,
        "NotificationMetaObject" => NotificationMeta,
        "SubscriptionsListenResultMetaObject" => ResultMeta,
        // Lifecycle.
        "Implementation" => Implementation,
        "ClientCapabilities" => ClientCapabilities,
        "ServerCapabilities" => ServerCapabilities,
        "InitializeRequest" => InitializeRequest,
        "InitializeRequestParams" => InitializeRequestParams,
        "InitializeResult" => InitializeResult,
        "InitializedNotification" => InitializedNotification,
        "PingRequest" => PingRequest,
        "DiscoverRequest" => DiscoverRequest,
        "DiscoverResult" => DiscoverResult,
        // Message unions.
        "ClientRequest" => ClientRequest,
        "ServerRequest" => ServerRequest,
        "ClientNotification" => ClientNotification,
        "ServerNotification" => ServerNotification,
        // Content.
        "Role" => Role,
        "TextContent" => TextContent,
        "ImageContent" => ImageContent,
        "AudioContent" => AudioContent,
        "ResourceLink" => ResourceLink,
        "EmbeddedResource" => EmbeddedResource,
        "ToolUseContent" => ToolUseContent,
        "ToolResultContent" => ToolResultContent,
        "ContentBlock" => ContentBlock,
        "SamplingMessageContentBlock" => SamplingMessageContentBlock,
        // Resources.
        "Resource" => Resource,
        "ResourceTemplate" => ResourceTemplate,
        "ResourceContents" => ResourceContents,
        "TextResourceContents" => TextResourceContents,
        "BlobResourceContents" => BlobResourceContents,
        "ListResourcesRequest" => ListResourcesRequest,
        "ListResourcesResult" => ListResourcesResult,
        "ListResourceTemplatesRequest" => ListResourceTemplatesRequest,
        "ListResourceTemplatesResult" => ListResourceTemplatesResult,
        "ReadResourceRequest" => ReadResourceRequest,
        "ReadResourceRequestParams" => ReadResourceRequestParams,
        "ReadResourceResult" => ReadResourceResult,
        "ResourceRequestParams" => ResourceRequestParams,
        "SubscribeRequest" => SubscribeRequest,
        "SubscribeRequestParams" => SubscribeRequestParams,
        "UnsubscribeRequest" => UnsubscribeRequest,
        "UnsubscribeRequestParams" => UnsubscribeRequestParams,
        "ResourceListChangedNotification" => ResourceListChangedNotification,
        "ResourceUpdatedNotification" => ResourceUpdatedNotification,
        "ResourceUpdatedNotificationParams" => ResourceUpdatedNotificationParams,
        // Prompts.
        "Prompt" => Prompt,
        "PromptArgument" => PromptArgument,
        "PromptMessage" => PromptMessage,
        "ListPromptsRequest" => ListPromptsRequest,
        "ListPromptsResult" => ListPromptsResult,
        "GetPromptRequest" => GetPromptRequest,
        "GetPromptRequestParams" => GetPromptRequestParams,
        "GetPromptResult" => GetPromptResult,
        "PromptListChangedNotification" => PromptListChangedNotification,
        // Tools.
        "Tool" => Tool,
        "ToolAnnotations" => ToolAnnotations,
        "ToolExecution" => ToolExecution,
        "ListToolsRequest" => ListToolsRequest,
        "ListToolsResult" => ListToolsResult,
        "CallToolRequest" => CallToolRequest,
        "CallToolRequestParams" => CallToolRequestParams,
        "CallToolResult" => CallToolResult,
        "ToolListChangedNotification" => ToolListChangedNotification,
        // Completion.
        "CompleteRequest" => CompleteRequest,
        "CompleteRequestParams" => CompleteRequestParams,
        "CompleteResult" => CompleteResult,
        "PromptReference" => PromptReference,
        "ResourceReference" => ResourceReference,
        "ResourceTemplateReference" => ResourceTemplateReference,
        // Logging.
        "LoggingLevel" => LoggingLevel,
        "SetLevelRequest" => SetLevelRequest,
        "SetLevelRequestParams" => SetLevelRequestParams,
        "LoggingMessageNotification" => LoggingMessageNotification,
        "LoggingMessageNotificationParams" => LoggingMessageNotificationParams,
        // Progress and cancellation.
        "ProgressNotification" => ProgressNotification,
        "ProgressNotificationParams" => ProgressNotificationParams,
        "CancelledNotification" => CancelledNotification,
        "CancelledNotificationParams" => CancelledNotificationParams,
        // Sampling.
        "CreateMessageRequest" => CreateMessageRequest,
        "CreateMessageRequestParams" => CreateMessageRequestParams,
        "CreateMessageResult" => CreateMessageResult,
        "SamplingMessage" => SamplingMessage,
        "ModelPreferences" => ModelPreferences,
        "ModelHint" => ModelHint,
        "ToolChoice" => ToolChoice,
        // Roots.
        "Root" => Root,
        "ListRootsRequest" => ListRootsRequest,
        "ListRootsResult" => ListRootsResult,
        "RootsListChangedNotification" => RootsListChangedNotification,
        // Elicitation.
        "ElicitRequest" => ElicitRequest,
        "ElicitRequestParams" => ElicitRequestParams,
        "ElicitRequestFormParams" => ElicitRequestFormParams,
        "ElicitRequestURLParams" => ElicitRequestURLParams,
        "ElicitResult" => ElicitResult,
        "ElicitationCompleteNotification" => ElicitationCompleteNotification,
        "PrimitiveSchemaDefinition" => PrimitiveSchemaDefinition,
        "StringSchema" => StringSchema,
        "NumberSchema" => NumberSchema,
        "BooleanSchema" => BooleanSchema,
        "EnumSchema" => EnumSchema,
        "SingleSelectEnumSchema" => SingleSelectEnumSchema,
        "MultiSelectEnumSchema" => MultiSelectEnumSchema,
        "UntitledSingleSelectEnumSchema" => UntitledSingleSelectEnumSchema,
        "TitledSingleSelectEnumSchema" => TitledSingleSelectEnumSchema,
        "UntitledMultiSelectEnumSchema" => UntitledMultiSelectEnumSchema,
        "TitledMultiSelectEnumSchema" => TitledMultiSelectEnumSchema,
        "LegacyTitledEnumSchema" => LegacyTitledEnumSchema,
        // Multi round-trip requests.
        "InputRequest" => InputRequest,
        "InputRequests" => InputRequests,
        "InputResponse" => InputResponse,
        "InputResponses" => InputResponses,
        "InputRequiredResult" => InputRequiredResult,
        "InputResponseRequestParams" => InputResponseRequestParams,
        // Subscriptions.
        "SubscriptionFilter" => SubscriptionFilter,
        "SubscriptionsListenRequest" => SubscriptionsListenRequest,
        "SubscriptionsListenRequestParams" => SubscriptionsListenRequestParams,
        "SubscriptionsListenResult" => SubscriptionsListenResult,
        "SubscriptionsAcknowledgedNotification" => SubscriptionsAcknowledgedNotification,
        "SubscriptionsAcknowledgedNotificationParams" => SubscriptionsAcknowledgedNotificationParams,
        // 2026-07-28 full responses: the envelope; the typed result is the
        // marker's `Request::Result`, or `MrtrResult<_>` where the response
        // admits an `InputRequiredResult`.
        "CallToolResultResponse" => JsonRpcResultResponse,
        "CompleteResultResponse" => JsonRpcResultResponse,
        "DiscoverResultResponse" => JsonRpcResultResponse,
        "GetPromptResultResponse" => JsonRpcResultResponse,
        "ListPromptsResultResponse" => JsonRpcResultResponse,
        "ListResourceTemplatesResultResponse" => JsonRpcResultResponse,
        "ListResourcesResultResponse" => JsonRpcResultResponse,
        "ListToolsResultResponse" => JsonRpcResultResponse,
        "ReadResourceResultResponse" => JsonRpcResultResponse,
        "SubscriptionsListenResultResponse" => JsonRpcResultResponse,
        // Errors: marker types fixing code and `data`.
        "ParseError" => ParseError,
        "InvalidRequestError" => InvalidRequestError,
        "MethodNotFoundError" => MethodNotFoundError,
        "InvalidParamsError" => InvalidParamsError,
        "InternalError" => InternalError,
        "HeaderMismatchError" => HeaderMismatchError,
        "MissingRequiredClientCapabilityError" => MissingRequiredClientCapabilityError,
        "UnsupportedProtocolVersionError" => UnsupportedProtocolVersionError,
        "URLElicitationRequiredError" => URLElicitationRequiredError,
        // Tasks: the same names mean different shapes in 2025-11-25 and in
        // the Tasks extension.
        "TaskStatus" => TaskStatus,
        "Task" [LEGACY_TASKS] => tasks::legacy::LegacyTask,
        "Task" [EXT] => tasks::Task,
        "TaskMetadata" => tasks::legacy::TaskMetadata,
        "RelatedTaskMetadata" => tasks::legacy::RelatedTaskMetadata,
        "TaskAugmentedRequestParams" => tasks::legacy::TaskAugmentedRequestParams,
        "CreateTaskResult" [LEGACY_TASKS] => tasks::legacy::LegacyCreateTaskResult,
        "CreateTaskResult" [EXT] => tasks::CreateTaskResult,
        "GetTaskRequest" [LEGACY_TASKS] => tasks::legacy::LegacyGetTaskRequest,
        "GetTaskRequest" [EXT] => tasks::GetTaskRequest,
        "GetTaskResult" [LEGACY_TASKS] => tasks::legacy::LegacyGetTaskResult,
        "GetTaskResult" [EXT] => tasks::GetTaskResult,
        "CancelTaskRequest" [LEGACY_TASKS] => tasks::legacy::LegacyCancelTaskRequest,
        "CancelTaskRequest" [EXT] => tasks::CancelTaskRequest,
        "CancelTaskResult" [LEGACY_TASKS] => tasks::legacy::LegacyCancelTaskResult,
        "CancelTaskResult" [EXT] => tasks::CancelTaskResult,
        "TaskStatusNotification" [LEGACY_TASKS] => tasks::legacy::LegacyTaskStatusNotification,
        "TaskStatusNotification" [EXT] => tasks::TaskStatusNotification,
        "TaskStatusNotificationParams" [LEGACY_TASKS] => tasks::legacy::LegacyTaskStatusNotificationParams,
        "TaskStatusNotificationParams" [EXT] => tasks::TaskStatusNotificationParams,
        "GetTaskPayloadRequest" => tasks::legacy::GetTaskPayloadRequest,
        "GetTaskPayloadResult" => tasks::legacy::GetTaskPayloadResult,
        "ListTasksRequest" => tasks::legacy::ListTasksRequest,
        "ListTasksResult" => tasks::legacy::ListTasksResult,
        "UpdateTaskRequest" => tasks::UpdateTaskRequest,
        "UpdateTaskResult" => tasks::UpdateTaskResult,
        "DetailedTask" => DetailedTask,
        // The status-specific task shapes are `DetailedTask` with the
        // matching `status` and payload member.
        "WorkingTask" => DetailedTask,
        "InputRequiredTask" => DetailedTask,
        "CompletedTask" => DetailedTask,
        "FailedTask" => DetailedTask,
        "CancelledTask" => DetailedTask,
        "TasksExtensionCapability" => TasksExtensionCapability,
        // The extension's additions to `subscriptions/listen` filters.
        "TaskSubscriptionNotifications" => SubscriptionFilter,
        "TaskSubscriptionAcknowledgedNotifications" => SubscriptionFilter,
    }
}

/// Definitions deliberately without a Rust type, with the reason.
const OMITTED: &[(&str, &str)] = &[
    (
        "ClientResult",
        "union of every client result, told apart only by the request it answers: \
         the concrete type is the request marker's `Request::Result`",
    ),
    (
        "ServerResult",
        "union of every server result, told apart only by the request it answers: \
         the concrete type is the request marker's `Request::Result`",
    ),
];

#[test]
fn every_definition_has_a_rust_counterpart() {
    let table = mapping();
    let omitted: BTreeSet<&str> = OMITTED.iter().map(|(d, _)| *d).collect();
    let mut missing = Vec::new();
    let mut total = 0;
    for source in SOURCES {
        for def in definitions(source).keys() {
            total += 1;
            let mapped = table.iter().any(|e| e.def == def && e.src.covers(source));
            if !mapped && !omitted.contains(def.as_str()) {
                missing.push(format!("{source}: {def}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "{} definitions have no Rust counterpart (add them to the table in \
         tests/schema_coverage.rs, or to OMITTED with a reason):\n  {}",
        missing.len(),
        missing.join("\n  ")
    );
    assert!(total > 600, "suspiciously few definitions: {total}");
}

#[test]
fn table_has_no_stale_entries() {
    let table = mapping();
    let stale: Vec<String> = table
        .iter()
        .filter(|e| {
            !SOURCES
                .iter()
                .any(|s| e.src.covers(s) && definitions(s).contains_key(e.def))
        })
        .map(|e| format!("{} (→ {})", e.def, e.rust))
        .collect();
    assert!(
        stale.is_empty(),
        "table entries naming no definition of their sources:\n  {}",
        stale.join("\n  ")
    );
    let stale_omissions: Vec<&str> = OMITTED
        .iter()
        .map(|(d, _)| *d)
        .filter(|d| !SOURCES.iter().any(|s| definitions(s).contains_key(*d)))
        .collect();
    assert!(
        stale_omissions.is_empty(),
        "stale omissions: {stale_omissions:?}"
    );
}

#[test]
fn omissions_are_not_also_mapped_and_have_reasons() {
    let table = mapping();
    for (def, reason) in OMITTED {
        assert!(
            !reason.trim().is_empty(),
            "{def}: omission without a reason"
        );
        assert!(
            !table.iter().any(|e| e.def == *def),
            "{def} is both mapped and omitted"
        );
    }
}

/// Marker type → method, for every definition with a `method` const.
fn markers() -> Vec<(&'static str, Src, &'static str)> {
    macro_rules! m {
        ($( $name:literal $([$src:expr])? => $marker:ty : $tr:ident ),+ $(,)?) => {
            vec![ $( ($name, m!(@src $($src)?), <$marker as $tr>::METHOD) ),+ ]
        };
        (@src) => { Src::All };
        (@src $src:expr) => { $src };
    }
    m! {
        "InitializeRequest" => InitializeRequest: RequestMethod,
        "PingRequest" => PingRequest: RequestMethod,
        "DiscoverRequest" => DiscoverRequest: RequestMethod,
        "ListResourcesRequest" => ListResourcesRequest: RequestMethod,
        "ListResourceTemplatesRequest" => ListResourceTemplatesRequest: RequestMethod,
        "ReadResourceRequest" => ReadResourceRequest: RequestMethod,
        "SubscribeRequest" => SubscribeRequest: RequestMethod,
        "UnsubscribeRequest" => UnsubscribeRequest: RequestMethod,
        "SubscriptionsListenRequest" => SubscriptionsListenRequest: RequestMethod,
        "ListPromptsRequest" => ListPromptsRequest: RequestMethod,
        "GetPromptRequest" => GetPromptRequest: RequestMethod,
        "ListToolsRequest" => ListToolsRequest: RequestMethod,
        "CallToolRequest" => CallToolRequest: RequestMethod,
        "SetLevelRequest" => SetLevelRequest: RequestMethod,
        "CompleteRequest" => CompleteRequest: RequestMethod,
        "CreateMessageRequest" => CreateMessageRequest: RequestMethod,
        "ListRootsRequest" => ListRootsRequest: RequestMethod,
        "ElicitRequest" => ElicitRequest: RequestMethod,
        "GetTaskRequest" [LEGACY_TASKS] => tasks::legacy::LegacyGetTaskRequest: RequestMethod,
        "GetTaskRequest" [EXT] => tasks::GetTaskRequest: RequestMethod,
        "CancelTaskRequest" [LEGACY_TASKS] => tasks::legacy::LegacyCancelTaskRequest: RequestMethod,
        "CancelTaskRequest" [EXT] => tasks::CancelTaskRequest: RequestMethod,
        "GetTaskPayloadRequest" => tasks::legacy::GetTaskPayloadRequest: RequestMethod,
        "ListTasksRequest" => tasks::legacy::ListTasksRequest: RequestMethod,
        "UpdateTaskRequest" => tasks::UpdateTaskRequest: RequestMethod,
        "InitializedNotification" => InitializedNotification: NotificationMethod,
        "CancelledNotification" => CancelledNotification: NotificationMethod,
        // In 2026-07-28 `ClientNotification` is not a union but the
        // cancellation notification itself.
        "ClientNotification" => CancelledNotification: NotificationMethod,
        "ProgressNotification" => ProgressNotification: NotificationMethod,
        "LoggingMessageNotification" => LoggingMessageNotification: NotificationMethod,
        "ResourceListChangedNotification" => ResourceListChangedNotification: NotificationMethod,
        "ResourceUpdatedNotification" => ResourceUpdatedNotification: NotificationMethod,
        "PromptListChangedNotification" => PromptListChangedNotification: NotificationMethod,
        "ToolListChangedNotification" => ToolListChangedNotification: NotificationMethod,
        "RootsListChangedNotification" => RootsListChangedNotification: NotificationMethod,
        "ElicitationCompleteNotification" => ElicitationCompleteNotification: NotificationMethod,
        "SubscriptionsAcknowledgedNotification" => SubscriptionsAcknowledgedNotification: NotificationMethod,
        "TaskStatusNotification" [LEGACY_TASKS] => tasks::legacy::LegacyTaskStatusNotification: NotificationMethod,
        "TaskStatusNotification" [EXT] => tasks::TaskStatusNotification: NotificationMethod,
    }
}

#[test]
fn markers_carry_the_schema_method() {
    let markers = markers();
    let mut problems = Vec::new();
    for source in SOURCES {
        for (def, body) in definitions(source) {
            for method in method_consts(body) {
                match markers
                    .iter()
                    .find(|(d, src, _)| *d == def && src.covers(source))
                {
                    Some((_, _, m)) if *m == method => {}
                    Some((_, _, m)) => problems.push(format!(
                        "{source}: {def} has method {method}, its marker says {m}"
                    )),
                    None => problems.push(format!("{source}: {def} ({method}) has no marker")),
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));

    // Every method of every marker is decodable through the message unions.
    let known: BTreeSet<&str> = ClientRequest::METHODS
        .iter()
        .chain(ServerRequest::METHODS)
        .chain(ClientNotification::METHODS)
        .chain(ServerNotification::METHODS)
        .copied()
        .collect();
    for (def, _, m) in &markers {
        assert!(known.contains(m), "{def}: {m} is in no message union");
    }
}

/// The `const` values of `properties.method`, also inside `allOf` parts.
fn method_consts(def: &serde_json::Value) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(m) = def
        .pointer("/properties/method/const")
        .and_then(|v| v.as_str())
    {
        out.push(m.to_owned());
    }
    if let Some(parts) = def.get("allOf").and_then(|v| v.as_array()) {
        for p in parts {
            out.extend(method_consts(p));
        }
    }
    out
}
