//! Incoming requests: era detection, the legacy lifecycle, the modern
//! per-request checks, and the methods the engine answers itself.

use std::sync::Arc;
use std::time::Instant;
use tessera_types::methods;

use serde_json::Value;
use tessera_types::{
    CacheScope, ClientCapabilities, DiscoverResult, Era, ErrorCode, ErrorObject, InitializeResult,
    JsonObject, Params, ProtocolVersion, ReceivedMeta, RequestId,
};

use crate::config::Side;
use crate::decode;
use crate::engine::{Engine, Inflight, meta_keys as mk};
use crate::event::{Event, IncomingRequest, RequestInfo};
use crate::peer::{PeerCapabilities, PeerInfo};
use crate::raw::ResultShape;
use crate::session::level_rank;

/// Methods that exist only in the legacy era and are refused in a modern request.
const LEGACY_ONLY: [&str; 5] = [
    methods::INITIALIZE,
    methods::PING,
    methods::LOGGING_SET_LEVEL,
    methods::RESOURCES_SUBSCRIBE,
    methods::RESOURCES_UNSUBSCRIBE,
];

/// Methods that exist only in the modern era.
const MODERN_ONLY: [&str; 2] = [methods::SERVER_DISCOVER, methods::SUBSCRIPTIONS_LISTEN];

fn not_in_version(method: &str, v: ProtocolVersion) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!(
            "Method not found: {} is not part of protocol version {v}",
            tessera_types::excerpt(method)
        ),
    )
}

impl Engine {
    pub(crate) fn on_request(
        &mut self,
        _now: Instant,
        id: RequestId,
        method: String,
        params: Option<Params>,
        batch: Option<u64>,
    ) {
        if self.inflight.contains_key(&id) {
            self.answer(
                Some(id.clone()),
                Err(ErrorObject::invalid_request(format!(
                    "Invalid Request: id {} is already used by a request in progress",
                    tessera_types::excerpt(&id.to_string())
                ))),
                batch,
            );
            return;
        }
        // `_meta` is read once, on its own, and stays text; the rest of the
        // params is not read.
        let meta = decode::params_meta(params.as_ref());
        let request = Incoming {
            id,
            method,
            params,
            meta,
        };
        match self.config.side {
            Side::Client => self.on_request_as_client(request, batch),
            Side::Server => self.on_request_as_server(request, batch),
        }
    }

    fn on_request_as_client(&mut self, mut r: Incoming, batch: Option<u64>) {
        let Incoming { id, method, .. } = &r;
        let (id, method) = (id.clone(), method.clone());
        if method == methods::PING {
            self.answer(Some(id), Ok(JsonObject::new()), batch);
            return;
        }
        if !self.config.methods.contains(&method) {
            self.answer(Some(id), Err(ErrorObject::method_not_found(&method)), batch);
            return;
        }
        let (era, version) = self
            .connection()
            .unwrap_or((Era::Legacy, ProtocolVersion::LATEST_LEGACY));
        let progress_token = match progress_token(r.meta.as_ref()) {
            Ok(t) => t,
            Err(e) => return self.answer(Some(id), Err(e), batch),
        };
        let context = RequestInfo {
            era,
            version,
            progress_token,
            peer_capabilities: self.session.peer_capabilities.clone(),
            peer_info: self.session.peer_info.clone().map(PeerInfo::from),
            meta: r.meta.take(),
            log_level: None,
            result_shape: None,
        };
        self.start(r, context, batch);
    }

    fn on_request_as_server(&mut self, r: Incoming, batch: Option<u64>) {
        let id = r.id.clone();
        if let Some(v) = r
            .meta
            .as_ref()
            .and_then(|m| m.str_member(mk::PROTOCOL_VERSION))
        {
            let Ok(requested) = v else {
                let e = ErrorObject::invalid_params(format!(
                    "_meta {} must be a string",
                    mk::PROTOCOL_VERSION
                ));
                self.answer(Some(id), Err(e), batch);
                return;
            };
            match ProtocolVersion::parse(&requested).filter(|v| self.config.supports(*v)) {
                None => {
                    let e = self.unsupported_version(&requested);
                    self.answer(Some(id), Err(e), batch);
                    return;
                }
                Some(v) if v.era() == Era::Modern => {
                    self.serve_modern(r, v, batch);
                    return;
                }
                // A legacy version in `_meta`: served by the session below.
                Some(_) => {}
            }
        }
        self.serve_legacy(r, batch);
    }

    /// The `-32022` error for a version this server does not speak.
    pub fn unsupported_version(&self, requested: &str) -> ErrorObject {
        ErrorObject::new(
            ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
            format!("Unsupported protocol version: {requested}"),
        )
        .with_data(
            serde_json::to_value(tessera_types::UnsupportedProtocolVersionData {
                supported: self.config.version_strings(),
                requested: requested.to_owned(),
            })
            .unwrap_or_default(),
        )
    }

