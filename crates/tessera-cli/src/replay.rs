//! `tessera replay FILE TARGET`: sends the requests of a transcript that
//! `tessera inspect` exported (Protocol tab, or `GET /api/transcript`) to
//! any server, in order, and compares each answer with the one recorded.
//! Exit 0 when every answer is the same, 12 when any differs (usable in CI).
//!
//! The requests replayed are those the inspector sent on one connection
//! (`--connection N`; default the first), but the lifecycle's
//! (`initialize`, `server/discover`) and notifications. Each is sent as it
//! was (its `params` without `_meta`, which the client writes), without
//! answering multi round-trip input itself, so that each round is compared
//! with its own recorded answer. Answers are compared without their `_meta`;
//! a JSON-RPC error is compared by its code and message.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tessera::types::{JsonObject, RequestId, methods};

use crate::connect::ClientOptions;
use crate::exit::{Exit, Failure};
use tessera::types::loose;

/// The largest transcript read.
const MAX_FILE: u64 = 64 * 1024 * 1024;

/// `tessera replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The transcript (exported by `tessera inspect`), then the server's
    /// http(s) URL (or `-- COMMAND ARGS...`, or --server NAME).
    #[arg(value_name = "FILE [URL]", required = true, num_args = 1..=2)]
    positional: Vec<String>,
    /// The transcript's connection whose requests are replayed (default:
    /// the first that sent one).
    #[arg(long, value_name = "N")]
    connection: Option<u64>,
    #[command(flatten)]
    opts: ClientOptions,
}

/// One recorded request and its recorded answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    /// The method.
    pub method: String,
    /// The params, without `_meta`.
    pub params: Option<JsonObject>,
    /// What the request is about: its params' `name`, else `uri`.
    pub name: Option<String>,
    /// The answer as compared: `{"result": …}` or `{"error": {code, message}}`.
    pub expected: Answer,
}

/// An answer as compared: its result without `_meta`, or its error's code
/// and message (written `{"result": …}` or `{"error": {"code", "message"}}`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Answer {
    /// A result (`null` when the response had none).
    Result(Value),
    /// An error: its code and message as recorded (`null` when missing).
    Error {
        /// The error's code.
        code: Option<Value>,
        /// The error's message.
        message: Option<Value>,
    },
}

impl std::fmt::Display for Answer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text = serde_json::to_string(self).map_err(|_| std::fmt::Error)?;
        f.write_str(&text)
    }
}

/// The `error` of a recorded response: only what is compared.
#[derive(Debug, Default, Deserialize)]
struct RecordedError {
    #[serde(default)]
    code: Option<Value>,
    #[serde(default)]
    message: Option<Value>,
}

/// A JSON-RPC frame as the transcript recorded it (lenient: any member
/// may be missing).
#[derive(Debug, Deserialize)]
struct Frame {
    #[serde(default, deserialize_with = "tessera::types::loose::lenient")]
    id: Option<RequestId>,
    #[serde(default, deserialize_with = "tessera::types::loose::present_value")]
    method: Option<Value>,
    #[serde(default)]
    params: Option<Value>,
    #[serde(default)]
    result: Option<Value>,
    #[serde(default, deserialize_with = "tessera::types::loose::present_value")]
    error: Option<Value>,
}

/// A `protocol` event of the transcript: one frame on one connection.
#[derive(Debug, Deserialize)]
struct ProtocolEvent {
    connection: u64,
    dir: String,
    message: Frame,
}

/// The members of a transcript replay reads; its events stay raw until
/// each protocol one is read.
#[derive(Debug, Default, Deserialize)]
struct Transcript {
    #[serde(default)]
    format: Option<Value>,
    #[serde(default, deserialize_with = "tessera::types::loose::lenient")]
    events: Option<Vec<Value>>,
}

/// The members that name what a request is about.
#[derive(Debug, Deserialize)]
struct Named {
    #[serde(default)]
    name: Option<Value>,
    #[serde(default)]
    uri: Option<Value>,
}

/// The `type` of an event.
#[derive(Debug, Deserialize)]
struct EventKind {
    #[serde(rename = "type", default)]
    kind: Option<Value>,
}

impl Answer {
    /// The answer of a recorded response frame.
    fn of_frame(frame: &Frame) -> Answer {
        match &frame.error {
            Some(e) => {
                let e: RecordedError = loose::view_or_default(e);
                Answer::Error {
                    code: e.code,
                    message: e.message,
                }
            }
            None => Answer::of_result(frame.result.clone().unwrap_or(Value::Null)),
        }
    }

    /// The answer of a result, without its `_meta`.
    fn of_result(result: Value) -> Answer {
        match loose::view::<WithoutMeta>(&result) {
            Some(o) => Answer::Result(Value::Object(o.rest)),
            None => Answer::Result(result),
        }
    }
}

