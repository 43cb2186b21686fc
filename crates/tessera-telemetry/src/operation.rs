//! One request (or received notification) as telemetry records it, on
//! either side: its span, its duration and the attributes both share, ended
//! exactly once with how it ended (dropped unanswered counts as cancelled).

use std::time::Instant;

use opentelemetry::metrics::Histogram;
use opentelemetry::trace::{Status, TraceContextExt};
use opentelemetry::{Context, KeyValue};
use serde_json::Value;
use tessera_types::{JsonObject, ProtocolVersion};

use crate::convention::{
    CANCELLED, ERROR_TYPE, EXECUTE_TOOL, GEN_AI_OPERATION_NAME, GEN_AI_PROMPT_NAME,
    GEN_AI_TOOL_CALL_ARGUMENTS, GEN_AI_TOOL_CALL_RESULT, GEN_AI_TOOL_NAME, MCP_METHOD_NAME,
    MCP_PROTOCOL_VERSION, MCP_RESOURCE_URI, RPC_RESPONSE_STATUS_CODE, TOOL_ERROR, Target, short,
};
use crate::era;
use crate::options::Options;

/// How a request (or a received notification) ended, as both sides see it.
#[derive(Debug)]
pub(crate) enum Ending<'a> {
    /// A result object.
    Object(&'a JsonObject),
    /// A result as JSON text (a proxy's pass-through).
    Raw(&'a str),
    /// A JSON-RPC error answer.
    Error {
        /// Its code.
        code: i64,
        /// Its message.
        message: &'a str,
    },
    /// A notification the stack took (a notification gets no answer).
    Taken,
    /// A notification a layer refused, with this code: it was dropped and
    /// nothing was sent back, so `error.type` is the code and no
    /// `rpc.response.status_code` is recorded.
    Dropped {
        /// The refusal's code.
        code: i64,
        /// The refusal's message.
        message: &'a str,
    },
    /// A failure without a JSON-RPC code: `error.type` is `kind`.
    Local {
        /// The low-cardinality `error.type`.
        kind: &'static str,
        /// The description.
        message: String,
    },
}

/// What a result says, read from an object or from its text.
#[derive(Debug, Default)]
struct Peek {
    is_error: bool,
    extra: Vec<KeyValue>,
}

impl Peek {
    fn of_object(o: &JsonObject) -> Peek {
        let head = era::ResultHead::of(o);
        Peek {
            is_error: head.is_error(),
            extra: head.attributes(),
        }
    }

    fn of_text(text: &str) -> Peek {
        // One pass over the top level; nothing else is built.
        let t = crate::peek::top_level(text);
        Peek {
            is_error: t.is_error,
            extra: era::result_attributes_of(t.input_required, t.task_id.as_deref()),
        }
    }
}

/// The attributes the span and the duration metric share, plus those only
/// the span carries.
#[derive(Debug, Default)]
pub(crate) struct Attributes {
    /// On the span and the metric.
    pub shared: Vec<KeyValue>,
    /// On the span only (`jsonrpc.request.id`, `mcp.session.id`,
    /// `mcp.resource.uri` unless opted in for metrics, payloads).
    pub span_only: Vec<KeyValue>,
}

impl Attributes {
    /// The attributes of a request (or notification) to `method` about
    /// `target`, in `version`.
    pub fn of_request(
        method: &str,
        target: Option<&Target<'_>>,
        version: Option<&ProtocolVersion>,
        options: &Options,
    ) -> Attributes {
        let mut a = Attributes::default();
        a.shared.push(KeyValue::new(MCP_METHOD_NAME, short(method)));
        match target {
            Some(Target::Tool(n)) => {
                a.shared.push(KeyValue::new(GEN_AI_TOOL_NAME, short(n)));
                a.shared
                    .push(KeyValue::new(GEN_AI_OPERATION_NAME, EXECUTE_TOOL));
            }
            Some(Target::Prompt(n)) => {
                a.shared.push(KeyValue::new(GEN_AI_PROMPT_NAME, short(n)));
            }
            Some(Target::Resource(u)) => {
                let kv = KeyValue::new(MCP_RESOURCE_URI, short(u));
                if options.resource_uri_in_metrics {
                    a.shared.push(kv);
                } else {
                    a.span_only.push(kv);
                }
            }
            None => {}
        }
        if let Some(v) = version {
            a.shared
                .push(KeyValue::new(MCP_PROTOCOL_VERSION, v.as_str().to_owned()));
        }
        a
    }

    /// Adds the tool call's arguments (opted in), as JSON text cut to the
    /// options' bound.
    pub fn tool_arguments(&mut self, arguments: Option<&Value>, options: &Options) {
        if let (true, Some(args)) = (options.record_tool_payloads, arguments) {
            let text = args.to_string();
            self.span_only.push(KeyValue::new(
                GEN_AI_TOOL_CALL_ARGUMENTS,
                bounded(text, options.max_payload_bytes),
            ));
        }
    }
}

/// `text` cut to at most `max` bytes, at a character boundary.
pub(crate) fn bounded(mut text: String, max: usize) -> String {
    let end = crate::convention::cut(&text, max).len();
    text.truncate(end);
    text
}

/// A request or a received notification being recorded.
pub(crate) struct Operation {
    cx: Context,
    started: Instant,
    metric: Histogram<f64>,
    shared: Vec<KeyValue>,
    is_tool_call: bool,
    record_result: Option<usize>,
    done: bool,
}

impl Operation {
    /// Starts recording; `cx` holds the started span.
    pub fn new(
        cx: Context,
        metric: Histogram<f64>,
        shared: Vec<KeyValue>,
        method: &str,
        options: &Options,
    ) -> Operation {
        let is_tool_call = method == "tools/call";
        Operation {
            cx,
            started: Instant::now(),
            metric,
            shared,
            is_tool_call,
            record_result: (is_tool_call && options.record_tool_payloads)
                .then_some(options.max_payload_bytes),
            done: false,
        }
    }

    /// Ends the span and records the duration.
    pub fn finish(mut self, ending: Ending<'_>, extra: Vec<KeyValue>) {
        self.end(ending, extra);
    }

    fn end(&mut self, ending: Ending<'_>, extra: Vec<KeyValue>) {
        if self.done {
            return;
        }
        self.done = true;
        let elapsed = self.started.elapsed().as_secs_f64();
        let span = self.cx.span();
        let mut shared = std::mem::take(&mut self.shared);
        let mut span_only = extra;
        let status = match ending {
            Ending::Object(o) => {
                let mut peek = Peek::of_object(o);
                if let (Some(max), false) = (self.record_result, peek.is_error) {
                    span_only.push(KeyValue::new(
                        GEN_AI_TOOL_CALL_RESULT,
                        bounded(Value::Object(o.clone()).to_string(), max),
                    ));
                }
                span_only.extend(std::mem::take(&mut peek.extra));
                self.result_status(&peek, &mut shared)
            }
            Ending::Raw(text) => {
                let mut peek = Peek::of_text(text);
                if let (Some(max), false) = (self.record_result, peek.is_error) {
                    span_only.push(KeyValue::new(
                        GEN_AI_TOOL_CALL_RESULT,
                        bounded(text.to_owned(), max),
                    ));
                }
                span_only.extend(std::mem::take(&mut peek.extra));
                self.result_status(&peek, &mut shared)
            }
            Ending::Error { code, message } => {
                let code = code.to_string();
                shared.push(KeyValue::new(ERROR_TYPE, code.clone()));
                shared.push(KeyValue::new(RPC_RESPONSE_STATUS_CODE, code));
                Status::error(short(message))
            }
            Ending::Local { kind, message } => {
                shared.push(KeyValue::new(ERROR_TYPE, kind));
                Status::error(short(&message))
            }
            Ending::Taken => Status::Unset,
            Ending::Dropped { code, message } => {
                shared.push(KeyValue::new(ERROR_TYPE, code.to_string()));
                Status::error(short(message))
            }
        };
        self.metric.record(elapsed, &shared);
        span.set_attributes(shared);
        span.set_attributes(span_only);
        span.set_status(status);
        span.end();
    }

    fn result_status(&self, peek: &Peek, shared: &mut Vec<KeyValue>) -> Status {
        if self.is_tool_call && peek.is_error {
            shared.push(KeyValue::new(ERROR_TYPE, TOOL_ERROR));
            Status::error(TOOL_ERROR)
        } else {
            Status::Unset
        }
    }
}

impl Drop for Operation {
    fn drop(&mut self) {
        self.end(
            Ending::Local {
                kind: CANCELLED,
                message: "the request was cancelled before its answer".into(),
            },
            Vec::new(),
        );
    }
}
