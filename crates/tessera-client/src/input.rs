//! What the client answers for the server, in both eras: legacy
//! server-to-client requests and 2026-07-28 input requests go through the
//! same checks and the same handlers.
//!
//! A request is first checked against what the client declared (a capability,
//! an elicitation mode, sampling with tools); an undeclared one is refused
//! (`-32601` for an unknown method, `-32602` for an undeclared mode or tool
//! use, as the 2025-11-25 chapters say) and never reaches a handler.

use std::sync::{Arc, RwLock};
use tessera_types::methods;

use futures::future::join_all;
use serde::Deserialize;
use serde_json::Value;
use tessera_proto::RequestInfo;
use tessera_runtime::middleware::{self, McpService};
use tessera_runtime::{Extensions, Peer, Request};
use tessera_types::capabilities::{
    ClientTaskRequests, ClientTasksCapability, ElicitationTaskRequests, SamplingTaskRequests,
};
use tessera_types::{
    ClientCapabilities, CreateMessageRequestParams, ElicitAction, ElicitRequestFormParams,
    ElicitResult, ErrorCode, ErrorObject, InputResponse, InputResponses, JsonObject,
    ListRootsResult, Loose, Root, decode_object_params,
};
use tessera_types::{Era, ProtocolVersion, RequestId, ServerCapabilities};
use tokio_util::sync::CancellationToken;

use crate::elicitation::{ElicitationTracker, finish_form_answer};
use crate::error::ClientError;
use crate::extension::ClientExtensions;
use crate::handler::{FormRequest, HeldConsent, HeldForm, HeldSampling, UrlRequest};
use crate::receiver::{TaskReceiver, take_task};
use crate::sampling;

/// Why a request from the server is not answered.
#[derive(Debug, Clone)]
pub(crate) struct Refusal {
    /// Set when the request needs something the client did not declare.
    pub undeclared: Option<String>,
    /// The error to answer with.
    pub error: ErrorObject,
}

impl Refusal {
    fn undeclared(what: impl Into<String>, error: ErrorObject) -> Self {
        Refusal {
            undeclared: Some(what.into()),
            error,
        }
    }

    fn invalid(error: ErrorObject) -> Self {
        Refusal {
            undeclared: None,
            error,
        }
    }
}

/// The client's declared capabilities and the handlers behind them.
pub(crate) struct Inputs {
    pub caps: ClientCapabilities,
    roots: RwLock<Vec<Root>>,
    sampling: Option<Arc<dyn HeldSampling>>,
    form: Option<Arc<dyn HeldForm>>,
    url: Option<Arc<dyn HeldConsent>>,
    pub tracker: ElicitationTracker,
    pub extensions: ClientExtensions,
    /// The tasks run for the server, when the client is a task receiver.
    receiver: Option<Arc<TaskReceiver>>,
}

impl std::fmt::Debug for Inputs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inputs")
            .field("caps", &self.caps)
            .finish_non_exhaustive()
    }
}

/// The handlers a builder collected.
#[derive(Clone, Default)]
pub(crate) struct HandlerSet {
    pub roots: Option<Vec<Root>>,
    pub sampling: Option<Arc<dyn HeldSampling>>,
    pub sampling_tools: bool,
    pub form: Option<Arc<dyn HeldForm>>,
    pub url: Option<Arc<dyn HeldConsent>>,
    pub extensions: ClientExtensions,
    /// Whether sampling and elicitation requests may be sent as tasks
    /// (2025-11-25).
    pub task_receiver: bool,
}

impl std::fmt::Debug for HandlerSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HandlerSet")
            .field("roots", &self.roots)
            .field("sampling", &self.sampling.is_some())
            .field("sampling_tools", &self.sampling_tools)
            .field("form", &self.form.is_some())
            .field("url", &self.url.is_some())
            .field("extensions", &self.extensions)
            .field("task_receiver", &self.task_receiver)
            .finish()
    }
}

