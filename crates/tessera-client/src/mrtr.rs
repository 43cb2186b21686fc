//! Multi round-trip requests (2026-07-28): `tools/call`, `prompts/get` and
//! `resources/read` may be answered with `resultType: "input_required"`.
//!
//! The automatic methods ([`Client::call_tool`], [`Client::get_prompt`],
//! [`Client::read_resource`] and their `_with` forms) fulfil every input
//! request through the client's handlers, then retry the original request
//! (under a new JSON-RPC id) with `inputResponses` and the exact
//! `requestState`, until the server completes or the round limit is reached.
//! Input requests the client did not declare fail the call, unanswered. The
//! `_once` forms send a single attempt and hand back the
//! [`MrtrResult`] so the caller drives the rounds (with [`Client::fulfil`]).

use std::collections::BTreeMap;
use tessera_types::methods;

use serde::de::DeserializeOwned;
use serde_json::Value;
use tessera_types::{
    CallToolRequestParams, CallToolResult, GetPromptRequestParams, GetPromptResult,
    InputRequiredResult, InputResponseRequestParams, InputResponses, JsonObject, Loose, MrtrResult,
    ReadResourceRequestParams, ReadResourceResult, ResultType,
};

use crate::client::{Client, decode};
use crate::error::ClientError;
use std::sync::Arc;

use crate::input::{InputLayers, to_object};
use crate::members::read;
use crate::options::CallOptions;

/// The members of an `input_required` result the client acts on.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct Round {
    input_requests: Loose<JsonObject>,
    request_state: Loose<String>,
}

impl Client {
    /// Runs the input rounds of one request.
    async fn rounds<T: DeserializeOwned>(
        &self,
        method: &str,
        base: JsonObject,
        options: &CallOptions,
    ) -> Result<T, ClientError> {
        let mut params = base.clone();
        let mut rounds = 0;
        // Telemetry tells the rounds of one call apart from other calls.
        let call = tessera_runtime::outgoing::Round::next_call();
        loop {
            let send = self.send(method, Some(params), options);
            let round = tessera_runtime::outgoing::Round {
                call,
                round: u32::try_from(rounds).unwrap_or(u32::MAX),
            };
            let raw = round.scope(send).await?;
            if ResultType::of(&raw) != ResultType::InputRequired {
                return decode(method, raw);
            }
            if rounds >= self.inner.settings.max_rounds {
                return Err(ClientError::TooManyRounds {
                    method: method.to_owned(),
                    rounds,
                });
            }
            rounds += 1;
            params = base.clone();
            let protocol = |reason: &str| ClientError::Protocol {
                method: method.to_owned(),
                reason: reason.to_owned(),
            };
            let round: Round = read(Some(&raw));
            if round.input_requests.is_absent() && round.request_state.is_absent() {
                return Err(protocol(
                    "an input_required result has neither inputRequests nor requestState",
                ));
            }
            let mut retry = InputResponseRequestParams::default();
            match &round.input_requests {
                Loose::Absent => {}
                Loose::Valid(r) => retry.input_responses = Some(self.fulfil_inputs(r).await?),
                Loose::Malformed(_) => return Err(protocol("inputRequests is not an object")),
            }
            match round.request_state {
                Loose::Absent => {}
                // Echoed exactly, never inspected.
                Loose::Valid(s) => retry.request_state = Some(s),
                Loose::Malformed(_) => return Err(protocol("requestState is not a string")),
            }
            params.extend(to_object(&retry));
        }
    }

    /// The input rounds of one request, for the task module.
    pub(crate) async fn call_rounds<T: DeserializeOwned>(
        &self,
        method: &str,
        base: JsonObject,
        options: &CallOptions,
    ) -> Result<T, ClientError> {
        self.rounds(method, base, options).await
    }

    /// Fulfils raw `inputRequests` through the client's handlers.
    pub(crate) async fn fulfil_raw(
        &self,
        requests: &JsonObject,
    ) -> Result<InputResponses, ClientError> {
        self.fulfil_inputs(requests).await
    }

    /// Fulfils raw `inputRequests` through the client's middleware and
    /// handlers.
    async fn fulfil_inputs(&self, requests: &JsonObject) -> Result<InputResponses, ClientError> {
        let shared = &self.inner.shared;
        let through = shared.stacks.as_ref().map(|stacks| {
            let connected = self.connected();
            InputLayers {
                stack: stacks.input.clone(),
                peer: self.peer(),
                version: connected.version,
                server_capabilities: connected.server_capabilities.clone(),
                server_info: Arc::new(to_object(&connected.server_info)),
            }
        });
        shared.inputs.fulfil(requests, through.as_ref()).await
    }

    async fn once<T: DeserializeOwned>(
        &self,
        method: &str,
        params: JsonObject,
        options: &CallOptions,
    ) -> Result<MrtrResult<T>, ClientError> {
        let raw = self.send(method, Some(params), options).await?;
        decode(method, raw)
    }

