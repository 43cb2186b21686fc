//! The Network tab's source: every HTTP exchange of an HTTP connection,
//! recorded into the [`Journal`] as an `http` event (method, URL, status,
//! headers with credentials masked, the request body, the time to the
//! answer's headers), with the `Mcp-*` headers checked against the rules of
//! the Streamable HTTP transport ([`check`]); then the answer's body as it
//! is read, as `http-body` events ([`ResponseBodies`]).

use serde_json::{Value, json};
use tessera::types::ProtocolVersion;
use tessera_http::headers::{
    MCP_METHOD, MCP_NAME, MCP_PROTOCOL_VERSION, MCP_SESSION_ID, decode_header_value,
};
use tessera_http::http::{HeaderMap, Method, StatusCode};
use tessera_http::{HttpExchange, HttpObserver};

use super::journal::Journal;
use super::response_body::ResponseBodies;

/// The most bytes of a request body kept in the event.
const MAX_BODY: usize = 64 * 1024;
/// The most bytes of one header value kept.
const MAX_HEADER: usize = 2048;

/// Records the exchanges of connection `conn`.
pub struct Recorder {
    /// Where they go.
    pub journal: Journal,
    /// The connection's id.
    pub conn: u64,
    /// The answers' bodies being read.
    pub bodies: ResponseBodies,
}

/// Records, for the exchanges whose events carry `label` (the connection,
/// or the sign-in), the `http` event when the answer's headers arrive and
/// then the `http-body` events of its body.
pub fn record_exchange(
    journal: &Journal,
    bodies: &ResponseBodies,
    e: &HttpExchange<'_>,
    mut event: Value,
) {
    event["exchange"] = json!(e.id);
    if e.outcome.is_ok() {
        bodies.begin(e.id);
    }
    journal.record("http", event);
}

/// Records a piece of exchange `id`'s body (the `label` members name the
/// connection or the sign-in).
pub fn record_body(
    journal: &Journal,
    bodies: &ResponseBodies,
    label: Value,
    id: u64,
    chunk: &[u8],
) {
    if let Some(text) = bodies.chunk(id, chunk) {
        let mut event = label;
        event["exchange"] = json!(id);
        event["text"] = json!(text);
        journal.record("http-body", event);
    }
}

/// Records the end of exchange `id`'s body.
pub fn record_end(
    journal: &Journal,
    bodies: &ResponseBodies,
    label: Value,
    id: u64,
    outcome: Result<(), &str>,
) {
    if let Some(end) = bodies.end(id, outcome) {
        let mut event = label;
        event["exchange"] = json!(id);
        if let (Some(event), Value::Object(end)) = (event.as_object_mut(), end) {
            event.extend(end);
        }
        journal.record("http-body", event);
    }
}

/// One rule a header was held to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// The header (lower case).
    pub header: &'static str,
    /// The rule, as the specification words it.
    pub rule: &'static str,
    /// Whether the exchange keeps it.
    pub ok: bool,
    /// What was seen.
    pub detail: String,
}

/// Headers whose values are credentials: shown as their scheme and length.
fn masked(name: &str, value: &str) -> String {
    if matches!(name, "authorization" | "dpop" | "cookie" | "set-cookie") {
        let scheme = value
            .split(' ')
            .next()
            .filter(|s| *s != value)
            .unwrap_or("");
        let scheme = if scheme.is_empty() {
            String::new()
        } else {
            format!("{scheme} ")
        };
        format!("{scheme}… ({} characters, masked)", value.len())
    } else if value.len() > MAX_HEADER {
        format!(
            "{}… ({} bytes)",
            value.chars().take(MAX_HEADER).collect::<String>(),
            value.len()
        )
    } else {
        value.to_owned()
    }
}

/// Headers as `[[name, value], …]`, credentials masked.
pub fn headers_json(h: &HeaderMap) -> Value {
    Value::Array(
        h.iter()
            .map(|(k, v)| {
                let v = String::from_utf8_lossy(v.as_bytes());
                json!([k.as_str(), masked(k.as_str(), &v)])
            })
            .collect(),
    )
}

fn header<'h>(h: &'h HeaderMap, name: &str) -> Option<&'h str> {
    h.get(name).and_then(|v| v.to_str().ok())
}

