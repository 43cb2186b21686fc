//! DPoP on the resource server (RFC 9449): access tokens bound to a key
//! the client holds, each request carrying a fresh proof signed with it.
//!
//! [`DpopSettings`] is given to
//! [`BearerAuthLayerBuilder::dpop`](super::BearerAuthLayerBuilder::dpop).
//! With `Authorization: DPoP <token>`, the layer checks the `DPoP` header
//! (RFC 9449 §4.3): exactly one; a JWT of `typ` `dpop+jwt`; `alg` from an
//! allow-list of asymmetric algorithms ([`DPOP_ALGORITHMS`]; never `none` or
//! HMAC); `jwk` a public key only, of the algorithm's type; the signature;
//! `htm` the request method; `htu` the request URL without query and
//! fragment, after normalisation, on the externally visible origin
//! ([`DpopSettings::origin`]); `iat` within a window ([`DpopSettings::iat_window`],
//! ±60 s by default); `ath` the hash of the access token; with server nonces
//! ([`DpopNonces`]), a live `nonce`. Then the token: it must be bound to the
//! proof's key (`cnf.jkt`, RFC 7638 thumbprint; from a JWT or an
//! introspection answer alike), and the proof must not have been seen
//! before ([`ReplayCache`]).
//!
//! The [`DpopMode`] decides what else is accepted: in
//! [`Allowed`](DpopMode::Allowed) (the default) plain bearer tokens too, in
//! [`Required`](DpopMode::Required) only DPoP-bound tokens; in every mode a
//! DPoP-bound token presented as `Bearer` is refused.

mod clock;
mod htu;
pub(crate) mod jwk;
mod nonce;
mod proof;
mod replay;

use std::sync::Arc;
use std::time::Duration;

use jsonwebtoken::Algorithm;

pub use clock::{Clock, ManualClock, SystemClock};
pub use nonce::{DEFAULT_NONCE_PERIOD_SECS, DpopNonces};
pub use replay::{
    DEFAULT_REPLAY_BYTES, DEFAULT_REPLAY_ENTRIES, ENTRY_BYTES, MemoryReplayCache, ReplayCache,
    ReplayError,
};

pub(crate) use proof::{CheckedProof, ProofError, check};

/// The `DPoP` request header (lowercase, as `http` stores names).
pub const DPOP_HEADER: &str = "dpop";
/// The `DPoP-Nonce` response header.
pub const DPOP_NONCE_HEADER: &str = "dpop-nonce";

/// The proof algorithms accepted by default: ES256, EdDSA (Ed25519), PS256
/// and RS256. `none` and HMAC can never be enabled.
pub const DPOP_ALGORITHMS: &[Algorithm] = &[
    Algorithm::ES256,
    Algorithm::EdDSA,
    Algorithm::PS256,
    Algorithm::RS256,
];

/// The default largest proof, in bytes: far above a proof with a 4096-bit
/// RSA key, far below what a header can carry.
pub const DEFAULT_MAX_PROOF_BYTES: usize = 8 * 1024;

/// What the resource server accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum DpopMode {
    /// No DPoP: bearer tokens only (`Authorization: DPoP` is not
    /// understood, and a DPoP-bound token is still refused as `Bearer`).
    Off,
    /// DPoP-bound tokens with their proofs, and plain bearer tokens.
    #[default]
    Allowed,
    /// DPoP-bound tokens with their proofs only.
    Required,
}

impl DpopMode {
    /// The mode's name: `off`, `allowed` or `required`.
    pub fn as_str(self) -> &'static str {
        match self {
            DpopMode::Off => "off",
            DpopMode::Allowed => "allowed",
            DpopMode::Required => "required",
        }
    }
}

impl std::str::FromStr for DpopMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "off" => Ok(DpopMode::Off),
            "allowed" => Ok(DpopMode::Allowed),
            "required" => Ok(DpopMode::Required),
            other => Err(format!(
                "{other:?} is not a DPoP mode (required, allowed or off)"
            )),
        }
    }
}

