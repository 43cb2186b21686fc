//! [`RequestContext`]: what a handler knows about the request it serves.

use std::sync::Arc;
use tessera_types::methods;

use serde_json::Value;
use serde_json::json;
use tessera_proto::RequestOptions;
use tessera_runtime::{Peer, PeerError};
use tessera_types::{
    ClientCapabilities, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, Era, JsonObject, ListRootsResult, LoggingLevel, ProtocolVersion, ReceivedMeta,
    RequestId,
};

use crate::mrtr::{InputError, InputState};
use tokio_util::sync::{CancellationToken, WaitForCancellationFuture};

/// The request being handled: its id and `_meta`, the negotiated era and
/// version, the client's capabilities, a way to report progress and log, and
/// the cancellation token that fires when the client cancels.
#[derive(Debug, Clone)]
pub struct RequestContext {
    pub(crate) id: RequestId,
    pub(crate) method: Arc<str>,
    pub(crate) peer: Peer,
    pub(crate) cancel: CancellationToken,
    pub(crate) proto: tessera_proto::RequestInfo,
    pub(crate) input: Option<Arc<InputState>>,
    pub(crate) extensions: tessera_runtime::Extensions,
    pub(crate) task: Option<Arc<crate::task::live::TaskLink>>,
}

impl RequestContext {
    pub(crate) fn from_request(r: &tessera_runtime::Request) -> Self {
        RequestContext {
            id: r.id.clone(),
            method: r.method.as_str().into(),
            peer: r.peer.clone(),
            cancel: r.cancel.clone(),
            proto: r.context.clone(),
            input: None,
            extensions: r.extensions.clone(),
            task: None,
        }
    }

    /// The task this call runs as, once it has become one (a 2025-11-25
    /// task-augmented call, or a 2026-07-28 call the server turned into a
    /// task).
    pub fn task_id(&self) -> Option<&str> {
        self.task
            .as_ref()
            .filter(|t| t.is_detached())
            .and_then(|t| t.id())
    }

    /// What the transport attached to the request: for Streamable HTTP the
    /// request's headers, for an authenticated request its claims.
    pub fn extensions(&self) -> &tessera_runtime::Extensions {
        &self.extensions
    }

    /// One extension by type.
    pub fn extension<T: std::any::Any + Send + Sync>(&self) -> Option<&T> {
        self.extensions.get::<T>()
    }

    /// Stream control for this request (SEP-1699; see
    /// [`tessera_runtime::StreamControl`]); also an extractor.
    ///
    /// When the request did not come over a transport that can close its
    /// stream, but the client declares the
    /// [`CLOSE_SSE_STREAM_CAPABILITY`](tessera_runtime::CLOSE_SSE_STREAM_CAPABILITY)
    /// extension (a Tessera proxy serving the request over HTTP), the control
    /// asks the client to close it.
    pub fn stream_control(&self) -> tessera_runtime::StreamControl {
        if self
            .extensions
            .get::<tessera_runtime::StreamHandle>()
            .is_none()
            && self
                .client_capabilities()
                .has_experimental(tessera_runtime::CLOSE_SSE_STREAM_CAPABILITY)
        {
            let mut e = self.extensions.clone();
            e.insert(tessera_runtime::StreamHandle::relay(self.peer().clone()));
            return tessera_runtime::StreamControl::from_extensions(&e, self.request_id());
        }
        tessera_runtime::StreamControl::from_extensions(&self.extensions, self.request_id())
    }

    /// The JSON-RPC id of the request.
    pub fn request_id(&self) -> &RequestId {
        &self.id
    }

    /// The method being served.
    pub fn method(&self) -> &str {
        &self.method
    }

    /// Legacy (session) or modern (stateless) era.
    pub fn era(&self) -> Era {
        self.proto.era
    }

