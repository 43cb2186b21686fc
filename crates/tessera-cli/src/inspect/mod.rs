//! `tessera inspect [TARGET]`: a web inspector for MCP servers. The binary
//! holds the MCP connections (with `tessera-client`) and serves, on a
//! loopback port, a page and the small HTTP + SSE API it uses (documented
//! in the guide's inspector chapter, `crates/tessera/guide/inspector.md`).
//! The first line on stdout is the page's URL with the launch's token; every
//! API request must carry it.

mod api;
mod apps;
mod asks;
mod assets;
mod config_file;
mod forward;
mod guard;
mod hub;
mod journal;
mod load;
mod network;
mod oauth_debug;
mod output_check;
mod problem;
mod response_body;
mod sandbox;
mod signin;
mod skills;
mod subscriptions;
mod tap;
mod tasks;

use std::io::Write as _;
use std::net::{IpAddr, SocketAddr};
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;

use crate::connect::{ClientOptions, EraChoice, parse_version};
use crate::exit::{Exit, Failure};
use crate::http_opts::HttpOptions;
use crate::target::TargetArgs;
use tessera::types::ProtocolVersion;

/// `tessera inspect`.
#[derive(Debug, Args)]
pub struct InspectArgs {
    /// The server to open the page connected to: its http(s) URL (or
    /// `-- COMMAND ARGS...`, or --server NAME). Without one, connect from
    /// the page.
    #[arg(value_name = "URL")]
    positional: Vec<String>,

    /// The address to serve the page on: a loopback address (127.0.0.1,
    /// ::1 or localhost) unless --dangerously-bind-all is given.
    #[arg(long, default_value = "127.0.0.1")]
    host: String,

    /// The port to serve the page on (0: a free one).
    #[arg(long, default_value_t = 0)]
    port: u16,

    /// Open the page in the default browser.
    #[arg(long)]
    open: bool,

    /// Allow --host to be an address other machines can reach. Anyone who
    /// reaches the port and learns the token controls your MCP connections.
    #[arg(long)]
    dangerously_bind_all: bool,

    /// The era of the TARGET connection: legacy, auto or modern.
    #[arg(long, value_enum, default_value_t = EraChoice::Auto)]
    era: EraChoice,

    /// Pin the TARGET connection's protocol version.
    #[arg(long, value_name = "VERSION", value_parser = parse_version)]
    protocol_version: Option<ProtocolVersion>,

    /// Declare the 2026-07-28 tasks extension on the TARGET connection (a
    /// modern server may then answer tool calls with tasks).
    #[arg(long)]
    tasks: bool,

    #[command(flatten)]
    target: TargetArgs,

    #[command(flatten)]
    http: HttpOptions,
}

/// The address to bind, or why `--host` is refused.
fn bind_address(host: &str, port: u16, anywhere: bool) -> Result<SocketAddr, Failure> {
    let ip: IpAddr = if host.eq_ignore_ascii_case("localhost") {
        IpAddr::from([127, 0, 0, 1])
    } else {
        host.trim_start_matches('[')
            .trim_end_matches(']')
            .parse()
            .map_err(|_| {
                Failure::Usage(format!(
                    "--host {host:?}: expected an IP address (127.0.0.1, ::1) or localhost"
                ))
            })?
    };
    if !ip.is_loopback() && !anywhere {
        return Err(Failure::Usage(format!(
            "--host {host}: the inspector binds loopback addresses only (127.0.0.1, ::1, localhost); \
             add --dangerously-bind-all to serve it to other machines (whoever reaches the port \
             and learns the token controls your MCP connections)"
        )));
    }
    Ok(SocketAddr::new(ip, port))
}

/// The `host:port` a browser on this machine uses for `addr`.
fn url_host(addr: SocketAddr) -> String {
    match addr.ip() {
        ip if ip.is_unspecified() => format!("127.0.0.1:{}", addr.port()),
        IpAddr::V6(ip) => format!("[{ip}]:{}", addr.port()),
        IpAddr::V4(ip) => format!("{ip}:{}", addr.port()),
    }
}

