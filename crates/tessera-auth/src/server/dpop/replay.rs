//! [`ReplayCache`]: remembers the DPoP proofs already used (RFC 9449 §11.1),
//! so a proof replayed within its `iat` window is refused.

use std::collections::{BTreeSet, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;

/// Why the replay cache could not answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReplayError {
    /// The cache is full (its count or byte limit); the text names the limit.
    #[error("the DPoP replay cache is full: {0}")]
    Full(String),
    /// The cache's store could not be reached.
    #[error("the DPoP replay cache is unavailable: {0}")]
    Unavailable(String),
}

/// A set of used proof identifiers, each kept until it expires.
///
/// The key is a 32-byte digest of the proof's key thumbprint, `htu` and
/// `jti` (so it is fixed-size whatever the client sent).
///
/// Implement it with an `async fn`:
///
/// ```
/// use tessera_auth::server::dpop::{DpopSettings, MemoryReplayCache, ReplayCache, ReplayError};
///
/// /// Logs every proof, keeping them in memory.
/// #[derive(Default)]
/// struct Logged(MemoryReplayCache);
///
/// impl ReplayCache for Logged {
///     async fn first_use(
///         &self,
///         key: &[u8; 32],
///         expires_at: u64,
///         now: u64,
///     ) -> Result<bool, ReplayError> {
///         let first = self.0.first_use(key, expires_at, now).await;
///         println!("proof {:02x?}: first use {first:?}", &key[..4]);
///         first
///     }
/// }
///
/// let dpop = DpopSettings::default().replay_cache(Logged::default());
/// # let _ = dpop;
/// ```
pub trait ReplayCache: Send + Sync + 'static {
    /// Records `key` until `expires_at` (Unix seconds) and answers `true`,
    /// or answers `false` if it was already recorded and has not expired.
    /// `now` is the current time of the caller's clock.
    fn first_use(
        &self,
        key: &[u8; 32],
        expires_at: u64,
        now: u64,
    ) -> impl Future<Output = Result<bool, ReplayError>> + Send;
}

/// A boxed future of [`HeldReplayCache::first_use_boxed`].
type ReplayFuture<'a> = Pin<Box<dyn Future<Output = Result<bool, ReplayError>> + Send + 'a>>;

/// [`ReplayCache`] as the settings hold it (behind a trait object, one box
/// per call).
pub(crate) trait HeldReplayCache: Send + Sync + 'static {
    fn first_use_boxed<'a>(
        &'a self,
        key: &'a [u8; 32],
        expires_at: u64,
        now: u64,
    ) -> ReplayFuture<'a>;
}

impl<T: ReplayCache> HeldReplayCache for T {
    fn first_use_boxed<'a>(
        &'a self,
        key: &'a [u8; 32],
        expires_at: u64,
        now: u64,
    ) -> ReplayFuture<'a> {
        Box::pin(self.first_use(key, expires_at, now))
    }
}

/// What one entry costs in memory, counted against the byte limit: the key,
/// its expiry in the map and in the expiry index, and their bookkeeping.
pub const ENTRY_BYTES: usize = 128;

/// The in-memory [`ReplayCache`] (the default): bounded by a number of
/// entries and a number of bytes; expired entries are dropped as new ones
/// come. When full of live entries, a new proof is refused (`503`, the
/// refusal naming the limit) rather than an entry forgotten early.
#[derive(Debug)]
pub struct MemoryReplayCache {
    max_entries: usize,
    max_bytes: usize,
    state: Mutex<Entries>,
}

#[derive(Debug, Default)]
struct Entries {
    by_key: HashMap<[u8; 32], u64>,
    by_expiry: BTreeSet<(u64, [u8; 32])>,
}

/// The default entry limit of [`MemoryReplayCache`].
pub const DEFAULT_REPLAY_ENTRIES: usize = 100_000;
/// The default byte limit of [`MemoryReplayCache`] (16 MiB).
pub const DEFAULT_REPLAY_BYTES: usize = 16 << 20;

