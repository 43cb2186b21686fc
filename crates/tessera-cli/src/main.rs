//! `tessera`: serve the reference MCP server; list, read, get, complete,
//! discover, ping and call any MCP server; load-test a tool; inspect one in
//! a web page.

mod ask;
mod bench;
mod completions;
mod config;
mod connect;
mod deadline;
mod era_cache;
mod exit;
mod form;
mod http_opts;
mod inspect;
mod login;
mod notices;
mod output;
mod peer_text;
mod proxy;
mod proxy_check;
mod proxy_redis;
mod proxy_reload;
mod readiness;
mod reference;
mod replay;
mod sampling;
mod serve;
mod serve_auth;
mod session_limits;
mod skills_cmd;
mod target;
mod task_cmd;
mod telemetry;
mod verbs;

use std::process::ExitCode;
use tessera::types::methods;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

pub(crate) use exit::{Exit, Failure};

/// The `tessera` binary allocates with mimalloc: a request's many small,
/// short-lived allocations (JSON trees, header maps) cost about a quarter of
/// the server's instructions with the system allocator. Libraries leave the
/// choice to the program that links them; this is the reference binary's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Tessera: the Model Context Protocol for Rust.
#[derive(Debug, Parser)]
#[command(name = "tessera", about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the reference MCP server.
    Serve(serve::ServeArgs),
    /// List the tools, resources, resource templates or prompts of a server.
    List(verbs::list::ListArgs),
    /// Call a tool on a server.
    Call(verbs::call::CallArgs),
    /// Read a resource.
    Read(verbs::read::ReadArgs),
    /// Get a prompt.
    Get(verbs::get::GetArgs),
    /// Complete a prompt argument or a resource template variable.
    Complete(verbs::complete::CompleteArgs),
    /// Show who a server is: name, version, era, protocol version, capabilities, instructions.
    Discover(verbs::discover::DiscoverArgs),
    /// Check that a server answers, and how fast.
    Ping(verbs::ping::PingArgs),
    /// Set a server's log level, then print what it logs.
    LogLevel(verbs::log_level::LogLevelArgs),
    /// Load-test one tool: req/s, latency percentiles, errors.
    Bench(bench::BenchArgs),
    /// Authorize with an OAuth-protected server (browser, loopback redirect) and store the token.
    Login(login::LoginArgs),
    /// Serve a server again: stdio over HTTP, HTTP on stdio, any era to any era.
    Proxy(proxy::ProxyArgs),
    /// List, describe and read the skills a server publishes (Skills extension), verified.
    Skills(skills_cmd::SkillsArgs),
    /// Follow tasks on a server: list, get, result, cancel.
    Tasks(task_cmd::TasksArgs),
    /// Open a web inspector for MCP servers (a page on a loopback port).
    Inspect(inspect::InspectArgs),
    /// Send the requests of a transcript `tessera inspect` exported to a
    /// server again and compare the answers (exit 12 when any differs).
    Replay(replay::ReplayArgs),
    /// Print a shell completion script (bash, zsh or fish).
    Completions(completions::CompletionsArgs),
}

/// The client verbs, which take a TARGET and share the exit codes.
const CLIENT_VERBS: [&str; 14] = [
    "list",
    "call",
    "read",
    "get",
    "complete",
    "discover",
    methods::PING,
    "log-level",
    "bench",
    "login",
    "tasks",
    "skills",
    "inspect",
    "replay",
];

/// `tessera --version`: the version and the protocol versions spoken.
fn version_text() -> String {
    let versions: Vec<&str> = tessera::types::ProtocolVersion::ALL
        .iter()
        .map(|v| v.as_str())
        .collect();
    format!(
        "{}\nprotocol versions: {} (legacy era: initialize handshake; {}: server/discover)",
        env!("CARGO_PKG_VERSION"),
        versions.join(", "),
        tessera::types::ProtocolVersion::LATEST.as_str()
    )
}

/// The whole command line definition (also used for completions).
fn command() -> clap::Command {
    let table = Exit::help_table();
    let mut cmd = Cli::command()
        .version(version_text())
        .after_help(format!(
            "TARGET: an http(s) URL as the last word, `-- COMMAND ARGS...` (a stdio server to \
             start), or --server NAME from the configuration file (--config FILE; default \
             $TESSERA_CONFIG, else tessera/mcp.json under $XDG_CONFIG_HOME or ~/.config).\n\n{table}"
        ));
    for verb in CLIENT_VERBS {
        let t = table.clone();
        cmd = cmd.mut_subcommand(verb, move |s| s.after_help(t));
    }
    cmd
}

