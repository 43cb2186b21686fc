//! [`Client`] and [`ClientBuilder`].

use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tessera_proto::{ClientIdentity, ConnectMode, Connected, EngineConfig, RequestOptions};
use tessera_runtime::{
    ChildCommand, ChildProcess, ConnectionOptions, NoService, Notification, Peer, Service,
};
use tessera_types::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, Era, Implementation, JsonObject,
    ListToolsResult, ProtocolVersion, Tool,
};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::broadcast;
use tokio::task::JoinHandle;

use crate::error::ClientError;

/// Builds a [`Client`]: who it is, what it supports, how it connects.
#[derive(Debug, Clone)]
pub struct ClientBuilder {
    info: Implementation,
    capabilities: ClientCapabilities,
    mode: ConnectMode,
    versions: Vec<ProtocolVersion>,
    request_timeout: Option<Duration>,
    probe_timeout: Duration,
    connection: ConnectionOptions,
}

impl ClientBuilder {
    /// A client that calls itself `name` `version`.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        ClientBuilder {
            info: Implementation::new(name, version),
            capabilities: ClientCapabilities::default(),
            mode: ConnectMode::Auto,
            versions: ProtocolVersion::ALL.to_vec(),
            request_timeout: Some(Duration::from_secs(60)),
            probe_timeout: Duration::from_secs(5),
            connection: ConnectionOptions::default(),
        }
    }

    /// How to pick the era and version: [`ConnectMode::Auto`] (the default)
    /// probes with `server/discover` and falls back to `initialize`.
    pub fn mode(mut self, mode: ConnectMode) -> Self {
        self.mode = mode;
        self
    }

    /// Pins one protocol version (and its era).
    pub fn protocol_version(mut self, v: ProtocolVersion) -> Self {
        self.mode = match v.era() {
            Era::Legacy => ConnectMode::Legacy(v),
            Era::Modern => ConnectMode::Modern(v),
        };
        self
    }

    /// The capabilities the client declares.
    pub fn capabilities(mut self, caps: ClientCapabilities) -> Self {
        self.capabilities = caps;
        self
    }

    /// The default timeout of each request (`None`: wait forever).
    pub fn request_timeout(mut self, t: Option<Duration>) -> Self {
        self.request_timeout = t;
        self
    }

    /// How long to wait for an answer to the `server/discover` probe before
    /// assuming a legacy server.
    pub fn probe_timeout(mut self, t: Duration) -> Self {
        self.probe_timeout = t;
        self
    }

    fn engine_config(&self) -> EngineConfig {
        let mut c = EngineConfig::client(ClientIdentity {
            info: to_object(&self.info),
            capabilities: to_object(&self.capabilities),
        })
        .with_versions(self.versions.iter().copied());
        c.timeouts.request = self.request_timeout;
        c.probe_timeout = self.probe_timeout;
        c
    }

    /// Starts a server as a child process and connects to it over its stdio.
    pub async fn connect_child(self, cmd: &ChildCommand) -> Result<Client, ClientError> {
        let (child, pipes) = ChildProcess::spawn(cmd)?;
        let mut client = self.connect_io(pipes.stdout, pipes.stdin).await?;
        client.child = Some(child);
        Ok(client)
    }

    /// Connects over a reader/writer pair carrying newline-delimited JSON-RPC.
    pub async fn connect_io<R, W>(self, reader: R, writer: W) -> Result<Client, ClientError>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (notify_tx, _) = broadcast::channel(256);
        let service = ClientService {
            notifications: notify_tx.clone(),
        };
        let (peer, task) = tessera_runtime::spawn(
            self.engine_config(),
            reader,
            writer,
            service,
            self.connection.clone(),
        );
        let connected = match peer.connect(self.mode).await {
            Ok(c) => c,
            Err(e) => {
                peer.close();
                return Err(ClientError::Connect(e));
            }
        };
        Ok(Client {
            peer,
            connected,
            notifications: notify_tx,
            task: Some(task),
            child: None,
        })
    }
}

fn to_object<T: Serialize>(v: &T) -> JsonObject {
    match serde_json::to_value(v) {
        Ok(Value::Object(o)) => o,
        _ => JsonObject::new(),
    }
}

struct ClientService {
    notifications: broadcast::Sender<(String, Option<JsonObject>)>,
}

