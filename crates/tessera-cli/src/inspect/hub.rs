//! [`Hub`]: the MCP connections the inspector holds for its page, each a
//! `tessera-client` [`Client`] whose messages are tapped into the
//! [`Journal`], and the calls in flight on them (so the page can cancel one).

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsString;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tessera::client::{CallOptions, ChildCommand, Client, ClientEvent, ConnectMode};
use tessera::types::{
    ClientCapabilities, Era, Implementation, JsonObject, LoggingLevel, ProtocolVersion, Root,
    ServerCapabilities, Tool, UiSettings,
};
use tokio::task::AbortHandle;

use super::asks::Asks;
use super::journal::Journal;
use super::load::{Origin, Runs};
use super::problem::Problem;
use super::subscriptions::Subscriptions;
use super::tap::{Tap, TappedChild};
use super::tasks::TaskBook;
use crate::connect::{ClientOptions, EraChoice};
use crate::http_opts::HttpOptions;
use crate::target::{Target, TargetArgs};

/// The most connections open at once.
pub const MAX_CONNECTIONS: usize = 32;
/// The most calls in flight on one connection.
pub const MAX_CALLS: usize = 64;
/// How long connecting may take (start, probe, handshake).
const CONNECT_LIMIT: Duration = Duration::from_secs(30);
/// How long a request waits for its answer (progress restarts the clock).
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// The longest a request may run, progress or not.
const MAX_REQUEST_TIME: Duration = Duration::from_secs(600);

/// What to connect to, as the page sends it: exactly one of `url`,
/// `command` or `server`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Spec {
    /// An http(s) URL.
    #[serde(default)]
    pub url: Option<String>,
    /// Headers for an URL target (`Name: value`).
    #[serde(default)]
    pub headers: Vec<String>,
    /// A stdio server's program.
    #[serde(default)]
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Extra environment variables of a stdio server.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// A server named in the configuration file.
    #[serde(default)]
    pub server: Option<String>,
    /// `legacy`, `auto` (the default) or `modern`.
    #[serde(default)]
    pub era: Option<String>,
    /// A protocol version to pin.
    #[serde(default)]
    pub protocol_version: Option<String>,
    /// Declare the 2026-07-28 tasks extension (a modern server may then
    /// answer a tool call with a task).
    #[serde(default)]
    pub tasks: bool,
    /// The roots the client offers (`file://` URIs), answered to `roots/list`.
    #[serde(default)]
    pub roots: Vec<String>,
    /// Seconds to wait for each answer (default 60; progress restarts the
    /// clock).
    #[serde(default)]
    pub timeout: Option<f64>,
    /// Client extensions to declare (identifier → settings), beside tasks
    /// and Apps, which the inspector declares itself.
    #[serde(default)]
    pub extensions: BTreeMap<String, JsonObject>,
}

impl Spec {
    /// The target and the connect mode this spec names.
    fn resolve(
        &self,
        http: &HttpOptions,
        config: Option<&std::path::PathBuf>,
    ) -> Result<(Target, ConnectMode), Problem> {
        let era = match self.era.as_deref().unwrap_or("auto") {
            "auto" => EraChoice::Auto,
            "legacy" => EraChoice::Legacy,
            "modern" => EraChoice::Modern,
            other => {
                return Err(Problem::bad_request(format!(
                    "era {other:?}: expected legacy, auto or modern"
                )));
            }
        };
        let protocol_version = match &self.protocol_version {
            None => None,
            Some(v) if v.is_empty() => None,
            Some(v) => Some(crate::connect::parse_version(v).map_err(Problem::bad_request)?),
        };
        let given = usize::from(self.url.is_some())
            + usize::from(self.command.is_some())
            + usize::from(self.server.is_some());
        if given != 1 {
            return Err(Problem::bad_request(
                "give exactly one of url, command or server",
            ));
        }
        let target = if let Some(url) = &self.url {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(Problem::bad_request(format!(
                    "url {url:?}: expected an http:// or https:// URL"
                )));
            }
            Target::Url {
                url: url.clone(),
                headers: self.headers.clone(),
            }
        } else if let Some(program) = &self.command {
            if program.trim().is_empty() {
                return Err(Problem::bad_request("command: empty program"));
            }
            Target::Command {
                program: program.into(),
                args: self.args.iter().map(OsString::from).collect(),
                env: self
                    .env
                    .iter()
                    .map(|(k, v)| (OsString::from(k), OsString::from(v)))
                    .collect(),
            }
        } else {
            TargetArgs {
                server: self.server.clone(),
                config: config.cloned(),
                ..TargetArgs::default()
            }
            .resolve(&mut Vec::new(), 0)
            .map_err(Problem::failure)?
        };
        let opts = options(era, protocol_version, http.clone());
        let mode = opts.mode().map_err(Problem::failure)?;
        Ok((target, mode))
    }
}

