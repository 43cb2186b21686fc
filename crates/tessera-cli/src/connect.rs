//! The options every client verb takes (`--json`, `--era`,
//! `--protocol-version`, `--timeout`, `--log-level`, `--no-input`,
//! `--sampling-command`, the target and HTTP options), and connecting with
//! them.

use std::time::{Duration, SystemTime};

use clap::{Args, ValueEnum};
use tessera::client::{CallOptions, ChildCommand, Client, ClientBuilder, ClientError, ConnectMode};
use tessera::types::{ErrorCode, LoggingLevel, ProtocolVersion};
use tessera_http::TransportFailure;

use crate::exit::{Exit, Failure};
use crate::http_opts::HttpOptions;
use crate::notices::Notices;
use crate::target::{Target, TargetArgs};

/// Which era to speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum EraChoice {
    /// Only the `initialize` handshake (2024-11-05 … 2025-11-25).
    Legacy,
    /// Probe with `server/discover`, fall back to `initialize`.
    #[default]
    Auto,
    /// Only 2026-07-28 (no handshake).
    Modern,
}

/// A log level on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LevelArg {
    /// debug
    Debug,
    /// info
    Info,
    /// notice
    Notice,
    /// warning
    Warning,
    /// error
    Error,
    /// critical
    Critical,
    /// alert
    Alert,
    /// emergency
    Emergency,
}

impl From<LevelArg> for LoggingLevel {
    fn from(l: LevelArg) -> LoggingLevel {
        match l {
            LevelArg::Debug => LoggingLevel::Debug,
            LevelArg::Info => LoggingLevel::Info,
            LevelArg::Notice => LoggingLevel::Notice,
            LevelArg::Warning => LoggingLevel::Warning,
            LevelArg::Error => LoggingLevel::Error,
            LevelArg::Critical => LoggingLevel::Critical,
            LevelArg::Alert => LoggingLevel::Alert,
            LevelArg::Emergency => LoggingLevel::Emergency,
        }
    }
}

/// Parses `--protocol-version`: one of the released versions, or a message
/// that lists them.
pub fn parse_version(s: &str) -> Result<ProtocolVersion, String> {
    ProtocolVersion::parse(s).ok_or_else(|| {
        let known: Vec<&str> = ProtocolVersion::ALL.iter().map(|v| v.as_str()).collect();
        format!(
            "unknown protocol version {s:?}; known: {}",
            known.join(", ")
        )
    })
}

fn parse_secs(s: &str) -> Result<Duration, String> {
    let v: f64 = s
        .parse()
        .map_err(|_| format!("{s:?} is not a number of seconds"))?;
    if !v.is_finite() || !(0.0..=1e7).contains(&v) {
        return Err(format!(
            "{s:?} is not a number of seconds between 0 and 10000000"
        ));
    }
    Ok(Duration::from_secs_f64(v))
}

/// The options of every client verb.
#[derive(Debug, Clone, Args)]
pub struct ClientOptions {
    /// Print exactly the protocol result as one JSON document on stdout,
    /// nothing else (progress, logs and messages go to stderr).
    #[arg(long)]
    pub json: bool,

    /// Which era to speak: legacy (initialize handshake), auto (probe with
    /// server/discover, fall back), modern (2026-07-28 only).
    #[arg(long, value_enum, default_value_t = EraChoice::Auto)]
    pub era: EraChoice,

    /// Pin the protocol version (its era follows): 2024-11-05, 2025-03-26,
    /// 2025-06-18, 2025-11-25 or 2026-07-28.
    #[arg(long, value_name = "VERSION", value_parser = parse_version)]
    pub protocol_version: Option<ProtocolVersion>,

    /// The wall-clock bound of the whole command, in seconds: starting a
    /// stdio server, the era probe, the handshake, the request and whatever
    /// progress the server reports all count (0 = no bound). `call --task`,
    /// `log-level` and `bench` bound each request with it instead.
    #[arg(long, value_name = "SECS", value_parser = parse_secs, default_value = "60")]
    pub timeout: Duration,

    /// Seconds to wait for an answer with no progress notification in
    /// between: each one restarts it, never past --timeout (default: off,
    /// only --timeout applies).
    #[arg(long, value_name = "SECS", value_parser = parse_secs)]
    pub progress_timeout: Option<Duration>,