impl Default for MemoryReplayCache {
    fn default() -> Self {
        MemoryReplayCache::new(DEFAULT_REPLAY_ENTRIES, DEFAULT_REPLAY_BYTES)
    }
}

impl MemoryReplayCache {
    /// A cache holding at most `max_entries` entries and `max_bytes` bytes
    /// ([`ENTRY_BYTES`] per entry).
    pub fn new(max_entries: usize, max_bytes: usize) -> MemoryReplayCache {
        MemoryReplayCache {
            max_entries,
            max_bytes,
            state: Mutex::new(Entries::default()),
        }
    }

    /// How many entries are held (expired ones included until swept).
    pub fn len(&self) -> usize {
        self.lock().by_key.len()
    }

    /// Whether the cache holds no entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Entries> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn record(&self, key: &[u8; 32], expires_at: u64, now: u64) -> Result<bool, ReplayError> {
        let mut st = self.lock();
        // Drop what has expired.
        while let Some(&(exp, k)) = st.by_expiry.first() {
            if exp > now {
                break;
            }
            st.by_expiry.pop_first();
            st.by_key.remove(&k);
        }
        if st.by_key.contains_key(key) {
            return Ok(false);
        }
        let n = st.by_key.len();
        if n >= self.max_entries {
            return Err(ReplayError::Full(format!(
                "{} entries (the entry limit)",
                self.max_entries
            )));
        }
        if (n + 1).saturating_mul(ENTRY_BYTES) > self.max_bytes {
            return Err(ReplayError::Full(format!(
                "{} bytes (the byte limit)",
                self.max_bytes
            )));
        }
        st.by_key.insert(*key, expires_at);
        st.by_expiry.insert((expires_at, *key));
        Ok(true)
    }
}

impl ReplayCache for MemoryReplayCache {
    fn first_use(
        &self,
        key: &[u8; 32],
        expires_at: u64,
        now: u64,
    ) -> impl Future<Output = Result<bool, ReplayError>> + Send {
        std::future::ready(self.record(key, expires_at, now))
    }
}

impl<T: ReplayCache + ?Sized> ReplayCache for std::sync::Arc<T> {
    fn first_use(
        &self,
        key: &[u8; 32],
        expires_at: u64,
        now: u64,
    ) -> impl Future<Output = Result<bool, ReplayError>> + Send {
        (**self).first_use(key, expires_at, now)
    }
}

impl<T: ReplayCache + ?Sized> ReplayCache for Box<T> {
    fn first_use(
        &self,
        key: &[u8; 32],
        expires_at: u64,
        now: u64,
    ) -> impl Future<Output = Result<bool, ReplayError>> + Send {
        (**self).first_use(key, expires_at, now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_until_expiry_and_is_bounded() {
        let c = MemoryReplayCache::new(2, 1 << 20);
        assert_eq!(c.record(&[1; 32], 100, 10), Ok(true));
        assert_eq!(c.record(&[1; 32], 100, 50), Ok(false), "replayed");
        assert_eq!(c.record(&[2; 32], 100, 50), Ok(true));
        assert!(
            matches!(c.record(&[3; 32], 100, 50), Err(ReplayError::Full(m)) if m.contains("entry limit"))
        );
        // At expiry the entries go, and room comes back.
        assert_eq!(c.record(&[3; 32], 200, 100), Ok(true));
        assert_eq!(c.len(), 1);
        assert_eq!(c.record(&[1; 32], 200, 100), Ok(true), "expired, so new");
        let small = MemoryReplayCache::new(1000, 2 * ENTRY_BYTES);
        assert_eq!(small.record(&[1; 32], 100, 0), Ok(true));
        assert_eq!(small.record(&[2; 32], 100, 0), Ok(true));
        assert!(
            matches!(small.record(&[3; 32], 100, 0), Err(ReplayError::Full(m)) if m.contains("byte limit"))
        );
    }
}
