//! Shared test helpers: the reference server binary, in-process servers over
//! `tokio::io::duplex`, and a scripted server for behaviour no real server has.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::future::Future;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde_json::Value;
use tessera_client::{ChildCommand, Client, ClientBuilder, FormRequest};
use tessera_proto::{EngineConfig, ServerIdentity};
use tessera_runtime::{BoxFuture, ConnectionOptions, HandlerResult, Peer, Request, Service};
use tessera_server::Server;
use tessera_types::{
    CreateMessageRequestParams, CreateMessageResult, ElicitResult, ElicitValue, ErrorObject,
    JsonObject, ProtocolVersion, Root,
};

/// Both eras: 2025-11-25 (initialize) and 2026-07-28 (multi round-trip).
pub const ERAS: [ProtocolVersion; 2] = [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28];

/// A failure bound for anything awaited in a test.
pub const BOUND: Duration = Duration::from_secs(20);

/// Awaits `f`, failing the test if it takes longer than [`BOUND`].
pub async fn bounded<T>(what: &str, f: impl Future<Output = T>) -> T {
    tokio::time::timeout(BOUND, f)
        .await
        .unwrap_or_else(|_| panic!("{what} did not finish within {BOUND:?}"))
}

/// The reference server binary, built once if it is missing (in the target
/// directory these tests run from).
pub fn reference_binary() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let exe = std::env::current_exe().expect("test executable path");
        // target/<profile>/deps/<test> -> target/<profile>
        let profile_dir = exe
            .parent()
            .and_then(|d| d.parent())
            .expect("target profile directory")
            .to_path_buf();
        let bin = profile_dir.join("tessera");
        if !bin.exists() {
            let target_dir = profile_dir.parent().expect("target directory");
            let status = std::process::Command::new(env!("CARGO"))
                .args(["build", "-p", "tessera-cli"])
                .env("CARGO_TARGET_DIR", target_dir)
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .status()
                .expect("runs cargo build -p tessera-cli");
            assert!(status.success(), "cargo build -p tessera-cli failed");
        }
        assert!(bin.exists(), "no reference server at {}", bin.display());
        bin
    })
    .clone()
}

/// The command that starts the reference server on stdio.
pub fn reference_command() -> ChildCommand {
    let mut c = ChildCommand::new(reference_binary(), ["serve", "--stdio"]);
    c.inherit_stderr = false;
    c.shutdown_grace = Duration::from_millis(500);
    c
}

/// A client builder pinned to `version`.
pub fn builder(version: ProtocolVersion) -> ClientBuilder {
    Client::builder("tessera-client-tests", "1.0").protocol_version(version)
}

/// Connects `builder` to the reference server.
pub async fn reference(builder: ClientBuilder) -> Client {
    bounded(
        "connecting to the reference server",
        builder.connect_child(&reference_command()),
    )
    .await
    .expect("connects to the reference server")
}

/// Serves `server` in-process and connects `builder` to it.
pub async fn in_process<S: Send + Sync + 'static>(
    server: &Server<S>,
    builder: ClientBuilder,
) -> Client {
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    let (sr, sw) = tokio::io::split(server_io);
    let _ = server.clone().serve_io(sr, sw);
    let (cr, cw) = tokio::io::split(client_io);
    bounded("connecting in-process", builder.connect_io(cr, cw))
        .await
        .expect("connects in-process")
}

type Handler = Arc<dyn Fn(Request) -> BoxFuture<'static, HandlerResult> + Send + Sync>;

/// A server scripted by one function: it serves `methods` with `handler`
/// and declares `capabilities`.
#[derive(Clone)]
pub struct Scripted {
    methods: Vec<String>,
    handler: Handler,
    notes: tokio::sync::mpsc::UnboundedSender<(String, Option<JsonObject>)>,
}

impl Service for Scripted {
    fn methods(&self) -> Vec<String> {
        self.methods.clone()
    }
    fn handle_request(&self, request: Request) -> BoxFuture<'static, HandlerResult> {
        (self.handler)(request)
    }
    fn handle_notification(&self, n: tessera_runtime::Notification) -> BoxFuture<'static, ()> {
        let _ = self.notes.send((n.method, n.params));
        Box::pin(async {})
    }
}

/// Notifications the scripted server received.
pub type Notes = tokio::sync::mpsc::UnboundedReceiver<(String, Option<JsonObject>)>;

/// Serves a scripted server in-process and connects `builder` to it; returns
/// the client, the server's connection handle and the notifications it gets.
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
        capabilities: tessera_types::ServerCapabilities::from_object(&obj(capabilities)),
        instructions: None,
        discover_ttl: Duration::from_secs(60),
    });
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
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

/// A JSON object from a `json!` value.
pub fn obj(v: Value) -> JsonObject {
    match v {
        Value::Object(o) => o,
        other => panic!("not an object: {other}"),
    }
}

/// The text of a tool result's first block.
pub fn text(r: &tessera_types::CallToolResult) -> String {
    r.content
        .first()
        .and_then(|c| c.as_text())
        .unwrap_or_default()
        .to_owned()
}

/// A form handler that fills every required string property with `"{prop}-value"`
/// (and `ok: true` for booleans), leaving optional properties out.
pub fn fill_required(form: FormRequest) -> impl Future<Output = Result<ElicitResult, ErrorObject>> {
    let mut content = BTreeMap::new();
    for name in form.required() {
        let kind = form.raw_schema["properties"][name]["type"]
            .as_str()
            .unwrap_or("string");
        let v = match kind {
            "boolean" => ElicitValue::Boolean(true),
            _ => ElicitValue::String(format!("{name}-value")),
        };
        content.insert(name.clone(), v);
    }
    async move { Ok(ElicitResult::accept(content)) }
}

/// A sampling handler that answers `"Paris"` as model `test-model`.
pub async fn paris(_: CreateMessageRequestParams) -> Result<CreateMessageResult, ErrorObject> {
    Ok(CreateMessageResult::text("test-model", "Paris"))
}

/// Some roots.
pub fn two_roots() -> Vec<Root> {
    vec![
        Root::new("file:///home/user/project").with_name("Project"),
        Root::new("file:///home/user/notes"),
    ]
}

/// A builder with every handler set.
pub fn full_builder(version: ProtocolVersion) -> ClientBuilder {
    builder(version)
        .roots(two_roots())
        .sampling(paris)
        .elicitation(fill_required)
}
