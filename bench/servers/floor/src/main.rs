//! The floor: what one `tools/call echo` costs with nothing but HTTP and JSON.
//!
//! A bare hyper HTTP/1.1 server (same stack, runtime and socket options as the
//! Rust servers it is compared with) that parses the JSON-RPC body with
//! serde_json, answers `initialize`, acknowledges notifications, and answers
//! `tools/call echo` with the same result an MCP server writes. It keeps no
//! session table and checks nothing an MCP library would check (versions,
//! headers, sessions, schemas): it is the cost of HTTP + JSON only.
//!
//! ```text
//! floor --http 127.0.0.1:PORT [--sse] [--sessions]
//! ```
//! `--sse` frames each response as one SSE event (like a stateful MCP server);
//! `--sessions` hands out an `Mcp-Session-Id` on `initialize`.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{Context as _, bail};
use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(Clone, Copy)]
struct Opts {
    sse: bool,
    sessions: bool,
}

/// A JSON-RPC message as received.
#[derive(Deserialize)]
struct Incoming_ {
    #[allow(dead_code)]
    jsonrpc: String,
    #[serde(default)]
    id: Option<Value>,
    method: String,
    #[serde(default)]
    params: Option<Value>,
}

#[derive(Serialize)]
struct Outgoing<'a> {
    jsonrpc: &'static str,
    id: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<Value>,
}

fn parse_args() -> anyhow::Result<(SocketAddr, Opts)> {
    let mut addr = None;
    let mut opts = Opts {
        sse: false,
        sessions: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--http" => {
                let v = it.next().context("--http needs an address")?;
                addr = Some(v.parse().with_context(|| format!("bad address {v}"))?);
            }
            "--sse" => opts.sse = true,
            "--sessions" => opts.sessions = true,
            other => {
                bail!("unknown argument {other}; usage: floor --http ADDR [--sse] [--sessions]")
            }
        }
    }
    Ok((
        addr.context("usage: floor --http ADDR [--sse] [--sessions]")?,
        opts,
    ))
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let (addr, opts) = parse_args()?;
    let listener = tokio::net::TcpListener::bind(addr).await?;
    eprintln!("floor: listening on http://{}/mcp", listener.local_addr()?);
    let counter = Arc::new(AtomicU64::new(1));
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    loop {
        let (stream, _) = tokio::select! {
            r = listener.accept() => r?,
            _ = term.recv() => return Ok(()),
            _ = tokio::signal::ctrl_c() => return Ok(()),
        };
        let _ = stream.set_nodelay(true);
        let counter = counter.clone();
        tokio::spawn(async move {
            let svc = service_fn(move |req| handle(req, opts, counter.clone()));
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), svc)
                .await;
        });
    }
}

fn plain(status: StatusCode) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::new()));
    *r.status_mut() = status;
    r
}

async fn handle(
    req: Request<Incoming>,
    opts: Opts,
    counter: Arc<AtomicU64>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    if req.method() == Method::DELETE {
        return Ok(plain(StatusCode::OK));
    }
    if req.method() != Method::POST {
        return Ok(plain(StatusCode::METHOD_NOT_ALLOWED));
    }
    let Ok(body) = req.into_body().collect().await else {
        return Ok(plain(StatusCode::BAD_REQUEST));
    };
    let msg: Incoming_ = match serde_json::from_slice(&body.to_bytes()) {
        Ok(m) => m,
        Err(_) => return Ok(plain(StatusCode::BAD_REQUEST)),
    };
    let Some(id) = msg.id else {
        // A notification.
        return Ok(plain(StatusCode::ACCEPTED));
    };
    let mut session = None;
    let (result, error) = match msg.method.as_str() {
        "initialize" => {
            let version = msg
                .params
                .as_ref()
                .and_then(|p| p.get("protocolVersion"))
                .cloned()
                .unwrap_or_else(|| json!("2025-11-25"));
            if opts.sessions {
                session = Some(format!(
                    "floor-{:016x}",
                    counter.fetch_add(1, Ordering::Relaxed)
                ));
            }
            (
                Some(json!({
                    "protocolVersion": version,
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "floor", "version": "0.0.0"}
                })),
                None,
            )
        }
        "tools/list" => (
            Some(json!({"tools": [{
                "name": "echo",
                "description": "Sends the text back",
                "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
            }]})),
            None,
        ),
        "tools/call" => {
            let text = msg
                .params
                .as_ref()
                .and_then(|p| p.get("arguments"))
                .and_then(|a| a.get("text"))
                .and_then(Value::as_str);
            match text {
                Some(t) => (
                    Some(json!({"content": [{"type": "text", "text": t}], "isError": false})),
                    None,
                ),
                None => (
                    None,
                    Some(json!({"code": -32602, "message": "missing text"})),
                ),
            }
        }
        _ => (
            None,
            Some(json!({"code": -32601, "message": "Method not found"})),
        ),
    };
    let out = Outgoing {
        jsonrpc: "2.0",
        id: &id,
        result,
        error,
    };
    let json = serde_json::to_vec(&out).expect("serialisable");
    let (bytes, ctype) = if opts.sse {
        let mut v = Vec::with_capacity(json.len() + 24);
        v.extend_from_slice(b"event: message\ndata: ");
        v.extend_from_slice(&json);
        v.extend_from_slice(b"\n\n");
        (v, "text/event-stream")
    } else {
        (json, "application/json")
    };
    let mut r = Response::new(Full::new(Bytes::from(bytes)));
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(ctype));
    if let Some(s) = session {
        r.headers_mut()
            .insert("mcp-session-id", HeaderValue::from_str(&s).expect("ascii"));
    }
    Ok(r)
}
