//! `--era`: how a client verb picks the protocol era of its target.

use clap::{Args, ValueEnum};
use tessera::client::ClientBuilder;
use tessera::types::ProtocolVersion;

/// The era to speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum Era {
    /// Probe with `server/discover`, fall back to `initialize` (a server that
    /// exits on the probe is started again and initialized).
    #[default]
    Auto,
    /// Only the `initialize` handshake (2025-11-25): no probe.
    Legacy,
    /// Only 2026-07-28.
    Modern,
}

/// The `--era` option of the client verbs.
#[derive(Debug, Args, Clone, Copy, Default)]
pub struct EraOption {
    /// Which protocol era to speak: auto (probe, then fall back), legacy
    /// (initialize handshake only, no probe) or modern (2026-07-28 only).
    #[arg(long, value_enum, default_value_t = Era::Auto)]
    pub era: Era,
}

impl EraOption {
    /// Applies the choice to a client builder.
    pub fn apply(self, b: ClientBuilder) -> ClientBuilder {
        match self.era {
            Era::Auto => b,
            Era::Legacy => b.protocol_version(ProtocolVersion::V2025_11_25),
            Era::Modern => b.protocol_version(ProtocolVersion::V2026_07_28),
        }
    }
}
