//! A Streamable HTTP MCP client, just enough to open a conversation the way a
//! real client does and to call `echo`, checking every answer.
//!
//! - legacy era: `initialize` (protocol 2025-11-25), `notifications/initialized`,
//!   then requests carrying `Mcp-Session-Id` (when the server gave one) and
//!   `MCP-Protocol-Version`;
//! - modern era (2026-07-28): no handshake; every request carries
//!   `params._meta` (protocol version, client capabilities, client info) and the
//!   headers `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`.
//!
//! Answers may be `application/json` or an SSE stream; both are parsed. One
//! HTTP/1.1 keep-alive connection per client, `TCP_NODELAY` on.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, anyhow, bail};
use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE, HOST};
use http::{HeaderValue, Method, Request, StatusCode};
use http_body_util::{BodyExt as _, Full};
use hyper::client::conn::http1::{self, SendRequest};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::TcpStream;

use crate::sse;

/// The legacy protocol version the client asks for.
pub const LEGACY_VERSION: &str = "2025-11-25";
/// The modern protocol version.
pub const MODERN_VERSION: &str = "2026-07-28";
/// The longest the client waits for one answer.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);

/// Which era of the protocol the client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// `initialize` handshake, sessions when the server has them.
    Legacy,
    /// 2026-07-28: no handshake, `_meta` on every request.
    Modern,
}

/// Where the server is.
#[derive(Debug, Clone)]
pub struct Target {
    /// Socket address.
    pub addr: SocketAddr,
    /// Request path, e.g. `/mcp`.
    pub path: String,
    host: HeaderValue,
}

impl Target {
    /// Parses `http://HOST:PORT/PATH`.
    pub fn parse(url: &str) -> anyhow::Result<Self> {
        let rest = url
            .strip_prefix("http://")
            .context("the URL must start with http://")?;
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        let addr: SocketAddr = authority
            .parse()
            .with_context(|| format!("{authority}: need a numeric IP:PORT"))?;
        Ok(Self::new(addr, path))
    }

    /// A target at `addr`, `path`.
    pub fn new(addr: SocketAddr, path: &str) -> Self {
        let host = HeaderValue::from_str(&addr.to_string()).expect("an address is a valid header");
        Self {
            addr,
            path: path.to_owned(),
            host,
        }
    }
}

/// What kind of body the server answered `tools/call` with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BodyKind {
    /// Nothing answered yet.
    #[default]
    None,
    /// `application/json`.
    Json,
    /// `text/event-stream`.
    Sse,
}

impl BodyKind {
    /// `json`, `sse` or `-`.
    pub fn as_str(self) -> &'static str {
        match self {
            BodyKind::None => "-",
            BodyKind::Json => "json",
            BodyKind::Sse => "sse",
        }
    }
}

/// One client: a connection and, in the legacy era, a session.
pub struct Client {
    target: Arc<Target>,
    era: Era,
    sender: Option<SendRequest<Full<Bytes>>>,
    session: Option<HeaderValue>,
    version: HeaderValue,
    next_id: u64,
    /// The kind of the last answer.
    pub last_kind: BodyKind,
}

impl Client {
    /// Connects and, in the legacy era, performs the `initialize` handshake.
    pub async fn open(target: Arc<Target>, era: Era) -> anyhow::Result<Self> {
        let version = match era {
            Era::Legacy => LEGACY_VERSION,
            Era::Modern => MODERN_VERSION,
        };
        let mut c = Client {
            target,
            era,
            sender: None,
            session: None,
            version: HeaderValue::from_static(version),
            next_id: 1,
            last_kind: BodyKind::None,
        };
        c.connect().await?;
        if era == Era::Legacy {
            c.initialize().await?;
        }
        Ok(c)
    }

    async fn connect(&mut self) -> anyhow::Result<()> {
        let stream = TcpStream::connect(self.target.addr)
            .await
            .with_context(|| format!("connecting to {}", self.target.addr))?;
        stream.set_nodelay(true)?;
        let (sender, conn) = http1::handshake(TokioIo::new(stream)).await?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        self.sender = Some(sender);
        Ok(())
    }

    /// Starts another conversation on the same connection (legacy era): a new
    /// `initialize` handshake, forgetting the current session without ending
    /// it. Returns the new session id, if the server gave one.
    pub async fn open_another(&mut self) -> anyhow::Result<Option<String>> {
        self.session = None;
        self.version = HeaderValue::from_static(LEGACY_VERSION);
        self.initialize().await?;
        Ok(self.session_id().map(str::to_owned))
    }

    /// The session id the server gave, if any.
    pub fn session_id(&self) -> Option<&str> {
        self.session.as_ref().and_then(|s| s.to_str().ok())
    }

