//! Loading skills from directories: every directory (at any depth) that
//! holds a `SKILL.md` is a skill; its path below the root directory is its
//! skill path (`acme/billing/refunds`), its last segment its name.
//!
//! A skill's files are every regular file below its directory, nested
//! skills' files included. Hidden entries (names starting with `.`) and
//! symbolic links are not part of any skill; files are read confined to
//! their root ([`super::confined`]), at load time and at read time. The
//! limits of the extension (512 files, 16 MiB per skill), the frontmatter
//! limit ([`MAX_FRONTMATTER_BYTES`]) and the name rules are checked here: a
//! skill that breaks one is skipped, with an error that names it, and the
//! others are served.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use serde_json::Value;
use tessera_types::{
    DIRECTORY_MIME_TYPE, MAX_SKILL_BYTES, MAX_SKILL_FILES, Resource, Skill, SkillResource,
    SkillResources, is_valid_skill_name, parse_frontmatter, skill_digest,
};

use super::confined;
use crate::resource::guess_mime_type;
use crate::resource::uri::percent_encode;

/// The largest frontmatter a skill may have, in bytes (its YAML block, and
/// the JSON object every `skills/list` and `skills/get` carries): 64 KiB. A
/// skill over it is skipped.
pub const MAX_FRONTMATTER_BYTES: usize = 64 * 1024;

/// Why skills could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SkillsError {
    /// A directory or file could not be read.
    #[error("{path}: {problem}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The I/O error.
        problem: String,
    },
    /// A skill breaks a rule of the extension or of the Agent Skills format.
    #[error("skill {skill}: {problem}")]
    Invalid {
        /// The skill path (`acme/billing/refunds`).
        skill: String,
        /// What is wrong.
        problem: String,
    },
    /// A skill has more files than the extension allows.
    #[error("skill {skill}: {files} files, over the limit of {limit} files per skill")]
    TooManyFiles {
        /// The skill path.
        skill: String,
        /// How many files it has.
        files: usize,
        /// The limit (512).
        limit: usize,
    },
    /// A skill is larger than the extension allows.
    #[error("skill {skill}: {bytes} bytes, over the limit of {limit} bytes (16 MiB) per skill")]
    TooLarge {
        /// The skill path.
        skill: String,
        /// Its total size.
        bytes: u64,
        /// The limit (16 MiB).
        limit: u64,
    },
    /// A skill's frontmatter is larger than [`MAX_FRONTMATTER_BYTES`].
    #[error(
        "skill {skill}: a frontmatter of {bytes} bytes, over the limit of {limit} bytes (64 KiB)"
    )]
    FrontmatterTooLarge {
        /// The skill path.
        skill: String,
        /// The frontmatter's size (YAML block or JSON object, the larger).
        bytes: usize,
        /// The limit.
        limit: usize,
    },
    /// Two sources serve a skill at the same URI.
    #[error("two skills are served at {0}")]
    Duplicate(String),
}

fn io_error(path: &Path, e: std::io::Error) -> SkillsError {
    SkillsError::Io {
        path: path.to_owned(),
        problem: e.to_string(),
    }
}

/// One served file: read from `root` along `rel`, confined to `root`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FileEntry {
    /// The root directory it was found under.
    pub root: Arc<PathBuf>,
    /// Its path below the root, one segment each.
    pub rel: Vec<String>,
    pub mime_type: String,
    pub size: u64,
    pub digest: String,
}

/// What a set of skill directories serves, at one moment.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Catalog {
    /// The entries, sorted by URI.
    pub skills: Vec<Skill>,
    /// `SKILL.md` URI → index in `skills`.
    pub by_uri: HashMap<String, usize>,
    /// File URI → file.
    pub files: HashMap<String, FileEntry>,
    /// Directory URI → its direct children, sorted by URI.
    pub dirs: BTreeMap<String, Vec<Resource>>,
    /// The `SKILL.md` resources, for `resources/list`.
    pub listed: Vec<Resource>,
}

/// The URI of the file at `segments` (skill path then file path).
pub(crate) fn uri_of(segments: &[String]) -> String {
    let encoded: Vec<String> = segments.iter().map(|s| percent_encode(s, false)).collect();
    format!("skill://{}", encoded.join("/"))
}

