//! The Skills extension (`io.modelcontextprotocol/skills`) on the server:
//! [`Skills`] serves skill directories and generated ("dynamic") skills as
//! `skill://` resources, with `skills/list`, `skills/get` and
//! `resources/directory/read`.
//!
//! ```no_run
//! use std::sync::Arc;
//! use std::time::Duration;
//! use tessera_server::{Server, skills::Skills};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let skills = Arc::new(Skills::from_dirs(["./skills"])?);
//! let server = Server::builder().extension_arc(skills.clone()).build()?;
//! // Pick up changes on disk; clients are told the resource list changed.
//! let _watch = skills.watch(Duration::from_secs(2));
//! server.serve_stdio().await?;
//! # Ok(()) }
//! ```
//!
//! The entries are built when the skills are loaded (digests, sizes,
//! frontmatter, limits); files are read from disk when a client reads them.
//! The server declares `directoryRead: true` and the `resources`
//! capability; `resources/list` shows each skill's `SKILL.md` (named and
//! described by its frontmatter), and every file and directory can be read.

mod catalog;
mod confined;
mod dynamic;
mod methods;

use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, RwLock, Weak};
use std::time::{Duration, SystemTime};

use tessera_types::{ResourcesCapability, ServerCapabilities, Skill, SkillsSettings};

pub use catalog::{MAX_FRONTMATTER_BYTES, SkillsError};
pub use dynamic::{DynamicSkill, SkillFile};

use crate::extension::{ExtensionHost, ExtensionRoutes, ServerExtension};
use crate::hub::ListKind;
use crate::resource::SharedProvider;
use catalog::Catalog;
use dynamic::DynamicEntry;
use tessera_types::DeclaredSettings;

/// What the extension and its resource provider share.
pub(crate) struct Shared {
    roots: Vec<PathBuf>,
    catalog: RwLock<Arc<Catalog>>,
    dynamic: RwLock<Vec<Arc<DynamicEntry>>>,
    seen: Mutex<Vec<(PathBuf, u64, Option<SystemTime>)>>,
    /// The skills the last load left out, and why.
    skipped: Mutex<Vec<SkillsError>>,
}

impl Shared {
    fn catalog(&self) -> Arc<Catalog> {
        self.catalog
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    fn dynamic(&self) -> Vec<Arc<DynamicEntry>> {
        self.dynamic
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Every entry, static and dynamic, sorted by URI.
    fn entries(&self) -> Vec<Skill> {
        let mut all = self.catalog().skills.clone();
        all.extend(self.dynamic().iter().map(|d| d.entry()));
        all.sort_by(|a, b| a.uri.cmp(&b.uri));
        all
    }
}

/// The Skills extension: skills from directories (reloadable) and
/// generated skills. Register it with
/// [`ServerBuilder::extension`](crate::ServerBuilder::extension), or with
/// [`ServerBuilder::extension_arc`](crate::ServerBuilder::extension_arc) to
/// keep a handle for [`reload`](Skills::reload) and [`watch`](Skills::watch).
pub struct Skills {
    shared: Arc<Shared>,
    host: OnceLock<ExtensionHost>,
}

impl std::fmt::Debug for Skills {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Skills")
            .field("roots", &self.shared.roots)
            .field("skills", &self.shared.catalog().skills.len())
            .finish_non_exhaustive()
    }
}

impl Default for Skills {
    fn default() -> Self {
        Skills::empty()
    }
}

impl Skills {
    /// No skills yet (add generated ones with [`Skills::dynamic`]).
    pub fn empty() -> Self {
        Skills {
            shared: Arc::new(Shared {
                roots: Vec::new(),
                catalog: RwLock::new(Arc::new(Catalog::default())),
                dynamic: RwLock::new(Vec::new()),
                seen: Mutex::new(Vec::new()),
                skipped: Mutex::new(Vec::new()),
            }),
            host: OnceLock::new(),
        }
    }

    /// Loads the skills under each directory (see the rules in
    /// [`SkillsError`]: names, limits, frontmatter). A skill that breaks a
    /// rule is left out with a warning (logged, and kept in
    /// [`Skills::skipped`]) and the others are served; only a directory
    /// that cannot be read at all fails.
    pub fn from_dirs<P: Into<PathBuf>>(
        dirs: impl IntoIterator<Item = P>,
    ) -> Result<Self, SkillsError> {
        let roots: Vec<PathBuf> = dirs.into_iter().map(Into::into).collect();
        let seen = catalog::fingerprint(&roots);
        let (loaded, skipped) = Catalog::load(&roots)?;
        warn_skipped(&skipped);
        Ok(Skills {
            shared: Arc::new(Shared {
                roots,
                catalog: RwLock::new(Arc::new(loaded)),
                dynamic: RwLock::new(Vec::new()),
                seen: Mutex::new(seen),
                skipped: Mutex::new(skipped),
            }),
            host: OnceLock::new(),
        })
    }

