//! The Network tab's source: every HTTP exchange of an HTTP connection,
//! recorded into the [`Journal`] as an `http` event (method, URL, status,
//! headers with credentials masked, the request body, the time to the
//! answer's headers), with the `Mcp-*` headers checked against the rules of
//! the Streamable HTTP transport ([`check`]); then the answer's body as it
//! is read, as `http-body` events ([`ResponseBodies`]).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tessera::types::ProtocolVersion;
use tessera_http::headers::{
    MCP_METHOD, MCP_NAME, MCP_PROTOCOL_VERSION, MCP_SESSION_ID, decode_header_value,
};
use tessera_http::http::{HeaderMap, Method, StatusCode};
use tessera_http::{HttpExchange, HttpObserver};

use super::journal::{Head, Journal, Shown};
use super::response_body::{BodyEnd, ResponseBodies};

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

/// Whose an `http` or `http-body` event is: a connection's, or (with no
/// connection) a sign-in's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Label {
    /// The connection (`null` for a sign-in's exchanges).
    pub connection: Option<u64>,
    /// The sign-in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub login: Option<u64>,
}

/// Headers as `[[name, value], …]`.
pub type Headers = Vec<(String, String)>;

/// The checks of an `http` event: the transport's header rules, or the
/// OAuth rules of a sign-in step.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Checks {
    /// The Streamable HTTP rules ([`check`]).
    Headers(Vec<Verdict>),
    /// The OAuth rules ([`super::oauth_debug`]).
    Rules(Vec<super::oauth_debug::Rule>),
}

/// An `http` event: one exchange, as the Network tab shows it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HttpEvent {
    /// Whose exchange it is.
    #[serde(flatten)]
    pub label: Label,
    /// The sign-in step it is (`"mcp request"` for the MCP requests of a
    /// sign-in).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oauth: Option<&'static str>,
    /// The HTTP method.
    pub method: String,
    /// The URL.
    pub url: String,
    /// Which attempt of the request it is (1 the first).
    pub attempt: usize,
    /// Milliseconds to the answer's headers, to a tenth.
    pub ms: f64,
    /// The request's headers, credentials masked.
    pub request_headers: Headers,
    /// The request's body (`null` when none).
    pub request_body: Option<Value>,
    /// The rules it was held to.
    pub checks: Checks,
    /// The answer's status.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// The answer's headers, credentials masked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_headers: Option<Headers>,
    /// The answer's body (sign-in steps only; `null` when empty).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_body: Option<Value>,
    /// `"challenge"` for a 401 or 403 answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auth: Option<&'static str>,
    /// Why no answer came.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The exchange's id (which its `http-body` events name).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exchange: Option<u64>,
}

/// Milliseconds to a tenth, as events show durations.
pub fn tenths_of_ms(d: std::time::Duration) -> f64 {
    (d.as_secs_f64() * 10_000.0).round() / 10.0
}

/// An `http-body` event: a piece of an answer's body.
#[derive(Serialize)]
struct BodyPiece {
    #[serde(flatten)]
    label: Label,
    exchange: u64,
    text: String,
}

/// An `http-body` event: the end of an answer's body.
#[derive(Serialize)]
struct BodyEnded {
    #[serde(flatten)]
    label: Label,
    exchange: u64,
    #[serde(flatten)]
    end: BodyEnd,
}

/// Records, for the exchanges whose events carry `label` (the connection,
/// or the sign-in), the `http` event when the answer's headers arrive and
/// then the `http-body` events of its body.
pub fn record_exchange(
    journal: &Journal,
    bodies: &ResponseBodies,
    e: &HttpExchange<'_>,
    mut event: HttpEvent,
) {
    event.exchange = Some(e.id);
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
    label: Label,
    id: u64,
    chunk: &[u8],
) {
    if let Some(text) = bodies.chunk(id, chunk) {
        let event = BodyPiece {
            label,
            exchange: id,
            text,
        };
        journal.record("http-body", event);
    }
}