impl HandlerSet {
    /// The capabilities: `base`, plus what each handler implies.
    pub fn capabilities(&self, base: &ClientCapabilities) -> ClientCapabilities {
        let mut caps = base.clone();
        if self.roots.is_some() {
            let r = caps.roots.get_or_insert_with(Default::default);
            r.list_changed = Some(true);
        }
        if self.sampling.is_some() {
            let s = caps.sampling.get_or_insert_with(Default::default);
            if self.sampling_tools {
                s.tools.get_or_insert_with(JsonObject::new);
            }
        }
        if self.form.is_some() || self.url.is_some() {
            let e = caps.elicitation.get_or_insert_with(Default::default);
            if self.form.is_some() {
                e.form.get_or_insert_with(JsonObject::new);
            }
            if self.url.is_some() {
                e.url.get_or_insert_with(JsonObject::new);
            }
        }
        let elicits = self.form.is_some() || self.url.is_some();
        if self.task_receiver && (self.sampling.is_some() || elicits) {
            caps.tasks = Some(ClientTasksCapability {
                list: Some(JsonObject::new()),
                cancel: Some(JsonObject::new()),
                requests: Some(ClientTaskRequests {
                    sampling: self.sampling.is_some().then(|| SamplingTaskRequests {
                        create_message: Some(JsonObject::new()),
                        ..Default::default()
                    }),
                    elicitation: elicits.then(|| ElicitationTaskRequests {
                        create: Some(JsonObject::new()),
                        ..Default::default()
                    }),
                    ..Default::default()
                }),
                ..Default::default()
            });
        }
        for ext in &self.extensions.list {
            caps.extensions
                .get_or_insert_with(Default::default)
                .insert(ext.id().to_owned(), ext.settings().into_object());
        }
        caps
    }
}

fn not_supported(method: &str, capability: &str) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!(
            "Method not found: {method} (the client did not declare the {capability} capability)"
        ),
    )
    .with_data(Value::Object(to_object(&Reason {
        reason: format!("Client does not have {capability} capability"),
    })))
}

/// The `data` of a refused server request: why.
#[derive(Debug, serde::Serialize)]
struct Reason {
    reason: String,
}

/// The members of `elicitation/create` params the client reads before
/// decoding them as a form or a URL request.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct ElicitShape {
    mode: Loose<String>,
    message: Loose<String>,
    url: Loose<String>,
    elicitation_id: Loose<String>,
    requested_schema: Loose<JsonObject>,
}

impl ElicitShape {
    fn of(params: Option<&JsonObject>) -> Self {
        params
            .and_then(|p| decode_object_params(Some(p)).ok())
            .unwrap_or_default()
    }
}

/// One request of an `input_required` result.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct AskedInput {
    method: Loose<String>,
    params: Loose<JsonObject>,
    /// Other members (ignored; they make only objects read as requests).
    #[serde(flatten)]
    _others: JsonObject,
}

/// The string `member` (named `name` in the error when it is not one).
fn required(member: Loose<String>, name: &str) -> Result<String, ErrorObject> {
    member.into_valid().ok_or_else(|| {
        ErrorObject::invalid_params(format!("Invalid params: {name} must be a string"))
    })
}

impl Inputs {
    pub fn new(set: HandlerSet, caps: ClientCapabilities) -> Self {
        let receiver =
            (caps.tasks.is_some() && set.task_receiver).then(|| Arc::new(TaskReceiver::default()));
        Inputs {
            receiver,
            caps,
            roots: RwLock::new(set.roots.unwrap_or_default()),
            sampling: set.sampling,
            form: set.form,
            url: set.url,
            tracker: ElicitationTracker::default(),
            extensions: set.extensions,
        }
    }