    /// The lowest level of log messages to ask the server for (printed to
    /// stderr). Legacy: logging/setLevel after connecting; 2026-07-28: the
    /// log level of each request.
    #[arg(long, value_enum, value_name = "LEVEL")]
    pub log_level: Option<LevelArg>,

    /// Never ask anything on the terminal: elicitation requests are refused.
    #[arg(long)]
    pub no_input: bool,

    /// Answer sampling requests by running CMD (with `sh -c`): it gets the
    /// request params as JSON on stdin and prints the result (a
    /// CreateMessageResult in JSON, or plain text for the reply). Without it,
    /// sampling requests are refused.
    #[arg(long, value_name = "CMD")]
    pub sampling_command: Option<String>,

    #[command(flatten)]
    pub target: TargetArgs,

    #[command(flatten)]
    pub http: HttpOptions,
}

/// A connected client and what reports on it.
pub struct Session {
    /// The client.
    pub client: Client,
    /// Progress and log reporting.
    pub notices: Notices,
    /// What was connected to (for messages).
    pub target: String,
    timeout: Duration,
    progress_timeout: Option<Duration>,
    log_level: Option<LoggingLevel>,
}

impl ClientOptions {
    /// How to pick the era and version.
    pub fn mode(&self) -> Result<ConnectMode, Failure> {
        Ok(match (self.era, self.protocol_version) {
            (EraChoice::Auto, None) => ConnectMode::Auto,
            (EraChoice::Legacy, None) => ConnectMode::Legacy(ProtocolVersion::LATEST_LEGACY),
            (EraChoice::Modern, None) => ConnectMode::Modern(ProtocolVersion::LATEST),
            (era, Some(v)) => {
                let legacy = v.era() == tessera::types::Era::Legacy;
                match (era, legacy) {
                    (EraChoice::Auto, true) | (EraChoice::Legacy, true) => ConnectMode::Legacy(v),
                    (EraChoice::Auto, false) | (EraChoice::Modern, false) => ConnectMode::Modern(v),
                    _ => {
                        return Err(Failure::Usage(format!(
                            "--protocol-version {v} does not belong to --era {}",
                            if legacy { "modern" } else { "legacy" }
                        )));
                    }
                }
            }
        })
    }

    /// The per-call options: timeout, progress reporting, log level.
    pub fn call_options(&self, session: &Session) -> CallOptions {
        let mut o = CallOptions::new();
        match (session.timeout.is_zero(), session.progress_timeout) {
            (true, None) => o = o.no_timeout(),
            (true, Some(idle)) => o = o.timeout(idle),
            // Progress never extends the request past --timeout.
            (false, idle) => {
                let idle = idle.map_or(session.timeout, |i| i.min(session.timeout));
                o = o.timeout(idle).max_timeout(session.timeout);
            }
        }
        let progress = session.notices.clone();
        o = o.on_progress(move |p| progress.progress(&p));
        if let Some(l) = session.log_level {
            o = o.log_level(l);
        }
        o
    }

    /// The client builder with these options (era, timeouts, handlers).
    pub fn builder(&self, notices: &Notices) -> Result<ClientBuilder, Failure> {
        let mut b = Client::builder("tessera-cli", env!("CARGO_PKG_VERSION"))
            .mode(self.mode()?)
            .event_capacity(4096);
        if self.timeout.is_zero() {
            b = b
                .request_timeout(self.progress_timeout)
                .max_request_timeout(None);
        } else {
            let idle = self
                .progress_timeout
                .map_or(self.timeout, |i| i.min(self.timeout));
            b = b
                .request_timeout(Some(idle))
                .max_request_timeout(Some(self.timeout))
                // The probe is inside --timeout: it gets at most half of it,
                // so a server that ignores it still leaves time to initialize.
                .probe_timeout((self.timeout / 2).min(Duration::from_secs(5)));
        }
        if let Some(l) = self.log_level {
            b = b.log_level(l.into());
        }
        Ok(crate::ask::install(b, self, notices))
    }

    /// Connects to `target`.
    pub async fn connect_to(&self, target: Target) -> Result<Session, Failure> {
        self.connect_with_tasks(target, false).await
    }

