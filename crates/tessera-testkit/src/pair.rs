//! A client and a server in one process, joined by an in-memory pipe
//! (`tokio::io::duplex`): the server is a real [`Server`] (or a
//! [`scripted`] one), the client a real [`Client`]; only the bytes between
//! them never leave the process.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tessera_client::{Client, ClientBuilder};
use tessera_proto::{EngineConfig, ServerIdentity};
use tessera_runtime::{BoxFuture, ConnectionOptions, HandlerResult, Peer, Request, Service};
use tessera_server::Server;
use tessera_types::{JsonObject, ProtocolVersion};
use tokio::io::{DuplexStream, ReadHalf, WriteHalf};

use crate::deadline::bounded;

/// Both eras: 2025-11-25 (`initialize` and sessions) and 2026-07-28
/// (stateless, multi round-trip requests).
pub const ERAS: [ProtocolVersion; 2] = [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28];

/// The pipe's capacity each way: large enough that no test's message waits
/// for the other side to read.
pub const PIPE_BYTES: usize = 1 << 20;

/// Serves `server` in-process and connects `builder` to it; fails the test
/// when the connection is refused or takes longer than [`crate::BOUND`].
pub async fn in_process<S: Send + Sync + 'static>(
    server: &Server<S>,
    builder: ClientBuilder,
) -> Client {
    let (cr, cw) = serve_raw(server, PIPE_BYTES);
    bounded("connecting in-process", builder.connect_io(cr, cw))
        .await
        .expect("connects in-process")
}

/// Serves `server` on one end of an in-memory pipe of `capacity` bytes each
/// way and returns the other end, for tests that speak JSON-RPC lines to it
/// themselves (for instance through `tessera_runtime::testing::LineSession`).
pub fn serve_raw<S: Send + Sync + 'static>(
    server: &Server<S>,
    capacity: usize,
) -> (ReadHalf<DuplexStream>, WriteHalf<DuplexStream>) {
    let (client_io, server_io) = tokio::io::duplex(capacity);
    let (sr, sw) = tokio::io::split(server_io);
    let _ = server.clone().serve_io(sr, sw);
    tokio::io::split(client_io)
}

type Handler = Arc<dyn Fn(Request) -> BoxFuture<'static, HandlerResult> + Send + Sync>;

/// A server scripted by one function: it serves `methods` with `handler`
/// and reports every notification it receives.
#[derive(Clone)]
struct Scripted {
    methods: Vec<String>,
    handler: Handler,
    notes: tokio::sync::mpsc::UnboundedSender<(String, Option<JsonObject>)>,
}

impl Service for Scripted {
    fn methods(&self) -> Vec<String> {
        self.methods.clone()
    }
    fn handle_request(
        self: Arc<Self>,
        request: Request,
    ) -> impl Future<Output = HandlerResult> + Send + 'static {
        (self.handler)(request)
    }
    async fn handle_notification(self: Arc<Self>, n: tessera_runtime::Notification) {
        let _ = self.notes.send((n.method, n.params));
    }
}

/// The notifications a [`scripted`] server received: method and params.
pub type Notes = tokio::sync::mpsc::UnboundedReceiver<(String, Option<JsonObject>)>;

/// Serves, in-process, a server that declares `capabilities` (a JSON object)
/// and answers `methods` with `handler` — for behaviour no real server has —
/// and connects `builder` to it. Returns the client, the server's connection
/// handle (to send requests and notifications to the client) and the
/// notifications the server receives.
pub async fn scripted<F, Fut>(
    builder: ClientBuilder,
    capabilities: Value,
    methods: &[&str],
    handler: F,
) -> (Client, Peer, Notes)
where
    F: Fn(Request) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = HandlerResult> + Send + 'static,
{
    let handler: Handler = Arc::new(move |r| Box::pin(handler(r)));
    let (notes_tx, notes) = tokio::sync::mpsc::unbounded_channel();
    let service = Scripted {
        methods: methods.iter().map(|m| (*m).to_owned()).collect(),
        handler,
        notes: notes_tx,
    };
    let config = EngineConfig::server(ServerIdentity {
        info: tessera_types::Implementation::new("scripted", "1"),
        capabilities: tessera_types::ServerCapabilities::from_object(&crate::json::obj(
            capabilities,
        )),
        instructions: None,
        discover_ttl: Duration::from_secs(60),
    });
    let (client_io, server_io) = tokio::io::duplex(PIPE_BYTES);
    let (sr, sw) = tokio::io::split(server_io);
    let (peer, _task) =
        tessera_runtime::spawn(config, sr, sw, service, ConnectionOptions::default());
    let (cr, cw) = tokio::io::split(client_io);
    let client = bounded(
        "connecting to the scripted server",
        builder.connect_io(cr, cw),
    )
    .await
    .expect("connects to the scripted server");
    (client, peer, notes)
}
