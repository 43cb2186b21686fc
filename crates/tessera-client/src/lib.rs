//! The client side of Tessera, the Model Context Protocol for Rust.
//!
//! A [`Client`] connects to a server (a child process over stdio, any
//! reader/writer pair, or any [`Transport`](tessera_runtime::Transport)),
//! detects its era with the `server/discover` probe and falls back to the
//! `initialize` handshake for legacy servers. Then:
//!
//! - **Lists** follow pagination cursors (with loop guards):
//!   [`Client::list_tools`], [`Client::list_prompts`],
//!   [`Client::list_resources`], [`Client::list_resource_templates`].
//! - **Calls** — [`Client::call_tool`], [`Client::get_prompt`],
//!   [`Client::read_resource`] — run the 2026-07-28 multi round-trip loop by
//!   themselves: input requests are fulfilled through the same handlers that
//!   answer a legacy server's requests, and the request is retried with the
//!   answers and the server's `requestState` ([`mrtr`]). The `_once` forms let
//!   the caller drive rounds by hand.
//! - **Handlers** set on the [`ClientBuilder`] — roots, sampling (with the
//!   tool-use pairing rules enforced), form elicitation (answers completed
//!   with schema defaults and validated), URL elicitation consent (the
//!   library never opens a URL) — define the declared capabilities; requests
//!   for anything undeclared are refused unanswered.
//! - **Per call** ([`CallOptions`]): a timeout restarted by progress under a
//!   hard maximum, a progress callback, a 2026-07-28 log level. Dropping a
//!   call's future cancels the request.
//! - **Notifications** arrive as typed [`ClientEvent`]s, `_meta` included:
//!   all of them on [`Client::events`], those of one 2026-07-28 subscription
//!   on its [`Client::listen`] stream. A notification the crate does not
//!   model is [`ClientEvent::Other`], as sent.
//! - An optional **response cache** honours `ttlMs` and is invalidated by
//!   change notifications ([`cache`]).
//! - A child server that dies can be **reconnected** with backoff
//!   ([`Client::reconnect`], [`connect`]).
//!
//! ```
//! use std::collections::BTreeMap;
//! use tessera_client::{Client, FormRequest};
//! use tessera_server::{RequestContext, Server, tool};
//! use tessera_types::{ElicitRequestParams, ElicitResult, ElicitValue, ErrorObject, ProtocolVersion};
//!
//! // A server whose tool asks the user for their name.
//! async fn greet(ctx: RequestContext) -> Result<String, String> {
//!     let form: ElicitRequestParams = serde_json::from_value(serde_json::json!({
//!         "message": "What is your name?",
//!         "requestedSchema": {"type": "object", "properties": {
//!             "name": {"type": "string"},
//!             "greeting": {"type": "string", "default": "Hello"}
//!         }, "required": ["name"]}
//!     })).map_err(|e| e.to_string())?;
//!     let answer = ctx.elicit_with(form).await.map_err(|e| e.to_string())?;
//!     let v = serde_json::to_value(answer.content).map_err(|e| e.to_string())?;
//!     Ok(format!("{}, {}!", v["greeting"].as_str().unwrap_or("?"), v["name"].as_str().unwrap_or("?")))
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = Server::builder().tool(tool("greet").handler(greet)).build()?;
//! let (client_io, server_io) = tokio::io::duplex(1 << 16);
//! let (sr, sw) = tokio::io::split(server_io);
//! let _serving = server.serve_io(sr, sw);
//!
//! // The client answers the form; the omitted "greeting" gets its default.
//! let (cr, cw) = tokio::io::split(client_io);
//! let client = Client::builder("my-app", "0.1")
//!     .protocol_version(ProtocolVersion::V2026_07_28)
//!     .elicitation(|form: FormRequest| async move {
//!         println!("{}", form.message);
//!         let name = BTreeMap::from([("name".to_owned(), ElicitValue::String("Ada".into()))]);
//!         Ok::<_, ErrorObject>(ElicitResult::accept(name))
//!     })
//!     .connect_io(cr, cw)
//!     .await?;
//!
//! // One call: the client answers the server's input request and retries.
//! let result = client.call_tool("greet", serde_json::json!({})).await?;
//! assert_eq!(result.content[0].as_text(), Some("Hello, Ada!"));
//! client.close().await;
//! # Ok(()) }
//! ```

#![forbid(unsafe_code)]

pub mod apps;
mod builder;
pub mod cache;
mod client;
pub mod connect;
mod elicitation;
mod error;
mod events;
mod extension;
mod handler;
mod input;
mod listen;
mod members;
pub mod mrtr;
mod options;
mod pagination;
mod receiver;
mod requests;
pub mod roots;
mod sampling;
mod service;
pub mod skills;
pub mod task;
mod task_progress;

pub use builder::ClientBuilder;
pub use cache::CacheStats;
pub use client::Client;
pub use connect::{ChildConnector, Connector, Launch, Started, TransportConnector};
pub use error::ClientError;
pub use events::{ClientEvent, EventStream};
pub use extension::{ClientExtension, ClientRoutes};
pub use handler::{
    FormHandler, FormRequest, SamplingHandler, UrlConsent, UrlRequest, user_rejected,
};
pub use input::InputRequestKey;
pub use listen::{ListenEnd, ListenStream};
pub use options::{CallOptions, ProgressCallback, ReconnectPolicy};
pub use receiver::MAX_TASKS as MAX_RECEIVED_TASKS;
pub use skills::{LoadedSkill, SkillCache, SkillKey, SkillVerificationError, VerificationProblem};
pub use task::{TaskHandle, TaskOptions, TaskState, ToolCallOutcome};
pub use tessera_proto::ConnectMode;
pub use tessera_runtime::ChildCommand;
