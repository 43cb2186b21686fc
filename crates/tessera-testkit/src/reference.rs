//! The reference server — `tessera serve`, whose every tool, prompt and
//! resource the CLI's reference module defines — as a fixture.
//!
//! The binary is given, never built here: tests that need it live in
//! `tessera-cli` and pass `env!("CARGO_BIN_EXE_tessera")`, which Cargo
//! builds before those tests.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use tessera_client::{ChildCommand, Client, ClientBuilder};

use crate::deadline::bounded;
use crate::process::{Running, spawn_serving};

/// How long `tessera serve --http` has to print its address.
const LISTENING_WITHIN: Duration = Duration::from_secs(30);

/// The reference server binary.
#[derive(Debug, Clone)]
pub struct Reference {
    bin: PathBuf,
}

impl Reference {
    /// The reference server run from `bin` (a `tessera` executable).
    pub fn new(bin: impl AsRef<Path>) -> Reference {
        Reference {
            bin: bin.as_ref().to_path_buf(),
        }
    }

    /// The command that serves it on stdio (`tessera serve --stdio`), its
    /// stderr discarded, stopped half a second after its stdin closes.
    pub fn stdio(&self) -> ChildCommand {
        let mut c = ChildCommand::new(self.bin.clone(), ["serve", "--stdio"]);
        c.inherit_stderr = false;
        c.shutdown_grace = Duration::from_millis(500);
        c
    }

    /// Starts it on stdio as the child of a client built by `builder`.
    pub async fn connect(&self, builder: ClientBuilder) -> Client {
        bounded(
            "connecting to the reference server",
            builder.connect_child(&self.stdio()),
        )
        .await
        .expect("connects to the reference server")
    }

    /// Starts `tessera serve --http 127.0.0.1:0 ARGS…` and returns the
    /// process (killed on drop) and its endpoint URL.
    pub fn http(&self, args: &[&str]) -> (Running, String) {
        let mut cmd = Command::new(&self.bin);
        cmd.args(["serve", "--http", "127.0.0.1:0"]).args(args);
        let (child, port) = spawn_serving(&mut cmd, LISTENING_WITHIN);
        (Running(child), format!("http://127.0.0.1:{port}/mcp"))
    }
}
