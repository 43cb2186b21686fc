//! [`SkillCache`]: verified skill files kept in memory, keyed by server and
//! URI, checked again on every read.

use std::collections::HashMap;
use std::sync::Mutex;

use tessera_types::{Skill, skill_digest};

use super::verify::check_file;
use crate::client::Client;
use crate::error::ClientError;

/// The identity of a skill or skill file: the server (a label the
/// application assigns, never the server's self-reported name) and the URI.
/// Two servers may serve the same URI; they are different skills.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SkillKey {
    /// The application's label for the server.
    pub server: String,
    /// The URI.
    pub uri: String,
}

impl SkillKey {
    /// The key of `uri` on `server`.
    pub fn new(server: impl Into<String>, uri: impl Into<String>) -> Self {
        SkillKey {
            server: server.into(),
            uri: uri.into(),
        }
    }
}

/// Verified skill files, filled as files are read (never in bulk). A hit is
/// served only if the cached bytes still hash to the digest of the entry in
/// hand; otherwise it is dropped and fetched again.
#[derive(Debug, Default)]
pub struct SkillCache {
    files: Mutex<HashMap<SkillKey, Vec<u8>>>,
}

impl SkillCache {
    /// An empty cache.
    pub fn new() -> Self {
        SkillCache::default()
    }

    /// How many files are cached.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<SkillKey, Vec<u8>>> {
        self.files
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The cached bytes of `uri` on `server` if they match `skill`'s entry
    /// now (digest recomputed); a stale or altered copy is dropped.
    pub fn get(&self, server: &str, skill: &Skill, uri: &str) -> Option<Vec<u8>> {
        let key = SkillKey::new(server, uri);
        let mut files = self.lock();
        let bytes = files.get(&key)?;
        let listed = skill.file(uri)?;
        if bytes.len() as u64 == listed.size && skill_digest(bytes) == listed.digest {
            Some(bytes.clone())
        } else {
            files.remove(&key);
            None
        }
    }

    /// Reads file `path` of `skill` from `server` through the cache: a
    /// cached copy that still verifies, else a verified fetch that is then
    /// kept.
    pub async fn read(
        &self,
        client: &Client,
        server: &str,
        skill: &Skill,
        path: &str,
    ) -> Result<Vec<u8>, ClientError> {
        let uri = skill.resolve(path);
        if let Some(hit) = self.get(server, skill, &uri) {
            // Checked once more against the entry (listed, size, digest).
            check_file(skill, &uri, &hit)?;
            return Ok(hit);
        }
        let bytes = client.read_skill_file(skill, &uri).await?;
        self.lock()
            .insert(SkillKey::new(server, uri), bytes.clone());
        Ok(bytes)
    }

    /// Puts bytes in the cache directly (for example after
    /// [`Client::load_skill`]); they are verified on every read anyway.
    pub fn insert(&self, server: &str, uri: &str, bytes: Vec<u8>) {
        self.lock().insert(SkillKey::new(server, uri), bytes);
    }

    /// Forgets everything cached for `server` (when the user removes it).
    pub fn remove_server(&self, server: &str) {
        self.lock().retain(|k, _| k.server != server);
    }
}
