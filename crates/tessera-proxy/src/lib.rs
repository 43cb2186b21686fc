//! The gateway behind `tessera proxy`, for embedding: serve an MCP server
//! again over another transport and in both protocol eras, or put several
//! servers behind one endpoint.
//!
//! - [`Proxy`] fronts one upstream server ([`UpstreamSpec`]: a child
//!   process over stdio, or a Streamable HTTP URL). It is a
//!   [`tessera_http::ServiceFactory`], so [`tessera_http::McpHttp`] serves it
//!   over Streamable HTTP and the 2024-11-05 HTTP+SSE pair, and
//!   [`Proxy::serve_stdio`] serves it on stdio. Clients of every version
//!   (2024-11-05 … 2026-07-28) reach an upstream of any version: `_meta` is
//!   rewritten for the upstream's era, 2026-07-28 input rounds are run as
//!   ordinary requests for a legacy client, listen streams are served from
//!   a legacy upstream's change notifications, and what cannot be
//!   translated is refused with an error that says why.
//! - [`Aggregator`] puts several upstreams behind one endpoint, prefixing
//!   tool, prompt and resource names with the upstream's name
//!   (`NAME__tool`), with per-upstream timeouts, allow/deny lists for tools,
//!   and reconnection: a dead upstream's tools disappear and come back.
//!   Its lists are paginated: the upstreams' lists one after the other,
//!   [`Aggregator::set_page_size`] items a page. The only upstream may be
//!   shown under its own names instead (`"prefix": false`, [`Naming`]),
//!   for a gateway in front of one server.
//!
//! ```no_run
//! use tessera_proxy::{Proxy, UpstreamOptions, UpstreamSpec};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! // A remote server, offered on this process's stdio.
//! let upstream = UpstreamSpec::http("https://mcp.example.com/mcp", Default::default());
//! let proxy = Proxy::connect(upstream, UpstreamOptions::default()).await?;
//! proxy.serve_stdio().await?;
//! # Ok(()) }
//! ```

#![forbid(unsafe_code)]

mod acks;
mod aggregate;
mod apikey;
mod bridge;
mod caller;
mod caller_auth;
mod callers;
mod calls;
mod config;
mod credentials;
mod echoes;
mod error;
mod fanout;
mod forward;
mod gateway;
mod health;
mod hints;
mod hub;
mod listen;
mod member;
mod naming;
mod overrides;
mod pages;
mod policy;
mod ratelimit;
mod refusal;
mod resilience;
mod result_text;
mod retry_after;
mod route;
mod shapes;
mod upstream;

pub use aggregate::{Aggregator, AggregatorService, Reconfigured};
pub use apikey::{API_KEY_HEADER, ApiKeyAuth, ApiKeyLayer, CallerClaims};
pub use bridge::{Proxy, ProxyService};
pub use caller_auth::{CallerCredentials, MAX_CACHED, MAX_CACHED_BYTES};
pub use callers::{IDLE as CALLER_IDLE, MAX_CALLERS};
pub use config::{UpstreamConfig, parse_servers};
pub use error::ProxyError;
pub use gateway::{ApiKey, Gateway, MIN_API_KEY_BYTES, ProxyConfig, parse_config};
pub use health::{HEALTHZ_PATH, Health, HealthLayer, READYZ_PATH, Readiness};
pub use naming::{NAME_SEPARATOR, Naming, URI_SEPARATOR};
pub use overrides::{ToolOverride, ToolOverrides};
pub use policy::{Decision, Effect, ItemKind, Policy, Rule, Selector};
pub use ratelimit::{MAX_BUCKETS, RateLimit, RateLimits, SharedBuckets};
pub use resilience::{Breaker, DEFAULT_MAX_CONCURRENT};
pub use retry_after::{MAX_INSPECTED, RetryAfter, RetryAfterLayer};
pub use upstream::{DEFAULT_MAX_PROCESSES, TransportMaker, UpstreamOptions, UpstreamSpec};