/// The MIME type of a skill file.
pub(crate) fn mime_of(name: &str) -> String {
    if name == "SKILL.md" {
        return "text/markdown".into();
    }
    guess_mime_type(name)
        .unwrap_or("application/octet-stream")
        .to_owned()
}

fn hidden(name: &str) -> bool {
    name.starts_with('.')
}

/// The visible entries of a directory, sorted by name: (name, path, is_dir).
fn entries(dir: &Path) -> Result<Vec<(String, PathBuf, bool)>, SkillsError> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).map_err(|e| io_error(dir, e))? {
        let e = e.map_err(|e| io_error(dir, e))?;
        let Ok(name) = e.file_name().into_string() else {
            continue; // not UTF-8: no URI for it
        };
        if hidden(&name) {
            continue;
        }
        let ty = e.file_type().map_err(|err| io_error(&e.path(), err))?;
        if ty.is_symlink() {
            continue;
        }
        if ty.is_dir() || ty.is_file() {
            out.push((name, e.path(), ty.is_dir()));
        }
    }
    out.sort();
    Ok(out)
}

/// Every skill directory below `dir` (itself included), with its segments.
/// A directory that cannot be read is skipped and reported in `skipped`.
fn find_skills(
    dir: &Path,
    segments: &mut Vec<String>,
    out: &mut Vec<(PathBuf, Vec<String>)>,
    skipped: &mut Vec<SkillsError>,
    depth: usize,
) {
    if depth > 32 {
        return;
    }
    let children = match entries(dir) {
        Ok(c) => c,
        Err(e) => {
            skipped.push(e);
            return;
        }
    };
    if children.iter().any(|(n, _, d)| n == "SKILL.md" && !d) {
        out.push((dir.to_owned(), segments.clone()));
    }
    for (name, path, is_dir) in children {
        if is_dir {
            segments.push(name);
            find_skills(&path, segments, out, skipped, depth + 1);
            segments.pop();
        }
    }
}

/// Every file below `dir`: (relative segments, path, size).
fn skill_files(
    dir: &Path,
    prefix: &mut Vec<String>,
    out: &mut Vec<(Vec<String>, PathBuf, u64)>,
    depth: usize,
) -> Result<(), SkillsError> {
    if depth > 32 {
        return Ok(());
    }
    for (name, path, is_dir) in entries(dir)? {
        prefix.push(name);
        if is_dir {
            skill_files(&path, prefix, out, depth + 1)?;
        } else {
            let size = std::fs::symlink_metadata(&path)
                .map_err(|e| io_error(&path, e))?
                .len();
            out.push((prefix.clone(), path, size));
        }
        prefix.pop();
    }
    Ok(())
}

/// One skill directory found under a root.
struct Found<'a> {
    /// The root it was found under.
    root: &'a Arc<PathBuf>,
    /// Its directory.
    dir: &'a Path,
    /// Its directory's segments below the root (empty: the root itself).
    below_root: Vec<String>,
    /// Its skill path (`acme/billing/refunds`).
    segments: Vec<String>,
}

impl Catalog {
    /// Loads every skill under `roots`. A root that is itself a skill
    /// directory serves that one skill under the root's own name. A root
    /// that is not a readable directory fails the load; a skill that breaks
    /// a rule is left out and returned beside the catalog.
    pub fn load(roots: &[PathBuf]) -> Result<(Catalog, Vec<SkillsError>), SkillsError> {
        let mut catalog = Catalog::default();
        let mut skipped = Vec::new();
        for root in roots {
            let meta = std::fs::metadata(root).map_err(|e| io_error(root, e))?;
            if !meta.is_dir() {
                return Err(io_error(root, std::io::Error::other("not a directory")));
            }
            std::fs::read_dir(root).map_err(|e| io_error(root, e))?;
            let shared_root = Arc::new(root.clone());
            let mut found = Vec::new();
            find_skills(root, &mut Vec::new(), &mut found, &mut skipped, 0);
            for (dir, below_root) in found {
                let mut segments = below_root.clone();
                if segments.is_empty() {
                    // The root itself is a skill: its directory name is its path.
                    let name = root
                        .canonicalize()
                        .ok()
                        .and_then(|p| p.file_name().and_then(|n| n.to_str()).map(str::to_owned))
                        .unwrap_or_default();
                    segments.push(name);
                }
                let found = Found {
                    root: &shared_root,
                    dir: &dir,
                    below_root,
                    segments,
                };
                if let Err(e) = catalog.add_skill(found) {
                    skipped.push(e);
                }
            }
        }
        catalog.finish();
        Ok((catalog, skipped))
    }