    fn serve_modern(&mut self, mut r: Incoming, version: ProtocolVersion, batch: Option<u64>) {
        let id = r.id.clone();
        let method = r.method.as_str();
        let meta = r.meta.take().filter(|m| {
            m.member_text(mk::CLIENT_CAPABILITIES)
                .is_some_and(|t| t.starts_with('{'))
        });
        let Some(meta) = meta else {
            let e = ErrorObject::invalid_params(format!(
                "Invalid params: _meta {} is required (an object) on every {version} request",
                mk::CLIENT_CAPABILITIES
            ));
            self.answer(Some(id), Err(e), batch);
            return;
        };
        let info = PeerInfo::from_request_meta(&meta);
        let log_level = match meta.str_member(mk::LOG_LEVEL) {
            None => None,
            Some(Ok(l)) if level_rank(&l).is_some() => Some(l.into_owned()),
            Some(other) => {
                let other = match other {
                    Ok(l) => Value::String(l.into_owned()),
                    Err(v) => v,
                };
                let e = ErrorObject::invalid_params(format!(
                    "Invalid params: _meta {} must be a logging level, got {other}",
                    mk::LOG_LEVEL
                ));
                self.answer(Some(id), Err(e), batch);
                return;
            }
        };
        if method == methods::SERVER_DISCOVER {
            let r = self.discover_result();
            self.answer(Some(id), Ok(r), batch);
            return;
        }
        if LEGACY_ONLY.contains(&method) {
            self.answer(Some(id), Err(not_in_version(method, version)), batch);
            return;
        }
        if !self.config.methods.iter().any(|m| m == method) {
            self.answer(Some(id), Err(ErrorObject::method_not_found(method)), batch);
            return;
        }
        let progress_token = match progress_token(Some(&meta)) {
            Ok(t) => t,
            Err(e) => return self.answer(Some(id), Err(e), batch),
        };
        let context = RequestInfo {
            era: Era::Modern,
            version,
            progress_token,
            // Read where they are, in the shared `_meta`; typed on first use.
            peer_capabilities: PeerCapabilities::from_request_meta(meta.clone()),
            peer_info: info,
            meta: Some(meta),
            log_level,
            result_shape: if batch.is_some() {
                None
            } else {
                self.result_shape()
            },
        };
        self.start(r, context, batch);
    }

    /// What this engine adds to a 2026-07-28 result as a [`ResultShape`]
    /// (`None` when the server's identity cannot be written as it is now).
    pub(crate) fn result_shape(&self) -> Option<ResultShape> {
        if !self.adds_server_info() {
            return Some(ResultShape::new(None));
        }
        self.config
            .server_info_text()
            .map(|text| ResultShape::new(Some(text.clone())))
    }

    /// The `server/discover` result, shaped for 2026-07-28.
    pub fn discover_result(&self) -> JsonObject {
        let s = &self.config.server;
        let mut result = DiscoverResult::new(
            [],
            s.capabilities.for_version(ProtocolVersion::V2026_07_28),
            u64::try_from(s.discover_ttl.as_millis()).unwrap_or(u64::MAX),
            CacheScope::Public,
        );
        result.supported_versions = self.config.version_strings();
        result.instructions.clone_from(&s.instructions);
        let mut r = to_object(&result);
        self.shape_modern_result(&mut r);
        r
    }

    fn serve_legacy(&mut self, mut r: Incoming, batch: Option<u64>) {
        let id = r.id.clone();
        let method = r.method.as_str();
        match method {
            methods::INITIALIZE => {
                let outcome = self.initialize(r.params.as_ref().map(Params::object));
                self.answer(Some(id), outcome, batch);
                return;
            }
            methods::PING => {
                self.answer(Some(id), Ok(JsonObject::new()), batch);
                return;
            }
            _ => {}
        }
        let Some(version) = self.session.version else {
            let e = ErrorObject::invalid_params(format!(
                "Invalid params: {method} before initialization; send initialize first \
                 (protocol versions up to 2025-11-25) or put _meta {} and {} in every request (2026-07-28)",
                mk::PROTOCOL_VERSION,
                mk::CLIENT_CAPABILITIES
            ));
            self.answer(Some(id), Err(e), batch);
            return;
        };
        if MODERN_ONLY.contains(&method) {
            self.answer(Some(id), Err(not_in_version(method, version)), batch);
            return;
        }
        if method == methods::LOGGING_SET_LEVEL && self.config.server.capabilities.logging.is_some()
        {
            let level = r.params.as_ref().and_then(|p| p.get("level"));
            let outcome = match level {
                Some(Value::String(l)) if level_rank(l).is_some() => {
                    self.session.log_level = Some(l.clone());
                    self.session.revision += 1;
                    Ok(JsonObject::new())
                }
                Some(other) => Err(ErrorObject::invalid_params(format!(
                    "Invalid params: unknown logging level {other}; expected one of debug, info, \
                     notice, warning, error, critical, alert, emergency"
                ))),
                None => Err(ErrorObject::invalid_params(
                    "Invalid params: logging/setLevel needs a level",
                )),
            };
            self.answer(Some(id), outcome, batch);
            return;
        }
        if !self.config.methods.iter().any(|m| m == method) {
            self.answer(Some(id), Err(ErrorObject::method_not_found(method)), batch);
            return;
        }
        let progress_token = match progress_token(r.meta.as_ref()) {
            Ok(t) => t,
            Err(e) => return self.answer(Some(id), Err(e), batch),
        };
        let context = RequestInfo {
            era: Era::Legacy,
            version,
            progress_token,
            peer_capabilities: self.session.peer_capabilities.clone(),
            peer_info: self.session.peer_info.clone().map(PeerInfo::from),
            meta: r.meta.take(),
            log_level: self.session.log_level.clone(),
            result_shape: None,
        };
        self.start(r, context, batch);
    }