/// The command line definition with `serve` alone, for `tessera serve ...`:
/// building every subcommand's arguments was about a sixth of the
/// instructions `tessera serve --stdio` ran before it answered `initialize`.
/// `serve` reads the same here (its help and errors are checked against
/// [`command`]'s by a test).
fn serve_command() -> clap::Command {
    ServeOnly::command()
}

/// [`Cli`] with the `serve` subcommand alone (see [`serve_command`]).
#[derive(Debug, Parser)]
#[command(name = "tessera", about, long_about = None)]
struct ServeOnly {
    #[command(subcommand)]
    command: ServeCommand,
}

/// [`Command::Serve`] alone.
#[derive(Debug, Subcommand)]
enum ServeCommand {
    /// Run the reference MCP server.
    Serve(serve::ServeArgs),
}

/// `tessera serve --stdio`, exactly that, with none of `serve`'s
/// environment variables set (`env_set` says whether one is): the options
/// clap would parse, without building its parser (see
/// [`serve::ServeArgs::plain_stdio`]). `None` for any other command line.
fn plain_stdio(args: &[std::ffi::OsString], env_set: impl Fn(&str) -> bool) -> Option<Cli> {
    let [_, verb, flag] = args else {
        return None;
    };
    if verb != "serve" || flag != "--stdio" || serve::ENV.iter().any(|v| env_set(v)) {
        return None;
    }
    Some(Cli {
        command: Command::Serve(serve::ServeArgs::plain_stdio()),
    })
}

fn parse() -> Result<Cli, ExitCode> {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if let Some(cli) = plain_stdio(&args, |v| std::env::var_os(v).is_some()) {
        return Ok(cli);
    }
    let serving = std::env::args_os().nth(1).is_some_and(|a| a == "serve");
    let cmd = if serving { serve_command() } else { command() };
    let parsed = cmd
        .try_get_matches_from(args)
        .and_then(|m| Cli::from_arg_matches(&m));
    match parsed {
        Ok(c) => Ok(c),
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(
                e.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                let _ = e.print();
                return Err(
                    if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                        Exit::Usage.into()
                    } else {
                        ExitCode::SUCCESS
                    },
                );
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
            Err(Exit::Usage.into())
        }
    }
}