/// How DPoP proofs are checked (see the [module documentation](self)).
#[derive(Clone)]
pub struct DpopSettings {
    pub(crate) mode: DpopMode,
    pub(crate) algorithms: Vec<Algorithm>,
    pub(crate) iat_window: Duration,
    pub(crate) max_proof_bytes: usize,
    pub(crate) origin: Option<url::Url>,
    pub(crate) replay: Arc<dyn replay::HeldReplayCache>,
    pub(crate) nonces: Option<DpopNonces>,
    pub(crate) clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for DpopSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DpopSettings")
            .field("mode", &self.mode)
            .field("algorithms", &self.algorithms)
            .field("iat_window", &self.iat_window)
            .field("max_proof_bytes", &self.max_proof_bytes)
            .field("origin", &self.origin.as_ref().map(url::Url::as_str))
            .field("nonces", &self.nonces)
            .finish_non_exhaustive()
    }
}

impl Default for DpopSettings {
    fn default() -> Self {
        DpopSettings::new(DpopMode::default())
    }
}

impl DpopSettings {
    /// Settings for `mode`: the default algorithms, a ±60 s `iat` window,
    /// proofs up to [`DEFAULT_MAX_PROOF_BYTES`], a bounded in-memory replay
    /// cache, no server nonces, the system clock, and the origin of the
    /// layer's resource URL.
    pub fn new(mode: DpopMode) -> DpopSettings {
        DpopSettings {
            mode,
            algorithms: DPOP_ALGORITHMS.to_vec(),
            iat_window: Duration::from_secs(60),
            max_proof_bytes: DEFAULT_MAX_PROOF_BYTES,
            origin: None,
            replay: Arc::new(MemoryReplayCache::default()),
            nonces: None,
            clock: Arc::new(SystemClock),
        }
    }

    /// The mode.
    pub fn mode(&self) -> DpopMode {
        self.mode
    }

    /// The accepted proof algorithms, a subset of [`DPOP_ALGORITHMS`]
    /// (others are dropped; an empty list keeps the default).
    pub fn algorithms(mut self, algs: impl IntoIterator<Item = Algorithm>) -> Self {
        let algs: Vec<Algorithm> = algs
            .into_iter()
            .filter(|a| DPOP_ALGORITHMS.contains(a))
            .collect();
        if !algs.is_empty() {
            self.algorithms = algs;
        }
        self
    }

    /// How far a proof's `iat` may be from now, either way (default 60 s).
    pub fn iat_window(mut self, window: Duration) -> Self {
        self.iat_window = window;
        self
    }

    /// The largest proof accepted, in bytes.
    pub fn max_proof_bytes(mut self, n: usize) -> Self {
        self.max_proof_bytes = n;
        self
    }

    /// The externally visible origin (scheme, host, port) proofs must name
    /// in `htu`, e.g. `https://mcp.example.com` behind a proxy (default: the
    /// origin of the layer's resource URL). A path or query is ignored.
    pub fn origin(mut self, origin: url::Url) -> Self {
        self.origin = Some(origin);
        self
    }

    /// Where used proofs are remembered (default: a [`MemoryReplayCache`];
    /// share one, e.g. in Redis, between the instances of one endpoint).
    pub fn replay_cache(mut self, cache: impl ReplayCache) -> Self {
        self.replay = Arc::new(cache);
        self
    }

    /// Requires server nonces in proofs (RFC 9449 §9).
    pub fn nonces(mut self, nonces: DpopNonces) -> Self {
        self.nonces = Some(nonces);
        self
    }

    /// The clock (default: the system clock).
    pub fn clock(mut self, clock: impl Clock) -> Self {
        self.clock = Arc::new(clock);
        self
    }

    /// The algorithm names, space separated (for `algs="…"` and metadata).
    pub fn algs_text(&self) -> String {
        self.alg_names().join(" ")
    }

    /// The algorithm names.
    pub fn alg_names(&self) -> Vec<String> {
        self.algorithms.iter().map(|a| format!("{a:?}")).collect()
    }
}
