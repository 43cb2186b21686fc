//! The client's side of the lifecycle: the `server/discover` era probe, the
//! legacy `initialize` handshake, and version selection.

use std::sync::Arc;
use std::time::Instant;
use tessera_types::methods;

use serde_json::Value;
use tessera_types::{
    Era, ErrorCode, ErrorObject, Implementation, InitializeRequestParams, JsonObject,
    ProtocolVersion, ServerCapabilities,
};

use crate::engine::{Connect, ConnectMode, Engine, meta_keys as mk};
use crate::error::CallError;
use crate::event::{Connected, Event};
use crate::pending::{PendingKind, RequestOptions};

impl Engine {
    /// Client role: starts connecting. The outcome arrives as
    /// [`Event::Connected`] or [`Event::ConnectFailed`].
    ///
    /// In [`ConnectMode::Auto`] the client probes with `server/discover` at its
    /// newest modern version. A `DiscoverResult` means a modern server; an
    /// `UnsupportedProtocolVersion` error means a modern server that wants
    /// another version (picked from its list); anything else, or no answer within
    /// the probe timeout, means a legacy server, and the client falls back to
    /// `initialize`.
    pub fn connect(&mut self, now: Instant, mode: ConnectMode) {
        self.set_connect_mode(mode);
        if self.is_closed() {
            self.fail(CallError::Closed);
            return;
        }
        match mode {
            ConnectMode::Legacy(_) => self.start_initialize(now),
            ConnectMode::Modern(v) => self.start_probe(now, v, false),
            ConnectMode::Auto => match self.config.latest(Era::Modern) {
                Some(v) => self.start_probe(now, v, false),
                None => self.start_initialize(now),
            },
        }
    }

    fn start_probe(&mut self, now: Instant, version: ProtocolVersion, retried: bool) {
        self.connect = Connect::Probing { version, retried };
        let mut params = JsonObject::new();
        self.add_modern_meta(&mut params, version);
        let options = RequestOptions {
            timeout: Some(self.config.probe_timeout),
            max_timeout: Some(self.config.probe_timeout),
            ..RequestOptions::default()
        };
        // The engine is not closed here (connect is the first call), so this cannot fail.
        let _ = self.send_request_kind(
            now,
            methods::SERVER_DISCOVER,
            Some(tessera_types::Params::from(params)),
            options,
            PendingKind::Probe,
        );
    }

    pub(crate) fn start_initialize(&mut self, now: Instant) {
        self.start_initialize_with(now, None);
    }

    /// Sends `initialize`, asking for `preferred` (a legacy version the server
    /// listed and this client speaks) when known, else the newest legacy version.
    fn start_initialize_with(&mut self, now: Instant, preferred: Option<ProtocolVersion>) {
        let version = match self.connect_mode() {
            ConnectMode::Legacy(v) => Some(v),
            _ => preferred.or_else(|| self.config.latest(Era::Legacy)),
        };
        let Some(version) = version else {
            self.fail(CallError::Remote(ErrorObject::new(
                ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
                "the server is not a 2026-07-28 server and this client speaks no legacy version",
            )));
            return;
        };
        if matches!(self.connect_mode(), ConnectMode::Modern(_)) {
            self.fail(CallError::Remote(ErrorObject::new(
                ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
                "the server did not answer server/discover as a 2026-07-28 server",
            )));
            return;
        }
        self.connect = Connect::Initializing;
        let c = &self.config.client;
        let params = InitializeRequestParams::new(version, c.capabilities.clone(), c.info.clone());
        let params = match serde_json::to_value(&params) {
            Ok(Value::Object(o)) => o,
            _ => JsonObject::new(),
        };
        let _ = self.send_request_kind(
            now,
            methods::INITIALIZE,
            Some(tessera_types::Params::from(params)),
            RequestOptions::default(),
            PendingKind::Initialize,
        );
    }

    fn fail(&mut self, e: CallError) {
        self.connect = Connect::Failed;
        self.push_event(Event::ConnectFailed(e));
    }

    /// The newest version both sides speak, of the given era, from the peer's list.
    fn pick(&self, offered: &[Value], era: Era) -> Option<ProtocolVersion> {
        offered
            .iter()
            .filter_map(Value::as_str)
            .filter_map(ProtocolVersion::parse)
            .filter(|v| v.era() == era && self.config.supports(*v))
            .max()
    }