fn main() -> ExitCode {
    let cli = match parse() {
        Ok(c) => c,
        Err(code) => return code,
    };
    if let Command::Completions(a) = cli.command {
        return completions::run(a, command());
    }
    // Plain text (no colours): log lines quote peers, and every control
    // character in them is shown as an escape.
    tracing_subscriber::fmt()
        .with_ansi(false)
        .with_writer(|| peer_text::LogStderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("TESSERA_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    // `serve --stdio` serves one connection whose handlers all run in its
    // own task: worker threads would only add thread switches per message,
    // their stacks and allocator heaps, and start-up time.
    let one_thread = matches!(&cli.command, Command::Serve(a) if a.is_stdio());
    let mut builder = if one_thread {
        tokio::runtime::Builder::new_current_thread()
    } else {
        tokio::runtime::Builder::new_multi_thread()
    };
    let runtime = match builder.enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return Exit::Local.into();
        }
    };
    let prometheus = matches!(&cli.command, Command::Serve(a) if a.metrics.is_some());
    let outcome = runtime.block_on(async move {
        // OTLP export when the OTEL_* variables ask for it; flushed at the end.
        let exporting = telemetry::init(prometheus)?;
        let out = match cli.command {
            Command::Serve(a) => serve::run(a).await,
            // --timeout bounds each of these from start to end.
            Command::List(a) => deadline::within(a.opts.timeout, verbs::list::run(a)).await,
            // A task runs for as long as it takes (Ctrl-C cancels it):
            // --timeout bounds each request instead.
            Command::Call(a) if a.task => verbs::call::run(a).await,
            Command::Call(a) => deadline::within(a.opts.timeout, verbs::call::run(a)).await,
            Command::Read(a) => deadline::within(a.opts.timeout, verbs::read::run(a)).await,
            Command::Get(a) => deadline::within(a.opts.timeout, verbs::get::run(a)).await,
            Command::Complete(a) => deadline::within(a.opts.timeout, verbs::complete::run(a)).await,
            Command::Discover(a) => deadline::within(a.opts.timeout, verbs::discover::run(a)).await,
            Command::Ping(a) => deadline::within(a.opts.timeout, verbs::ping::run(a)).await,
            Command::LogLevel(a) => verbs::log_level::run(a).await,
            Command::Bench(a) => bench::run(a).await,
            Command::Login(a) => login::login(a).await.map_err(|f| match f {
                Failure::Runtime(e) => Failure::Coded(Exit::Auth, e),
                other => other,
            }),
            Command::Proxy(a) => proxy::run(a).await,
            Command::Skills(a) => skills_cmd::run(a).await,
            Command::Tasks(a) => task_cmd::tasks(a).await,
            Command::Inspect(a) => inspect::run(a).await,
            Command::Replay(a) => replay::run(a).await,
            Command::Completions(_) => Ok(ExitCode::SUCCESS),
        };
        if let Some(e) = exporting {
            e.shutdown().await;
        }
        out
    });
    // Child servers and tasks are shut down with the runtime.
    drop(runtime);
    match outcome {
        Ok(code) => code,
        Err(f) => f.report(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`plain_stdio`] gives what clap parses from `tessera serve --stdio`
    /// (its environment variables left out of clap's command so that the
    /// test's environment does not matter), and applies to nothing else.
    #[test]
    fn plain_stdio_is_what_clap_parses() {
        let mut cmd = serve_command();
        let mut env: Vec<String> = Vec::new();
        cmd = cmd.mut_subcommand("serve", |mut s| {
            s.build();
            let ids: Vec<String> = s
                .get_arguments()
                .filter(|a| a.get_env().is_some())
                .map(|a| {
                    env.push(a.get_env().unwrap_or_default().to_string_lossy().into());
                    a.get_id().to_string()
                })
                .collect();
            for id in ids {
                s = s.mut_arg(id, |a| a.env(None));
            }
            s
        });
        env.sort();
        let mut listed: Vec<String> = serve::ENV.iter().map(|v| (*v).to_owned()).collect();
        listed.sort();
        assert_eq!(env, listed, "serve::ENV names every `env` of `serve`");
        let argv = ["tessera", "serve", "--stdio"];
        let clap = cmd
            .try_get_matches_from(argv)
            .and_then(|m| Cli::from_arg_matches(&m))
            .expect("clap parses `serve --stdio`");
        let args: Vec<std::ffi::OsString> = argv.iter().map(Into::into).collect();
        let fast = plain_stdio(&args, |_| false).expect("plain `serve --stdio`");
        assert_eq!(format!("{fast:?}"), format!("{clap:?}"));
        let os = |a: &[&str]| {
            a.iter()
                .map(Into::into)
                .collect::<Vec<std::ffi::OsString>>()
        };
        assert!(plain_stdio(&args, |v| v == "TESSERA_REDIS_URL").is_none());
        assert!(plain_stdio(&args, |v| v == "TESSERA_AUTH_CLIENT_SECRET").is_none());
        for other in [
            &["tessera", "serve"][..],
            &["tessera", "serve", "--stdio", "--skills", "d"],
            &["tessera", "serve", "--http", "127.0.0.1:0"],
            &["tessera", "serve", "--stdio=true"],
            &["tessera", "list", "--stdio"],
            &["tessera", "--stdio", "serve"],
        ] {
            assert!(plain_stdio(&os(other), |_| false).is_none(), "{other:?}");
        }
    }

    /// `tessera serve ...` is parsed against [`serve_command`]: its help and
    /// its errors are the full command line's, and what it parses is the same.
    #[test]
    fn serve_parses_alone_as_in_the_whole_command() {
        let mut whole = command();
        let mut alone = serve_command();
        let whole_serve = whole.find_subcommand_mut("serve").expect("serve").clone();
        let alone_serve = alone.find_subcommand_mut("serve").expect("serve").clone();
        assert_eq!(
            whole_serve.clone().render_long_help().to_string(),
            alone_serve.clone().render_long_help().to_string()
        );
        assert_eq!(
            whole_serve.clone().render_help().to_string(),
            alone_serve.clone().render_help().to_string()
        );
        let parse = |cmd: clap::Command, args: &[&str]| {
            cmd.try_get_matches_from(args)
                .and_then(|m| Cli::from_arg_matches(&m))
                .map(|c| format!("{c:?}"))
                .map_err(|e| (e.kind(), e.to_string()))
        };
        for args in [
            &["tessera", "serve", "--stdio"][..],
            &["tessera", "serve", "--http", "127.0.0.1:0", "--stateless"],
            &["tessera", "serve", "--stdio", "--task-store", "sqlite:t.db"],
            &["tessera", "serve", "--htp", "x"],
            &["tessera", "serve", "--stdio", "--http", "127.0.0.1:0"],
            &["tessera", "serve", "--stateless"],
            &["tessera", "serve", "--max-batch", "many", "--http", "a"],
            &["tessera", "serve", "extra"],
            &["tessera", "serve", "--help"],
            &["tessera", "serve", "-V"],
        ] {
            let whole = parse(command(), args);
            let alone = parse(serve_command(), args);
            assert_eq!(whole, alone, "{args:?}");
        }
        assert!(parse(serve_command(), &["tessera", "serve", "--stdio"]).is_ok());
    }
}
