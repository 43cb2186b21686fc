//! How the two eras map onto the conventions, in one place.
//!
//! The MCP semantic conventions were written for the legacy era (an
//! `initialize` handshake, sessions). For 2026-07-28 no convention exists
//! yet (semantic-conventions issue #437); this module is Tessera's mapping
//! and the one place to change when the convention lands:
//!
//! - **No session.** A 2026-07-28 request is stateless: it carries no
//!   `mcp.session.id`, and no `mcp.*.session.duration` is recorded.
//! - **`server/discover`** is an ordinary request span (`server/discover`,
//!   CLIENT on the client). The server's engine answers it before any
//!   handler runs, so the server records no SERVER span for it.
//! - **`subscriptions/listen`** is one long span per stream, from the
//!   request to the stream's end, like any request. The notifications it
//!   delivers are not recorded as span events: a stream may live for hours
//!   and a span's events are held in memory until it ends.
//! - **Multi round-trip requests (MRTR)**: each round is its own request,
//!   so its own span. A round whose result asks for input carries
//!   `tessera.mrtr.input_required = true` (not an error); a round that
//!   answers one carries `tessera.mrtr.continued = true`. On the client,
//!   every round of one call carries the same `tessera.mrtr.call` (a number
//!   unique in the process) and its `tessera.mrtr.round` (0 first). The
//!   inputs a round asks for travel in its result, not as server-to-client
//!   requests: the client's layer records each one it fulfils as a `SERVER`
//!   span (`sampling/createMessage`, …) in a trace of its own.
//! - **Tasks** (`tasks/*`, and a `tools/call` answered with a task) are
//!   ordinary request spans carrying `tessera.task.id`.
//! - **The peer's self-reported info**: client spans carry the server's
//!   `serverInfo` (from `initialize` or `server/discover`) as
//!   `tessera.server.name` and `tessera.server.version`.

use opentelemetry::KeyValue;
use serde::Deserialize;
use serde_json::Value;
use tessera_types::{Era, JsonObject, Loose, decode_object_params};

/// `tessera.mrtr.input_required`: the result asks the caller for input.
pub const MRTR_INPUT_REQUIRED: &str = "tessera.mrtr.input_required";
/// `tessera.mrtr.continued`: the request answers an earlier round.
pub const MRTR_CONTINUED: &str = "tessera.mrtr.continued";
/// `tessera.mrtr.call`: shared by the rounds of one client call.
pub const MRTR_CALL: &str = "tessera.mrtr.call";
/// `tessera.mrtr.round`: the round's number within its call, from 0.
pub const MRTR_ROUND: &str = "tessera.mrtr.round";
/// `tessera.task.id`: the task a request creates or is about.
pub const TASK_ID: &str = "tessera.task.id";
/// `tessera.server.name`: the server's self-reported name.
pub const SERVER_NAME: &str = "tessera.server.name";
/// `tessera.server.version`: the server's self-reported version.
pub const SERVER_VERSION: &str = "tessera.server.version";

/// Whether requests of `era` belong to a session (`mcp.session.id`, the
/// session duration histograms).
pub fn has_sessions(era: Era) -> bool {
    era == Era::Legacy
}

/// Attributes read from a request's params beyond the convention's;
/// `has` tells whether a top-level param is present.
pub fn request_attributes(has: impl Fn(&str) -> bool) -> Vec<KeyValue> {
    if has("inputResponses") || has("requestState") {
        vec![KeyValue::new(MRTR_CONTINUED, true)]
    } else {
        Vec::new()
    }
}

/// The task id a task method's params name.
pub fn task_id_param<'a>(
    method: &str,
    lookup: impl Fn(&str) -> Option<&'a str>,
) -> Option<&'a str> {
    method
        .starts_with("tasks/")
        .then(|| lookup("taskId"))
        .flatten()
}

/// Attributes read from a result: an MRTR round asking for input, a task
/// created.
pub fn result_attributes(result: &JsonObject) -> Vec<KeyValue> {
    ResultHead::of(result).attributes()
}

/// The members of a result telemetry records (the others skipped).
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct ResultHead {
    /// `isError`.
    pub is_error: Loose<bool>,
    /// `resultType`.
    pub result_type: Loose<String>,
    /// `task`: a task created.
    pub task: Loose<TaskRef>,
}

impl ResultHead {
    /// The members of `result` (none when it does not read).
    pub fn of(result: &JsonObject) -> ResultHead {
        decode_object_params(Some(result)).unwrap_or_default()
    }

    /// Whether the result is a tool's error (`isError: true`).
    pub fn is_error(&self) -> bool {
        self.is_error.valid() == Some(&true)
    }

    /// The attributes of the result (see [`result_attributes_of`]).
    pub fn attributes(self) -> Vec<KeyValue> {
        let input_required = self.result_type.valid().map(String::as_str) == Some("input_required");
        let task_id = self.task.into_valid().and_then(|t| t.task_id.into_valid());
        result_attributes_of(input_required, task_id.as_deref())
    }
}

/// The arguments of a `tools/call` (the other members skipped).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct CallArguments {
    /// `arguments`, whatever their shape.
    pub arguments: Loose<Value>,
}

/// The task a result created.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct TaskRef {
    /// `taskId`.
    pub task_id: Loose<String>,
    /// Other members (ignored; they make only objects read as a task).
    #[serde(flatten)]
    _others: JsonObject,
}

/// The attributes of a result that asks for input (`input_required`) or
/// created the task `task_id`.
pub fn result_attributes_of(input_required: bool, task_id: Option<&str>) -> Vec<KeyValue> {
    let mut out = Vec::new();
    if input_required {
        out.push(KeyValue::new(MRTR_INPUT_REQUIRED, true));
    }
    if let Some(id) = task_id {
        out.push(KeyValue::new(TASK_ID, crate::convention::short(id)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn modern_requests_have_no_session() {
        assert!(has_sessions(Era::Legacy));
        assert!(!has_sessions(Era::Modern));
    }

    #[test]
    fn reads_rounds_and_tasks() {
        let r = json!({"resultType": "input_required", "inputRequests": {}});
        let a = result_attributes(r.as_object().unwrap());
        assert_eq!(a, vec![KeyValue::new(MRTR_INPUT_REQUIRED, true)]);
        let r = json!({"task": {"taskId": "t1", "status": "working"}});
        let a = result_attributes(r.as_object().unwrap());
        assert_eq!(a, vec![KeyValue::new(TASK_ID, "t1")]);
        let a = request_attributes(|k| k == "requestState");
        assert_eq!(a, vec![KeyValue::new(MRTR_CONTINUED, true)]);
        assert_eq!(task_id_param("tasks/get", |_| Some("t2")), Some("t2"));
        assert_eq!(task_id_param("tools/call", |_| Some("t2")), None);
    }
}
