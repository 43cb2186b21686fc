//! `tools/call`: what the server reads of the params before the handler
//! runs, and the call itself, answered as a tree or as JSON text.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;
use tessera_proto::{Reply, ResultShape};
use tessera_runtime::{BoxFuture, Request};
use tessera_types::{CallToolResult, ErrorObject, JsonObject, Params};

use crate::context::RequestContext;
use crate::extract::{Arguments, HandlerInput, RequestParts, ToolCall};
use crate::schema::LazyValidator;
use crate::server::{Server, to_object};
use crate::task::call::{TaskCall, TaskPlan};

/// What a tool call's answer is made into: a tree for the middleware path,
/// JSON text ([`Reply`]) where nothing reads it before it is written.
pub(crate) trait ToolOutput: From<JsonObject> + Send + 'static {
    /// The answer for a typed result (a tool's [`CallToolResult`], the
    /// `CreateTaskResult` of a call that became a task), to a request whose
    /// result is shaped with `shape` (2026-07-28: `resultType` and the
    /// server's `_meta`, written in the same pass when the result has
    /// neither of its own).
    fn from_result<R: Serialize>(result: &R, shape: Option<&ResultShape>) -> Self;
}

impl ToolOutput for JsonObject {
    /// A tree, without the shape: the engine completes it.
    fn from_result<R: Serialize>(result: &R, _shape: Option<&ResultShape>) -> Self {
        to_object(result)
    }
}

impl ToolOutput for Reply {
    fn from_result<R: Serialize>(result: &R, shape: Option<&ResultShape>) -> Self {
        crate::server::typed_reply(result, shape)
    }
}

/// What `tools/call` reads of its params before the handler runs.
struct CallParams<'a> {
    name: Cow<'a, str>,
    /// The `arguments` object (absent and `null` read as none).
    arguments: GivenArguments<'a>,
}

/// A call's `arguments`, as its params hold them.
enum GivenArguments<'a> {
    /// Absent or `null`.
    None,
    /// An object's text.
    Text(&'a str),
    /// An object in params built as a tree.
    Tree(&'a JsonObject),
}

impl GivenArguments<'_> {
    /// The arguments as the handler gets them, checked against `input` first
    /// when the tool has a check (then as a tree: what the validator reads).
    fn checked(self, input: &LazyValidator, check: bool) -> Result<Arguments, String> {
        // Unchecked arguments leave a deferred schema alone: compiling it
        // (the first one builds JSON Schema's meta-schema validator, about 5
        // million instructions) is for explaining a call that did not decode.
        let v = match check.then(|| input.get()).flatten() {
            Some(v) => v,
            _ => {
                return Ok(match self {
                    GivenArguments::None => Arguments::None,
                    GivenArguments::Text(t) => Arguments::Text(t.into()),
                    GivenArguments::Tree(o) => Arguments::Tree(o.clone()),
                });
            }
        };
        let object = match self {
            GivenArguments::None => None,
            GivenArguments::Text(t) => {
                Some(serde_json::from_str::<JsonObject>(t).map_err(|e| e.to_string())?)
            }
            GivenArguments::Tree(o) => Some(o.clone()),
        };
        // Checked as a value, then handed over as the object it is.
        let given = object.is_some();
        let value = Value::Object(object.unwrap_or_default());
        v.check(&value)?;
        Ok(match value {
            Value::Object(o) if given => Arguments::Tree(o),
            _ => Arguments::None,
        })
    }
}

/// The members of `tools/call` params read from their text; the rest
/// (`_meta`, the round fields) is read elsewhere or not at all.
#[derive(Deserialize)]
struct CallText<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
    #[serde(rename = "_meta", borrow, default)]
    meta: Option<&'a RawValue>,
    #[serde(borrow, default)]
    task: Option<&'a RawValue>,
}

/// Checks the shape of `tools/call` params (the typed form is
/// [`CallToolRequestParams`](tessera_types::CallToolRequestParams)) and reads
/// the tool's name and arguments. Params that arrived as text are read from
/// it: only the arguments become a tree. `inputResponses` and `requestState`
/// are read on their own (see [`Server::prepare_input`](crate::Server)).
fn call_params(params: Option<&Params>) -> Result<CallParams<'_>, String> {
    let Some(p) = params else {
        return Err("missing field `name`".into());
    };
    let Some(text) = p.raw() else {
        return call_params_of_tree(p.object());
    };
    match call_params_noted(p) {
        Some(read) => Ok(read),
        None => call_params_of_text(text.get()),
    }
}

