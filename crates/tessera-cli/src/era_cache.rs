//! The era verdict, remembered across runs. With `--era auto` a target that
//! turned out to speak only the legacy era (it ignored, refused or exited on
//! the `server/discover` probe) is spoken to with `initialize` at once by
//! the runs that follow, for [`TTL`]: a server that ignores the probe costs
//! the probe timeout once a day, not on every `tessera` command. A target
//! that answers the probe is forgotten; a remembered target that then fails
//! to connect is forgotten and probed again.
//!
//! The file is `$TESSERA_CACHE_DIR/era.json`, else `tessera/era.json` under
//! `$XDG_CACHE_HOME` or `~/.cache`. The cache is best effort: a file that
//! cannot be read is treated as empty, and a write that fails is skipped.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use crate::target::Target;

/// How long a legacy verdict is trusted before the target is probed again.
pub const TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// At most this many targets are remembered (the oldest verdicts go first).
const MAX_ENTRIES: usize = 256;

/// The file's contents: when each legacy-only target was last probed.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Verdicts {
    /// Target key → Unix time (seconds) of the probe that found it legacy.
    #[serde(default)]
    legacy: BTreeMap<String, u64>,
}

/// The remembered era verdicts of one user.
#[derive(Debug, Clone)]
pub struct EraCache {
    path: Option<PathBuf>,
}

impl EraCache {
    /// The user's cache (see the module documentation for where it lives);
    /// one that remembers nothing when no location can be found.
    pub fn open() -> EraCache {
        EraCache {
            path: default_dir().map(|d| d.join("era.json")),
        }
    }

    /// A cache kept in the file `path`.
    #[cfg(test)]
    pub fn at(path: &Path) -> EraCache {
        EraCache {
            path: Some(path.to_owned()),
        }
    }

    /// Whether `key` was found legacy-only less than [`TTL`] before `now`.
    pub fn is_legacy(&self, key: &str, now: SystemTime) -> bool {
        let Some(path) = &self.path else {
            return false;
        };
        let seen = read(path).legacy.get(key).copied();
        seen.is_some_and(|at| unix(now).saturating_sub(at) < TTL.as_secs())
    }

    /// Records what a probe of `key` found at `now`: legacy-only (remember
    /// it) or not (forget it).
    pub fn record(&self, key: &str, legacy: bool, now: SystemTime) {
        let Some(path) = &self.path else {
            return;
        };
        let mut v = read(path);
        let now = unix(now);
        let changed = if legacy {
            v.legacy.insert(key.to_owned(), now);
            true
        } else {
            v.legacy.remove(key).is_some()
        };
        if !changed {
            return;
        }
        v.legacy
            .retain(|_, at| now.saturating_sub(*at) < TTL.as_secs());
        while v.legacy.len() > MAX_ENTRIES {
            let oldest = v
                .legacy
                .iter()
                .min_by_key(|(_, at)| **at)
                .map(|(k, _)| k.clone());
            match oldest {
                Some(k) => v.legacy.remove(&k),
                None => break,
            };
        }
        if let Err(e) = write(path, &v) {
            tracing::debug!(path = %path.display(), error = %e, "era cache not written");
        }
    }
}

/// What identifies a target in the cache: its URL, or its command line and
/// extra environment.
pub fn key(target: &Target) -> String {
    match target {
        Target::Url { url, .. } => url.clone(),
        Target::Command { program, args, env } => {
            let mut k = format!("cmd:{}", program.to_string_lossy());
            for a in args {
                k.push('\u{1f}');
                k.push_str(&a.to_string_lossy());
            }
            for (name, value) in env {
                k.push('\u{1e}');
                k.push_str(&name.to_string_lossy());
                k.push('=');
                k.push_str(&value.to_string_lossy());
            }
            k
        }
    }
}

fn default_dir() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("TESSERA_CACHE_DIR").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("tessera"))
}

fn unix(t: SystemTime) -> u64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn read(path: &Path) -> Verdicts {
    std::fs::read(path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// Writes through a temporary file and a rename, so that concurrent runs
/// never see a half-written file (the last writer wins).
fn write(path: &Path, v: &Verdicts) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension(format!("json.{}.tmp", std::process::id()));
    let bytes = serde_json::to_vec_pretty(v).map_err(std::io::Error::other)?;
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An empty scratch directory for one test.
    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("tessera-era-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    fn t(secs: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(secs)
    }

    #[test]
    fn a_legacy_verdict_is_kept_for_its_ttl_then_probed_again() {
        let dir = scratch("ttl");
        let cache = EraCache::at(&dir.join("sub").join("era.json"));
        assert!(!cache.is_legacy("http://a/mcp", t(1_000)));
        cache.record("http://a/mcp", true, t(1_000));
        assert!(cache.is_legacy("http://a/mcp", t(1_000)));
        assert!(!cache.is_legacy("http://b/mcp", t(1_000)));
        assert!(cache.is_legacy("http://a/mcp", t(1_000 + TTL.as_secs() - 1)));
        assert!(!cache.is_legacy("http://a/mcp", t(1_000 + TTL.as_secs())));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_modern_verdict_forgets_the_target() {
        let dir = scratch("modern");
        let cache = EraCache::at(&dir.join("era.json"));
        cache.record("x", true, t(10));
        cache.record("y", true, t(10));
        cache.record("x", false, t(11));
        assert!(!cache.is_legacy("x", t(12)));
        assert!(cache.is_legacy("y", t(12)));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_damaged_file_is_an_empty_cache_and_is_replaced() {
        let dir = scratch("damaged");
        let path = dir.join("era.json");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(&path, b"{not json").unwrap();
        let cache = EraCache::at(&path);
        assert!(!cache.is_legacy("x", t(10)));
        cache.record("x", true, t(10));
        assert!(cache.is_legacy("x", t(11)));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_oldest_verdicts_go_first_beyond_the_cap() {
        let dir = scratch("cap");
        let cache = EraCache::at(&dir.join("era.json"));
        for i in 0..=MAX_ENTRIES as u64 {
            cache.record(&format!("k{i}"), true, t(100 + i));
        }
        assert!(!cache.is_legacy("k0", t(1_000)));
        assert!(cache.is_legacy("k1", t(1_000)));
        assert!(cache.is_legacy(&format!("k{MAX_ENTRIES}"), t(1_000)));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn command_targets_differ_by_arguments_and_environment() {
        let cmd = |args: &[&str], env: &[(&str, &str)]| Target::Command {
            program: "srv".into(),
            args: args.iter().map(Into::into).collect(),
            env: env.iter().map(|(k, v)| (k.into(), v.into())).collect(),
        };
        let a = key(&cmd(&["--x"], &[]));
        assert_ne!(a, key(&cmd(&["--y"], &[])));
        assert_ne!(a, key(&cmd(&["--x"], &[("MODE", "old")])));
        assert_eq!(a, key(&cmd(&["--x"], &[])));
    }
}