/// An object read without its `_meta` (which the client writes in params
/// and the server in results, so neither is compared).
#[derive(Debug, Deserialize)]
struct WithoutMeta {
    #[serde(rename = "_meta", default)]
    _meta: IgnoredAny,
    #[serde(flatten)]
    rest: JsonObject,
}

/// The protocol events of a transcript, read; events of other types, and
/// those not shaped as a protocol event, are left out.
fn protocol_events(events: &[Value]) -> Vec<ProtocolEvent> {
    events
        .iter()
        .filter(|e| {
            loose::view::<EventKind>(e)
                .is_some_and(|k| k.kind.as_ref().and_then(Value::as_str) == Some("protocol"))
        })
        .filter_map(loose::view::<ProtocolEvent>)
        .collect()
}

/// The requests of connection `conn` (or the first with one) in a
/// transcript, each with its recorded answer.
pub fn requests(transcript: &Value, conn: Option<u64>) -> Result<Vec<Recorded>, String> {
    let transcript: Transcript = loose::view_or_default(transcript);
    if transcript.format.as_ref().and_then(Value::as_str) != Some("tessera-inspect-transcript") {
        return Err("not a transcript exported by `tessera inspect` (no \"format\": \"tessera-inspect-transcript\")".into());
    }
    let events = protocol_events(
        transcript
            .events
            .as_deref()
            .ok_or("the transcript has no events")?,
    );
    let skipped = |m: &str| {
        m == methods::INITIALIZE || m == methods::SERVER_DISCOVER || m.starts_with("notifications/")
    };
    let is_request = |e: &ProtocolEvent| {
        e.dir == "out"
            && e.message.id.is_some()
            && e.message
                .method
                .as_ref()
                .and_then(Value::as_str)
                .is_some_and(|m| !skipped(m))
    };
    let conn = match conn {
        Some(c) => c,
        None => events
            .iter()
            .find(|e| is_request(e))
            .map(|e| e.connection)
            .ok_or("the transcript has no request to replay")?,
    };
    let mine: Vec<&ProtocolEvent> = events.iter().filter(|e| e.connection == conn).collect();
    let mut out = Vec::new();
    for (i, e) in mine.iter().enumerate() {
        if !is_request(e) {
            continue;
        }
        let m = &e.message;
        let answer = mine[i + 1..]
            .iter()
            .find(|r| r.dir == "in" && r.message.id == m.id && r.message.method.is_none());
        let Some(answer) = answer else {
            // No answer recorded (cancelled, or the connection ended first).
            continue;
        };
        let params = m
            .params
            .as_ref()
            .and_then(|p| WithoutMeta::deserialize(p).ok())
            .map(|p| p.rest);
        out.push(Recorded {
            method: m
                .method
                .as_ref()
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            name: m
                .params
                .as_ref()
                .and_then(loose::view::<Named>)
                .and_then(|n| n.name.or(n.uri))
                .and_then(|n| n.as_str().map(str::to_owned)),
            params,
            expected: Answer::of_frame(&answer.message),
        });
    }
    if out.is_empty() {
        return Err(format!(
            "connection {conn} of the transcript has no answered request to replay"
        ));
    }
    Ok(out)
}

/// A short description of a request for the report.
fn label(r: &Recorded) -> String {
    let name = r.name.as_deref();
    match name {
        Some(n) => format!("{} {n}", r.method),
        None => r.method.clone(),
    }
}

/// One request of the `--json` report (members in the order the report
/// has always written them).
#[derive(Debug, Serialize)]
struct Replayed {
    actual: Answer,
    equal: bool,
    expected: Answer,
    method: String,
    params: Option<JsonObject>,
}

/// The `--json` report.
#[derive(Debug, Serialize)]
struct ReplayReport {
    equal: bool,
    requests: Vec<Replayed>,
}

