//! `tessera proxy check`: which rule of a configuration's `gateway` section
//! decides whether a principal may use a tool, prompt or resource, and why.

use std::process::ExitCode;

use clap::Args;
use tessera_proxy::{Effect, ItemKind, NAME_SEPARATOR, URI_SEPARATOR, parse_config};

use crate::Failure;
use crate::exit::Exit;

/// `tessera proxy check`.
#[derive(Debug, Args)]
#[command(after_help = "\
Example:
  tessera proxy check --config servers.json --principal '{\"sub\":\"alice\",\"groups\":[\"eng\"]}' \\
      --tool files__read_file

Give the name a client sees: UPSTREAM__NAME, or the server's own name when the file's only server \
has \"prefix\": false. Prints whether the item is allowed and which rule decided (the first that \
matches), or that none matched. Exits 0 when allowed, 4 when denied, 2 for a bad file or arguments. API keys' \
environment variables need not be set.")]
pub struct CheckArgs {
    /// The configuration file (mcpServers plus a gateway section).
    #[arg(long, value_name = "FILE")]
    config: std::path::PathBuf,

    /// The caller's claims, as a JSON object (e.g. '{"sub":"alice","groups":["eng"]}').
    #[arg(long, value_name = "JSON", default_value = "{}")]
    principal: String,

    /// A tool, as the proxy offers it: UPSTREAM__NAME (NAME alone for an unprefixed server).
    #[arg(long, value_name = "NAME", group = "item")]
    tool: Option<String>,

    /// A prompt, as the proxy offers it: UPSTREAM__NAME (NAME alone for an unprefixed server).
    #[arg(long, value_name = "NAME", group = "item")]
    prompt: Option<String>,

    /// A resource, as the proxy offers it: UPSTREAM+URI (URI alone for an unprefixed server).
    #[arg(long, value_name = "URI", group = "item")]
    resource: Option<String>,
}

/// Runs `tessera proxy check`.
pub fn run(a: CheckArgs) -> Result<ExitCode, Failure> {
    let file = a.config.display();
    let text = std::fs::read_to_string(&a.config)
        .map_err(|e| Failure::Usage(format!("--config {file}: {e}")))?;
    // The keys themselves are not needed to explain a decision.
    let config = parse_config(&text, |var| Some(format!("{var}-stands-in-for-the-key")))
        .map_err(|e| Failure::Usage(format!("--config {file}: {e}")))?;
    let claims = match serde_json::from_str(&a.principal) {
        Ok(serde_json::Value::Object(o)) => o,
        _ => {
            return Err(Failure::Usage(
                "--principal must be a JSON object of claims, e.g. '{\"sub\":\"alice\"}'".into(),
            ));
        }
    };
    let (kind, full) = match (&a.tool, &a.prompt, &a.resource) {
        (Some(t), _, _) => (ItemKind::Tool, t),
        (_, Some(p), _) => (ItemKind::Prompt, p),
        (_, _, Some(r)) => (ItemKind::Resource, r),
        _ => {
            return Err(Failure::Usage(
                "name what to check: --tool NAME, --prompt NAME or --resource URI".into(),
            ));
        }
    };
    // The name a client sees, as the server the proxy shows it from names it.
    let located = config.servers.iter().find_map(|s| {
        let naming = s.naming();
        let own = match kind {
            ItemKind::Resource => naming.own_uri(full),
            _ => naming.own_name(full),
        }?;
        Some((s, own))
    });
    let Some((server, shown_own)) = located else {
        let names: Vec<&str> = config.servers.iter().map(|s| s.name.as_str()).collect();
        let form = match kind {
            ItemKind::Resource => format!("UPSTREAM{URI_SEPARATOR}URI"),
            _ => format!("UPSTREAM{NAME_SEPARATOR}NAME"),
        };
        return Err(Failure::Usage(format!(
            "--{} {full:?}: give it as {form}, with UPSTREAM one of {}",
            kind.word(),
            names.join(", ")
        )));
    };
    let upstream = server.name.as_str();
    // Callers name a tool as it is offered; the rules speak of the upstream's name.
    let name = match kind {
        ItemKind::Tool => match server.overrides.original(shown_own) {
            Some(original) => original,
            None => {
                println!(
                    "denied: upstream {upstream:?} offers no tool {shown_own:?} (its toolOverrides \
                     hide it or give it another name)"
                );
                return Ok(Exit::Auth.into());
            }
        },
        _ => shown_own,
    };
    if name != shown_own {
        println!("tool {full:?} is the upstream's {name:?}");
    }
    if kind == ItemKind::Tool && !server.allows(name) {
        println!(
            "denied: tool {name:?} is left out by the allowTools/denyTools lists of upstream \
             {upstream:?}"
        );
        return Ok(Exit::Auth.into());
    }
    let d = config.gateway.policy.decide(&claims, upstream, kind, name);
    println!("{}", d.explanation);
    Ok(match d.effect {
        Effect::Allow => ExitCode::SUCCESS,
        Effect::Deny => Exit::Auth.into(),
    })
}
