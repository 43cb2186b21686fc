//! `tessera`: serve the reference MCP server, and list or call the tools of
//! any MCP server.

mod client_cmd;
mod era;
mod http_opts;
mod login;
mod proxy;
mod reference;
mod serve;
mod serve_auth;
mod skills_cmd;
mod target;
mod task_cmd;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Tessera: the Model Context Protocol for Rust.
#[derive(Debug, Parser)]
#[command(name = "tessera", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the reference MCP server.
    Serve(serve::ServeArgs),
    /// List what a server offers.
    List(client_cmd::ListArgs),
    /// Call a tool on a server.
    Call(client_cmd::CallArgs),
    /// Authorize with an OAuth-protected server (browser, loopback redirect) and store the token.
    Login(login::LoginArgs),
    /// Serve a server again: stdio over HTTP, HTTP on stdio, any era to any era.
    Proxy(proxy::ProxyArgs),
    /// List, describe and read the skills a server publishes (Skills extension), verified.
    Skills(skills_cmd::SkillsArgs),
    /// Follow tasks on a server: list, get, result, cancel.
    Tasks(task_cmd::TasksArgs),
}

/// How a command failed, and so which exit code it gets.
#[derive(Debug)]
enum Failure {
    /// Bad command-line arguments (exit 2).
    Usage(String),
    /// The server or the connection failed (exit 1).
    Runtime(anyhow::Error),
}

impl From<anyhow::Error> for Failure {
    fn from(e: anyhow::Error) -> Self {
        Failure::Runtime(e)
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(
                e.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                let _ = e.print();
                return if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                    ExitCode::from(2)
                } else {
                    ExitCode::SUCCESS
                };
            }
            // One line: what is wrong.
            let text = e.to_string();
            let line: Vec<&str> = text
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with("Usage:") && !l.starts_with("For more"))
                .collect();
            eprintln!("{}", line.join(" ").trim_start_matches("error: "));
            eprintln!("(run `tessera --help` for usage)");
            return ExitCode::from(2);
        }
    };
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("TESSERA_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    let outcome = runtime.block_on(async move {
        match cli.command {
            Command::Serve(a) => serve::run(a).await,
            Command::List(a) => client_cmd::list(a).await,
            Command::Call(a) => client_cmd::call(a).await,
            Command::Login(a) => login::login(a).await,
            Command::Tasks(a) => task_cmd::tasks(a).await,
            Command::Proxy(a) => proxy::run(a).await,
            Command::Skills(a) => skills_cmd::run(a).await,
        }
    });
    match outcome {
        Ok(code) => code,
        Err(Failure::Usage(msg)) => {
            eprintln!("{msg}");
            ExitCode::from(2)
        }
        Err(Failure::Runtime(e)) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}
