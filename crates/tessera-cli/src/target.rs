//! TARGET: where a client verb connects — `-- COMMAND ARGS...` (a stdio
//! server to start), an http(s) URL (the last positional word), or
//! `--server NAME` from a configuration file ([`crate::config`]).

use std::ffi::OsString;
use std::path::PathBuf;

use clap::Args;

use crate::Failure;
use crate::config::{self, Named};

/// A server to talk to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A stdio server to start.
    Command {
        /// The program.
        program: OsString,
        /// Its arguments.
        args: Vec<OsString>,
        /// Extra environment variables (from a configuration file).
        env: Vec<(OsString, OsString)>,
    },
    /// An http(s) URL.
    Url {
        /// The URL.
        url: String,
        /// Extra headers (`Name: value`, from a configuration file).
        headers: Vec<String>,
    },
}

/// The target options every client verb takes (the URL itself is the last
/// positional word of the verb).
#[derive(Debug, Clone, Default, Args)]
#[command(
    next_help_heading = "Target (an http(s) URL as the last word, `-- COMMAND ARGS...`, or --server NAME)"
)]
pub struct TargetArgs {
    /// The named server to use, from the configuration file.
    #[arg(long, value_name = "NAME")]
    pub server: Option<String>,

    /// The configuration file of --server ({"mcpServers": {NAME: {"command",
    /// "args", "env"} | {"url", "headers"}}}); default: $TESSERA_CONFIG, else
    /// tessera/mcp.json under $XDG_CONFIG_HOME or ~/.config.
    #[arg(long, value_name = "FILE", requires = "server")]
    pub config: Option<PathBuf>,

    /// The stdio server to start, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<OsString>,
}

fn is_url(w: &str) -> bool {
    w.starts_with("http://") || w.starts_with("https://")
}

impl TargetArgs {
    /// Picks the one target given: a URL (taken off the end of
    /// `positional` when it holds more than the verb's `required` words),
    /// the words after `--`, or `--server NAME`.
    pub fn resolve(
        &self,
        positional: &mut Vec<String>,
        required: usize,
    ) -> Result<Target, Failure> {
        let url = positional.len() > required && positional.last().is_some_and(|w| is_url(w));
        let given = usize::from(url)
            + usize::from(!self.command.is_empty())
            + usize::from(self.server.is_some());
        if given > 1 {
            return Err(Failure::Usage(
                "give one target: an http(s) URL, `-- COMMAND ARGS...` or --server NAME".into(),
            ));
        }
        if url {
            let url = positional.pop().unwrap_or_default();
            return Ok(Target::Url {
                url,
                headers: Vec::new(),
            });
        }
        if let Some((program, args)) = self.command.split_first() {
            if program.is_empty() {
                return Err(Failure::Usage("empty command after --".into()));
            }
            return Ok(Target::Command {
                program: program.clone(),
                args: args.to_vec(),
                env: Vec::new(),
            });
        }
        if let Some(name) = &self.server {
            let path = match &self.config {
                Some(p) => p.clone(),
                None => config::default_path().ok_or_else(|| {
                    Failure::Usage(
                        "--server: no configuration file (set --config FILE, $TESSERA_CONFIG or $HOME)"
                            .into(),
                    )
                })?,
            };
            return Ok(match config::load(&path, name).map_err(Failure::Usage)? {
                Named::Command { program, args, env } => Target::Command {
                    program: program.into(),
                    args: args.into_iter().map(OsString::from).collect(),
                    env: env
                        .into_iter()
                        .map(|(k, v)| (OsString::from(k), OsString::from(v)))
                        .collect(),
                },
                Named::Url { url, headers } => Target::Url { url, headers },
            });
        }
        Err(Failure::Usage(
            "missing target: add an http(s) URL, `-- COMMAND ARGS...` (a stdio server to start) or --server NAME"
                .into(),
        ))
    }
}

impl Target {
    /// Picks the target from the positional words (a URL is the last one)
    /// and the words after `--`, for commands without `--server`.
    pub fn resolve(
        positional: &mut Vec<String>,
        after_dashes: Vec<OsString>,
    ) -> Result<Target, Failure> {
        TargetArgs {
            command: after_dashes,
            ..TargetArgs::default()
        }
        .resolve(positional, 0)
    }

    /// The target for messages: the URL, or the program.
    pub fn describe(&self) -> String {
        match self {
            Target::Command { program, .. } => program.to_string_lossy().into_owned(),
            Target::Url { url, .. } => url.clone(),
        }
    }

    /// Whether the target is on this machine: a stdio command, or a URL
    /// whose host is a loopback name or address.
    pub fn is_loopback(&self) -> bool {
        match self {
            Target::Command { .. } => true,
            Target::Url { url, .. } => url::Url::parse(url).is_ok_and(|u| match u.host() {
                Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
                Some(url::Host::Ipv4(a)) => a.is_loopback(),
                Some(url::Host::Ipv6(a)) => a.is_loopback(),
                None => false,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(r: Result<Target, Failure>) -> String {
        match r {
            Err(Failure::Usage(m)) => m,
            other => panic!("expected a usage error, got {other:?}"),
        }
    }

    #[test]
    fn resolves_each_kind() {
        let t = TargetArgs::default();
        let mut p = vec!["echo".to_string(), "http://x/mcp".to_string()];
        assert_eq!(
            t.resolve(&mut p, 1).unwrap(),
            Target::Url {
                url: "http://x/mcp".into(),
                headers: vec![]
            }
        );
        assert_eq!(p, vec!["echo".to_string()]);
        let t = TargetArgs {
            command: vec!["srv".into(), "--stdio".into()],
            ..Default::default()
        };
        assert!(
            matches!(t.resolve(&mut vec![], 0), Ok(Target::Command { ref program, .. }) if program == "srv")
        );
        assert!(usage(TargetArgs::default().resolve(&mut vec![], 0)).contains("missing target"));
        let mut p = vec!["http://x/mcp".to_string()];
        assert!(usage(t.resolve(&mut p, 0)).contains("give one target"));
        // A URL that is the verb's own argument (`read URI`) is not the target.
        let mut p = vec!["https://example.com/doc".to_string()];
        assert!(matches!(t.resolve(&mut p, 1), Ok(Target::Command { .. })));
        assert_eq!(p.len(), 1);
    }

    #[test]
    fn loopback_targets() {
        let u = |s: &str| Target::Url {
            url: s.into(),
            headers: vec![],
        };
        assert!(u("http://127.0.0.1:9/mcp").is_loopback());
        assert!(u("http://localhost/mcp").is_loopback());
        assert!(u("http://[::1]:8000/mcp").is_loopback());
        assert!(!u("https://example.com/mcp").is_loopback());
        assert!(!u("http://10.0.0.1/mcp").is_loopback());
    }
}