impl Service for ClientService {
    fn methods(&self) -> Vec<String> {
        Vec::new()
    }

    fn handle_request(
        &self,
        request: tessera_runtime::Request,
    ) -> tessera_runtime::BoxFuture<'static, tessera_runtime::HandlerResult> {
        NoService.handle_request(request)
    }

    fn handle_notification(&self, n: Notification) -> tessera_runtime::BoxFuture<'static, ()> {
        let _ = self.notifications.send((n.method, n.params));
        Box::pin(async {})
    }
}

/// A connected MCP client.
///
/// ```no_run
/// use tessera_client::ClientBuilder;
/// use tessera_runtime::ChildCommand;
///
/// # async fn run() -> Result<(), tessera_client::ClientError> {
/// let client = ClientBuilder::new("example", "1.0")
///     .connect_child(&ChildCommand::new("tessera", ["serve", "--stdio"]))
///     .await?;
/// let tools = client.list_tools().await?;
/// let result = client.call_tool("echo", serde_json::json!({"text": "hi"})).await?;
/// client.close().await;
/// # Ok(()) }
/// ```
pub struct Client {
    peer: Peer,
    connected: Connected,
    notifications: broadcast::Sender<(String, Option<JsonObject>)>,
    task: Option<JoinHandle<std::io::Result<()>>>,
    child: Option<ChildProcess>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("era", &self.connected.era)
            .field("version", &self.connected.version)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Starts building a client.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ClientBuilder {
        ClientBuilder::new(name, version)
    }

    /// The era in use.
    pub fn era(&self) -> Era {
        self.connected.era
    }

    /// The protocol version in use.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.connected.version
    }

    /// The server's `Implementation` info.
    pub fn server_info(&self) -> &JsonObject {
        &self.connected.server_info
    }

    /// The server's capabilities, as sent.
    pub fn server_capabilities(&self) -> &JsonObject {
        &self.connected.server_capabilities
    }

    /// The server's instructions, if any.
    pub fn instructions(&self) -> Option<&str> {
        self.connected.instructions.as_deref()
    }

    /// The underlying connection handle.
    pub fn peer(&self) -> &Peer {
        &self.peer
    }

    /// Notifications from the server (method, params), as they arrive.
    pub fn notifications(&self) -> broadcast::Receiver<(String, Option<JsonObject>)> {
        self.notifications.subscribe()
    }

    /// Sends any request and returns its raw result.
    pub async fn request_raw(
        &self,
        method: &str,
        params: Option<JsonObject>,
    ) -> Result<JsonObject, ClientError> {
        self.peer
            .request(method, params, RequestOptions::default())
            .await
            .map_err(ClientError::Request)
    }

    /// Sends a request with typed params and decodes the result.
    pub async fn request<P: Serialize, R: DeserializeOwned>(
        &self,
        method: &str,
        params: &P,
    ) -> Result<R, ClientError> {
        let params = to_object(params);
        let raw = self.request_raw(method, Some(params)).await?;
        serde_json::from_value(Value::Object(raw)).map_err(|source| ClientError::Decode {
            method: method.to_owned(),
            source,
        })
    }

    /// Lists every tool, following pagination cursors.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, ClientError> {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let mut params = JsonObject::new();
            if let Some(c) = &cursor {
                params.insert("cursor".into(), Value::String(c.clone()));
            }
            let page: ListToolsResult = self.request("tools/list", &params).await?;
            tools.extend(page.tools);
            match page.next_cursor {
                Some(c) if Some(&c) != cursor.as_ref() => cursor = Some(c),
                _ => return Ok(tools),
            }
        }
    }

    /// Calls a tool with JSON arguments (an object, or `null` for none).
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
    ) -> Result<CallToolResult, ClientError> {
        let mut params = CallToolRequestParams::new(name);
        if let Value::Object(args) = arguments {
            params.arguments = Some(args);
        }
        self.request("tools/call", &params).await
    }

    /// Closes the connection and, for a child process, shuts it down
    /// (close its stdin, wait, SIGTERM, SIGKILL).
    pub async fn close(mut self) {
        self.peer.close();
        if let Some(t) = self.task.take() {
            let _ = t.await;
        }
        if let Some(c) = self.child.take() {
            let _ = c.shutdown().await;
        }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        self.peer.close();
    }
}
