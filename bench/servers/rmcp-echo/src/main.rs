//! The benchmark's `echo` server written with rmcp, the way its documentation
//! shows: a `#[tool_router]` impl and `#[tool_handler]` on the `ServerHandler`.
//!
//! ```text
//! rmcp-echo --stdio
//! rmcp-echo --http 127.0.0.1:PORT --stateful     # sessions, SSE responses
//! rmcp-echo --http 127.0.0.1:PORT --stateless    # no sessions, application/json responses
//! ```
//!
//! The endpoint is `/mcp` (rmcp's service answers on any path it is given; we
//! give it every path, like the other servers' `/mcp`).

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::{Context as _, bail};
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{ServerCapabilities, ServerConfig};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ServerHandler, ServiceExt as _, tool, tool_handler, tool_router};
use serde::Deserialize;

/// The arguments of `echo`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    /// The text to send back.
    text: String,
}

/// The server. The router is built once and shared by every session (the
/// service factory clones an `Arc`), which is the cheapest documented way to
/// use rmcp's router; `#[tool_handler]`'s default would rebuild it per call.
#[derive(Debug, Clone)]
struct Echo {
    tool_router: Arc<ToolRouter<Self>>,
}

#[tool_router]
impl Echo {
    fn new() -> Self {
        Self {
            tool_router: Arc::new(Self::tool_router()),
        }
    }

    #[tool(description = "Sends the text back")]
    fn echo(&self, Parameters(EchoArgs { text }): Parameters<EchoArgs>) -> String {
        text
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Echo {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

enum Mode {
    Stdio,
    Http { addr: SocketAddr, stateful: bool },
}

fn parse_args() -> anyhow::Result<Mode> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut stdio = false;
    let mut addr = None;
    let mut stateful = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--stdio" => stdio = true,
            "--http" => {
                let v = it.next().context("--http needs an address")?;
                addr = Some(
                    v.parse::<SocketAddr>()
                        .with_context(|| format!("bad address {v}"))?,
                );
            }
            "--stateful" => stateful = Some(true),
            "--stateless" => stateful = Some(false),
            "--version" => {
                println!("rmcp-echo (rmcp {})", RMCP_VERSION);
                std::process::exit(0);
            }
            other => bail!(
                "unknown argument {other}; usage: rmcp-echo --stdio | --http ADDR --stateful|--stateless"
            ),
        }
    }
    match (stdio, addr) {
        (true, None) => Ok(Mode::Stdio),
        (false, Some(addr)) => Ok(Mode::Http {
            addr,
            stateful: stateful.unwrap_or(true),
        }),
        _ => bail!("usage: rmcp-echo --stdio | --http ADDR --stateful|--stateless"),
    }
}

/// The rmcp version this binary was built against (Cargo.toml pins it).
const RMCP_VERSION: &str = "3.11.0";

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    match parse_args()? {
        Mode::Stdio => {
            let running = Echo::new().serve(rmcp::transport::stdio()).await?;
            running.waiting().await?;
            Ok(())
        }
        Mode::Http { addr, stateful } => serve_http(addr, stateful).await,
    }
}

async fn serve_http(addr: SocketAddr, stateful: bool) -> anyhow::Result<()> {
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(stateful)
        // JSON responses apply only without sessions (rmcp ignores it otherwise).
        .with_json_response(!stateful)
        .with_allowed_hosts(["127.0.0.1", "localhost"]);
    let prototype = Echo::new();
    let service: StreamableHttpService<Echo, LocalSessionManager> = StreamableHttpService::new(
        move || Ok(prototype.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let listener = tokio::net::TcpListener::bind(addr).await?;
    eprintln!(
        "rmcp-echo: listening on http://{}/mcp ({})",
        listener.local_addr()?,
        if stateful {
            "stateful, SSE"
        } else {
            "stateless, JSON"
        }
    );
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    loop {
        let (stream, _) = tokio::select! {
            r = listener.accept() => r?,
            _ = term.recv() => return Ok(()),
            _ = tokio::signal::ctrl_c() => return Ok(()),
        };
        let _ = stream.set_nodelay(true);
        let svc = TowerToHyperService::new(service.clone());
        tokio::spawn(async move {
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), svc)
                .await;
        });
    }
}
