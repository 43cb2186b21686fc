//! The HTTP server as a tower `Service`: arbitrary methods, paths, headers
//! and bodies, on the Streamable HTTP endpoint (both eras) and the HTTP+SSE
//! pair. Every request gets a response; nothing panics. Sessions opened by
//! earlier inputs stay, so later inputs can reach them by their ids.
#![no_main]

use std::sync::OnceLock;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use libfuzzer_sys::fuzz_target;
use tessera_http::{McpHttp, ResponseMode};
use tessera_server::{RawArgs, Server, tool};
use tower::ServiceExt;

fn app() -> &'static McpHttp {
    static APP: OnceLock<McpHttp> = OnceLock::new();
    APP.get_or_init(|| {
        let server = Server::builder()
            .name_version("fuzz", "1.0.0")
            .tool(tool("echo").handler(|RawArgs(a): RawArgs| async move {
                a.get("text")
                    .and_then(|t| t.as_str())
                    .unwrap_or("")
                    .to_owned()
            }))
            .build()
            .unwrap();
        McpHttp::builder(server)
            .response_mode(ResponseMode::Json)
            .max_body_bytes(64 * 1024)
            .build()
    })
}

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap()
    })
}

const METHODS: [&str; 6] = ["POST", "GET", "DELETE", "PUT", "OPTIONS", "POST"];
const PATHS: [&str; 5] = ["/mcp", "/sse", "/message?sessionId=", "/other", "/message"];
const HEADERS: [&str; 9] = [
    "accept",
    "content-type",
    "mcp-session-id",
    "mcp-protocol-version",
    "last-event-id",
    "mcp-method",
    "mcp-name",
    "origin",
    "mcp-param-text",
];

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let method = METHODS[usize::from(data[0]) % METHODS.len()];
    let path = PATHS[usize::from(data[1]) % PATHS.len()];
    // Then header lines `index:value` up to an empty line, then the body.
    let rest = &data[2..];
    let (head, body) = match rest.windows(2).position(|w| w == b"\n\n") {
        Some(i) => (&rest[..i], &rest[i + 2..]),
        None => (&rest[..0], rest),
    };
    let mut b = http::Request::builder()
        .method(method)
        .uri(path)
        .header("host", "localhost");
    for line in head.split(|c| *c == b'\n') {
        let Some((&k, v)) = line.split_first() else {
            continue;
        };
        let name = HEADERS[usize::from(k) % HEADERS.len()];
        if let Ok(v) = http::HeaderValue::from_bytes(v) {
            b = b.header(name, v);
        }
    }
    let Ok(req) = b.body(Full::new(Bytes::copy_from_slice(body))) else {
        return;
    };
    runtime().block_on(async {
        let resp = app().clone().oneshot(req).await.unwrap();
        let is_stream = resp
            .headers()
            .get("content-type")
            .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
        if is_stream {
            // Read what is there already; the stream itself may stay open.
            // (No timer: yielding once is enough for a frame that is ready.)
            let mut body = resp.into_body();
            tokio::select! {
                biased;
                _ = body.frame() => {}
                _ = tokio::task::yield_now() => {}
            }
        } else {
            let _ = tokio::time::timeout(Duration::from_secs(5), resp.into_body().collect()).await;
        }
    });
});
