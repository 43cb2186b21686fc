//! Results passed through the proxy as JSON text, from an upstream that
//! writes its answers by hand (a small Python stdio server): what it writes
//! arrives, and a broken answer becomes a JSON-RPC error for the client,
//! never a crash or a hang, in both eras.

use std::time::Duration;

use tessera_proxy::{UpstreamOptions, UpstreamSpec};
use tessera_testkit::bounded;
use tessera_types::ProtocolVersion;
use tokio_util::sync::CancellationToken;

/// A legacy stdio server answering `tools/call` by hand: `mode: "broken"`
/// gets a line cut short, `mode: "array"` a result that is not an object,
/// anything else a well-formed result with its own spacing.
const UPSTREAM: &str = r#"
import json, sys
def send(s):
    sys.stdout.write(s + "\n")
    sys.stdout.flush()
for line in sys.stdin:
    if not line.strip():
        continue
    m = json.loads(line)
    if "id" not in m or "method" not in m:
        continue
    i, method, p = m["id"], m["method"], m.get("params") or {}
    head = '{"jsonrpc":"2.0","id":%s,"result":' % json.dumps(i)
    if method == "initialize":
        send(head + json.dumps({"protocolVersion": p.get("protocolVersion"),
            "capabilities": {"tools": {}}, "serverInfo": {"name": "by-hand", "version": "1"}}) + "}")
    elif method == "tools/list":
        send(head + '{"tools":[{"name":"say","inputSchema":{"type":"object"}}]}}')
    elif method == "tools/call":
        mode = (p.get("arguments") or {}).get("mode")
        if mode == "broken":
            send(head + '{"content":[')
        elif mode == "array":
            send(head + '[1]}')
        else:
            send(head + '{ "content" : [{"type":"text","text":"as written"}], "structuredContent": {"z": 1, "a": [2]} }}')
    elif method == "ping":
        send(head + "{}}")
    else:
        send(json.dumps({"jsonrpc": "2.0", "id": i, "error": {"code": -32601, "message": "no " + method}}))
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_answers_pass_as_written_and_broken_ones_become_errors() {
    let stop = CancellationToken::new();
    let options = UpstreamOptions {
        // How long a broken answer keeps the client waiting.
        request_timeout: Some(Duration::from_secs(1)),
        ..UpstreamOptions::default()
    };
    let (proxy, url) = crate::bridge::proxy_of(
        UpstreamSpec::stdio("python3", ["-c", UPSTREAM]),
        options,
        &stop,
    )
    .await;
    // A legacy client (its own upstream session, same era: passed as text)
    // and a 2026-07-28 one (a legacy upstream: read and completed).
    for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
        let c = crate::bridge::plain_client(&url, version, "raw-test").await;
        let ok = bounded("say", c.call_tool("say", serde_json::json!({})))
            .await
            .expect("a result");
        assert_eq!(ok.content[0].as_text(), Some("as written"), "{version}");
        assert_eq!(
            ok.structured_content,
            Some(serde_json::json!({"z": 1, "a": [2]})),
            "{version}"
        );
        for mode in ["broken", "array"] {
            let err = bounded(mode, c.call_tool("say", serde_json::json!({"mode": mode})))
                .await
                .expect_err("a JSON-RPC error");
            assert!(
                err.to_string().contains("did not answer tools/call"),
                "{version} {mode}: {err}"
            );
        }
        // The connection goes on serving.
        let again = bounded("say again", c.call_tool("say", serde_json::json!({})))
            .await
            .expect("a result");
        assert_eq!(again.content[0].as_text(), Some("as written"));
        c.close().await;
    }
    proxy.close().await;
    stop.cancel();
}