/// [`call_params`] for params that arrived as text, read from the text.
fn call_params_of_text(text: &str) -> Result<CallParams<'_>, String> {
    let t: CallText<'_> = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let object_or_null = |v: Option<&RawValue>, key: &str| -> Result<(), String> {
        match v.map(|v| v.get().trim_start().as_bytes().first().copied()) {
            None | Some(Some(b'{')) => Ok(()),
            Some(_) => Err(format!(
                "invalid type: {}, expected a map (field `{key}`)",
                kind_of_text(v.map(RawValue::get).unwrap_or("null"))
            )),
        }
    };
    object_or_null(t.arguments, "arguments")?;
    object_or_null(t.meta, "_meta")?;
    if let Some(task) = t.task {
        serde_json::from_str::<Option<tessera_types::tasks::legacy::TaskMetadata>>(task.get())
            .map_err(|e| e.to_string())?;
    }
    let arguments = match t.arguments {
        Some(a) if a.get().trim_start().starts_with('{') => GivenArguments::Text(a.get()),
        _ => GivenArguments::None,
    };
    Ok(CallParams {
        name: t.name,
        arguments,
    })
}

/// [`call_params`] from what the params' head noted as it read their text
/// (see [`Params::noted`]), without reading them again: `None` unless the
/// params are plainly valid (one string `name`; at most one `arguments` and
/// one `_meta`, each an object or `null`; no `task`). Anything else is
/// read by [`CallText`], for its exact error.
fn call_params_noted(p: &Params) -> Option<CallParams<'_>> {
    let [name, arguments, meta, task] =
        ["name", "arguments", "_meta", "task"].map(|key| p.noted(key));
    let (arguments, meta) = (arguments?, meta?);
    let object_or_null = |opens: Option<u8>| matches!(opens, None | Some(b'{' | b'n'));
    let plain = name?.count == 1
        && arguments.count <= 1
        && object_or_null(arguments.opens)
        && meta.count <= 1
        && object_or_null(meta.opens)
        && task?.count == 0;
    let Some(Value::String(name)) = p.name().filter(|_| plain) else {
        return None;
    };
    let arguments = match (arguments.opens, arguments.text) {
        (Some(b'{'), Some(text)) => GivenArguments::Text(text),
        (Some(b'{'), None) => return None,
        _ => GivenArguments::None,
    };
    Some(CallParams {
        name: Cow::Borrowed(name),
        arguments,
    })
}

/// [`call_params`] for params built as a tree.
fn call_params_of_tree(p: &JsonObject) -> Result<CallParams<'_>, String> {
    let name = match p.get("name") {
        Some(Value::String(n)) => n.as_str(),
        Some(other) => return Err(format!("invalid type: {}, expected a string", kind(other))),
        None => return Err("missing field `name`".into()),
    };
    for key in ["arguments", "_meta"] {
        match p.get(key) {
            None | Some(Value::Null) | Some(Value::Object(_)) => {}
            Some(other) => {
                return Err(format!(
                    "invalid type: {}, expected a map (field `{key}`)",
                    kind(other)
                ));
            }
        }
    }
    if let Some(task) = p.get("task").filter(|t| !t.is_null()) {
        tessera_types::tasks::legacy::TaskMetadata::deserialize(task).map_err(|e| e.to_string())?;
    }
    Ok(CallParams {
        name: Cow::Borrowed(name),
        arguments: match p.get("arguments") {
            Some(Value::Object(o)) => GivenArguments::Tree(o),
            _ => GivenArguments::None,
        },
    })
}

/// How serde names a JSON value's type in its errors.
fn kind(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("boolean `{b}`"),
        Value::Number(n) => format!("number `{n}`"),
        Value::String(s) => format!("string {s:?}"),
        Value::Array(_) => "sequence".into(),
        Value::Object(_) => "map".into(),
    }
}

/// [`kind`] for a value's text (the value is small or its kind is enough).
fn kind_of_text(text: &str) -> String {
    match text.trim_start().as_bytes().first() {
        Some(b'[') => "sequence".into(),
        Some(b'{') => "map".into(),
        _ => serde_json::from_str::<Value>(text).map_or_else(|_| "value".into(), |v| kind(&v)),
    }
}

