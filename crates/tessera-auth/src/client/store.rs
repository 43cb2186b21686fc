//! Where tokens live between requests and between runs: the [`TokenStore`]
//! trait, [`MemoryTokenStore`] (the default) and [`FileTokenStore`] (one
//! JSON file, readable by its owner only) for command-line tools.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::error::OAuthError;
use super::registration::ClientCredentials;
use super::token::TokenSet;

/// What is kept for one MCP server: the tokens, and what a refresh needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct StoredCredentials {
    /// The `resource` the tokens were issued for.
    pub resource: String,
    /// The issuer of the authorization server that issued them.
    pub issuer: String,
    /// Its token endpoint (for refreshing without discovery).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint: Option<String>,
    /// The client identity the tokens were issued to.
    pub client: ClientCredentials,
    /// The scopes requested.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    /// The tokens.
    pub tokens: TokenSet,
    /// The private DPoP key DPoP-bound tokens are bound to (base64url
    /// PKCS#8 DER; see `DpopKey::to_stored`); the store file is private
    /// (mode 0600).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_key: Option<String>,
}

impl StoredCredentials {
    /// Credentials for `resource` from `issuer`.
    pub fn new(
        resource: impl Into<String>,
        issuer: impl Into<String>,
        client: ClientCredentials,
        tokens: TokenSet,
    ) -> Self {
        StoredCredentials {
            resource: resource.into(),
            issuer: issuer.into(),
            token_endpoint: None,
            client,
            scopes: Vec::new(),
            tokens,
            dpop_key: None,
        }
    }
}

/// Keeps [`StoredCredentials`] per MCP server URL.
///
/// A refresh runs as: [`lock`](TokenStore::lock), [`load`](TokenStore::load)
/// (another process may have refreshed already: its tokens are used as they
/// are), the refresh grant, then
/// [`compare_and_swap`](TokenStore::compare_and_swap) against the refresh
/// token that was spent, so a rotated refresh token is never overwritten by a
/// stale one; on failure [`remove_if`](TokenStore::remove_if) forgets the
/// tokens only if they are still the ones that failed.
pub trait TokenStore: Send + Sync + 'static {
    /// The credentials for `server_url`, if any.
    fn load(&self, server_url: &str) -> Result<Option<StoredCredentials>, OAuthError>;
    /// Stores (replaces) the credentials for `server_url`.
    fn save(&self, server_url: &str, creds: &StoredCredentials) -> Result<(), OAuthError>;
    /// Forgets the credentials for `server_url`.
    fn remove(&self, server_url: &str) -> Result<(), OAuthError>;

    /// Takes the store's lock for refreshing the credentials of
    /// `server_url`, blocking until every other holder (in any process) has
    /// let go; the lock is held until the returned guard is dropped. It is
    /// called on a blocking thread. The default takes no lock (enough for a
    /// store that lives in one process: [`OAuthClient`](super::OAuthClient)
    /// already refreshes one at a time).
    fn lock(&self, server_url: &str) -> Result<StoreLock, OAuthError> {
        let _ = server_url;
        Ok(StoreLock::none())
    }

    /// Stores `creds` only if the stored refresh token is still `expected`
    /// (`None`: nothing is stored, or it has no refresh token); `false` when
    /// something else was stored in the meantime (nothing is written then).
    /// The default loads, compares and saves, which is atomic for callers
    /// that hold [`lock`](TokenStore::lock).
    fn compare_and_swap(
        &self,
        server_url: &str,
        expected: Option<&str>,
        creds: &StoredCredentials,
    ) -> Result<bool, OAuthError> {
        let current = self.load(server_url)?;
        if current.and_then(|c| c.tokens.refresh_token).as_deref() != expected {
            return Ok(false);
        }
        self.save(server_url, creds).map(|()| true)
    }

    /// Forgets the credentials for `server_url` only if their refresh token
    /// is still `expected`; `false` when newer ones are stored (they stay).
    fn remove_if(&self, server_url: &str, expected: Option<&str>) -> Result<bool, OAuthError> {
        let Some(current) = self.load(server_url)? else {
            return Ok(true);
        };
        if current.tokens.refresh_token.as_deref() != expected {
            return Ok(false);
        }
        self.remove(server_url).map(|()| true)
    }
}