    /// Connects to `target`; with `tasks` the client declares the Tasks
    /// extension. With `--era auto` the verdict of an earlier run is used
    /// when the target was found legacy-only ([`crate::era_cache`]).
    pub async fn connect_with_tasks(
        &self,
        target: Target,
        tasks: bool,
    ) -> Result<Session, Failure> {
        let probing = matches!(self.mode()?, ConnectMode::Auto);
        if !probing {
            return self.attempt(target, tasks, None).await;
        }
        let cache = crate::era_cache::EraCache::open();
        let key = crate::era_cache::key(&target);
        if cache.is_legacy(&key, SystemTime::now()) {
            let legacy = ConnectMode::Legacy(ProtocolVersion::LATEST_LEGACY);
            // Half of --timeout at most, like the probe, so that a verdict
            // that no longer holds leaves time to probe.
            let mut remembered = self.clone();
            remembered.timeout = self.timeout / 2;
            match remembered
                .attempt(target.clone(), tasks, Some(legacy))
                .await
            {
                Ok(session) => return Ok(session),
                // A timeout is not a sign the server changed: do not wait twice.
                Err(e @ Failure::Coded(Exit::Timeout, _)) => return Err(e),
                Err(e) => {
                    tracing::info!(
                        "connecting with the remembered legacy verdict failed ({e:?}); probing again"
                    );
                    cache.record(&key, false, SystemTime::now());
                }
            }
        }
        let session = self.attempt(target, tasks, None).await?;
        let legacy = session.client.era() == tessera::types::Era::Legacy;
        cache.record(&key, legacy, SystemTime::now());
        Ok(session)
    }

    /// One connection attempt, in `mode` if given, else the options' mode.
    async fn attempt(
        &self,
        target: Target,
        tasks: bool,
        mode: Option<ConnectMode>,
    ) -> Result<Session, Failure> {
        let notices = Notices::new(self.json);
        let mut builder = self.builder(&notices)?;
        let mode = match mode {
            Some(m) => m,
            None => self.mode()?,
        };
        builder = builder.mode(mode);
        if tasks {
            builder = builder.tasks();
        }
        let shown = target.describe();
        let connecting = async {
            match target {
                Target::Command { program, args, env } => {
                    self.http.only_for_http()?;
                    let mut cmd = ChildCommand::new(program, args);
                    cmd.env = env;
                    builder
                        .connect_child(&cmd)
                        .await
                        .map_err(|e| connect_failure(e, mode, format!("connecting to {shown}")))
                }
                Target::Url { url, headers } => {
                    let mut http = self.http.clone();
                    http.headers.extend(headers);
                    // -H Authorization wins over a workload token, which wins
                    // over a token stored by `tessera login`.
                    let authorizer = http.authorizer(&url)?;
                    // The first transport is built here so that bad options
                    // fail at once; reconnections (a session the server
                    // forgot) build their own the same way, telling the
                    // same link what they learn.
                    let made = authorizer.install(http.transport(&url)?);
                    let link = made.link();
                    let first = std::sync::Mutex::new(Some(made));
                    let builder = match link.clone() {
                        Some(link) => builder.link(link),
                        None => builder,
                    };
                    let target = url.clone();
                    builder
                        .connect_transports(move || {
                            let made = first.lock().ok().and_then(|mut f| f.take());
                            match made {
                                Some(t) => Ok(t),
                                None => http
                                    .transport(&target)
                                    .map(|t| {
                                        let t = authorizer.install(t);
                                        match &link {
                                            Some(l) => t.with_link_state(l.state.clone()),
                                            None => t,
                                        }
                                    })
                                    .map_err(|e| std::io::Error::other(format!("{e:?}"))),
                            }
                        })
                        .await
                        .map_err(|e| connect_failure(e, mode, format!("connecting to {url}")))
                }
            }
        };
        let client = if self.timeout.is_zero() {
            connecting.await?
        } else {
            // The probe, the handshake and starting a child. The whole
            // command is bounded by --timeout ([`crate::deadline`]); this is
            // the bound of the commands that run longer, a second past the
            // requests' own timeouts so that theirs fire first.
            let limit = self.timeout + Duration::from_secs(1);
            tokio::time::timeout(limit, connecting)
                .await
                .map_err(|_| {
                    Failure::Coded(
                        Exit::Timeout,
                        anyhow::anyhow!(
                            "connecting to {shown}: no answer within --timeout {} s",
                            self.timeout.as_secs_f64()
                        ),
                    )
                })??
        };
        notices.watch(&client);
        Ok(Session {
            client,
            notices,
            target: shown,
            timeout: self.timeout,
            progress_timeout: self.progress_timeout,
            log_level: self.log_level.map(Into::into),
        })
    }
}

