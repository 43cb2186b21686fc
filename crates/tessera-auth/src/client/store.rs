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
        }
    }
}

/// Keeps [`StoredCredentials`] per MCP server URL.
pub trait TokenStore: Send + Sync + 'static {
    /// The credentials for `server_url`, if any.
    fn load(&self, server_url: &str) -> Result<Option<StoredCredentials>, OAuthError>;
    /// Stores (replaces) the credentials for `server_url`.
    fn save(&self, server_url: &str, creds: &StoredCredentials) -> Result<(), OAuthError>;
    /// Forgets the credentials for `server_url`.
    fn remove(&self, server_url: &str) -> Result<(), OAuthError>;
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
}