    /// The skills the last load or reload left out, each with why.
    pub fn skipped(&self) -> Vec<SkillsError> {
        self.shared
            .skipped
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Adds a generated skill at `skill_path` (`reports/daily`): its entry
    /// says `"resources": "dynamic"` and its files are produced on every
    /// read. The last segment must be the frontmatter's `name`.
    pub fn dynamic(self, skill_path: &str, skill: impl DynamicSkill) -> Result<Self, SkillsError> {
        let entry = DynamicEntry::new(skill_path, skill)?;
        let taken = self.shared.entries().iter().any(|s| s.uri == entry.uri);
        if taken {
            return Err(SkillsError::Duplicate(entry.uri.clone()));
        }
        self.shared
            .dynamic
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(Arc::new(entry));
        Ok(self)
    }

    /// The current entries, sorted by URI.
    pub fn entries(&self) -> Vec<Skill> {
        self.shared.entries()
    }

    /// Loads the directories again. When the skills changed, the new set
    /// replaces the old one and clients are told the resource list changed
    /// (`notifications/resources/list_changed` in legacy sessions, on
    /// `subscriptions/listen` streams in 2026-07-28); returns whether they
    /// changed. A skill that breaks a rule is left out with a warning, as
    /// in [`Skills::from_dirs`]; when a directory cannot be read at all, the
    /// old set stays in place.
    pub fn reload(&self) -> Result<bool, SkillsError> {
        let seen = catalog::fingerprint(&self.shared.roots);
        let (loaded, skipped) = Catalog::load(&self.shared.roots)?;
        warn_skipped(&skipped);
        *self
            .shared
            .skipped
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = skipped;
        *self
            .shared
            .seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = seen;
        let changed = {
            let mut current = self
                .shared
                .catalog
                .write()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let changed = **current != loaded;
            if changed {
                *current = Arc::new(loaded);
            }
            changed
        };
        if changed {
            if let Some(h) = self.host.get() {
                h.list_changed(ListKind::Resources);
            }
        }
        Ok(changed)
    }

    /// Whether anything under the directories changed (paths, sizes or
    /// modification times) since the last load.
    fn disk_changed(&self) -> bool {
        let now = catalog::fingerprint(&self.shared.roots);
        *self
            .shared
            .seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            != now
    }

    /// Checks the directories every `every` and reloads when something
    /// changed on disk (errors are logged and the old set kept). The task
    /// ends when the `Skills` is dropped; abort the handle to stop sooner.
    pub fn watch(self: &Arc<Self>, every: Duration) -> tokio::task::JoinHandle<()> {
        let weak: Weak<Skills> = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            tick.tick().await;
            loop {
                tick.tick().await;
                let Some(skills) = weak.upgrade() else {
                    return;
                };
                let this = skills.clone();
                let outcome = tokio::task::spawn_blocking(move || {
                    if this.disk_changed() {
                        this.reload().map(Some)
                    } else {
                        Ok(None)
                    }
                })
                .await;
                match outcome {
                    Ok(Ok(Some(true))) => tracing::info!("skills reloaded"),
                    Ok(Ok(_)) => {}
                    Ok(Err(e)) => tracing::warn!("skills not reloaded: {e}"),
                    Err(e) => tracing::warn!("skills reload failed: {e}"),
                }
            }
        })
    }
}

/// Logs each skill left out.
fn warn_skipped(skipped: &[SkillsError]) {
    for e in skipped {
        tracing::warn!("skill skipped: {e}");
    }
}

impl ServerExtension for Skills {
    fn id(&self) -> &str {
        tessera_types::SKILLS_EXTENSION
    }

    fn settings(&self) -> DeclaredSettings {
        DeclaredSettings::of(&SkillsSettings {
            directory_read: Some(true),
        })
    }

    fn declare(&self, capabilities: &mut ServerCapabilities) {
        // Skill files are resources: the extension needs the capability.
        capabilities
            .resources
            .get_or_insert_with(ResourcesCapability::default);
    }

    fn routes(&self, routes: &mut ExtensionRoutes) {
        methods::route(&self.shared, routes);
    }

    fn resources(&self) -> Option<SharedProvider> {
        Some(SharedProvider::new(methods::SkillFiles(
            self.shared.clone(),
        )))
    }

    fn attach(&self, host: ExtensionHost) {
        let _ = self.host.set(host);
    }
}

/// The members of a skill's frontmatter the server checks itself.
#[derive(serde::Deserialize, Default)]
pub(crate) struct FrontmatterHead {
    /// `name` (a string when well formed).
    #[serde(default)]
    pub(crate) name: serde_json::Value,
    /// `description` (a non-empty string when well formed).
    #[serde(default)]
    pub(crate) description: serde_json::Value,
}

impl FrontmatterHead {
    /// The head of a parsed frontmatter.
    pub(crate) fn of(frontmatter: &tessera_types::JsonObject) -> FrontmatterHead {
        <FrontmatterHead as serde::Deserialize>::deserialize(frontmatter).unwrap_or_default()
    }
}