/// Runs `tessera replay`.
pub async fn run(a: ReplayArgs) -> Result<ExitCode, Failure> {
    let mut words = a.positional;
    let target = a.opts.target.resolve(&mut words, 1)?;
    let file = PathBuf::from(words.remove(0));
    crate::verbs::no_more(words.into_iter())?;
    let size = std::fs::metadata(&file)
        .map_err(|e| Failure::Usage(format!("{}: {e}", file.display())))?
        .len();
    if size > MAX_FILE {
        return Err(Failure::Usage(format!(
            "{}: {size} bytes, over the {MAX_FILE} bytes a transcript may have",
            file.display()
        )));
    }
    let text = std::fs::read_to_string(&file)
        .map_err(|e| Failure::Usage(format!("{}: {e}", file.display())))?;
    let transcript: Value = serde_json::from_str(&text)
        .map_err(|e| Failure::Usage(format!("{}: not JSON: {e}", file.display())))?;
    let recorded = requests(&transcript, a.connection)
        .map_err(|e| Failure::Usage(format!("{}: {e}", file.display())))?;
    let s = a.opts.connect_to(target).await?;
    let call = a.opts.call_options(&s);
    let mut report = Vec::new();
    let mut differ = 0usize;
    for r in &recorded {
        let actual = match s
            .client
            .request_raw_with(&r.method, r.params.clone(), &call)
            .await
        {
            Ok(result) => Answer::of_result(Value::Object(result)),
            Err(e) => match e.remote() {
                Some(remote) => Answer::Error {
                    code: Some(remote.code.into()),
                    message: Some(remote.message.clone().into()),
                },
                None => {
                    s.close().await;
                    return Err(Failure::client(e, format!("replaying {}", label(r))));
                }
            },
        };
        let equal = actual == r.expected;
        if !equal {
            differ += 1;
        }
        if !a.opts.json {
            if equal {
                println!("same     {}", label(r));
            } else {
                println!("DIFFERS  {}", label(r));
                println!("  recorded: {}", r.expected);
                println!("  now:      {actual}");
            }
        }
        report.push(Replayed {
            actual,
            equal,
            expected: r.expected.clone(),
            method: r.method.clone(),
            params: r.params.clone(),
        });
    }
    s.close().await;
    if a.opts.json {
        crate::output::json_of(&ReplayReport {
            equal: differ == 0,
            requests: report,
        });
    } else {
        println!("{} request(s) replayed, {differ} differ", recorded.len());
    }
    Ok(if differ == 0 {
        ExitCode::SUCCESS
    } else {
        Exit::ReplayDiffers.into()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ev(conn: u64, dir: &str, message: Value) -> Value {
        json!({"type": "protocol", "connection": conn, "dir": dir, "message": message})
    }

    #[test]
    fn answers_and_the_report_keep_their_shape() {
        let e = Answer::Error {
            code: Some(json!(-1)),
            message: None,
        };
        assert_eq!(e.to_string(), r#"{"error":{"code":-1,"message":null}}"#);
        let r = Answer::of_result(json!({"b": 1, "_meta": {}, "a": 2}));
        assert_eq!(r.to_string(), r#"{"result":{"a":2,"b":1}}"#);
        let report = ReplayReport {
            equal: false,
            requests: vec![Replayed {
                actual: r,
                equal: false,
                expected: e,
                method: "tools/call".into(),
                params: None,
            }],
        };
        assert_eq!(
            serde_json::to_value(report).unwrap(),
            json!({"equal": false, "requests": [{"actual": {"result": {"a": 2, "b": 1}},
                   "equal": false, "expected": {"error": {"code": -1, "message": null}},
                   "method": "tools/call", "params": null}]})
        );
        // A recorded error of another shape compares as missing members.
        let frame: Frame = serde_json::from_value(json!({"id": 1, "error": null})).unwrap();
        assert_eq!(
            Answer::of_frame(&frame),
            Answer::Error {
                code: None,
                message: None
            }
        );
    }

    #[test]
    fn picks_the_answered_requests_of_one_connection() {
        let t = json!({"format": "tessera-inspect-transcript", "version": 1, "events": [
            {"type": "connection", "connection": 1, "state": "connecting"},
            ev(1, "out", json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover"})),
            ev(1, "in", json!({"jsonrpc": "2.0", "id": 1, "result": {}})),
            ev(1, "out", json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                "params": {"name": "add", "_meta": {"progressToken": 3}}})),
            ev(2, "out", json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})),
            ev(1, "in", json!({"jsonrpc": "2.0", "id": 2,
                               "result": {"content": [], "_meta": {"x": 1}}})),
            ev(1, "out", json!({"jsonrpc": "2.0", "method": "notifications/cancelled"})),
            ev(1, "out", json!({"jsonrpc": "2.0", "id": 3, "method": "prompts/get"})),
            ev(1, "in", json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32602, "message": "no", "data": 1}})),
            ev(1, "out", json!({"jsonrpc": "2.0", "id": 4, "method": "ping"})),
        ]});
        let r = requests(&t, None).unwrap();
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(r[0].method, "tools/call");
        assert_eq!(r[0].params, json!({"name": "add"}).as_object().cloned());
        let expected = |i: usize| serde_json::to_value(&r[i].expected).unwrap();
        assert_eq!(expected(0), json!({"result": {"content": []}}));
        assert_eq!(
            expected(1),
            json!({"error": {"code": -32602, "message": "no"}})
        );
        assert!(
            requests(&t, Some(2))
                .unwrap_err()
                .contains("no answered request")
        );
        assert!(
            requests(&json!({"events": []}), None)
                .unwrap_err()
                .contains("format")
        );
    }
}