/// Records the end of exchange `id`'s body.
pub fn record_end(
    journal: &Journal,
    bodies: &ResponseBodies,
    label: Label,
    id: u64,
    outcome: Result<(), &str>,
) {
    if let Some(end) = bodies.end(id, outcome) {
        let event = BodyEnded {
            label,
            exchange: id,
            end,
        };
        journal.record("http-body", event);
    }
}

/// One rule a header was held to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
pub fn headers_json(h: &HeaderMap) -> Headers {
    h.iter()
        .map(|(k, v)| {
            let v = String::from_utf8_lossy(v.as_bytes());
            (k.as_str().to_owned(), masked(k.as_str(), &v))
        })
        .collect()
}

fn header<'h>(h: &'h HeaderMap, name: &str) -> Option<&'h str> {
    h.get(name).and_then(|v| v.to_str().ok())
}

/// What [`check`] reads of a message the client sent (lenient: a member
/// of another shape reads as missing, never as an error).
#[derive(Debug, Default, Deserialize)]
struct SentMessage {
    #[serde(default, deserialize_with = "tessera::types::loose::present_value")]
    id: Option<Value>,
    #[serde(default)]
    method: Option<Value>,
    #[serde(default, deserialize_with = "tessera::types::loose::lenient")]
    params: Option<SentParams>,
}

/// The members of a sent message's params the headers mirror.
#[derive(Debug, Default, Deserialize)]
struct SentParams {
    #[serde(
        rename = "_meta",
        default,
        deserialize_with = "tessera::types::loose::lenient"
    )]
    meta: Option<SentMeta>,
    #[serde(default)]
    name: Option<Value>,
    #[serde(default)]
    uri: Option<Value>,
}

/// The protocol version a sent message's `_meta` names.
#[derive(Debug, Default, Deserialize)]
struct SentMeta {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", default)]
    protocol_version: Option<Value>,
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
    let message = body
        .filter(|b| b.is_object())
        .map(tessera::types::loose::view_or_default::<SentMessage>);
    let rpc_method = message
        .as_ref()
        .and_then(|m| m.method.as_ref())
        .and_then(Value::as_str);
    let is_request = message.as_ref().is_some_and(|m| m.id.is_some()) && rpc_method.is_some();
    let params = message.as_ref().and_then(|m| m.params.as_ref());
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
    let in_body = params
        .and_then(|p| p.meta.as_ref())
        .and_then(|m| m.protocol_version.as_ref())
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
            Some("tools/call" | "prompts/get") => Some(params.and_then(|p| p.name.as_ref())),
            Some("resources/read") => Some(params.and_then(|p| p.uri.as_ref())),
            _ => None,
        };
        if let Some(named) = named {
            let want = named.and_then(Value::as_str);
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
pub fn describe(e: &HttpExchange<'_>) -> HttpEvent {
    let body: Option<Value> = if e.request_body.is_empty() {
        None
    } else {
        serde_json::from_slice(e.request_body).ok()
    };
    let shown_body = match (&body, e.request_body.len()) {
        (_, 0) => None,
        (Some(v), n) if n <= MAX_BODY => Some(Shown::Json(v.clone())),
        (_, n) => Some(Shown::Truncated(Head {
            truncated: n > MAX_BODY,
            bytes: n,
            head: String::from_utf8_lossy(&e.request_body[..n.min(MAX_BODY.min(4096))])
                .into_owned(),
        })),
    };
    let answer = e.outcome.as_ref().ok().map(|(s, h)| (*s, *h));
    let verdicts = check(e.method, e.request_headers, body.as_ref(), answer);
    let mut event = HttpEvent {
        label: Label {
            connection: None,
            login: None,
        },
        oauth: None,
        method: e.method.as_str().to_owned(),
        url: e.url.to_string(),
        attempt: e.attempt,
        ms: tenths_of_ms(e.elapsed),
        request_headers: headers_json(e.request_headers),
        request_body: shown_body.map(|b| serde_json::to_value(b).unwrap_or(Value::Null)),
        checks: Checks::Headers(verdicts),
        status: None,
        response_headers: None,
        response_body: None,
        auth: None,
        error: None,
        exchange: None,
    };
    match e.outcome {
        Ok((status, headers)) => {
            event.status = Some(status.as_u16());
            event.response_headers = Some(headers_json(headers));
            if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
                event.auth = Some("challenge");
            }
        }
        Err(why) => event.error = Some(why.to_owned()),
    }
    event
}

