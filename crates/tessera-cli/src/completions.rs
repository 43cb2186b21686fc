//! `tessera completions bash|zsh|fish`: the shell completion script, on stdout.

use std::process::ExitCode;

use clap::{Args, Command, ValueEnum};
use clap_complete::Shell;

/// A shell to complete in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ShellArg {
    /// bash (source it, or put it in /etc/bash_completion.d/tessera).
    Bash,
    /// zsh (put it as _tessera in a folder of $fpath).
    Zsh,
    /// fish (put it in ~/.config/fish/completions/tessera.fish).
    Fish,
}

/// `tessera completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    shell: ShellArg,
}

/// Writes the completion script of `cmd` for the shell to stdout.
pub fn run(a: CompletionsArgs, mut cmd: Command) -> ExitCode {
    let shell = match a.shell {
        ShellArg::Bash => Shell::Bash,
        ShellArg::Zsh => Shell::Zsh,
        ShellArg::Fish => Shell::Fish,
    };
    clap_complete::generate(shell, &mut cmd, "tessera", &mut std::io::stdout());
    ExitCode::SUCCESS
}
