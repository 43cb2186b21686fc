//! Era negotiation never strands a client: a stdio-style server that exits
//! when it receives `server/discover` (rmcp up to 1.7 does) is started again
//! and spoken to with `initialize`, and the client's reconnections skip the
//! probe from then on.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;
use tessera_client::{Client, Connector, Launch, Started};
use tessera_server::{Server, tool};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// Starts, per connection, a legacy server behind a filter that exits
/// (closes both directions) on the first `server/discover` it sees.
#[derive(Clone, Default)]
struct ExitsOnProbe {
    starts: Arc<AtomicUsize>,
    probes: Arc<AtomicUsize>,
}

fn server() -> Server {
    Server::builder()
        .name_version("old-server", "1.0.0")
        .tool(tool("echo").handler(|| async { "hello" }))
        .build()
        .unwrap()
}

impl Connector for ExitsOnProbe {
    async fn start(&self, launch: Launch) -> std::io::Result<Started> {
        self.starts.fetch_add(1, Ordering::SeqCst);
        let probes = self.probes.clone();
        let (client_side, filter_side) = tokio::io::duplex(64 * 1024);
        let (server_side, inner_side) = tokio::io::duplex(64 * 1024);
        let (srv_r, srv_w) = tokio::io::split(inner_side);
        let _ = server().serve_io(srv_r, srv_w);
        tokio::spawn(async move {
            let (from_client, mut to_client) = tokio::io::split(filter_side);
            let (from_server, mut to_server) = tokio::io::split(server_side);
            let mut lines = BufReader::new(from_client).lines();
            let mut answers = BufReader::new(from_server).lines();
            loop {
                tokio::select! {
                    line = lines.next_line() => {
                        let Ok(Some(line)) = line else { return };
                        if line.contains("\"server/discover\"") {
                            probes.fetch_add(1, Ordering::SeqCst);
                            return; // exits: both directions close
                        }
                        if to_server.write_all(format!("{line}\n").as_bytes()).await.is_err() {
                            return;
                        }
                    }
                    line = answers.next_line() => {
                        let Ok(Some(line)) = line else { return };
                        if to_client.write_all(format!("{line}\n").as_bytes()).await.is_err() {
                            return;
                        }
                    }
                }
            }
        });
        let (r, w) = tokio::io::split(client_side);
        Ok(launch.run_io(r, w))
    }
}

#[tokio::test]
async fn a_server_that_exits_on_the_probe_is_restarted_and_initialized() {
    let connector = ExitsOnProbe::default();
    let client = Client::builder("probe-test", "1")
        .connect_with(connector.clone())
        .await
        .expect("the client falls back to initialize");
    assert_eq!(connector.starts.load(Ordering::SeqCst), 2);
    assert_eq!(connector.probes.load(Ordering::SeqCst), 1);
    let r = client.call_tool("echo", json!({})).await.unwrap();
    assert_eq!(
        serde_json::to_value(&r).unwrap()["content"][0]["text"],
        "hello"
    );
    // Reconnecting keeps the verdict: no second probe.
    client.reconnect().await.unwrap();
    assert_eq!(connector.starts.load(Ordering::SeqCst), 3);
    assert_eq!(connector.probes.load(Ordering::SeqCst), 1);
    let r = client.call_tool("echo", json!({})).await.unwrap();
    assert_eq!(
        serde_json::to_value(&r).unwrap()["content"][0]["text"],
        "hello"
    );
    client.close().await;
}