impl HttpObserver for Recorder {
    fn exchange(&self, e: &HttpExchange<'_>) {
        let mut event = describe(e);
        event.label = self.label();
        record_exchange(&self.journal, &self.bodies, e, event);
    }

    fn response_body(&self, id: u64, chunk: &[u8]) {
        record_body(&self.journal, &self.bodies, self.label(), id, chunk);
    }

    fn response_end(&self, id: u64, outcome: Result<(), &str>) {
        record_end(&self.journal, &self.bodies, self.label(), id, outcome);
    }
}

impl Recorder {
    /// The label of the connection's events.
    fn label(&self) -> Label {
        Label {
            connection: Some(self.conn),
            login: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_keep_their_shape() {
        let j = Journal::new();
        let (_, _, mut live) = j.follow();
        let mut next = || -> Value {
            let mut v: Value = serde_json::from_str(&live.try_recv().unwrap().text).unwrap();
            let o = v.as_object_mut().unwrap();
            assert!(o.remove("at").is_some() && o.remove("seq").is_some());
            v
        };
        let event = HttpEvent {
            label: Label {
                connection: Some(3),
                login: None,
            },
            oauth: None,
            method: "POST".into(),
            url: "http://x/mcp".into(),
            attempt: 1,
            ms: 1.5,
            request_headers: vec![("accept".into(), "a".into())],
            request_body: None,
            checks: Checks::Headers(vec![Verdict {
                header: "accept",
                rule: "r",
                ok: true,
                detail: "d".into(),
            }]),
            status: Some(401),
            response_headers: Some(Vec::new()),
            response_body: None,
            auth: Some("challenge"),
            error: None,
            exchange: Some(9),
        };
        j.record("http", event.clone());
        assert_eq!(
            next(),
            json!({"type": "http", "connection": 3, "method": "POST", "url": "http://x/mcp",
                   "attempt": 1, "ms": 1.5, "requestHeaders": [["accept", "a"]], "requestBody": null,
                   "checks": [{"header": "accept", "rule": "r", "ok": true, "detail": "d"}],
                   "status": 401, "responseHeaders": [], "auth": "challenge", "exchange": 9})
        );
        let sign_in = Label {
            connection: None,
            login: Some(4),
        };
        j.record(
            "http",
            HttpEvent {
                label: sign_in,
                oauth: Some("token"),
                checks: Checks::Rules(Vec::new()),
                status: None,
                response_headers: None,
                auth: None,
                error: Some("refused".into()),
                exchange: None,
                request_body: Some(json!({"grant_type": "x"})),
                ..event
            },
        );
        assert_eq!(
            next(),
            json!({"type": "http", "connection": null, "login": 4, "oauth": "token",
                   "method": "POST", "url": "http://x/mcp", "attempt": 1, "ms": 1.5,
                   "requestHeaders": [["accept", "a"]], "requestBody": {"grant_type": "x"},
                   "checks": [], "error": "refused"})
        );
        let bodies = ResponseBodies::default();
        bodies.begin(9);
        record_body(&j, &bodies, sign_in, 9, b"ab");
        assert_eq!(
            next(),
            json!({"type": "http-body", "connection": null, "login": 4, "exchange": 9, "text": "ab"})
        );
        record_end(&j, &bodies, sign_in, 9, Err("cut"));
        assert_eq!(
            next(),
            json!({"type": "http-body", "connection": null, "login": 4, "exchange": 9,
                   "end": true, "bytes": 2, "truncated": false, "error": "cut"})
        );
    }
    use crate::inspect::guard::tests::headers;
    use serde_json::json;

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
