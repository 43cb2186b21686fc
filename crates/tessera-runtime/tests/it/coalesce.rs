//! The driver of a connection writes the requests that several tasks send at
//! the same moment in one batch (one write, one wake-up of the peer), not one
//! write per request. This is what `tessera proxy` relies on when many
//! clients share its one stdio connection to the upstream server.
//!
//! The runtime has one worker, as the benchmark's pinned processes do: there
//! a task woken by another runs right after it (tokio's LIFO slot), so
//! without coalescing the driver would write each request as soon as its
//! sender yields.

use std::sync::{Arc, Mutex};

use serde_json::json;
use tessera_proto::{EngineConfig, RequestOptions, ServerIdentity, Transmit};
use tessera_runtime::{ConnectionOptions, Incoming, NoService, Transport};
use tessera_types::ProtocolVersion;
use tokio::sync::{Notify, mpsc};

/// A transport that records how many messages each write carried.
struct Recording {
    inbound: mpsc::Receiver<Incoming>,
    writes: Arc<Mutex<Vec<usize>>>,
    /// Told after every write.
    wrote: Arc<Notify>,
}

impl Transport for Recording {
    async fn recv(&mut self) -> std::io::Result<Option<Incoming>> {
        Ok(self.inbound.recv().await)
    }

    async fn send(&mut self, out: &mut Vec<Transmit>) -> std::io::Result<()> {
        self.writes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(out.len());
        out.clear();
        self.wrote.notify_one();
        Ok(())
    }

    async fn close(&mut self) {}
}

fn frame(v: serde_json::Value) -> Incoming {
    Incoming::Bytes(serde_json::to_vec(&v).unwrap().as_slice().into())
}

const SENDERS: usize = 8;

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn requests_sent_by_tasks_at_the_same_moment_go_out_in_fewer_writes() {
    let (frames, inbound) = mpsc::channel(4);
    let writes = Arc::new(Mutex::new(Vec::new()));
    let wrote = Arc::new(Notify::new());
    let transport = Recording {
        inbound,
        writes: writes.clone(),
        wrote: wrote.clone(),
    };
    let config = Arc::new(EngineConfig::server(ServerIdentity::default()));
    let (peer, _task) = tessera_runtime::spawn_shared(
        config,
        transport,
        Arc::new(NoService),
        ConnectionOptions::default(),
    );
    // The handshake, so that the server may send requests to its client.
    let version = ProtocolVersion::V2025_06_18.as_str();
    frames
        .send(frame(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"}
            }}),
        ))
        .await
        .unwrap();
    wrote.notified().await;
    frames
        .send(frame(
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        ))
        .await
        .unwrap();
    let handshake = writes.lock().unwrap().len();
    assert_eq!(handshake, 1, "the answer to initialize is one write");

    // One task on the worker starts the senders, so that they all become
    // ready at the same moment, on the same worker as the driver.
    let launcher = tokio::spawn(async move {
        for _ in 0..SENDERS {
            let p = peer.clone();
            tokio::spawn(async move {
                // Never answered here: what matters is how it was written.
                let _ = p.request("ping", None, RequestOptions::default()).await;
            });
        }
    });
    launcher.await.unwrap();
    loop {
        let sent: usize = writes.lock().unwrap()[handshake..].iter().sum();
        if sent == SENDERS {
            break;
        }
        assert!(sent < SENDERS, "more pings written than were sent");
        wrote.notified().await;
    }
    let batches = writes.lock().unwrap()[handshake..].to_vec();
    assert!(
        batches.len() <= SENDERS / 2,
        "{SENDERS} pings sent at once went out in {} writes ({batches:?})",
        batches.len()
    );
}