    async fn initialize(&mut self) -> anyhow::Result<()> {
        let id = self.take_id();
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"initialize","params":{{"protocolVersion":"{LEGACY_VERSION}","capabilities":{{}},"clientInfo":{{"name":"mcp-bench","version":"0.0.0"}}}}}}"#
        );
        let (status, headers, kind, bytes) = self.post(body, "initialize", None, false).await?;
        if status != StatusCode::OK {
            bail!("initialize: HTTP {status}: {}", snippet(&bytes));
        }
        let result = find_response(kind, &bytes, id)?;
        let result = result
            .get("result")
            .ok_or_else(|| anyhow!("initialize failed: {result}"))?;
        let negotiated = result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .ok_or_else(|| anyhow!("initialize result without protocolVersion: {result}"))?;
        self.version = HeaderValue::from_str(negotiated)?;
        self.session = headers.get("mcp-session-id").cloned();
        let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned();
        let (status, _, _, bytes) = self
            .post(note, "notifications/initialized", None, true)
            .await?;
        if !matches!(
            status,
            StatusCode::ACCEPTED | StatusCode::OK | StatusCode::NO_CONTENT
        ) {
            bail!(
                "notifications/initialized: HTTP {status}: {}",
                snippet(&bytes)
            );
        }
        Ok(())
    }

    /// Speaks in the legacy session `id` from now on (a session opened by
    /// [`Client::open_another`] on this or another connection).
    pub fn switch_session(&mut self, id: &str) -> anyhow::Result<()> {
        self.session = Some(HeaderValue::from_str(id)?);
        Ok(())
    }

    /// Sends a notification the server accepts and ignores
    /// (`notifications/cancelled` for a request that does not exist).
    pub async fn notify(&mut self) -> anyhow::Result<()> {
        let body = format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":0,"reason":"bench"{}}}}}"#,
            self.meta()
        );
        let (status, _, _, bytes) = self
            .post(body, "notifications/cancelled", None, true)
            .await?;
        if !matches!(
            status,
            StatusCode::ACCEPTED | StatusCode::OK | StatusCode::NO_CONTENT
        ) {
            bail!(
                "notifications/cancelled: HTTP {status}: {}",
                snippet(&bytes)
            );
        }
        Ok(())
    }

    fn take_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    fn meta(&self) -> &'static str {
        match self.era {
            Era::Legacy => "",
            Era::Modern => {
                r#","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"mcp-bench","version":"0.0.0"}}"#
            }
        }
    }

    /// `tools/call echo {"text": text}`; fails unless the answer is that text.
    /// `text_json` is `text` already JSON-encoded (with its quotes).
    pub async fn call_echo(&mut self, text: &str, text_json: &str) -> anyhow::Result<()> {
        let id = self.take_id();
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":{text_json}}}{}}}}}"#,
            self.meta()
        );
        let (status, _, kind, bytes) = self.post(body, "tools/call", Some("echo"), true).await?;
        if status != StatusCode::OK {
            bail!("tools/call: HTTP {status}: {}", snippet(&bytes));
        }
        self.last_kind = kind;
        let msg = find_response(kind, &bytes, id)?;
        let result = msg
            .get("result")
            .ok_or_else(|| anyhow!("tools/call error: {msg}"))?;
        if result.get("isError").and_then(Value::as_bool) == Some(true) {
            bail!("tools/call isError: {result}");
        }
        let got = result
            .get("content")
            .and_then(|c| c.get(0))
            .and_then(|c| c.get("text"))
            .and_then(Value::as_str);
        if got != Some(text) {
            bail!("tools/call answered {result}, not the text sent");
        }
        Ok(())
    }

    /// `tools/list`; fails unless it lists `echo`.
    pub async fn list_tools(&mut self) -> anyhow::Result<()> {
        let id = self.take_id();
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list","params":{{{}}}}}"#,
            self.meta().trim_start_matches(',')
        );
        let (status, _, kind, bytes) = self.post(body, "tools/list", None, true).await?;
        if status != StatusCode::OK {
            bail!("tools/list: HTTP {status}: {}", snippet(&bytes));
        }
        let msg = find_response(kind, &bytes, id)?;
        let tools = msg
            .get("result")
            .and_then(|r| r.get("tools"))
            .and_then(Value::as_array)
            .ok_or_else(|| anyhow!("tools/list: {msg}"))?;
        if !tools
            .iter()
            .any(|t| t.get("name").and_then(Value::as_str) == Some("echo"))
        {
            bail!("tools/list has no echo: {msg}");
        }
        Ok(())
    }

    /// POSTs one message; reconnects once if the connection was closed.
    async fn post(
        &mut self,
        body: String,
        method: &'static str,
        name: Option<&'static str>,
        after_init: bool,
    ) -> anyhow::Result<(StatusCode, http::HeaderMap, BodyKind, Bytes)> {
        let body = Bytes::from(body);
        let mut retried = false;
        loop {
            let req = self.request(body.clone(), method, name, after_init);
            let sender = match self.sender.as_mut() {
                Some(s) => s,
                None => {
                    self.connect().await?;
                    self.sender.as_mut().expect("connected")
                }
            };
            let fut = async {
                sender.ready().await?;
                let resp = sender.send_request(req).await?;
                let (parts, body) = resp.into_parts();
                let bytes = body.collect().await?.to_bytes();
                Ok::<_, hyper::Error>((parts, bytes))
            };
            match tokio::time::timeout(REQUEST_TIMEOUT, fut).await {
                Err(_) => {
                    self.sender = None;
                    bail!("{method}: no answer in {REQUEST_TIMEOUT:?}");
                }
                Ok(Err(e)) => {
                    self.sender = None;
                    if retried || !(e.is_closed() || e.is_canceled() || e.is_incomplete_message()) {
                        bail!("{method}: {e}");
                    }
                    retried = true;
                }
                Ok(Ok((parts, bytes))) => {
                    let kind = match parts
                        .headers
                        .get(CONTENT_TYPE)
                        .and_then(|v| v.to_str().ok())
                    {
                        Some(ct) if ct.starts_with("text/event-stream") => BodyKind::Sse,
                        Some(ct) if ct.starts_with("application/json") => BodyKind::Json,
                        _ => BodyKind::None,
                    };
                    return Ok((parts.status, parts.headers, kind, bytes));
                }
            }
        }
    }

    fn request(
        &self,
        body: Bytes,
        method: &'static str,
        name: Option<&'static str>,
        after_init: bool,
    ) -> Request<Full<Bytes>> {
        let mut b = Request::builder()
            .method(Method::POST)
            .uri(self.target.path.as_str())
            .header(HOST, self.target.host.clone())
            .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
            .header(
                ACCEPT,
                HeaderValue::from_static("application/json, text/event-stream"),
            );
        if after_init || self.era == Era::Modern {
            b = b.header("mcp-protocol-version", self.version.clone());
        }
        if let Some(s) = &self.session {
            b = b.header("mcp-session-id", s.clone());
        }
        if self.era == Era::Modern {
            b = b.header("mcp-method", HeaderValue::from_static(method));
            if let Some(n) = name {
                b = b.header("mcp-name", HeaderValue::from_static(n));
            }
        }
        b.body(Full::new(body)).expect("a valid request")
    }

    /// Ends the session (`DELETE`), as a client does when it closes. Errors
    /// are ignored (not every server supports it).
    pub async fn close(mut self) {
        let Some(session) = self.session.take() else {
            return;
        };
        let Some(sender) = self.sender.as_mut() else {
            return;
        };
        let req = Request::builder()
            .method(Method::DELETE)
            .uri(self.target.path.as_str())
            .header(HOST, self.target.host.clone())
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", self.version.clone())
            .body(Full::new(Bytes::new()))
            .expect("a valid request");
        let _ = tokio::time::timeout(Duration::from_secs(2), async {
            sender.ready().await?;
            let resp = sender.send_request(req).await?;
            resp.into_body().collect().await.map(|_| ())
        })
        .await;
    }
}

