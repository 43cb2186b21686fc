//! An HTTP upstream that refuses a forwarded request with an error whose id
//! is null (as a server refuses a POST without a session it needs, or text
//! it cannot read): the client gets an error naming that refusal at once,
//! not the proxy's timeout.

use std::time::Duration;

use tessera_proxy::{UpstreamOptions, UpstreamSpec};
use tessera_testkit::bounded;
use tessera_types::ProtocolVersion;
use tokio::io::AsyncBufReadExt;
use tokio_util::sync::CancellationToken;

/// A legacy Streamable HTTP server by hand (Python's `http.server`): it
/// answers the handshake, `tools/list` and `ping`, and refuses every
/// `tools/call` with `400` and an error whose id is null. Prints its port.
const UPSTREAM: &str = r#"
import json, http.server
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a):
        pass
    def answer(self, code, body):
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Mcp-Session-Id", "s-1")
        self.end_headers()
        self.wfile.write(body)
    def do_GET(self):
        self.answer(405, b"")
    def do_DELETE(self):
        self.answer(200, b"")
    def do_POST(self):
        m = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        if "id" not in m:
            return self.answer(202, b"")
        i, method = m["id"], m.get("method")
        def ok(result):
            self.answer(200, json.dumps({"jsonrpc": "2.0", "id": i, "result": result}).encode())
        if method == "initialize":
            ok({"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                "serverInfo": {"name": "refuser", "version": "1"}})
        elif method == "tools/list":
            ok({"tools": [{"name": "say", "inputSchema": {"type": "object"}}]})
        elif method == "ping":
            ok({})
        elif method == "tools/call":
            self.answer(400, json.dumps({"jsonrpc": "2.0", "id": None, "error": {
                "code": -32600, "message": "the Mcp-Session-Id header is required"}}).encode())
        else:
            self.answer(200, json.dumps({"jsonrpc": "2.0", "id": i,
                "error": {"code": -32601, "message": "no " + method}}).encode())
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_with_a_null_id_fails_the_call_at_once() {
    let mut upstream = tokio::process::Command::new("python3")
        .args(["-c", UPSTREAM])
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("python3 runs");
    let mut lines = tokio::io::BufReader::new(upstream.stdout.take().expect("stdout")).lines();
    let port = bounded("the upstream's port", lines.next_line())
        .await
        .expect("reads")
        .expect("a port");
    let stop = CancellationToken::new();
    let options = UpstreamOptions {
        // Far past the test's own bound: a call left waiting fails the test.
        request_timeout: Some(Duration::from_secs(600)),
        ..UpstreamOptions::default()
    };
    let spec = UpstreamSpec::http(
        format!("http://127.0.0.1:{port}/mcp"),
        tessera_http::http::HeaderMap::new(),
    );
    let (proxy, url) = crate::bridge::proxy_of(spec, options, &stop).await;
    for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
        let c = crate::bridge::plain_client(&url, version, "refusal-test").await;
        let err = bounded(
            "the refused call",
            c.call_tool("say", serde_json::json!({})),
        )
        .await
        .expect_err("a JSON-RPC error");
        let text = err.to_string();
        assert!(
            text.contains("-32600") && text.contains("the Mcp-Session-Id header is required"),
            "{version}: {err}"
        );
        c.close().await;
    }
    proxy.close().await;
    stop.cancel();
}