    fn initialize(&mut self, params: Option<&JsonObject>) -> Result<JsonObject, ErrorObject> {
        if self.session.version.is_some() {
            return Err(ErrorObject::invalid_request(
                "Invalid Request: initialize was already done on this connection",
            ));
        }
        let params = params.ok_or_else(|| {
            ErrorObject::invalid_params("Invalid params: initialize needs params")
        })?;
        let requested = params
            .get("protocolVersion")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                ErrorObject::invalid_params(
                    "Invalid params: initialize needs a protocolVersion string",
                )
            })?;
        let caps = match params.get("capabilities") {
            None => ClientCapabilities::default(),
            Some(Value::Object(c)) => ClientCapabilities::from_object(c),
            Some(_) => {
                return Err(ErrorObject::invalid_params(
                    "Invalid params: capabilities must be an object",
                ));
            }
        };
        let info = params.get("clientInfo").and_then(Value::as_object).cloned();
        let version = ProtocolVersion::parse(requested)
            .filter(|v| v.era() == Era::Legacy && self.config.supports(*v))
            .or_else(|| self.config.latest(Era::Legacy))
            .ok_or_else(|| {
                ErrorObject::invalid_request(format!(
                    "This server does not speak the initialize handshake; it supports protocol versions {}",
                    self.config.version_strings().join(", ")
                ))
            })?;
        self.session.version = Some(version);
        self.session.peer_capabilities = caps.into();
        self.session.peer_info = info.map(Arc::new);
        self.session.revision += 1;
        let s = &self.config.server;
        let mut result =
            InitializeResult::new(version, s.capabilities.for_version(version), s.info.clone());
        result.instructions.clone_from(&s.instructions);
        Ok(to_object(&result))
    }

    fn start(&mut self, r: Incoming, context: RequestInfo, batch: Option<u64>) {
        let Incoming {
            id, method, params, ..
        } = r;
        let tag = request_tag(context.meta.as_ref());
        self.inflight.insert(
            id.clone(),
            Inflight {
                era: context.era,
                progress_token: context.progress_token.clone(),
                last_progress: None,
                cancelled: false,
                batch,
                log_level: context.log_level.clone(),
                initialize: method == methods::INITIALIZE,
                tag,
            },
        );
        self.push_event(Event::Request(IncomingRequest {
            id,
            method,
            params,
            context,
        }));
    }
}

/// A request as the engine reads it: its `_meta` apart, the rest of its
/// params as they came.
struct Incoming {
    id: RequestId,
    method: String,
    params: Option<Params>,
    meta: Option<ReceivedMeta>,
}

/// The request's tag to echo ([`mk::REQUEST_TAG`]), when it is one.
fn request_tag(meta: Option<&ReceivedMeta>) -> Option<Value> {
    match meta?.member::<Value>(mk::REQUEST_TAG)?.ok()? {
        Value::String(s) if s.len() <= crate::engine::MAX_REQUEST_TAG => Some(Value::String(s)),
        Value::Number(n) if n.is_i64() || n.is_u64() => Some(Value::Number(n)),
        _ => None,
    }
}

/// The longest string `_meta.progressToken` a request may carry, in bytes.
/// Every progress notification echoes the token: a long one would multiply
/// a request's size by the number of notifications (one 4 MB request with
/// 256 progress steps pinned a gigabyte in streams and event stores).
pub const MAX_PROGRESS_TOKEN: usize = 1024;

/// The request's progress token, if any; a string token longer than
/// [`MAX_PROGRESS_TOKEN`] is refused with an error that names the limit.
fn progress_token(meta: Option<&ReceivedMeta>) -> Result<Option<RequestId>, ErrorObject> {
    let Some(v) = meta.and_then(|m| m.str_member(mk::PROGRESS_TOKEN)) else {
        return Ok(None);
    };
    match v {
        Ok(s) if s.len() > MAX_PROGRESS_TOKEN => Err(ErrorObject::invalid_params(format!(
            "Invalid params: _meta {} is {} bytes; the limit is {MAX_PROGRESS_TOKEN}",
            mk::PROGRESS_TOKEN,
            s.len()
        ))),
        Ok(s) => Ok(Some(RequestId::String(s.into_owned()))),
        Err(other) => Ok(serde_json::from_value(other).ok()),
    }
}

/// A typed result as the JSON object it is on the wire.
pub(crate) fn to_object<T: serde::Serialize>(result: &T) -> JsonObject {
    match serde_json::to_value(result) {
        Ok(Value::Object(o)) => o,
        // The result types serialise to objects with string keys.
        _ => JsonObject::new(),
    }
}