/// The Streamable HTTP rules an exchange is held to: the request's
/// `Accept`, `MCP-Protocol-Version` (a known version, the one in the body's
/// `_meta`), `Mcp-Method` and `Mcp-Name` (2026-07-28: mirroring the body),
/// `Mcp-Session-Id` (visible ASCII), and the answer's status and type.
pub fn check(
    method: &Method,
    request: &HeaderMap,
    body: Option<&Value>,
    answer: Option<(StatusCode, &HeaderMap)>,
) -> Vec<Verdict> {
    let mut out = Vec::new();
    let mut rule = |header, rule, ok, detail: String| {
        out.push(Verdict {
            header,
            rule,
            ok,
            detail,
        })
    };
    let message = body.filter(|b| b.is_object());
    let rpc_method = message
        .and_then(|m| m.get("method"))
        .and_then(Value::as_str);
    let is_request = message.is_some_and(|m| m.get("id").is_some()) && rpc_method.is_some();
    if method == Method::POST {
        let accept = header(request, "accept").unwrap_or("");
        rule(
            "accept",
            "a POST's Accept lists application/json and text/event-stream",
            accept.contains("application/json") && accept.contains("text/event-stream"),
            format!("Accept: {accept}"),
        );
    }
    let version = header(request, MCP_PROTOCOL_VERSION);
    if let Some(v) = version {
        rule(
            "mcp-protocol-version",
            "MCP-Protocol-Version names a protocol version",
            ProtocolVersion::parse(v).is_some(),
            format!("MCP-Protocol-Version: {v}"),
        );
    }
    let in_body = message
        .and_then(|m| m.pointer("/params/_meta"))
        .and_then(|m| m.get(tessera::types::meta::PROTOCOL_VERSION))
        .and_then(Value::as_str);
    if let Some(b) = in_body {
        rule(
            "mcp-protocol-version",
            "MCP-Protocol-Version matches the protocol version in the body's _meta",
            version == Some(b),
            format!("header {version:?}, body {b}"),
        );
    }
    let modern = version == Some(ProtocolVersion::V2026_07_28.as_str());
    if modern && method == Method::POST && is_request {
        let sent = header(request, MCP_METHOD);
        rule(
            "mcp-method",
            "Mcp-Method mirrors the request's method",
            sent.is_some() && sent == rpc_method,
            format!("header {sent:?}, body {rpc_method:?}"),
        );
        let named = match rpc_method {
            Some("tools/call" | "prompts/get") => Some("/params/name"),
            Some("resources/read") => Some("/params/uri"),
            _ => None,
        };
        if let Some(pointer) = named {
            let want = message
                .and_then(|m| m.pointer(pointer))
                .and_then(Value::as_str);
            let sent = header(request, MCP_NAME);
            let decoded = sent.map(decode_header_value);
            let ok = matches!((&decoded, want), (Some(Ok(d)), Some(w)) if d == w);
            rule(
                "mcp-name",
                "Mcp-Name mirrors params.name (params.uri for resources/read), Base64-encoded when not plain ASCII",
                ok,
                format!("header {sent:?}, body {want:?}"),
            );
        }
    }
    let visible = |s: &str| !s.is_empty() && s.bytes().all(|b| (0x21..=0x7e).contains(&b));
    if let Some(id) = header(request, MCP_SESSION_ID) {
        rule(
            "mcp-session-id",
            "Mcp-Session-Id is visible ASCII (0x21 to 0x7E)",
            visible(id),
            format!("sent {} characters", id.len()),
        );
    }
    let Some((status, answer)) = answer else {
        return out;
    };
    if let Some(id) = answer.get(MCP_SESSION_ID) {
        let id = id.to_str().unwrap_or("");
        rule(
            "mcp-session-id",
            "Mcp-Session-Id is visible ASCII (0x21 to 0x7E)",
            visible(id),
            format!("issued {} characters", id.len()),
        );
    }
    if method == Method::POST && message.is_some() && !is_request && status.is_success() {
        rule(
            "status",
            "a POSTed notification or response is answered 202 Accepted",
            status == StatusCode::ACCEPTED,
            format!("status {}", status.as_u16()),
        );
    }
    if method == Method::POST && is_request && status == StatusCode::OK {
        let ty = header(answer, "content-type").unwrap_or("");
        rule(
            "content-type",
            "a request is answered with application/json or text/event-stream",
            ty.starts_with("application/json") || ty.starts_with("text/event-stream"),
            format!("Content-Type: {ty}"),
        );
    }
    out
}