/// The CLI's client options for an era and version (used for the mode).
fn options(era: EraChoice, v: Option<ProtocolVersion>, http: HttpOptions) -> ClientOptions {
    ClientOptions {
        json: false,
        era,
        protocol_version: v,
        timeout: REQUEST_TIMEOUT,
        progress_timeout: None,
        log_level: None,
        no_input: true,
        sampling_command: None,
        target: TargetArgs::default(),
        http,
    }
}

/// One open connection.
pub struct Connection {
    /// Its id (in API paths and journal events).
    pub id: u64,
    /// What it is connected to (URL or program).
    pub target: String,
    /// `stdio` or `http`.
    pub transport: &'static str,
    /// The client.
    pub client: Client,
    /// The tasks its tool calls became.
    pub tasks: TaskBook,
    /// Whether the client declared the tasks extension.
    pub declares_tasks: bool,
    /// The resources it follows.
    pub subscriptions: Subscriptions,
    /// How long each request waits for its answer.
    pub timeout: Duration,
    /// What it was opened to (for the load panel's own connections).
    pub origin: Origin,
    tools: Mutex<Vec<Tool>>,
    calls: Mutex<HashMap<String, AbortHandle>>,
    log_level: Mutex<Option<LoggingLevel>>,
}

/// What the page shows of a connection (`GET …/connections/{id}`, and
/// the members of its `connected` event).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Described {
    /// Its id.
    pub id: u64,
    /// What it is connected to.
    pub target: String,
    /// `stdio` or `http`.
    pub transport: &'static str,
    /// Whether it is still connected.
    pub connected: bool,
    /// `legacy` or `modern`.
    pub era: &'static str,
    /// The protocol version spoken.
    pub protocol_version: &'static str,
    /// The server's name and version.
    pub server_info: Implementation,
    /// What the server declared.
    pub capabilities: ServerCapabilities,
    /// The server's instructions (`null` when none).
    pub instructions: Option<String>,
    /// The log level set from the page (`null` when none).
    pub log_level: Option<&'static str>,
    /// Whether the client declared the tasks extension.
    pub tasks_declared: bool,
    /// How long each request waits for its answer.
    pub timeout_seconds: f64,
}

/// A `connection` event: a connection's state changed.
#[derive(Serialize)]
struct ConnectionEvent<'a> {
    connection: u64,
    state: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    target: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a str>,
    /// For `connected`: the connection as described.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    described: Option<Described>,
}

impl<'a> ConnectionEvent<'a> {
    fn new(connection: u64, state: &'static str) -> Self {
        ConnectionEvent {
            connection,
            state,
            target: None,
            error: None,
            described: None,
        }
    }
}

/// A `progress` event: a call's progress.
#[derive(Serialize)]
struct ProgressEvent<'a> {
    connection: u64,
    call: &'a str,
    progress: f64,
    total: Option<f64>,
    message: Option<&'a str>,
}

/// A `log` event: a log message of the server.
#[derive(Serialize)]
struct LogEvent<'a> {
    connection: u64,
    level: &'static str,
    logger: Option<&'a str>,
    data: &'a Value,
}

/// A `changed` event: a list or a resource changed on the server.
#[derive(Serialize)]
struct ChangedEvent<'a> {
    connection: u64,
    what: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    uri: Option<&'a str>,
}

impl<'a> ChangedEvent<'a> {
    fn list(connection: u64, what: &'static str) -> Self {
        ChangedEvent {
            connection,
            what,
            uri: None,
        }
    }
}

/// How a call ended.
pub enum Outcome {
    /// The server's result.
    Done(JsonObject),
    /// The page cancelled it (the server was sent `notifications/cancelled`).
    Cancelled,
}

