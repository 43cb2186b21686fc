//! Model Context Protocol types for every released protocol version:
//! 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25 and 2026-07-28, plus the
//! Tasks extension (`io.modelcontextprotocol/tasks`).
//!
//! # One set of types for all versions
//!
//! This crate has a single, version-neutral type per protocol concept
//! (one [`Tool`], one [`CallToolResult`], one [`ServerCapabilities`]...),
//! not one module per version. Reasons:
//!
//! - **Peers speak several versions at once.** A server answers legacy
//!   clients after `initialize` and 2026-07-28 clients statelessly, often
//!   in the same process; a client may not know the version until
//!   `initialize` or `server/discover` returns. One type lets the
//!   application describe a tool or produce a result once.
//! - **The versions differ mostly by addition.** Newer versions add
//!   optional members (`title`, `icons`, `outputSchema`, `_meta`,
//!   `resultType`, `ttlMs`...), a few new methods and union members. Such
//!   members are `Option`s here, skipped when `None`, and each one's
//!   documentation says in which versions it exists ("Since 2025-06-18",
//!   "2025-11-25 only", "2026-07-28").
//! - **One API is simpler.** Users learn and convert one set of types; no
//!   generic version parameter spreads through their code.
//!
//! The price is that these types do not stop you from setting a member the
//! negotiated version lacks. Choosing what to emit for a version is the
//! job of the engine (`tessera-server`, `tessera-client`): for example it
//! sets `resultType`, `ttlMs` and `cacheScope` on 2026-07-28 results and
//! leaves them out for earlier versions. Reading is lenient: unknown
//! members are ignored except where the schema makes an object open, in
//! which case they are kept (`_meta`, JSON Schemas, capability settings).
//!
//! Where two versions are incompatible rather than additive, both shapes
//! exist: the 2025-11-25 experimental tasks live in [`tasks::legacy`],
//! the Tasks extension in [`tasks`].
//!
//! # Layout
//!
//! Modules are named by topic ([`content`], [`tool`], [`resource`],
//! [`prompt`], [`sampling`], [`elicitation`], ...). Every public item is
//! also re-exported at the crate root, except the [`tasks::legacy`] types
//! (those whose schema names the extension reuses are named `Legacy…`).
//!
//! Each request and notification of the schemas has a zero-sized marker
//! type named after its definition (e.g. [`CallToolRequest`]) implementing
//! [`RequestMethod`] or [`NotificationMethod`]: the wire method name plus the Rust
//! types of `params` and `result`. Parameter types are named after the
//! schema's `*Params` definitions (e.g. [`CallToolRequestParams`]).
//! [`ClientRequest`], [`ServerRequest`], [`ClientNotification`] and
//! [`ServerNotification`] decode any method by name.
//!
//! Rust names follow the schema definitions (CamelCase, members in
//! camelCase on the wire); `_meta` members are called `meta`. No async, no
//! I/O: this crate is data only.
//!
//! # Example
//!
//! A server decodes a `tools/call` request and answers it, adding the
//! members 2026-07-28 requires and leaving them out for older versions:
//!
//! ```
//! use serde_json::json;
//! use tessera_types::{
//!     CallToolResult, ClientRequest, JsonRpcMessage, ProtocolVersion, RequestMeta, ResultType,
//! };
//!
//! let wire = json!({
//!     "jsonrpc": "2.0", "id": 7, "method": "tools/call",
//!     "params": {
//!         "name": "get_weather",
//!         "arguments": {"city": "Paris"},
//!         "_meta": {
//!             "io.modelcontextprotocol/protocolVersion": "2026-07-28",
//!             "io.modelcontextprotocol/clientCapabilities": {}
//!         }
//!     }
//! });
//! let JsonRpcMessage::Request(request) = serde_json::from_value(wire).unwrap() else {
//!     panic!("not a request")
//! };
//! let ClientRequest::CallTool(params) =
//!     ClientRequest::decode(&request.method, request.params.as_ref()).unwrap()
//! else {
//!     panic!("not tools/call")
//! };
//! let meta = RequestMeta::from_meta(params.meta.as_ref()).unwrap();
//!
//! let city = params.arguments.as_ref().and_then(|a| a["city"].as_str()).unwrap_or("?");
//! let mut result = CallToolResult::text(format!("Sunny in {city}"));
//! if meta.version() == Some(ProtocolVersion::V2026_07_28) {
//!     result.result_type = Some(ResultType::Complete);
//! }
//! let reply = JsonRpcMessage::typed_result(request.id, &result).unwrap();
//! assert_eq!(
//!     serde_json::to_value(&reply).unwrap(),
//!     json!({"jsonrpc": "2.0", "id": 7, "result": {
//!         "resultType": "complete",
//!         "content": [{"type": "text", "text": "Sunny in Paris"}]
//!     }})
//! );
//! ```

mod macros;
mod number;
mod properties;

pub mod apps;
pub mod borrowed;
pub mod cache;
pub mod cancel;
pub mod capabilities;
pub mod completion;
pub mod content;
pub mod discover;
pub mod elicitation;
pub mod error;
pub mod extension;
pub mod json_scan;
pub mod jsonrpc;
pub mod lifecycle;
pub mod logging;
pub mod loose;
pub mod messages;
pub mod meta;
pub mod meta_edit;
pub mod method;
pub mod methods;
pub mod mrtr;
pub mod pagination;
pub mod params;
mod probe;
pub mod progress;
pub mod prompt;
pub mod received_meta;
pub mod resource;
pub mod result;
pub mod roots;
pub mod sampling;
pub mod skills;
pub mod subscriptions;
pub mod tasks;
pub mod tool;
pub mod version;
pub mod with_meta;

pub use apps::*;
pub use cache::*;
pub use cancel::*;
pub use capabilities::*;
pub use completion::*;
pub use content::*;
pub use discover::*;
pub use elicitation::*;
pub use error::*;
pub use extension::*;
pub use jsonrpc::*;
pub use lifecycle::*;
pub use logging::*;
pub use loose::{Loose, Present};
pub use messages::*;
pub use meta::{MetaObject, NotificationMeta, RequestMeta, ResultMeta};
pub use meta_edit::{EditedHead, MetaChanges, MetaEdit, NotObject, edit_meta_of};
pub use method::{
    NotificationMethod, NotificationParams, RequestMethod, RequestParams, decode_object_params,
    decode_params, encode_params,
};
pub use mrtr::*;
pub use pagination::*;
pub use params::Params;
pub use progress::*;
pub use prompt::*;
pub use received_meta::ReceivedMeta;
pub use resource::*;
pub use result::*;
pub use roots::*;
pub use sampling::*;
pub use skills::*;
pub use subscriptions::*;
pub use tasks::{
    CancelTaskRequest, CancelTaskResult, CreateTaskResult, DetailedTask, GetTaskRequest,
    GetTaskResult, TASKS_EXTENSION, Task, TaskIdParams, TaskStatus, TaskStatusNotification,
    TaskStatusNotificationParams, TasksExtensionCapability, UpdateTaskRequest,
    UpdateTaskRequestParams, UpdateTaskResult,
};
pub use tool::*;
pub use version::{Era, ProtocolVersion, UnknownVersion};
pub use with_meta::WithMeta;

/// A JSON object: the shape of every `params` and `result`.
pub type JsonObject = serde_json::Map<String, serde_json::Value>;
