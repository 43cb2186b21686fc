//! Protocol versions and the two eras they belong to.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The era a protocol version belongs to.
///
/// *Legacy* versions (2024-11-05 through 2025-11-25) open a session with the
/// `initialize` handshake; *modern* versions (2026-07-28 and later) are
/// stateless and carry version and capabilities in every request's `_meta`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Era {
    /// Handshake-based: `initialize`, sessions, server-to-client requests.
    Legacy,
    /// Stateless: per-request `_meta`, `server/discover`, multi round-trip requests.
    Modern,
}

/// A released MCP protocol version.
///
/// Ordered by release date, so `a < b` means `a` is older.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ProtocolVersion {
    /// `2024-11-05`: the first release; legacy HTTP+SSE transport.
    V2024_11_05,
    /// `2025-03-26`: Streamable HTTP, JSON-RPC batching, audio content, tool annotations.
    V2025_03_26,
    /// `2025-06-18`: structured tool output, elicitation, resource links; batching removed.
    V2025_06_18,
    /// `2025-11-25`: icons, URL elicitation, sampling with tools, tasks (experimental).
    V2025_11_25,
    /// `2026-07-28`: stateless modern era, `server/discover`, MRTR, `subscriptions/listen`.
    V2026_07_28,
}

impl ProtocolVersion {
    /// Every version this crate knows, oldest first.
    pub const ALL: [ProtocolVersion; 5] = [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2026_07_28,
    ];

    /// The newest version.
    pub const LATEST: ProtocolVersion = ProtocolVersion::V2026_07_28;

    /// The newest legacy (handshake) version.
    pub const LATEST_LEGACY: ProtocolVersion = ProtocolVersion::V2025_11_25;

    /// The version string as it appears on the wire.
    pub const fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2024_11_05 => "2024-11-05",
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
            ProtocolVersion::V2026_07_28 => "2026-07-28",
        }
    }

    /// The era this version belongs to.
    pub const fn era(self) -> Era {
        match self {
            ProtocolVersion::V2026_07_28 => Era::Modern,
            _ => Era::Legacy,
        }
    }

    /// Whether this version allows JSON-RPC batch arrays (only 2025-03-26 does).
    pub const fn allows_batches(self) -> bool {
        matches!(self, ProtocolVersion::V2025_03_26)
    }

    /// Parses a wire string; `None` for an unknown version.
    pub fn parse(s: &str) -> Option<ProtocolVersion> {
        ProtocolVersion::ALL.into_iter().find(|v| v.as_str() == s)
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error returned when a string names no known protocol version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownVersion(pub String);

impl fmt::Display for UnknownVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown MCP protocol version {:?}", self.0)
    }
}

impl std::error::Error for UnknownVersion {}

impl FromStr for ProtocolVersion {
    type Err = UnknownVersion;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ProtocolVersion::parse(s).ok_or_else(|| UnknownVersion(s.to_owned()))
    }
}

impl Serialize for ProtocolVersion {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ProtocolVersion {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        ProtocolVersion::parse(&s).ok_or_else(|| serde::de::Error::custom(UnknownVersion(s)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_version() {
        for v in ProtocolVersion::ALL {
            assert_eq!(ProtocolVersion::parse(v.as_str()), Some(v));
            let json = serde_json::to_string(&v).unwrap();
            assert_eq!(serde_json::from_str::<ProtocolVersion>(&json).unwrap(), v);
        }
        assert!(ProtocolVersion::parse("1900-01-01").is_none());
    }

    #[test]
    fn eras_and_batches() {
        assert_eq!(ProtocolVersion::V2025_11_25.era(), Era::Legacy);
        assert_eq!(ProtocolVersion::V2026_07_28.era(), Era::Modern);
        assert!(ProtocolVersion::V2025_03_26.allows_batches());
        assert!(!ProtocolVersion::V2025_06_18.allows_batches());
        assert!(ProtocolVersion::V2024_11_05 < ProtocolVersion::V2026_07_28);
    }
}