impl Connection {
    /// What the page shows of the connection.
    pub fn describe(&self) -> Described {
        let c = &self.client;
        Described {
            id: self.id,
            target: self.target.clone(),
            transport: self.transport,
            connected: c.is_connected(),
            era: match c.era() {
                Era::Legacy => "legacy",
                _ => "modern",
            },
            protocol_version: c.protocol_version().as_str(),
            server_info: c.server_info(),
            capabilities: c.server_capabilities(),
            instructions: c.instructions(),
            log_level: self.level().map(|l| l.as_str()),
            tasks_declared: self.declares_tasks,
            timeout_seconds: self.timeout.as_secs_f64(),
        }
    }

    fn level(&self) -> Option<LoggingLevel> {
        *self
            .log_level
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn calls(&self) -> std::sync::MutexGuard<'_, HashMap<String, AbortHandle>> {
        self.calls
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Remembers the tools last listed (for checking results against their
    /// `outputSchema`).
    pub fn remember_tools(&self, tools: Vec<Tool>) {
        *self
            .tools
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = tools;
    }

    /// The tool named `name`, as last listed.
    pub fn tool(&self, name: &str) -> Option<Tool> {
        self.tools
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .find(|t| t.name == name)
            .cloned()
    }

    /// Sets the log level: `logging/setLevel` in the legacy era; in the
    /// modern era the level is sent with each request from now on.
    pub async fn set_level(&self, level: LoggingLevel) -> Result<(), Problem> {
        if self.client.era() == Era::Legacy {
            self.client
                .set_log_level(level)
                .await
                .map_err(|e| Problem::client(&e, "logging/setLevel"))?;
        }
        *self
            .log_level
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(level);
        Ok(())
    }

    /// Sends `method` (answering multi round-trip input requests as the
    /// client is set up to), reporting progress into the journal under
    /// `call_id`, cancellable with [`Connection::cancel`] under that id.
    pub async fn call(
        self: &Arc<Self>,
        journal: &Journal,
        method: &str,
        params: JsonObject,
        call_id: Option<String>,
    ) -> Result<Outcome, Problem> {
        let mut options = CallOptions::new()
            .timeout(self.timeout)
            .max_timeout(MAX_REQUEST_TIME);
        if let Some(l) = self.level() {
            options = options.log_level(l);
        }
        if let Some(id) = &call_id {
            let (journal, conn, id) = (journal.clone(), self.id, id.clone());
            options = options.on_progress(move |p| {
                journal.record(
                    "progress",
                    ProgressEvent {
                        connection: conn,
                        call: &id,
                        progress: p.progress,
                        total: p.total,
                        message: p.message.as_deref(),
                    },
                );
            });
        }
        let client = self.client.clone();
        let m = method.to_owned();
        let task =
            tokio::spawn(async move { client.request_with_input(&m, params, &options).await });
        if let Some(id) = &call_id {
            let mut calls = self.calls();
            if calls.len() >= MAX_CALLS {
                task.abort();
                return Err(Problem::limit(format!(
                    "{MAX_CALLS} calls are already in flight on this connection"
                )));
            }
            if calls.contains_key(id) {
                task.abort();
                return Err(Problem::bad_request(format!("call id {id:?} is in use")));
            }
            calls.insert(id.clone(), task.abort_handle());
        }
        let joined = task.await;
        if let Some(id) = &call_id {
            self.calls().remove(id);
        }
        match joined {
            Ok(Ok(r)) => Ok(Outcome::Done(r)),
            Ok(Err(e)) => Err(Problem::client(&e, method)),
            Err(j) if j.is_cancelled() => Ok(Outcome::Cancelled),
            Err(j) => Err(Problem::bad_request(format!("{method}: {j}"))),
        }
    }

    /// Cancels the call `id`; false when no such call is in flight.
    pub fn cancel(&self, id: &str) -> bool {
        match self.calls().remove(id) {
            Some(h) => {
                h.abort();
                true
            }
            None => false,
        }
    }
}

/// The most roots one connection offers.
pub const MAX_ROOTS: usize = 64;

/// What a client declares beyond the defaults.
#[derive(Debug, Clone)]
pub struct Extras {
    /// The 2026-07-28 tasks extension.
    pub tasks: bool,
    /// Roots (`file://` URIs).
    pub roots: Vec<String>,
    /// How long each request waits for its answer.
    pub timeout: Duration,
    /// More client extensions to declare (identifier → settings).
    pub extensions: BTreeMap<String, JsonObject>,
}

/// The most client extensions one connection declares from the page.
pub const MAX_EXTENSIONS: usize = 16;
/// The longest extension identifier.
const MAX_EXTENSION_ID: usize = 128;

/// Checks the extensions a page asks to declare.
fn check_extensions(e: &BTreeMap<String, JsonObject>) -> Result<(), Problem> {
    if e.len() > MAX_EXTENSIONS {
        return Err(Problem::bad_request(format!(
            "extensions: at most {MAX_EXTENSIONS}"
        )));
    }
    match e.keys().find(|id| {
        id.is_empty()
            || id.len() > MAX_EXTENSION_ID
            || id.chars().any(|c| c.is_whitespace() || c.is_control())
    }) {
        Some(id) => Err(Problem::bad_request(format!(
            "extension {id:?}: an identifier of 1 to {MAX_EXTENSION_ID} characters without spaces (like io.example/feature)"
        ))),
        None => Ok(()),
    }
}

/// The connections. Cheap to clone.
#[derive(Clone)]
pub struct Hub {
    inner: Arc<HubInner>,
}

struct HubInner {
    journal: Journal,
    runs: Runs,
    config: Option<std::path::PathBuf>,
    asks: Asks,
    http: HttpOptions,
    sandbox_port: u16,
    documents: super::sandbox::Documents,
    sign_ins: super::signin::SignIns,
    next: AtomicU64,
    conns: Mutex<BTreeMap<u64, Arc<Connection>>>,
}

impl Hub {
    /// No connections yet; `http` holds the command line's `-H`/`--cacert`,
    /// `config` the configuration file of named servers, `sandbox_port` the
    /// port of the app sandbox origin, `documents` what it serves.
    pub fn new(
        journal: Journal,
        http: HttpOptions,
        config: Option<std::path::PathBuf>,
        sandbox_port: u16,
        documents: super::sandbox::Documents,
    ) -> Hub {
        Hub {
            inner: Arc::new(HubInner {
                runs: Runs::default(),
                config,
                asks: Asks::new(journal.clone()),
                journal,
                http,
                sandbox_port,
                documents,
                sign_ins: super::signin::SignIns::default(),
                next: AtomicU64::new(1),
                conns: Mutex::new(BTreeMap::new()),
            }),
        }
    }

    /// The journal.
    pub fn journal(&self) -> &Journal {
        &self.inner.journal
    }

    /// The configuration file of named servers, if there is one.
    pub fn config_path(&self) -> Option<&std::path::Path> {
        self.inner.config.as_deref()
    }

    /// The port of the app sandbox origin (same host name, this port).
    pub fn sandbox_port(&self) -> u16 {
        self.inner.sandbox_port
    }

    /// The documents the sandbox origin serves.
    pub fn documents(&self) -> &super::sandbox::Documents {
        &self.inner.documents
    }

    /// The OAuth sign-ins in progress.
    pub fn sign_ins(&self) -> &super::signin::SignIns {
        &self.inner.sign_ins
    }

    /// The load runs in progress.
    pub fn runs(&self) -> &Runs {
        &self.inner.runs
    }

    /// The questions servers asked, waiting for the page.
    pub fn asks(&self) -> &Asks {
        &self.inner.asks
    }

    fn conns(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Arc<Connection>>> {
        self.inner
            .conns
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Every connection, oldest first.
    pub fn list(&self) -> Vec<Arc<Connection>> {
        self.conns().values().cloned().collect()
    }

    /// The connection `id`.
    pub fn get(&self, id: u64) -> Result<Arc<Connection>, Problem> {
        self.conns()
            .get(&id)
            .cloned()
            .ok_or_else(|| Problem::not_found(format!("no connection {id}")))
    }

    /// Connects as `spec` says.
    pub async fn connect(&self, spec: &Spec) -> Result<Arc<Connection>, Problem> {
        let (target, mode) = spec.resolve(&self.inner.http, self.inner.config.as_ref())?;
        self.open(
            target,
            mode,
            Extras {
                tasks: spec.tasks,
                roots: spec.roots.clone(),
                extensions: spec.extensions.clone(),
                timeout: match spec.timeout {
                    None => REQUEST_TIMEOUT,
                    Some(t) if t.is_finite() && t > 0.0 && t <= MAX_REQUEST_TIME.as_secs_f64() => {
                        Duration::from_secs_f64(t)
                    }
                    Some(t) => {
                        return Err(Problem::bad_request(format!(
                            "timeout {t}: a number of seconds above 0 and at most {}",
                            MAX_REQUEST_TIME.as_secs()
                        )));
                    }
                },
            },
        )
        .await
    }

    /// Connects to `target` in `mode`, declaring what `extras` says.
    pub async fn open(
        &self,
        target: Target,
        mode: ConnectMode,
        extras: Extras,
    ) -> Result<Arc<Connection>, Problem> {
        let tasks = extras.tasks;
        check_extensions(&extras.extensions)?;
        if extras.roots.len() > MAX_ROOTS {
            return Err(Problem::bad_request(format!("at most {MAX_ROOTS} roots")));
        }
        if self.conns().len() >= MAX_CONNECTIONS {
            return Err(Problem::limit(format!(
                "{MAX_CONNECTIONS} connections are open: disconnect one first"
            )));
        }
        let id = self.inner.next.fetch_add(1, Ordering::Relaxed);
        let journal = self.inner.journal.clone();
        let shown = target.describe();
        journal.record(
            "connection",
            ConnectionEvent {
                target: Some(&shown),
                ..ConnectionEvent::new(id, "connecting")
            },
        );
        let builder = Client::builder("tessera-inspect", env!("CARGO_PKG_VERSION"))
            .mode(mode)
            .event_capacity(4096)
            .request_timeout(Some(extras.timeout))
            .max_request_timeout(Some(MAX_REQUEST_TIME))
            .probe_timeout(Duration::from_secs(5));
        // The page's extensions first: the inspector's own are declared over them.
        let builder = if extras.extensions.is_empty() {
            builder
        } else {
            builder.capabilities(ClientCapabilities {
                extensions: Some(extras.extensions.clone()),
                ..ClientCapabilities::default()
            })
        };
        // The inspector is an MCP Apps host: it renders HTML views.
        let builder = builder.declare_extension(&UiSettings::html());
        let mut builder = self.inner.asks.install(builder, id);
        if tasks {
            builder = builder.tasks();
        }
        if !extras.roots.is_empty() {
            builder = builder.roots(
                extras
                    .roots
                    .iter()
                    .map(|uri| Root {
                        uri: uri.clone(),
                        name: None,
                        meta: None,
                    })
                    .collect(),
            );
        }
        let origin = Origin {
            target: target.clone(),
            mode,
            http: self.inner.http.clone(),
        };
        let transport = match &target {
            Target::Command { .. } => "stdio",
            Target::Url { .. } => "http",
        };
        let connecting = async {
            match target {
                Target::Command { program, args, env } => {
                    let mut command = ChildCommand::new(program, args);
                    command.env = env;
                    builder
                        .connect_with(TappedChild {
                            command,
                            journal: journal.clone(),
                            conn: id,
                        })
                        .await
                        .map_err(|e| Problem::client(&e, &format!("connecting to {shown}")))
                }
                Target::Url { url, headers } => {
                    let mut http = self.inner.http.clone();
                    http.headers.extend(headers);
                    let t = http.transport(&url).map_err(Problem::failure)?;
                    // -H Authorization, else a workload token, else `tessera login`'s.
                    let t = http.authorizer(&url).map_err(Problem::failure)?.install(t);
                    let t = t.with_observer(Arc::new(super::network::Recorder {
                        journal: journal.clone(),
                        conn: id,
                        bodies: Default::default(),
                    }));
                    builder
                        .connect_transport(Tap::new(t, journal.clone(), id))
                        .await
                        .map_err(|e| Problem::client(&e, &format!("connecting to {url}")))
                }
            }
        };
        let client = match tokio::time::timeout(CONNECT_LIMIT, connecting).await {
            Ok(Ok(c)) => c,
            Ok(Err(p)) => {
                journal.record(
                    "connection",
                    ConnectionEvent {
                        error: Some(&p.message),
                        ..ConnectionEvent::new(id, "failed")
                    },
                );
                return Err(p);
            }
            Err(_) => {
                let p = Problem {
                    status: axum::http::StatusCode::GATEWAY_TIMEOUT,
                    message: format!("connecting to {shown}: no answer within {CONNECT_LIMIT:?}"),
                    remote: None,
                };
                journal.record(
                    "connection",
                    ConnectionEvent {
                        error: Some(&p.message),
                        ..ConnectionEvent::new(id, "failed")
                    },
                );
                return Err(p);
            }
        };
        let conn = Arc::new(Connection {
            id,
            target: shown,
            transport,
            client,
            tasks: TaskBook::default(),
            declares_tasks: tasks,
            subscriptions: Subscriptions::default(),
            timeout: extras.timeout,
            origin,
            tools: Mutex::new(Vec::new()),
            calls: Mutex::new(HashMap::new()),
            log_level: Mutex::new(None),
        });
        watch(&conn, journal.clone());
        self.conns().insert(id, conn.clone());
        journal.record(
            "connection",
            ConnectionEvent {
                described: Some(conn.describe()),
                ..ConnectionEvent::new(id, "connected")
            },
        );
        Ok(conn)
    }

    /// Closes connection `id` (stopping a child server); false if unknown.
    pub async fn close(&self, id: u64) -> bool {
        let Some(conn) = self.conns().remove(&id) else {
            return false;
        };
        for (_, h) in conn.calls().drain() {
            h.abort();
        }
        conn.tasks.stop();
        conn.subscriptions.stop();
        conn.client.clone().close().await;
        self.inner
            .journal
            .record("connection", ConnectionEvent::new(id, "closed"));
        true
    }

    /// Closes every connection.
    pub async fn close_all(&self) {
        let ids: Vec<u64> = self.conns().keys().copied().collect();
        for id in ids {
            self.close(id).await;
        }
    }
}

/// Records what the server tells the client outside of answers: logs, list
/// changes, resource updates, the end of the connection.
fn watch(conn: &Arc<Connection>, journal: Journal) {
    let mut events = conn.client.events();
    let id = conn.id;
    tokio::spawn(async move {
        while let Some(e) = events.recv().await {
            match e {
                ClientEvent::Log(m) => journal.record(
                    "log",
                    LogEvent {
                        connection: id,
                        level: m.level.as_str(),
                        logger: m.logger.as_deref(),
                        data: &m.data,
                    },
                ),
                ClientEvent::ToolListChanged(_) => {
                    journal.record("changed", ChangedEvent::list(id, "tools"))
                }
                ClientEvent::PromptListChanged(_) => {
                    journal.record("changed", ChangedEvent::list(id, "prompts"))
                }
                ClientEvent::ResourceListChanged(_) => {
                    journal.record("changed", ChangedEvent::list(id, "resources"))
                }
                ClientEvent::ResourceUpdated(u) => journal.record(
                    "changed",
                    ChangedEvent {
                        uri: Some(&u.uri),
                        ..ChangedEvent::list(id, "resource")
                    },
                ),
                ClientEvent::Disconnected => {
                    journal.record("connection", ConnectionEvent::new(id, "disconnected"));
                    break;
                }
                _ => {}
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn v(x: impl Serialize) -> Value {
        serde_json::to_value(x).unwrap()
    }

    #[test]
    fn events_keep_their_shape() {
        assert_eq!(
            v(ConnectionEvent {
                target: Some("http://x"),
                ..ConnectionEvent::new(1, "connecting")
            }),
            json!({"connection": 1, "state": "connecting", "target": "http://x"})
        );
        assert_eq!(
            v(ConnectionEvent {
                error: Some("no"),
                ..ConnectionEvent::new(1, "failed")
            }),
            json!({"connection": 1, "state": "failed", "error": "no"})
        );
        assert_eq!(
            v(ConnectionEvent::new(2, "closed")),
            json!({"connection": 2, "state": "closed"})
        );
        assert_eq!(
            v(ProgressEvent {
                connection: 1,
                call: "c",
                progress: 5.0,
                total: None,
                message: None
            }),
            json!({"connection": 1, "call": "c", "progress": 5.0, "total": null, "message": null})
        );
        assert_eq!(
            v(LogEvent {
                connection: 1,
                level: "info",
                logger: None,
                data: &json!({"a": 1})
            }),
            json!({"connection": 1, "level": "info", "logger": null, "data": {"a": 1}})
        );
        assert_eq!(
            v(ChangedEvent::list(1, "tools")),
            json!({"connection": 1, "what": "tools"})
        );
        assert_eq!(
            v(ChangedEvent {
                uri: Some("file:///a"),
                ..ChangedEvent::list(1, "resource")
            }),
            json!({"connection": 1, "what": "resource", "uri": "file:///a"})
        );
    }
}
