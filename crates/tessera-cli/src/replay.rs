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
use serde_json::{Value, json};
use tessera::types::{JsonObject, methods};

use crate::connect::ClientOptions;
use crate::exit::{Exit, Failure};

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
    /// The answer as compared: `{"result": …}` or `{"error": {code, message}}`.
    pub expected: Value,
}

/// The answer of a response message, as compared.
fn comparable(message: &Value) -> Value {
    if let Some(e) = message.get("error") {
        return json!({"error": {"code": e.get("code"), "message": e.get("message")}});
    }
    let mut result = message.get("result").cloned().unwrap_or(Value::Null);
    if let Some(o) = result.as_object_mut() {
        o.remove("_meta");
    }
    json!({ "result": result })
}

/// The requests of connection `conn` (or the first with one) in a
/// transcript, each with its recorded answer.
pub fn requests(transcript: &Value, conn: Option<u64>) -> Result<Vec<Recorded>, String> {
    if transcript.get("format").and_then(Value::as_str) != Some("tessera-inspect-transcript") {
        return Err("not a transcript exported by `tessera inspect` (no \"format\": \"tessera-inspect-transcript\")".into());
    }
    let events: Vec<&Value> = transcript
        .get("events")
        .and_then(Value::as_array)
        .ok_or("the transcript has no events")?
        .iter()
        .filter(|e| e.get("type").and_then(Value::as_str) == Some("protocol"))
        .collect();
    let skipped = |m: &str| {
        m == methods::INITIALIZE || m == methods::SERVER_DISCOVER || m.starts_with("notifications/")
    };
    let is_request = |e: &&Value| {
        e["dir"] == "out"
            && (e["message"]["id"].is_number() || e["message"]["id"].is_string())
            && e["message"]["method"].as_str().is_some_and(|m| !skipped(m))
    };
    let conn = match conn {
        Some(c) => c,
        None => events
            .iter()
            .find(|e| is_request(e))
            .and_then(|e| e["connection"].as_u64())
            .ok_or("the transcript has no request to replay")?,
    };
    let mine: Vec<&&Value> = events.iter().filter(|e| e["connection"] == conn).collect();
    let mut out = Vec::new();
    for (i, e) in mine.iter().enumerate() {
        if !is_request(e) {
            continue;
        }
        let m = &e["message"];
        let id = &m["id"];
        let answer = mine[i + 1..].iter().find(|r| {
            r["dir"] == "in" && r["message"]["id"] == *id && r["message"].get("method").is_none()
        });
        let Some(answer) = answer else {
            // No answer recorded (cancelled, or the connection ended first).
            continue;
        };
        let mut params = m.get("params").and_then(Value::as_object).cloned();
        if let Some(p) = params.as_mut() {
            p.remove("_meta");
        }
        out.push(Recorded {
            method: m["method"].as_str().unwrap_or_default().to_owned(),
            params,
            expected: comparable(&answer["message"]),
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
    let name = r
        .params
        .as_ref()
        .and_then(|p| p.get("name").or_else(|| p.get("uri")))
        .and_then(Value::as_str);
    match name {
        Some(n) => format!("{} {n}", r.method),
        None => r.method.clone(),
    }
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
            Ok(result) => comparable(&json!({ "result": result })),
            Err(e) => match e.remote() {
                Some(remote) => json!({"error": {"code": remote.code, "message": remote.message}}),
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
        report.push(json!({
            "method": r.method, "params": r.params, "equal": equal,
            "expected": r.expected, "actual": actual,
        }));
    }
    s.close().await;
    if a.opts.json {
        let mut doc = JsonObject::new();
        doc.insert("equal".into(), json!(differ == 0));
        doc.insert("requests".into(), Value::Array(report));
        crate::output::json_object(&doc);
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

    fn ev(conn: u64, dir: &str, message: Value) -> Value {
        json!({"type": "protocol", "connection": conn, "dir": dir, "message": message})
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
        assert_eq!(r[0].expected, json!({"result": {"content": []}}));
        assert_eq!(
            r[1].expected,
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