    /// Adds one skill, all or nothing.
    fn add_skill(&mut self, found: Found<'_>) -> Result<(), SkillsError> {
        let segments = found.segments;
        let skill = segments.join("/");
        let name = segments.last().cloned().unwrap_or_default();
        let invalid = |problem: String| SkillsError::Invalid {
            skill: skill.clone(),
            problem,
        };
        if !is_valid_skill_name(&name) {
            return Err(invalid(format!(
                "the directory name {name:?} is not a valid skill name (1 to 64 lowercase \
                 letters, digits and single hyphens, not at either end)"
            )));
        }
        let mut files = Vec::new();
        skill_files(found.dir, &mut Vec::new(), &mut files, 0)?;
        if files.len() > MAX_SKILL_FILES {
            return Err(SkillsError::TooManyFiles {
                skill,
                files: files.len(),
                limit: MAX_SKILL_FILES,
            });
        }
        let total: u64 = files.iter().map(|(_, _, s)| s).sum();
        if total > MAX_SKILL_BYTES {
            return Err(SkillsError::TooLarge {
                skill,
                bytes: total,
                limit: MAX_SKILL_BYTES,
            });
        }
        let skill_md = {
            let mut s = segments.clone();
            s.push("SKILL.md".into());
            uri_of(&s)
        };
        if self.by_uri.contains_key(&skill_md) {
            return Err(SkillsError::Duplicate(skill_md));
        }
        let mut frontmatter = None;
        let mut manifest = Vec::with_capacity(files.len());
        let mut added = Vec::with_capacity(files.len());
        for (rel, path, _) in files {
            let mut below_root = found.below_root.clone();
            below_root.extend(rel.iter().cloned());
            let bytes = confined::read(found.root, &below_root, MAX_SKILL_BYTES)
                .map_err(|e| io_error(&path, e))?;
            let mut full = segments.clone();
            full.extend(rel.iter().cloned());
            let uri = uri_of(&full);
            if rel.len() == 1 && rel[0] == "SKILL.md" {
                let text = std::str::from_utf8(&bytes)
                    .map_err(|_| invalid("SKILL.md is not UTF-8 text".into()))?;
                // The YAML block is measured before it is parsed, the JSON
                // object (what every listing carries) after.
                let yaml = text
                    .match_indices("\n---")
                    .next()
                    .map_or(text.len(), |(i, _)| i);
                check_frontmatter_size(&skill, yaml)?;
                let fm = parse_frontmatter(text).map_err(|e| invalid(e.to_string()))?;
                check_frontmatter_size(
                    &skill,
                    serde_json::to_vec(&fm).map_or(usize::MAX, |v| v.len()),
                )?;
                tessera_types::check_metadata(&fm).map_err(invalid)?;
                let head = super::FrontmatterHead::of(&fm);
                if head.name.as_str() != Some(name.as_str()) {
                    return Err(invalid(format!(
                        "the frontmatter name {} does not match the directory name {name:?}",
                        head.name
                    )));
                }
                frontmatter = Some(fm);
            }
            let entry = FileEntry {
                root: found.root.clone(),
                rel: below_root,
                mime_type: mime_of(rel.last().map(String::as_str).unwrap_or("")),
                size: bytes.len() as u64,
                digest: skill_digest(&bytes),
            };
            manifest.push(SkillResource {
                uri: uri.clone(),
                digest: entry.digest.clone(),
                size: entry.size,
            });
            added.push((uri, entry));
        }
        let frontmatter = frontmatter.ok_or_else(|| invalid("SKILL.md is missing".into()))?;
        self.files.extend(added);
        self.listed.push(skill_md_resource(
            &skill_md,
            &frontmatter,
            Some(&self.files[&skill_md]),
        ));
        self.by_uri.insert(skill_md.clone(), self.skills.len());
        self.skills.push(Skill {
            uri: skill_md,
            frontmatter,
            resources: SkillResources::Files(manifest),
        });
        Ok(())
    }