impl<S: Send + Sync + 'static> Server<S> {
    /// Serves `tools/call`, answering with `T`: a tree, or a [`Reply`] whose
    /// result is written as JSON text.
    pub(crate) fn call_tool<T: ToolOutput>(
        &self,
        r: Request,
    ) -> BoxFuture<'static, Result<T, ErrorObject>> {
        let ready = |out: Result<T, ErrorObject>| -> BoxFuture<'static, Result<T, ErrorObject>> {
            Box::pin(async move { out })
        };
        let CallParams { name, arguments } = match call_params(r.params.as_ref()) {
            Ok(p) => p,
            Err(e) => {
                return ready(Err(ErrorObject::invalid_params(format!(
                    "Invalid params for tools/call: {e}"
                ))));
            }
        };
        let name = name.into_owned();
        let tool = match self.read().tools.get(&name) {
            Some(Ok(tool)) => tool,
            // Its schemas, derived on first use, were refused: the server's bug.
            Some(Err(e)) => {
                return ready(Err(ErrorObject::internal(format!("Internal error: {e}"))));
            }
            None => {
                return ready(Err(ErrorObject::invalid_params(format!(
                    "Unknown tool: {}",
                    tessera_types::excerpt(&name)
                ))));
            }
        };
        let mut context = RequestContext::from_request(&r);
        for e in &self.inner.extensions.list {
            if let Err(refused) = e.check_tool_call(&context, &tool.tool) {
                return ready(Err(refused));
            }
        }
        let missing: Vec<&String> = tool
            .requires
            .iter()
            .filter(|c| !r.context.peer_capabilities.declares(c))
            .collect();
        if !missing.is_empty() {
            let names: Vec<&str> = missing.iter().map(|s| s.as_str()).collect();
            if r.context.era == tessera_types::Era::Modern {
                let required: JsonObject = names
                    .iter()
                    .map(|n| ((*n).to_owned(), Value::Object(JsonObject::new())))
                    .collect();
                return ready(Err(ErrorObject::new(
                    tessera_types::ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
                    format!(
                        "Missing required client capability: tool {name} needs {}",
                        names.join(", ")
                    ),
                )
                .with_data(serde_json::json!({ "requiredCapabilities": required }))));
            }
            return ready(Ok(T::from_result(
                &CallToolResult::error(format!(
                    "Tool {name} needs the client capability {}, which this client did not declare",
                    names.join(", ")
                )),
                r.context.result_shape.as_ref(),
            )));
        }
        if tool.check_input {
            // Compiled at registration unless the server compiles schemas on
            // first use: a schema that does not compile is the server's bug.
            if let Err(problem) = tool.input.compiled() {
                return ready(Err(ErrorObject::internal(format!(
                    "Internal error: the inputSchema of tool {name} does not compile: {problem}"
                ))));
            }
        }
        let arguments = match arguments.checked(&tool.input, tool.check_input) {
            Ok(a) => a,
            Err(problem) => {
                return ready(Ok(T::from_result(
                    &CallToolResult::error(format!("Invalid arguments for tool {name}: {problem}")),
                    r.context.result_shape.as_ref(),
                )));
            }
        };
        let input = match self.prepare_input(&r) {
            Ok(i) => i,
            Err(e) => return ready(Err(e)),
        };
        let plan =
            match crate::task::call::plan(&r, &name, tool.task_support(), tool.task_start, || {
                self.read().tools.offers_tasks()
            }) {
                Ok(p) => p,
                Err(e) => return ready(Err(e)),
            };
        context.input = Some(input.clone());
        let task =
            (plan != TaskPlan::Inline).then(|| TaskCall::new(self.tasks().clone(), &r, plan));
        if let Some(t) = &task {
            context.cancel = t.cancel.clone();
            context.task = Some(t.link.clone());
        }
        let call = HandlerInput {
            parts: RequestParts::new(self, context),
            body: ToolCall::new(
                name,
                arguments,
                (!tool.check_input).then(|| tool.input.clone()),
            ),
        };
        let fut = (tool.handler)(call);
        let server = self.clone();
        let principal = crate::mrtr::principal(&r);
        // The result, checked against the tool's `outputSchema`.
        let checked = async move {
            let result = fut.await?;
            if let (Some(v), false) = (&tool.output, result.is_error == Some(true)) {
                let v = v.compiled().map_err(|problem| {
                    ErrorObject::internal(format!(
                        "Internal error: the outputSchema of tool {} does not compile: {problem}",
                        tool.tool.name
                    ))
                })?;
                let structured = result.structured_content.clone().unwrap_or(Value::Null);
                if let Err(problem) = v.check(&structured) {
                    return Err(ErrorObject::internal(format!(
                        "Internal error: tool {} returned output that does not match its outputSchema: {problem}",
                        tool.tool.name
                    )));
                }
            }
            Ok(result)
        };
        Box::pin(async move {
            match task {
                Some(t) => {
                    let run = async move { checked.await.map(|result| to_object(&result)) };
                    t.run(server, &r, principal, input, Box::pin(run)).await
                }
                None => {
                    let shape = r.context.result_shape.clone();
                    let run = async move {
                        checked
                            .await
                            .map(|result| T::from_result(&result, shape.as_ref()))
                    };
                    server
                        .run_with_input(&r.method, r.params.as_ref(), principal, input, run)
                        .await
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tool's result is written with `resultType` (and `_meta` when the
    /// shape has the server's identity) in one pass; its own `resultType` is
    /// kept (only `_meta` in front); see below for its own `_meta`.
    #[test]
    fn a_call_result_is_shaped_unless_it_has_its_own_meta() {
        let text = |r: Reply| match r {
            Reply::Raw(t) => t.get().to_owned(),
            Reply::Object(o) => panic!("a tree: {o:?}"),
        };
        let info: std::sync::Arc<RawValue> = RawValue::from_string(r#"{"name":"s"}"#.into())
            .unwrap()
            .into();
        let named = ResultShape::new(Some(info));
        let nameless = ResultShape::new(None);
        let plain = CallToolResult::text("hi");
        let content = r#""content":[{"type":"text","text":"hi"}]"#;
        let meta = r#""_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s"}}"#;
        assert_eq!(
            text(Reply::from_result(&plain, Some(&nameless))),
            format!(r#"{{"resultType":"complete",{content}}}"#)
        );
        assert_eq!(
            text(Reply::from_result(&plain, Some(&named))),
            format!(r#"{{"resultType":"complete",{meta},{content}}}"#)
        );
        let mut typed = plain.clone();
        typed.result_type = Some(tessera_types::ResultType::Complete);
        assert_eq!(
            text(Reply::from_result(&typed, Some(&named))),
            format!(r#"{{{meta},{content},"resultType":"complete"}}"#)
        );
        assert_eq!(
            text(Reply::from_result(&typed, Some(&nameless))),
            format!(r#"{{{content},"resultType":"complete"}}"#)
        );
        // Its own `_meta`: kept by a nameless shape; for a named one, the
        // tree the engine merges the identity into (not a text to read).
        let mut with_meta = plain.clone();
        with_meta.meta = Some(JsonObject::from_iter([("k".into(), 1.into())]));
        assert_eq!(
            text(Reply::from_result(&with_meta, Some(&nameless))),
            format!(r#"{{"resultType":"complete",{content},"_meta":{{"k":1}}}}"#)
        );
        assert_eq!(
            Reply::from_result(&with_meta, Some(&named)),
            Reply::Object(to_object(&with_meta))
        );
        // A `_meta` naming the server already, or no shape: the bare text.
        let mut named_meta = plain.clone();
        named_meta.meta = Some(JsonObject::from_iter([(
            tessera_proto::meta_keys::SERVER_INFO.into(),
            serde_json::json!({"name": "up"}),
        )]));
        for (result, shape) in [(&plain, None), (&named_meta, Some(&named))] {
            assert_eq!(
                text(Reply::from_result(result, shape)),
                serde_json::to_string(result).unwrap()
            );
        }
    }

    /// A call's params as read: its name and its arguments' text.
    type Read = Result<(String, Option<String>), String>;

    fn read(p: Result<CallParams<'_>, String>) -> Read {
        p.map(|c| {
            let arguments = match c.arguments {
                GivenArguments::None => None,
                GivenArguments::Text(t) => Some(t.to_owned()),
                GivenArguments::Tree(_) => panic!("params were text"),
            };
            (c.name.into_owned(), arguments)
        })
    }

    /// What the params' head noted decides a call as reading its text
    /// does, and leaves every other call to that reading.
    #[test]
    fn a_call_read_from_the_head_reads_as_its_text_does() {
        let mut fast = 0;
        for text in [
            r#"{"name":"echo","arguments":{"text":"hi"}}"#,
            r#"{"arguments":{"a":{"b":[1,"}"]}},"name":"a\"b","_meta":{"k":1}}"#,
            r#"{"name":"n"}"#,
            r#"{"name":"n","arguments":null,"_meta":null}"#,
            r#"{"name":"n","arguments":{ }}"#,
            r#"{"name":"n","arguments":[1]}"#,
            r#"{"name":"n","arguments":"{}"}"#,
            r#"{"name":"n","arguments":1}"#,
            r#"{"name":"n","_meta":[]}"#,
            r#"{"name":"n","_meta":7}"#,
            r#"{"name":7}"#,
            r#"{"name":null}"#,
            r#"{"arguments":{}}"#,
            r#"{"name":"n","name":"m"}"#,
            r#"{"name":"n","arguments":{},"arguments":{}}"#,
            r#"{"name":"n","_meta":{},"_meta":{}}"#,
            r#"{"name":"n","task":{"ttl":5}}"#,
            r#"{"name":"n","task":null}"#,
            r#"{"name":"n","task":{"ttl":"x"}}"#,
            r#"{"n\u0061me":"escaped","\u0061rguments":{"x":1}}"#,
            r#"{"name":"n","other":{"name":1,"arguments":2}}"#,
        ] {
            let p = Params::from_raw(RawValue::from_string(text.to_owned()).unwrap()).unwrap();
            let expected = read(call_params_of_text(text));
            if let Some(noted) = call_params_noted(&p) {
                fast += 1;
                assert_eq!(read(Ok(noted)), expected, "{text}");
            }
            assert_eq!(read(call_params(Some(&p))), expected, "{text}");
        }
        assert!(fast >= 6, "{fast} calls read from the head");
    }
}