    /// The server-to-client methods the client answers (legacy era).
    pub fn methods(&self) -> Vec<String> {
        let mut m = Vec::new();
        if self.caps.roots.is_some() {
            m.push(methods::ROOTS_LIST.to_owned());
        }
        if self.caps.sampling.is_some() {
            m.push(methods::SAMPLING_CREATE_MESSAGE.to_owned());
        }
        if self.caps.elicitation.is_some() {
            m.push(methods::ELICITATION_CREATE.to_owned());
        }
        if self.receiver.is_some() {
            m.extend(crate::receiver::METHODS.iter().map(|s| (*s).to_owned()));
        }
        m.extend(self.extensions.methods());
        m
    }

    pub fn roots(&self) -> Vec<Root> {
        self.roots
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    pub fn set_roots(&self, roots: Vec<Root>) {
        *self
            .roots
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = roots;
    }

    /// Whether the client declared everything `method` with `params` needs.
    pub fn check(&self, method: &str, params: Option<&JsonObject>) -> Result<(), Refusal> {
        match method {
            methods::ROOTS_LIST => {
                if self.caps.roots.is_none() {
                    return Err(Refusal::undeclared(
                        methods::ROOTS_LIST,
                        not_supported(method, "roots"),
                    ));
                }
            }
            methods::SAMPLING_CREATE_MESSAGE => {
                let Some(s) = &self.caps.sampling else {
                    return Err(Refusal::undeclared(
                        method,
                        not_supported(method, "sampling"),
                    ));
                };
                let p = parse_sampling(params).map_err(Refusal::invalid)?;
                if sampling::uses_tools(&p) && s.tools.is_none() {
                    return Err(Refusal::undeclared(
                        "sampling/createMessage with tools",
                        ErrorObject::invalid_params(
                            "Invalid params: tools and tool content need the sampling.tools capability, \
                             which this client did not declare",
                        ),
                    ));
                }
            }
            methods::ELICITATION_CREATE => {
                let Some(e) = &self.caps.elicitation else {
                    return Err(Refusal::undeclared(
                        method,
                        not_supported(method, "elicitation"),
                    ));
                };
                let (declared, name) = match ElicitShape::of(params).mode {
                    Loose::Absent => (e.supports_form(), "form"),
                    Loose::Valid(m) if m == "form" => (e.supports_form(), "form"),
                    Loose::Valid(m) if m == "url" => (e.supports_url(), "url"),
                    Loose::Valid(m) => {
                        let other = Value::String(m);
                        return Err(Refusal::invalid(ErrorObject::invalid_params(format!(
                            "Invalid params: unknown elicitation mode {other}"
                        ))));
                    }
                    Loose::Malformed(other) => {
                        return Err(Refusal::invalid(ErrorObject::invalid_params(format!(
                            "Invalid params: unknown elicitation mode {other}"
                        ))));
                    }
                };
                if !declared {
                    return Err(Refusal::undeclared(
                        format!("elicitation/create ({name} mode)"),
                        ErrorObject::invalid_params(format!(
                            "Invalid params: elicitation mode {name:?} is not supported by this client"
                        )),
                    ));
                }
            }
            other if self.extensions.serving(other).is_some() => {}
            other => {
                return Err(Refusal::undeclared(
                    other,
                    ErrorObject::method_not_found(other),
                ));
            }
        }
        Ok(())
    }

    /// Answers a request from the server: the task methods of a task
    /// receiver, a sampling or elicitation request asking to run as a task
    /// (answered at once with `{task}`), or at once through
    /// [`Inputs::answer_now`].
    ///
    /// `peer` is the connection that asked: a task's status changes are told
    /// there.
    pub async fn answer(
        self: Arc<Self>,
        method: String,
        mut params: Option<JsonObject>,
        peer: Option<Peer>,
    ) -> Result<JsonObject, ErrorObject> {
        if let Some(r) = self.receiver.clone() {
            match method.as_str() {
                methods::TASKS_GET => return r.get(params.as_ref()),
                methods::TASKS_LIST => return r.list(params.as_ref()),
                methods::TASKS_CANCEL => return r.cancel(params.as_ref()),
                methods::TASKS_RESULT => return r.result(params.as_ref()).await,
                methods::SAMPLING_CREATE_MESSAGE | methods::ELICITATION_CREATE => {
                    self.check(&method, params.as_ref()).map_err(|r| r.error)?;
                    if let Some(ask) = take_task(&mut params)? {
                        let this = self.clone();
                        return r.create(
                            ask.ttl_ms,
                            Box::pin(async move { this.answer_now(method, params).await }),
                            peer,
                        );
                    }
                }
                _ => {}
            }
        }
        self.answer_now(method, params).await
    }

    /// Answers a request that passed [`Inputs::check`] now.
    pub(crate) async fn answer_now(
        self: Arc<Self>,
        method: String,
        params: Option<JsonObject>,
    ) -> Result<JsonObject, ErrorObject> {
        self.check(&method, params.as_ref()).map_err(|r| r.error)?;
        if let Some(answer) = self.extensions.serving(&method) {
            return answer(params).await;
        }
        match method.as_str() {
            methods::ROOTS_LIST => Ok(to_object(&ListRootsResult {
                meta: None,
                roots: self.roots(),
            })),
            methods::SAMPLING_CREATE_MESSAGE => {
                let p = parse_sampling(params.as_ref())?;
                sampling::check_request(&p)?;
                let handler = self.sampling.clone().ok_or_else(|| {
                    ErrorObject::internal("Internal error: this client has no sampling handler")
                })?;
                let r = handler.create_message_boxed(p.clone()).await?;
                sampling::check_result(&p, &r)?;
                Ok(to_object(&r))
            }
            _ => self.elicit(params.unwrap_or_default()).await,
        }
    }

    async fn elicit(&self, params: JsonObject) -> Result<JsonObject, ErrorObject> {
        let shape = ElicitShape::of(Some(&params));
        if shape.mode.valid().map(String::as_str) == Some("url") {
            let req = UrlRequest {
                message: required(shape.message, "message")?,
                url: required(shape.url, "url")?,
                elicitation_id: shape.elicitation_id.into_valid(),
            };
            let consent = self.url.clone().ok_or_else(|| {
                ErrorObject::internal("Internal error: this client has no URL consent handler")
            })?;
            let id = req.elicitation_id.clone();
            let action = consent.consent_boxed(req).await?;
            if let (ElicitAction::Accept, Some(id)) = (action, id) {
                self.tracker.register(&id);
            }
            return Ok(to_object(&ElicitResult::action(action)));
        }
        let typed: ElicitRequestFormParams = serde_json::from_value(Value::Object(params.clone()))
            .map_err(|e| ErrorObject::invalid_params(format!("Invalid params: {e}")))?;
        let raw_schema = shape.requested_schema.into_valid().unwrap_or_default();
        let handler = self.form.clone().ok_or_else(|| {
            ErrorObject::internal("Internal error: this client has no form elicitation handler")
        })?;
        let answer = handler
            .elicit_boxed(FormRequest {
                message: typed.message,
                requested_schema: typed.requested_schema,
                raw_schema: raw_schema.clone(),
            })
            .await?;
        let answer = finish_form_answer(&raw_schema, answer)?;
        Ok(to_object(&answer))
    }

    /// Fulfils the `inputRequests` of an `input_required` result: checks every
    /// request first (an undeclared one fails the whole round, unanswered),
    /// then answers them all concurrently.
    pub async fn fulfil(
        self: &Arc<Self>,
        requests: &JsonObject,
        through: Option<&InputLayers>,
    ) -> Result<InputResponses, ClientError> {
        let mut calls = Vec::new();
        for (key, request) in requests {
            let asked: AskedInput = AskedInput::deserialize(request).unwrap_or_default();
            let malformed = |why: &str| ClientError::Input {
                key: key.clone(),
                method: asked.method.valid().map_or("?", String::as_str).to_owned(),
                error: ErrorObject::invalid_params(format!("Invalid params: {why}")),
            };
            let method = asked
                .method
                .valid()
                .ok_or_else(|| malformed("an input request needs a method"))?;
            let params = match &asked.params {
                Loose::Absent | Loose::Malformed(Value::Null) => None,
                Loose::Valid(p) => Some(p.clone()),
                Loose::Malformed(_) => {
                    return Err(malformed("input request params must be an object"));
                }
            };
            if let Err(r) = self.check(method, params.as_ref()) {
                return Err(match r.undeclared {
                    Some(what) => ClientError::UndeclaredInput {
                        key: key.clone(),
                        what,
                    },
                    None => ClientError::Input {
                        key: key.clone(),
                        method: method.to_owned(),
                        error: r.error,
                    },
                });
            }
            calls.push((key.clone(), method.to_owned(), params));
        }
        let answers = join_all(calls.into_iter().map(|(key, method, params)| {
            let this = self.clone();
            let layered =
                through.map(|t| (t.stack.clone(), t.request(&key, &method, params.clone())));
            async move {
                // Input requests are answered in place: never as 2025-11-25
                // tasks; through the client's middleware like the server's
                // requests of the legacy era.
                let out = match layered {
                    Some((stack, request)) => {
                        middleware::reply_object(middleware::serve(&stack, request).await)
                    }
                    _ => this.answer_now(method.clone(), params).await,
                };
                (key, method, out)
            }
        }))
        .await;
        let mut responses = InputResponses::new();
        for (key, method, out) in answers {
            let result = out.map_err(|error| ClientError::Input {
                key: key.clone(),
                method: method.clone(),
                error,
            })?;
            let response: InputResponse = serde_json::from_value(Value::Object(result))
                .map_err(|source| ClientError::Decode { method, source })?;
            responses.insert(key, response);
        }
        Ok(responses)
    }
}

fn parse_sampling(params: Option<&JsonObject>) -> Result<CreateMessageRequestParams, ErrorObject> {
    serde_json::from_value(Value::Object(params.cloned().unwrap_or_default()))
        .map_err(|e| ErrorObject::invalid_params(format!("Invalid params: {e}")))
}

pub(crate) fn to_object<T: serde::Serialize>(v: &T) -> JsonObject {
    match serde_json::to_value(v) {
        Ok(Value::Object(o)) => o,
        _ => JsonObject::new(),
    }
}

/// The key of a 2026-07-28 input request (the key of `inputRequests` in an
/// `input_required` result), in the [`Extensions`] of the [`Request`] that
/// client middleware sees for it. Such a request has no JSON-RPC id of its
/// own: the request's id is the key, as a string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputRequestKey(pub String);

/// How input requests reach the client's middleware: the stack, the
/// connection and what the server said about itself.
pub(crate) struct InputLayers {
    /// The client's middleware over its answers to input requests.
    pub stack: McpService,
    pub peer: Peer,
    pub version: ProtocolVersion,
    pub server_capabilities: Arc<ServerCapabilities>,
    pub server_info: Arc<JsonObject>,
}

impl InputLayers {
    /// The request a layer sees for input request `key`.
    fn request(&self, key: &str, method: &str, params: Option<JsonObject>) -> Request {
        let mut extensions = Extensions::new();
        extensions.insert(InputRequestKey(key.to_owned()));
        Request {
            id: RequestId::String(key.to_owned()),
            method: method.to_owned(),
            params: params.map(tessera_types::Params::from),
            context: RequestInfo {
                era: Era::Modern,
                version: self.version,
                progress_token: None,
                peer_capabilities: self.server_capabilities.clone().into(),
                peer_info: Some(self.server_info.clone().into()),
                meta: None,
                log_level: None,
                result_shape: None,
            },
            peer: self.peer.clone(),
            cancel: CancellationToken::new(),
            extensions,
        }
    }
}