/// A held [`TokenStore::lock`]; dropping it releases the lock.
pub struct StoreLock(Option<Box<dyn Send>>);

impl StoreLock {
    /// A guard that holds nothing (for stores without a lock).
    pub fn none() -> Self {
        StoreLock(None)
    }

    /// A guard that releases the lock when `held` is dropped.
    pub fn new(held: impl Send + 'static) -> Self {
        StoreLock(Some(Box::new(held)))
    }
}

impl std::fmt::Debug for StoreLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreLock")
            .field("held", &self.0.is_some())
            .finish()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Keeps credentials in memory, for the life of the process.
#[derive(Debug, Default)]
pub struct MemoryTokenStore {
    map: Mutex<HashMap<String, StoredCredentials>>,
}

impl MemoryTokenStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

impl TokenStore for MemoryTokenStore {
    fn load(&self, server_url: &str) -> Result<Option<StoredCredentials>, OAuthError> {
        Ok(lock(&self.map).get(server_url).cloned())
    }

    fn save(&self, server_url: &str, creds: &StoredCredentials) -> Result<(), OAuthError> {
        lock(&self.map).insert(server_url.to_owned(), creds.clone());
        Ok(())
    }

    fn remove(&self, server_url: &str) -> Result<(), OAuthError> {
        lock(&self.map).remove(server_url);
        Ok(())
    }
}

/// The file's layout.
#[derive(Debug, Default, Serialize, Deserialize)]
struct FileContents {
    #[serde(default)]
    servers: BTreeMap<String, StoredCredentials>,
}

/// Keeps credentials in one JSON file, created with mode `0600` (in a
/// directory created with `0700`) and replaced atomically on every write.
///
/// Several processes may share the file (`tessera login` and several
/// `tessera` commands): a refresh holds an exclusive lock on a file beside
/// it (`tokens.json.lock`, `flock(2)` on Unix), and its result is written
/// with a compare-and-swap, so one process refreshes while the others wait
/// and then use the tokens it stored. On other systems only the
/// compare-and-swap applies.
#[derive(Debug)]
pub struct FileTokenStore {
    path: PathBuf,
    /// Serialises read-modify-write cycles within the process.
    guard: Mutex<()>,
}

impl FileTokenStore {
    /// A store in the file at `path`.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        FileTokenStore {
            path: path.into(),
            guard: Mutex::new(()),
        }
    }

    /// `tessera/tokens.json` under the user's configuration directory
    /// (`$XDG_CONFIG_HOME`, else `~/.config`; `%APPDATA%` on Windows).
    pub fn default_path() -> Option<PathBuf> {
        let env = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let base = if cfg!(windows) {
            env("APPDATA")
        } else {
            env("XDG_CONFIG_HOME").or_else(|| env("HOME").map(|h| h.join(".config")))
        }?;
        Some(base.join("tessera").join("tokens.json"))
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn io_err(&self, what: &str, e: std::io::Error) -> OAuthError {
        OAuthError::Store(format!("{what} {}: {e}", self.path.display()))
    }

    fn read(&self) -> Result<FileContents, OAuthError> {
        match std::fs::read(&self.path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                OAuthError::Store(format!("{} is not a token file: {e}", self.path.display()))
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(FileContents::default()),
            Err(e) => Err(self.io_err("reading", e)),
        }
    }

    fn write(&self, contents: &FileContents) -> Result<(), OAuthError> {
        let text =
            serde_json::to_vec_pretty(contents).map_err(|e| OAuthError::Store(e.to_string()))?;
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            create_private_dir(dir).map_err(|e| self.io_err("creating the directory of", e))?;
        }
        let tmp = self
            .path
            .with_extension(format!("tmp{}", std::process::id()));
        write_private(&tmp, &text).map_err(|e| self.io_err("writing", e))?;
        std::fs::rename(&tmp, &self.path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            self.io_err("replacing", e)
        })
    }
}