impl Session {
    /// Closes the connection (shutting a child server down) and finishes the
    /// progress display.
    pub async fn close(self) {
        self.client.close().await;
        self.notices.drain().await;
        self.notices.finish();
    }
}

/// A failed connection, with its exit code: a server that does not speak
/// the era or version pinned with `--era`/`--protocol-version` does not
/// offer what was asked (exit 9); anything else is classified as any client
/// error.
fn connect_failure(e: ClientError, mode: ConnectMode, doing: String) -> Failure {
    match unsupported_version(&e, mode) {
        Some(why) => Failure::Coded(
            Exit::Unsupported,
            anyhow::Error::new(e).context(format!("{doing}: {why}")),
        ),
        None => Failure::client(e, doing),
    }
}

/// Why the handshake shows the server does not speak what `mode` asks, if
/// it does.
fn unsupported_version(e: &ClientError, mode: ConnectMode) -> Option<String> {
    let ClientError::Connect(_) = e else {
        return None;
    };
    let remote = e.remote()?;
    // No version in common, or `initialize` answered with a version other
    // than the one pinned.
    if remote.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION.0 {
        return Some(format!(
            "the server does not speak the protocol version asked ({}); try --era auto",
            remote.message
        ));
    }
    match mode {
        // The probe failed: a server that answers requests but not
        // `server/discover` (an error response, or an HTTP endpoint that
        // refuses the POST) does not speak the modern era. Authorization
        // failures and unreachable servers keep their own codes.
        ConnectMode::Modern(v) => {
            let refused = match TransportFailure::of(remote) {
                // Method not found, invalid request or params, "not
                // initialized" (-32002, and -32000 as some SDKs send it).
                None => matches!(remote.code, -32601 | -32600 | -32602 | -32002 | -32000),
                Some(f) => matches!(f.status, Some(400 | 404 | 405 | 406 | 415)),
            };
            refused.then(|| {
                format!(
                    "the server does not speak protocol version {v} (the modern era); \
                     try --era auto or --era legacy"
                )
            })
        }
        _ => None,
    }
}

/// Connects to `target` with the defaults of every option but the HTTP
/// ones (era `auto`, 60 s timeouts, no input), for commands that do not take
/// [`ClientOptions`].
pub async fn connect(target: Target, http: &HttpOptions) -> Result<Client, Failure> {
    connect_with(target, http, false).await
}

/// [`connect`]; with `tasks` the client declares the Tasks extension
/// (2026-07-28 servers may then answer with tasks).
pub async fn connect_with(
    target: Target,
    http: &HttpOptions,
    tasks: bool,
) -> Result<Client, Failure> {
    connect_pinned(target, http, tasks, EraChoice::Auto, None).await
}

/// [`connect_with`] in a chosen era or at a pinned protocol version.
pub async fn connect_pinned(
    target: Target,
    http: &HttpOptions,
    tasks: bool,
    era: EraChoice,
    protocol_version: Option<ProtocolVersion>,
) -> Result<Client, Failure> {
    let opts = ClientOptions {
        json: false,
        era,
        protocol_version,
        timeout: Duration::from_secs(60),
        progress_timeout: None,
        log_level: None,
        no_input: true,
        sampling_command: None,
        target: TargetArgs::default(),
        http: http.clone(),
    };
    let session = opts.connect_with_tasks(target, tasks).await?;
    Ok(session.client)
}

/// The failure of a request: the server's JSON-RPC error (exit 1) or what
/// else went wrong, with its exit code.
pub fn remote_failure(e: tessera::client::ClientError) -> Failure {
    Failure::client(e, "the request failed")
}