    /// Sorts the entries and builds the directory index.
    fn finish(&mut self) {
        self.skills.sort_by(|a, b| a.uri.cmp(&b.uri));
        self.listed.sort_by(|a, b| a.uri.cmp(&b.uri));
        self.by_uri = self
            .skills
            .iter()
            .enumerate()
            .map(|(i, s)| (s.uri.clone(), i))
            .collect();
        let mut dirs: BTreeMap<String, BTreeMap<String, Resource>> = BTreeMap::new();
        for (uri, file) in &self.files {
            let Some(path) = uri.strip_prefix("skill://") else {
                continue;
            };
            let segments: Vec<&str> = path.split('/').collect();
            for depth in 1..segments.len() {
                let dir = format!("skill://{}", segments[..depth].join("/"));
                let child_name = segments[depth];
                let child_uri = format!("{dir}/{child_name}");
                let is_file = depth + 1 == segments.len();
                let child = if is_file {
                    Resource {
                        uri: child_uri.clone(),
                        name: child_name.to_owned(),
                        mime_type: Some(file.mime_type.clone()),
                        size: Some(file.size),
                        ..Resource::default()
                    }
                } else {
                    directory_resource(&child_uri, child_name)
                };
                dirs.entry(dir).or_default().insert(child_uri, child);
            }
        }
        self.dirs = dirs
            .into_iter()
            .map(|(k, v)| (k, v.into_values().collect()))
            .collect();
    }
}

/// Refuses a frontmatter of `bytes` (as YAML, or as the JSON object of
/// the entry) over [`MAX_FRONTMATTER_BYTES`].
fn check_frontmatter_size(skill: &str, bytes: usize) -> Result<(), SkillsError> {
    if bytes > MAX_FRONTMATTER_BYTES {
        return Err(SkillsError::FrontmatterTooLarge {
            skill: skill.to_owned(),
            bytes,
            limit: MAX_FRONTMATTER_BYTES,
        });
    }
    Ok(())
}

/// A directory resource.
pub(crate) fn directory_resource(uri: &str, name: &str) -> Resource {
    Resource {
        uri: uri.to_owned(),
        name: name.to_owned(),
        mime_type: Some(DIRECTORY_MIME_TYPE.into()),
        ..Resource::default()
    }
}

/// The resource of a `SKILL.md`: named and described by its frontmatter.
pub(crate) fn skill_md_resource(
    uri: &str,
    frontmatter: &tessera_types::JsonObject,
    file: Option<&FileEntry>,
) -> Resource {
    let text = |k: &str| {
        frontmatter
            .get(k)
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    Resource {
        uri: uri.to_owned(),
        name: text("name").unwrap_or_default(),
        description: text("description"),
        mime_type: Some("text/markdown".into()),
        size: file.map(|f| f.size),
        ..Resource::default()
    }
}

/// A cheap summary of what is on disk under `roots` (paths, sizes and
/// modification times), to tell whether a reload could change anything.
pub(crate) fn fingerprint(roots: &[PathBuf]) -> Vec<(PathBuf, u64, Option<SystemTime>)> {
    fn walk(dir: &Path, out: &mut Vec<(PathBuf, u64, Option<SystemTime>)>, depth: usize) {
        if depth > 32 {
            return;
        }
        let Ok(list) = entries(dir) else {
            out.push((dir.to_owned(), u64::MAX, None));
            return;
        };
        for (_, path, is_dir) in list {
            let meta = std::fs::metadata(&path).ok();
            out.push((
                path.clone(),
                meta.as_ref().map_or(u64::MAX, |m| m.len()),
                meta.and_then(|m| m.modified().ok()),
            ));
            if is_dir {
                walk(&path, out, depth + 1);
            }
        }
    }
    let mut out = Vec::new();
    for r in roots {
        walk(r, &mut out, 0);
    }
    out
}