    /// Fulfils the input requests of an `input_required` result through the
    /// client's handlers (for callers driving rounds with the `_once`
    /// methods). Fails, answering nothing, if any request needs something the
    /// client did not declare.
    pub async fn fulfil(
        &self,
        result: &InputRequiredResult,
    ) -> Result<InputResponses, ClientError> {
        match &result.input_requests {
            None => Ok(InputResponses::new()),
            Some(r) => {
                let raw = to_object(r);
                self.fulfil_inputs(&raw).await
            }
        }
    }

    /// Sends `method` (`tools/call`, `prompts/get` or `resources/read`, or
    /// any other request) and runs its input rounds like
    /// [`Client::call_tool`], returning the final result exactly as the
    /// server sent it (unknown members kept), for callers that show or
    /// forward the protocol result itself.
    pub async fn request_with_input(
        &self,
        method: &str,
        params: JsonObject,
        options: &CallOptions,
    ) -> Result<JsonObject, ClientError> {
        self.rounds(method, params, options).await
    }

    /// Calls a tool with arguments of any type that serializes to a JSON
    /// object (a struct, a map, `json!({...})`), or to `null` for none (`()`),
    /// answering input requests as needed. Arguments that serialize to
    /// anything else are refused with [`ClientError::InvalidArguments`]
    /// before anything is sent.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: impl serde::Serialize,
    ) -> Result<CallToolResult, ClientError> {
        let mut params = CallToolRequestParams::new(name);
        params.arguments = tool_arguments(name, arguments)?;
        self.call_tool_with(params, &CallOptions::default()).await
    }

    /// Calls a tool with full params and options, answering input requests.
    pub async fn call_tool_with(
        &self,
        params: CallToolRequestParams,
        options: &CallOptions,
    ) -> Result<CallToolResult, ClientError> {
        self.rounds(methods::TOOLS_CALL, to_object(&params), options)
            .await
    }

    /// Sends one `tools/call` attempt; the caller handles `input_required`.
    pub async fn call_tool_once(
        &self,
        params: CallToolRequestParams,
        options: &CallOptions,
    ) -> Result<MrtrResult<CallToolResult>, ClientError> {
        self.once(methods::TOOLS_CALL, to_object(&params), options)
            .await
    }

    /// Gets a prompt, answering input requests as needed.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: BTreeMap<String, String>,
    ) -> Result<GetPromptResult, ClientError> {
        let mut params = GetPromptRequestParams::new(name);
        if !arguments.is_empty() {
            params.arguments = Some(arguments);
        }
        self.get_prompt_with(params, &CallOptions::default()).await
    }

    /// Gets a prompt with full params and options, answering input requests.
    pub async fn get_prompt_with(
        &self,
        params: GetPromptRequestParams,
        options: &CallOptions,
    ) -> Result<GetPromptResult, ClientError> {
        self.rounds(methods::PROMPTS_GET, to_object(&params), options)
            .await
    }

    /// Sends one `prompts/get` attempt; the caller handles `input_required`.
    pub async fn get_prompt_once(
        &self,
        params: GetPromptRequestParams,
        options: &CallOptions,
    ) -> Result<MrtrResult<GetPromptResult>, ClientError> {
        self.once(methods::PROMPTS_GET, to_object(&params), options)
            .await
    }

    /// Reads a resource, answering input requests as needed.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, ClientError> {
        self.read_resource_with(ReadResourceRequestParams::new(uri), &CallOptions::default())
            .await
    }

    /// Reads a resource with full params and options, answering input requests.
    pub async fn read_resource_with(
        &self,
        params: ReadResourceRequestParams,
        options: &CallOptions,
    ) -> Result<ReadResourceResult, ClientError> {
        self.rounds(methods::RESOURCES_READ, to_object(&params), options)
            .await
    }

    /// Sends one `resources/read` attempt; the caller handles `input_required`.
    pub async fn read_resource_once(
        &self,
        params: ReadResourceRequestParams,
        options: &CallOptions,
    ) -> Result<MrtrResult<ReadResourceResult>, ClientError> {
        self.once(methods::RESOURCES_READ, to_object(&params), options)
            .await
    }
}

/// The `arguments` of a `tools/call`: `arguments` as a JSON object, `None`
/// for `null`, and an error for anything else.
pub(crate) fn tool_arguments(
    name: &str,
    arguments: impl serde::Serialize,
) -> Result<Option<JsonObject>, ClientError> {
    let refuse = |why: String| ClientError::InvalidArguments {
        method: format!("{} {name}", methods::TOOLS_CALL),
        why,
    };
    match serde_json::to_value(arguments) {
        Ok(Value::Object(args)) => Ok(Some(args)),
        Ok(Value::Null) => Ok(None),
        Ok(other) => Err(refuse(format!(
            "tool arguments must serialize to a JSON object (or null for none), not {}",
            match other {
                Value::Array(_) => "an array",
                Value::String(_) => "a string",
                Value::Number(_) => "a number",
                _ => "a boolean",
            }
        ))),
        Err(e) => Err(refuse(format!(
            "the arguments could not be serialized: {e}"
        ))),
    }
}