    /// The protocol version the request is served in.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.proto.version
    }

    /// The request's `_meta`, if any, as a tree (built from the text it
    /// came in on first use); [`RequestContext::received_meta`] reads single
    /// members without building one.
    pub fn meta(&self) -> Option<&JsonObject> {
        self.proto.meta.as_ref().map(ReceivedMeta::object)
    }

    /// The request's `_meta`, if any, as the text it came in: single
    /// members are read from it ([`ReceivedMeta::member`]) without a tree.
    pub fn received_meta(&self) -> Option<&ReceivedMeta> {
        self.proto.meta.as_ref()
    }

    /// The client's declared capabilities (from `initialize` in the legacy era,
    /// from this request's `_meta` in the modern era).
    pub fn client_capabilities(&self) -> &ClientCapabilities {
        self.proto.peer_capabilities.client_or_none()
    }

    /// The client's `Implementation` info, when it sent one.
    pub fn client_info(&self) -> Option<&JsonObject> {
        self.proto.peer_info.as_deref()
    }

    /// Whether the client declared a capability (`sampling`, `elicitation`,
    /// `roots`, …, or one Tessera does not model) by name; the typed form is
    /// [`RequestContext::client_capabilities`].
    pub fn client_has(&self, capability: &str) -> bool {
        self.proto.peer_capabilities.declares(capability)
    }

    /// Sends a request to the client on behalf of this request (legacy era:
    /// sampling, elicitation, roots, ping) and waits for its result. On
    /// Streamable HTTP it travels on this request's response stream.
    pub async fn request_client(
        &self,
        method: &str,
        params: Option<JsonObject>,
    ) -> Result<JsonObject, PeerError> {
        let Some(task_id) = self.task_id().map(str::to_owned) else {
            let options = RequestOptions {
                related: Some(self.id.clone()),
                ..RequestOptions::default()
            };
            return tokio::select! {
                r = self.peer.request(method, params, options) => r,
                _ = self.cancel.cancelled() => Err(PeerError::Call(tessera_proto::CallError::Cancelled)),
            };
        };
        // Inside a task (2025-11-25): the request carries the related-task
        // metadata, travels on the session's own stream (the call that
        // created the task is answered), and the task waits in input_required.
        let mut params = params.unwrap_or_default();
        crate::task::legacy::relate_to_task(&mut params, &task_id);
        let hub = self.task.as_ref().map(|t| t.hub.clone());
        if let Some(hub) = &hub {
            let _ = hub
                .apply(
                    &task_id,
                    crate::task::TaskChange::input_required(JsonObject::new()),
                )
                .await;
        }
        let out = tokio::select! {
            r = self.peer.request(method, Some(params), RequestOptions::default()) => r,
            _ = self.cancel.cancelled() => Err(PeerError::Call(tessera_proto::CallError::Cancelled)),
        };
        if let Some(hub) = &hub {
            let _ = hub
                .apply(&task_id, crate::task::TaskChange::working(None))
                .await;
        }
        out
    }

    /// Asks the user through the client (`elicitation/create`) with
    /// parameters of your own (a form, or a URL), in either era (see [the
    /// `mrtr` module](crate::mrtr)); [`RequestContext::elicit`] asks for a
    /// typed value. The question's key is numbered in asking order; use
    /// [`RequestContext::elicit_as`] to choose it.
    pub async fn elicit_with(
        &self,
        params: impl Into<ElicitRequestParams>,
    ) -> Result<ElicitResult, InputError> {
        self.elicit_inner(None, params.into()).await
    }

    /// [`RequestContext::elicit_with`] with an explicit `inputRequests` key.
    pub async fn elicit_as(
        &self,
        key: &str,
        params: impl Into<ElicitRequestParams>,
    ) -> Result<ElicitResult, InputError> {
        self.elicit_inner(Some(key.to_owned()), params.into()).await
    }

    async fn elicit_inner(
        &self,
        key: Option<String>,
        params: ElicitRequestParams,
    ) -> Result<ElicitResult, InputError> {
        let url = matches!(params, ElicitRequestParams::Url(_));
        if url && self.client_has("elicitation") {
            let declared_url = self
                .client_capabilities()
                .elicitation
                .as_ref()
                .is_some_and(|e| e.url.is_some());
            if !declared_url {
                return Err(InputError::MissingCapability("elicitation.url".into()));
            }
        }
        let params = to_object(&params);
        decode(
            self.ask(
                key,
                methods::ELICITATION_CREATE,
                Some(params),
                "elicitation",
            )
            .await?,
        )
    }

    /// Asks the client's model (`sampling/createMessage`), in either era.
    pub async fn sample(
        &self,
        params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, InputError> {
        decode(
            self.ask(
                None,
                methods::SAMPLING_CREATE_MESSAGE,
                Some(to_object(&params)),
                "sampling",
            )
            .await?,
        )
    }

    /// [`RequestContext::sample`] with an explicit `inputRequests` key.
    pub async fn sample_as(
        &self,
        key: &str,
        params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, InputError> {
        decode(
            self.ask(
                Some(key.to_owned()),
                methods::SAMPLING_CREATE_MESSAGE,
                Some(to_object(&params)),
                "sampling",
            )
            .await?,
        )
    }

    /// Asks the client for its roots (`roots/list`), in either era.
    pub async fn roots(&self) -> Result<ListRootsResult, InputError> {
        decode(self.ask(None, methods::ROOTS_LIST, None, "roots").await?)
    }

    /// [`RequestContext::roots`] with an explicit `inputRequests` key.
    pub async fn roots_as(&self, key: &str) -> Result<ListRootsResult, InputError> {
        decode(
            self.ask(Some(key.to_owned()), methods::ROOTS_LIST, None, "roots")
                .await?,
        )
    }

    /// Asks the client anything it can answer (`method` needs `capability`),
    /// in either era; returns the raw result.
    pub async fn ask(
        &self,
        key: Option<String>,
        method: &str,
        params: Option<JsonObject>,
        capability: &str,
    ) -> Result<JsonObject, InputError> {
        let modern = self.input.as_ref().filter(|i| i.modern);
        if !self.client_has(capability) {
            if let Some(input) = modern {
                // Stop here: the server answers -32021.
                input.lacks(capability);
                return std::future::pending().await;
            }
            return Err(InputError::MissingCapability(capability.to_owned()));
        }
        let Some(input) = modern else {
            return Ok(self.request_client(method, params).await?);
        };
        let key = key.unwrap_or_else(|| input.next_key());
        if let Some(answer) = input.answers.get(&key) {
            return match answer {
                serde_json::Value::Object(o) => Ok(o.clone()),
                _ => Err(InputError::Malformed(format!(
                    "inputResponses.{key} is not an object"
                ))),
            };
        }
        let mut request = JsonObject::new();
        request.insert("method".into(), json!(method));
        if let Some(p) = params {
            request.insert("params".into(), serde_json::Value::Object(p));
        }
        if let Some(link) = self.task.as_ref().filter(|t| t.is_detached()) {
            // A running task: the question waits in the task's inputRequests
            // until tasks/update answers it.
            return link
                .input
                .ask(key, serde_json::Value::Object(request))
                .await;
        }
        input.ask(key, serde_json::Value::Object(request));
        // The server stops the handler here and answers input_required.
        std::future::pending().await
    }

    /// The connection, for requests and notifications to the client.
    pub fn peer(&self) -> &Peer {
        &self.peer
    }

    /// Whether the client asked for progress on this request.
    pub fn wants_progress(&self) -> bool {
        self.proto.progress_token.is_some()
    }

    /// Reports progress. Sent only when the client gave a progress token and
    /// `progress` is greater than the last value reported; never after the result.
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        if let Some(task_id) = self.task_id() {
            // The call that created the task is answered: progress on a task
            // (2025-11-25) goes out as a plain notification on the session,
            // with the original token and the related-task metadata. The
            // 2026-07-28 extension has no progress for tasks.
            let Some(token) = self.proto.progress_token.as_ref() else {
                return;
            };
            if self.era() == Era::Modern {
                return;
            }
            let mut p =
                tessera_types::ProgressNotificationParams::new(token.clone(), progress, total);
            p.message = message.map(str::to_owned);
            let mut p = tessera_types::encode_params(&p).unwrap_or_default();
            crate::task::legacy::relate_to_task(&mut p, task_id);
            let _ = self
                .peer
                .notify(methods::NOTIFICATIONS_PROGRESS, Some(p), None);
            return;
        }
        self.peer
            .progress(self.id.clone(), progress, total, message.map(str::to_owned));
    }

    /// Sends a log message tied to this request, if the client's log level lets it through.
    pub fn log(&self, level: LoggingLevel, logger: Option<&str>, data: Value) {
        // Inside a task the creating call is answered: logs go to the session.
        let related = self.task_id().is_none().then(|| self.id.clone());
        self.peer
            .log(level.as_str(), logger.map(str::to_owned), data, related);
    }

    /// The cancellation token: fires when the client cancels the request.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }

    /// Whether the client cancelled the request.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// Completes when the client cancels the request.
    pub fn cancelled(&self) -> WaitForCancellationFuture<'_> {
        self.cancel.cancelled()
    }
}

fn to_object<T: serde::Serialize>(v: &T) -> JsonObject {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::Object(o)) => o,
        _ => JsonObject::new(),
    }
}

fn decode<T: serde::de::DeserializeOwned>(o: JsonObject) -> Result<T, InputError> {
    serde_json::from_value(serde_json::Value::Object(o))
        .map_err(|e| InputError::Malformed(e.to_string()))
}