/// Runs `tessera inspect`.
pub async fn run(a: InspectArgs) -> Result<ExitCode, Failure> {
    let addr = bind_address(&a.host, a.port, a.dangerously_bind_all)?;
    let mut words = a.positional;
    let given = !words.is_empty() || !a.target.command.is_empty() || a.target.server.is_some();
    let target = if given {
        let t = a.target.resolve(&mut words, 0)?;
        crate::verbs::no_more(words.into_iter())?;
        if matches!(t, crate::target::Target::Command { .. }) {
            a.http.only_for_http()?;
        }
        Some(t)
    } else {
        None
    };
    let mode = ClientOptions {
        json: false,
        era: a.era,
        protocol_version: a.protocol_version,
        timeout: std::time::Duration::from_secs(60),
        progress_timeout: None,
        log_level: None,
        no_input: true,
        sampling_command: None,
        target: TargetArgs::default(),
        http: a.http.clone(),
    }
    .mode()?;
    let listener = tokio::net::TcpListener::bind(addr).await.map_err(|e| {
        Failure::Coded(
            Exit::Local,
            anyhow::anyhow!("--host {} --port {}: cannot listen: {e}", a.host, a.port),
        )
    })?;
    let bound = listener
        .local_addr()
        .map_err(|e| Failure::Coded(Exit::Local, anyhow::anyhow!("{e}")))?;
    let token = guard::new_token();
    let access = Arc::new(guard::Access {
        token: token.clone(),
        hosts: if bound.ip().is_loopback() {
            guard::loopback_hosts(bound.port())
        } else {
            Vec::new()
        },
    });
    // The sandbox origin of MCP Apps views: the same address, another port.
    let sandbox_listener = tokio::net::TcpListener::bind(SocketAddr::new(bound.ip(), 0))
        .await
        .map_err(|e| {
            Failure::Coded(
                Exit::Local,
                anyhow::anyhow!("--host {}: cannot listen for the app sandbox: {e}", a.host),
            )
        })?;
    let sandbox_port = sandbox_listener
        .local_addr()
        .map_err(|e| Failure::Coded(Exit::Local, anyhow::anyhow!("{e}")))?
        .port();
    let sandbox_access = Arc::new(guard::Access {
        token: guard::new_token(),
        hosts: if bound.ip().is_loopback() {
            guard::loopback_hosts(sandbox_port)
        } else {
            Vec::new()
        },
    });
    let ancestors = if bound.ip().is_loopback() {
        guard::loopback_hosts(bound.port())
            .iter()
            .map(|h| format!("http://{h}"))
            .collect::<Vec<_>>()
            .join(" ")
    } else {
        format!("http://*:{}", bound.port())
    };
    let documents = sandbox::Documents::default();
    let sandbox_app = sandbox::routes(
        sandbox::Framing { ancestors },
        documents.clone(),
        sandbox_access,
    );
    let journal = journal::Journal::new();
    let config = a.target.config.clone().or_else(crate::config::default_path);
    let hub = hub::Hub::new(journal, a.http.clone(), config, sandbox_port, documents);
    let app = api::routes(hub.clone())
        .merge(assets::routes(sandbox_port))
        .layer(axum::middleware::from_fn_with_state(access, guard::enforce));
    let url = format!("http://{}/?token={token}", url_host(bound));
    {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{url}");
        let _ = out.flush();
    }
    if a.dangerously_bind_all && !bound.ip().is_loopback() {
        eprintln!(
            "\x1b[31mwarning: --dangerously-bind-all: the inspector listens on {bound}, reachable \
             from other machines; anyone with the token controls your MCP connections\x1b[0m"
        );
    }
    eprintln!("tessera inspect: serving the inspector at {url} (Ctrl-C stops it)");
    if a.open {
        open_browser(&url);
    }
    if let Some(t) = target {
        let hub = hub.clone();
        let extras = hub::Extras {
            tasks: a.tasks,
            roots: Vec::new(),
            timeout: hub::REQUEST_TIMEOUT,
            extensions: Default::default(),
        };
        tokio::spawn(async move {
            if let Err(p) = hub.open(t, mode, extras).await {
                // The message may quote the server (its error text).
                crate::peer_text::eprintln(&format!("tessera inspect: {}", p.message));
            }
        });
    }
    let serving = axum::serve(listener, app);
    let sandboxing = axum::serve(sandbox_listener, sandbox_app);
    let outcome = tokio::select! {
        r = serving => r.map_err(|e| Failure::Coded(Exit::Local, anyhow::anyhow!("serving: {e}"))),
        r = sandboxing => r.map_err(|e| Failure::Coded(Exit::Local, anyhow::anyhow!("serving the app sandbox: {e}"))),
        _ = tokio::signal::ctrl_c() => Ok(()),
    };
    hub.close_all().await;
    outcome.map(|()| ExitCode::SUCCESS)
}

/// Opens `url` in the desktop's browser; failing only says so.
fn open_browser(url: &str) {
    let (program, args): (&str, Vec<&str>) = if cfg!(target_os = "macos") {
        ("open", vec![url])
    } else if cfg!(windows) {
        ("cmd", vec!["/C", "start", "", url])
    } else {
        ("xdg-open", vec![url])
    };
    let started = std::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Err(e) = started {
        eprintln!("tessera inspect: could not open a browser ({program}: {e}); open the URL above");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binds_loopback_only_unless_told() {
        assert!(bind_address("127.0.0.1", 0, false).is_ok());
        assert!(bind_address("::1", 0, false).is_ok());
        assert!(bind_address("[::1]", 0, false).is_ok());
        assert!(bind_address("localhost", 0, false).is_ok());
        match bind_address("0.0.0.0", 0, false) {
            Err(Failure::Usage(m)) => {
                assert!(
                    m.contains("--host") && m.contains("--dangerously-bind-all"),
                    "{m}"
                )
            }
            other => panic!("{other:?}"),
        }
        assert!(bind_address("192.168.1.2", 0, true).is_ok());
        assert!(matches!(
            bind_address("example.com", 0, true),
            Err(Failure::Usage(_))
        ));
        assert_eq!(url_host(SocketAddr::from(([0, 0, 0, 0], 9))), "127.0.0.1:9");
        assert_eq!(url_host("[::1]:9".parse().unwrap()), "[::1]:9");
    }
}