/// An exchange as the Network tab shows it (the `http` event's members but
/// `connection`).
pub fn describe(e: &HttpExchange<'_>) -> Value {
    let body: Option<Value> = if e.request_body.is_empty() {
        None
    } else {
        serde_json::from_slice(e.request_body).ok()
    };
    let shown_body = match (&body, e.request_body.len()) {
        (_, 0) => Value::Null,
        (Some(v), n) if n <= MAX_BODY => v.clone(),
        (_, n) => json!({
            "truncated": n > MAX_BODY,
            "bytes": n,
            "head": String::from_utf8_lossy(&e.request_body[..n.min(MAX_BODY.min(4096))]),
        }),
    };
    let answer = e.outcome.as_ref().ok().map(|(s, h)| (*s, *h));
    let verdicts: Vec<Value> = check(e.method, e.request_headers, body.as_ref(), answer)
        .into_iter()
        .map(|v| json!({"header": v.header, "rule": v.rule, "ok": v.ok, "detail": v.detail}))
        .collect();
    let mut event = json!({
        "method": e.method.as_str(),
        "url": e.url.to_string(),
        "attempt": e.attempt,
        "ms": (e.elapsed.as_secs_f64() * 10_000.0).round() / 10.0,
        "requestHeaders": headers_json(e.request_headers),
        "requestBody": shown_body,
        "checks": verdicts,
    });
    match e.outcome {
        Ok((status, headers)) => {
            event["status"] = json!(status.as_u16());
            event["responseHeaders"] = headers_json(headers);
            if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
                event["auth"] = json!("challenge");
            }
        }
        Err(why) => event["error"] = json!(why),
    }
    event
}

impl HttpObserver for Recorder {
    fn exchange(&self, e: &HttpExchange<'_>) {
        let mut event = describe(e);
        event["connection"] = json!(self.conn);
        record_exchange(&self.journal, &self.bodies, e, event);
    }

    fn response_body(&self, id: u64, chunk: &[u8]) {
        let label = json!({"connection": self.conn});
        record_body(&self.journal, &self.bodies, label, id, chunk);
    }

    fn response_end(&self, id: u64, outcome: Result<(), &str>) {
        let label = json!({"connection": self.conn});
        record_end(&self.journal, &self.bodies, label, id, outcome);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inspect::guard::tests::headers;

    fn failed(v: &[Verdict]) -> Vec<&'static str> {
        v.iter().filter(|v| !v.ok).map(|v| v.rule).collect()
    }

    #[test]
    fn a_modern_request_mirrors_its_method_and_name() {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "echo", "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}});
        let good = headers(&[
            ("accept", "application/json, text/event-stream"),
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "echo"),
        ]);
        let ok_answer = headers(&[("content-type", "application/json")]);
        let v = check(
            &Method::POST,
            &good,
            Some(&body),
            Some((StatusCode::OK, &ok_answer)),
        );
        assert!(failed(&v).is_empty(), "{v:?}");
        assert_eq!(v.len(), 6, "{v:?}");
        let bad = headers(&[
            ("accept", "application/json"),
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/list"),
            ("mcp-name", "=?base64?ZWNobw==?="),
        ]);
        let v = check(&Method::POST, &bad, Some(&body), None);
        let f = failed(&v);
        assert_eq!(f.len(), 2, "{v:?}");
        assert!(
            f[0].contains("Accept") && f[1].contains("Mcp-Method"),
            "{f:?}"
        );
        // The Base64 sentinel form of the name is decoded before comparing.
        assert!(v.iter().any(|v| v.header == "mcp-name" && v.ok));
    }

    #[test]
    fn versions_sessions_and_statuses() {
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let h = headers(&[
            ("accept", "application/json, text/event-stream"),
            ("mcp-protocol-version", "2099-01-01"),
            ("mcp-session-id", "abc def"),
        ]);
        let answer = headers(&[("mcp-session-id", "ok-id")]);
        let v = check(
            &Method::POST,
            &h,
            Some(&note),
            Some((StatusCode::OK, &answer)),
        );
        let f = failed(&v);
        assert!(
            f.iter().any(|r| r.contains("names a protocol version")),
            "{f:?}"
        );
        assert!(f.iter().any(|r| r.contains("visible ASCII")), "{f:?}");
        assert!(f.iter().any(|r| r.contains("202")), "{f:?}");
        assert!(v.iter().any(|v| v.detail.starts_with("issued") && v.ok));
        // A mismatch between the header and the body's version.
        let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list",
            "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}});
        let h = headers(&[("mcp-protocol-version", "2025-11-25")]);
        let v = check(&Method::GET, &h, Some(&body), None);
        assert_eq!(
            failed(&v),
            vec!["MCP-Protocol-Version matches the protocol version in the body's _meta"]
        );
    }

    #[test]
    fn credentials_are_masked() {
        assert_eq!(
            masked("authorization", "Bearer abcdef"),
            "Bearer … (13 characters, masked)"
        );
        assert!(!masked("dpop", "eyJhbGciOi").contains("eyJ"));
        assert_eq!(masked("mcp-method", "tools/call"), "tools/call");
    }
}