#[cfg(unix)]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt as _;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)
}

/// Writes `bytes` to a new file that only its owner can read.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        opts.mode(0o600);
    }
    let mut f = opts.open(path)?;
    #[cfg(unix)]
    {
        // The mode above only applies to a new file.
        use std::os::unix::fs::PermissionsExt as _;
        f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    f.write_all(bytes)?;
    f.sync_all()
}

impl TokenStore for FileTokenStore {
    fn load(&self, server_url: &str) -> Result<Option<StoredCredentials>, OAuthError> {
        let _g = lock(&self.guard);
        Ok(self.read()?.servers.remove(server_url))
    }

    fn save(&self, server_url: &str, creds: &StoredCredentials) -> Result<(), OAuthError> {
        let _g = lock(&self.guard);
        let mut c = self.read()?;
        c.servers.insert(server_url.to_owned(), creds.clone());
        self.write(&c)
    }

    fn remove(&self, server_url: &str) -> Result<(), OAuthError> {
        let _g = lock(&self.guard);
        let mut c = self.read()?;
        if c.servers.remove(server_url).is_some() {
            self.write(&c)?;
        }
        Ok(())
    }

    fn lock(&self, _server_url: &str) -> Result<StoreLock, OAuthError> {
        self.lock_file()
    }

    fn compare_and_swap(
        &self,
        server_url: &str,
        expected: Option<&str>,
        creds: &StoredCredentials,
    ) -> Result<bool, OAuthError> {
        let _g = lock(&self.guard);
        let mut c = self.read()?;
        let current = c
            .servers
            .get(server_url)
            .and_then(|s| s.tokens.refresh_token.as_deref());
        if current != expected {
            return Ok(false);
        }
        c.servers.insert(server_url.to_owned(), creds.clone());
        self.write(&c).map(|()| true)
    }

    fn remove_if(&self, server_url: &str, expected: Option<&str>) -> Result<bool, OAuthError> {
        let _g = lock(&self.guard);
        let mut c = self.read()?;
        let Some(current) = c.servers.get(server_url) else {
            return Ok(true);
        };
        if current.tokens.refresh_token.as_deref() != expected {
            return Ok(false);
        }
        c.servers.remove(server_url);
        self.write(&c).map(|()| true)
    }
}

impl FileTokenStore {
    /// The path of the lock file beside the token file.
    fn lock_path(&self) -> PathBuf {
        let mut name = self
            .path
            .file_name()
            .map(|n| n.to_os_string())
            .unwrap_or_default();
        name.push(".lock");
        self.path.with_file_name(name)
    }

    #[cfg(unix)]
    fn lock_file(&self) -> Result<StoreLock, OAuthError> {
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            create_private_dir(dir).map_err(|e| self.io_err("creating the directory of", e))?;
        }
        let path = self.lock_path();
        let mut opts = std::fs::OpenOptions::new();
        opts.read(true).write(true).create(true).truncate(false);
        {
            use std::os::unix::fs::OpenOptionsExt as _;
            opts.mode(0o600);
        }
        let file = opts
            .open(&path)
            .map_err(|e| OAuthError::Store(format!("opening {}: {e}", path.display())))?;
        let held = nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusive)
            .map_err(|(_, e)| OAuthError::Store(format!("locking {}: {e}", path.display())))?;
        Ok(StoreLock::new(held))
    }

    #[cfg(not(unix))]
    fn lock_file(&self) -> Result<StoreLock, OAuthError> {
        Ok(StoreLock::none())
    }
}