    pub(crate) fn on_probe_answer(
        &mut self,
        now: Instant,
        outcome: Result<JsonObject, ErrorObject>,
    ) {
        let Connect::Probing {
            version: _,
            retried,
        } = self.connect.clone()
        else {
            return;
        };
        match outcome {
            Ok(result) => {
                let Some(offered) = result
                    .get("supportedVersions")
                    .and_then(Value::as_array)
                    .cloned()
                else {
                    // Not a DiscoverResult: a legacy server that answered anyway.
                    self.start_initialize(now);
                    return;
                };
                if let Some(v) = self.pick(&offered, Era::Modern) {
                    self.connect = Connect::Connected {
                        era: Era::Modern,
                        version: v,
                    };
                    let server_info = result
                        .get("_meta")
                        .and_then(|m| m.get(mk::SERVER_INFO))
                        .and_then(Value::as_object)
                        .cloned()
                        .unwrap_or_default();
                    let caps = Arc::new(server_capabilities(&result));
                    self.session.peer_capabilities = caps.clone().into();
                    let server_info = self.note_server_info(server_info);
                    let instructions = result
                        .get("instructions")
                        .and_then(Value::as_str)
                        .map(str::to_owned);
                    self.push_event(Event::Connected(Connected {
                        era: Era::Modern,
                        version: v,
                        server_info,
                        server_capabilities: caps,
                        instructions,
                        result,
                    }));
                } else if let Some(v) = self.pick(&offered, Era::Legacy) {
                    self.start_initialize_with(now, Some(v));
                } else {
                    self.fail(no_common_version(&offered));
                }
            }
            Err(e) if e.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION.0 => {
                let offered = e
                    .data
                    .as_ref()
                    .and_then(|d| d.get("supported"))
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                let legacy = self.pick(&offered, Era::Legacy);
                match self.pick(&offered, Era::Modern) {
                    // Retry once with the newest version both list (it may be the
                    // same one: the server may have refused only that attempt).
                    Some(v) if !retried => self.start_probe(now, v, true),
                    _ if legacy.is_some() => self.start_initialize_with(now, legacy),
                    _ => self.fail(no_common_version(&offered)),
                }
            }
            // A client pinned to the modern era has nothing to fall back to: report
            // the probe's own error (a refused token, say) rather than a generic one.
            Err(mut e) if matches!(self.connect_mode(), ConnectMode::Modern(_)) => {
                e.message = format!("server/discover failed: {}", e.message);
                self.fail(CallError::Remote(e));
            }
            Err(_) => self.start_initialize(now),
        }
    }

    pub(crate) fn on_initialize_answer(
        &mut self,
        _now: Instant,
        outcome: Result<JsonObject, ErrorObject>,
    ) {
        let result = match outcome {
            Ok(r) => r,
            Err(e) => return self.fail(CallError::Remote(e)),
        };
        let chosen = result.get("protocolVersion").and_then(Value::as_str);
        let Some(version) = chosen
            .and_then(ProtocolVersion::parse)
            .filter(|v| v.era() == Era::Legacy && self.config.supports(*v))
        else {
            return self.fail(CallError::Remote(ErrorObject::new(
                ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
                format!(
                    "the server chose protocol version {}, which this client does not speak",
                    chosen.unwrap_or("(none)")
                ),
            )));
        };
        let caps = Arc::new(server_capabilities(&result));
        let server_info = result
            .get("serverInfo")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        self.session.version = Some(version);
        self.session.initialized = true;
        self.session.peer_capabilities = caps.clone().into();
        let server_info = self.note_server_info(server_info);
        self.connect = Connect::Connected {
            era: Era::Legacy,
            version,
        };
        self.transmit(
            tessera_types::JsonRpcMessage::notification(methods::NOTIFICATIONS_INITIALIZED, None),
            None,
        );
        let instructions = result
            .get("instructions")
            .and_then(Value::as_str)
            .map(str::to_owned);
        self.push_event(Event::Connected(Connected {
            era: Era::Legacy,
            version,
            server_info,
            server_capabilities: caps,
            instructions,
            result,
        }));
    }
}

impl Engine {
    /// Keeps the server's raw `serverInfo` for request contexts and hands
    /// back its typed form.
    fn note_server_info(&mut self, raw: JsonObject) -> Implementation {
        let info = Implementation::from_object(&raw);
        self.session.peer_info = Some(Arc::new(raw));
        info
    }
}

/// The `capabilities` of an `initialize` or `server/discover` result, every
/// member kept.
fn server_capabilities(result: &JsonObject) -> ServerCapabilities {
    result
        .get("capabilities")
        .and_then(Value::as_object)
        .map(ServerCapabilities::from_object)
        .unwrap_or_default()
}

fn no_common_version(offered: &[Value]) -> CallError {
    CallError::Remote(ErrorObject::new(
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
        format!(
            "no protocol version in common; the server supports {}",
            Value::Array(offered.to_vec())
        ),
    ))
}
