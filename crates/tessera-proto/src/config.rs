//! How an engine is set up: its role, the versions it speaks, who it is.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde_json::value::RawValue;

use tessera_types::{ClientCapabilities, Implementation, ProtocolVersion, ServerCapabilities};

/// Which side of the conversation an engine plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// Serves tools, resources and prompts; answers `initialize` and `server/discover`.
    Server,
    /// Connects to a server; answers `ping` and the server's requests (roots, sampling, elicitation).
    Client,
}

/// What a server says about itself in `initialize` and `server/discover`.
#[derive(Debug, Clone, Default)]
pub struct ServerIdentity {
    /// `serverInfo` (name, version, optional title, icons…).
    pub info: Implementation,
    /// `capabilities`, as declared in 2025-11-25; the engine shapes them for
    /// each version ([`ServerCapabilities::for_version`]).
    pub capabilities: ServerCapabilities,
    /// Optional instructions for the model.
    pub instructions: Option<String>,
    /// `ttlMs` of the `server/discover` result (2026-07-28 cache hint).
    pub discover_ttl: Duration,
}

/// What a client says about itself in `initialize` and every modern request.
#[derive(Debug, Clone, Default)]
pub struct ClientIdentity {
    /// `clientInfo`. With an empty name, 2026-07-28 requests carry no
    /// `io.modelcontextprotocol/clientInfo`.
    pub info: Implementation,
    /// `capabilities`.
    pub capabilities: ClientCapabilities,
}

/// Timeouts for requests this engine sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// How long to wait for a response (restarted by each progress
    /// notification when [`RequestOptions::reset_on_progress`](crate::RequestOptions) is set).
    pub request: Option<Duration>,
    /// The hard limit, whatever progress arrives.
    pub maximum: Option<Duration>,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            request: Some(Duration::from_secs(60)),
            maximum: Some(Duration::from_secs(600)),
        }
    }
}

/// Engine configuration.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// Server or client.
    pub side: Side,
    /// The protocol versions this side accepts, any order.
    pub versions: Vec<ProtocolVersion>,
    /// The server's identity (server role).
    pub server: ServerIdentity,
    /// The client's identity (client role).
    pub client: ClientIdentity,
    /// Request methods the application serves beyond those the engine answers
    /// itself (`initialize`, `ping`, `server/discover`, `logging/setLevel`).
    /// A request for any other method gets `-32601`.
    pub methods: Vec<String>,
    /// Default timeouts for outgoing requests.
    pub timeouts: Timeouts,
    /// How long a client waits for an answer to its `server/discover` probe
    /// before it assumes a legacy server.
    pub probe_timeout: Duration,
    /// How many ids of cancelled or timed-out requests are remembered so that
    /// their late responses are dropped quietly.
    pub cancelled_memory: usize,
    /// How many frames that cannot be tied to a request (not JSON, not
    /// JSON-RPC, over the size limit) are answered with an error and a null
    /// id; past it they are dropped unanswered, so that a peer writing junk
    /// (a server logging to stdout) is not sent a flood it may never read.
    /// Default: 64 for a client, no limit for a server.
    pub max_unattributed_errors: u32,
    /// `server.info` as JSON text, written on first use.
    server_info_text: InfoText,
}

/// `serverInfo` as JSON text with the identity it was written from (it is
/// used only while `server.info` is still that). A clone starts empty.
#[derive(Default)]
struct InfoText(OnceLock<Option<(Implementation, Arc<RawValue>)>>);

impl Clone for InfoText {
    fn clone(&self) -> Self {
        InfoText::default()
    }
}

impl std::fmt::Debug for InfoText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("InfoText")
    }
}

impl EngineConfig {
    /// A server configuration speaking every known version.
    pub fn server(identity: ServerIdentity) -> Self {
        EngineConfig {
            side: Side::Server,
            versions: ProtocolVersion::ALL.to_vec(),
            server: identity,
            client: ClientIdentity::default(),
            methods: Vec::new(),
            timeouts: Timeouts::default(),
            probe_timeout: Duration::from_secs(5),
            cancelled_memory: 1024,
            // A server answers every bad frame (its client is waiting).
            max_unattributed_errors: u32::MAX,
            server_info_text: InfoText::default(),
        }
    }

    /// `server.info` as JSON text: written once and reused (every
    /// 2026-07-28 result carries it), as long as `server.info` is what it
    /// was written from. `None` when it is not (it changed since).
    pub(crate) fn server_info_text(&self) -> Option<&Arc<RawValue>> {
        let written = self.server_info_text.0.get_or_init(|| {
            serde_json::value::to_raw_value(&self.server.info)
                .ok()
                .map(|text| (self.server.info.clone(), Arc::from(text)))
        });
        match written {
            Some((info, text)) if *info == self.server.info => Some(text),
            _ => None,
        }
    }

    /// A client configuration speaking every known version.
    pub fn client(identity: ClientIdentity) -> Self {
        EngineConfig {
            side: Side::Client,
            client: identity,
            server: ServerIdentity::default(),
            // A server that writes junk (logs on stdout) is not sent a
            // flood of parse errors it may never read.
            max_unattributed_errors: 64,
            ..EngineConfig::server(ServerIdentity::default())
        }
    }

    /// Sets the application-served request methods.
    pub fn with_methods<I, S>(mut self, methods: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.methods = methods.into_iter().map(Into::into).collect();
        self
    }

    /// Restricts the accepted versions.
    pub fn with_versions(mut self, versions: impl IntoIterator<Item = ProtocolVersion>) -> Self {
        self.versions = versions.into_iter().collect();
        self
    }

    /// The newest accepted version of an era.
    pub fn latest(&self, era: tessera_types::Era) -> Option<ProtocolVersion> {
        self.versions
            .iter()
            .copied()
            .filter(|v| v.era() == era)
            .max()
    }

    /// Whether a version is accepted.
    pub fn supports(&self, v: ProtocolVersion) -> bool {
        self.versions.contains(&v)
    }

    /// Accepted versions as wire strings, newest first.
    pub fn version_strings(&self) -> Vec<String> {
        let mut v = self.versions.clone();
        v.sort();
        v.dedup();
        v.into_iter().rev().map(|v| v.as_str().to_owned()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_info_is_written_once_and_only_used_while_unchanged() {
        let mut config = EngineConfig::server(ServerIdentity {
            info: Implementation::new("s", "1"),
            ..ServerIdentity::default()
        });
        assert_eq!(
            config.server_info_text().map(|t| t.get()),
            Some(r#"{"name":"s","version":"1"}"#)
        );
        // Changed after it was written: the text is not used.
        config.server.info.version = "2".into();
        assert_eq!(config.server_info_text().map(|t| t.get()), None);
        // A clone writes its own.
        assert_eq!(
            config.clone().server_info_text().map(|t| t.get()),
            Some(r#"{"name":"s","version":"2"}"#)
        );
    }
}