/// The JSON-RPC response with `id` in a JSON body or an SSE stream.
fn find_response(kind: BodyKind, bytes: &Bytes, id: u64) -> anyhow::Result<Value> {
    let is_ours = |v: &Value| {
        v.get("id").and_then(Value::as_u64) == Some(id)
            && (v.get("result").is_some() || v.get("error").is_some())
    };
    match kind {
        BodyKind::Json => {
            let v: Value = serde_json::from_slice(bytes)
                .with_context(|| format!("bad JSON: {}", snippet(bytes)))?;
            if is_ours(&v) {
                Ok(v)
            } else {
                bail!("not the response to request {id}: {}", snippet(bytes))
            }
        }
        BodyKind::Sse => {
            for data in sse::event_data(bytes) {
                let v: Value = serde_json::from_str(&data)
                    .with_context(|| format!("bad JSON in SSE: {data}"))?;
                if is_ours(&v) {
                    return Ok(v);
                }
            }
            bail!(
                "no response to request {id} in the SSE stream: {}",
                snippet(bytes)
            )
        }
        BodyKind::None => bail!("answer is neither JSON nor SSE: {}", snippet(bytes)),
    }
}

fn snippet(bytes: &[u8]) -> String {
    let s = String::from_utf8_lossy(&bytes[..bytes.len().min(300)]).into_owned();
    s.replace('\n', "\\n")
}
