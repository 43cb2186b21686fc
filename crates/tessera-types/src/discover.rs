//! `server/discover` (2026-07-28): versions, capabilities and identity of a
//! server, without a session.

use serde::{Deserialize, Serialize};

use crate::JsonObject;
use crate::cache::CacheScope;
use crate::capabilities::ServerCapabilities;
use crate::macros::requests;
use crate::method::RequestParams;
use crate::result::ResultType;
use crate::version::ProtocolVersion;

/// Result of `server/discover`. 2026-07-28.
///
/// The server's identity travels in `_meta` as
/// `io.modelcontextprotocol/serverInfo`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverResult {
    /// Every protocol version the server supports (strings: a client may
    /// meet versions this crate does not know).
    pub supported_versions: Vec<String>,
    /// The server's capabilities.
    pub capabilities: ServerCapabilities,
    /// How to use the server, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Reserved metadata (`_meta`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// The result type; required.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Cache lifetime hint in milliseconds; required.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Cache scope hint; required.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
}

impl DiscoverResult {
    /// A complete result listing `versions` and `capabilities`, with the
    /// caching hints the schema requires.
    pub fn new(
        versions: impl IntoIterator<Item = ProtocolVersion>,
        capabilities: ServerCapabilities,
        ttl_ms: u64,
        cache_scope: CacheScope,
    ) -> Self {
        DiscoverResult {
            supported_versions: versions
                .into_iter()
                .map(|v| v.as_str().to_owned())
                .collect(),
            capabilities,
            instructions: None,
            meta: None,
            result_type: Some(ResultType::Complete),
            ttl_ms: Some(ttl_ms),
            cache_scope: Some(cache_scope),
        }
    }

    /// The supported versions this crate knows.
    pub fn known_versions(&self) -> Vec<ProtocolVersion> {
        self.supported_versions
            .iter()
            .filter_map(|s| ProtocolVersion::parse(s))
            .collect()
    }
}

crate::result::impl_result_fields!(DiscoverResult);
crate::cache::impl_cacheable!(DiscoverResult);

requests! {
    /// `server/discover`. 2026-07-28.
    DiscoverRequest: crate::methods::SERVER_DISCOVER, RequestParams => DiscoverResult;
}
