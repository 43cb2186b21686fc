//! Checking what a server sends against a skill's entry: the entry itself,
//! the size and digest of every file, the frontmatter of `SKILL.md`.

use serde_json::Value;
use tessera_types::{
    MAX_SKILL_BYTES, MAX_SKILL_FILES, Skill, SkillResources, parse_frontmatter, skill_digest,
    skill_name_of,
};

/// What did not match when a skill or one of its files was verified.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum VerificationProblem {
    /// The entry itself is unusable (its name does not match its URI, a
    /// listed file lies outside the skill, …).
    #[error("the entry is invalid: {0}")]
    InvalidEntry(String),
    /// The entry exceeds a limit of the extension (512 files, 16 MiB).
    #[error("the entry exceeds the limit: {0}")]
    OverLimit(String),
    /// The file is not in the entry's manifest.
    #[error("the file is not listed in the skill's entry")]
    NotListed,
    /// The entry is `"dynamic"`: there is nothing to verify the content against.
    #[error("the skill is dynamic: its entry publishes no digests to verify against")]
    Dynamic,
    /// The content has another length than the entry says.
    #[error("size mismatch: the entry says {expected} bytes, the server sent {actual}")]
    Size {
        /// The entry's size.
        expected: u64,
        /// The length received.
        actual: u64,
    },
    /// The content hashes to another digest than the entry says.
    #[error("digest mismatch: the entry says {expected}, the content hashes to {actual}")]
    Digest {
        /// The entry's digest.
        expected: String,
        /// The digest of what was received.
        actual: String,
    },
    /// The `SKILL.md` has no frontmatter that can be read.
    #[error("the SKILL.md frontmatter cannot be read: {0}")]
    Frontmatter(String),
    /// A frontmatter field differs between `SKILL.md` and the entry.
    #[error("frontmatter field {field:?} differs: the entry has {entry}, SKILL.md has {file}")]
    FrontmatterField {
        /// The field.
        field: String,
        /// The entry's value (JSON).
        entry: String,
        /// The file's value (JSON).
        file: String,
    },
    /// The server answered with no content for the file.
    #[error("the server returned no content for the file")]
    NoContent,
}

/// A verification failure: which file of which skill, and what did not
/// match. Unverified content is never returned with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillVerificationError {
    /// The skill's `SKILL.md` URI.
    pub skill: String,
    /// The file (or the skill URI for entry problems).
    pub uri: String,
    /// What did not match.
    pub problem: VerificationProblem,
}

impl std::fmt::Display for SkillVerificationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.uri == self.skill {
            write!(f, "{}: {}", self.skill, self.problem)
        } else {
            write!(f, "{} (skill {}): {}", self.uri, self.skill, self.problem)
        }
    }
}

impl std::error::Error for SkillVerificationError {}

pub(crate) fn fail(
    skill: &Skill,
    uri: &str,
    problem: VerificationProblem,
) -> SkillVerificationError {
    SkillVerificationError {
        skill: skill.uri.clone(),
        uri: uri.to_owned(),
        problem,
    }
}

/// Checks an entry before anything is fetched for it: the name matches the
/// URI, every listed file lies within the skill, `SKILL.md` is listed, the
/// limits hold.
pub fn check_entry(skill: &Skill) -> Result<(), SkillVerificationError> {
    let bad = |why: String| fail(skill, &skill.uri, VerificationProblem::InvalidEntry(why));
    let Some(name) = skill_name_of(&skill.uri) else {
        return Err(bad("the URI does not end in <skill-name>/SKILL.md".into()));
    };
    if skill.name() != name {
        return Err(bad(format!(
            "frontmatter.name {:?} is not the last path segment {name:?}",
            skill.name()
        )));
    }
    if skill.description().is_empty() {
        return Err(bad("frontmatter.description is missing or empty".into()));
    }
    tessera_types::check_metadata(&skill.frontmatter).map_err(bad)?;
    let SkillResources::Files(files) = &skill.resources else {
        return Ok(());
    };
    if !files.iter().any(|f| f.uri == skill.uri) {
        return Err(bad("the manifest does not list SKILL.md".into()));
    }
    let root = format!("{}/", skill.root());
    if let Some(f) = files.iter().find(|f| !f.uri.starts_with(&root)) {
        return Err(bad(format!("{} lies outside the skill", f.uri)));
    }
    if files.len() > MAX_SKILL_FILES {
        return Err(fail(
            skill,
            &skill.uri,
            VerificationProblem::OverLimit(format!(
                "{} files (at most {MAX_SKILL_FILES})",
                files.len()
            )),
        ));
    }
    let total: u64 = files.iter().map(|f| f.size).sum();
    if total > MAX_SKILL_BYTES {
        return Err(fail(
            skill,
            &skill.uri,
            VerificationProblem::OverLimit(format!("{total} bytes (at most 16 MiB)")),
        ));
    }
    Ok(())
}

/// Checks `bytes` against the entry's record of file `uri`: listed, size
/// first, then digest.
pub fn check_file(skill: &Skill, uri: &str, bytes: &[u8]) -> Result<(), SkillVerificationError> {
    let SkillResources::Files(_) = &skill.resources else {
        return Err(fail(skill, uri, VerificationProblem::Dynamic));
    };
    let Some(listed) = skill.file(uri) else {
        return Err(fail(skill, uri, VerificationProblem::NotListed));
    };
    let actual = bytes.len() as u64;
    if actual != listed.size {
        return Err(fail(
            skill,
            uri,
            VerificationProblem::Size {
                expected: listed.size,
                actual,
            },
        ));
    }
    let digest = skill_digest(bytes);
    if digest != listed.digest {
        return Err(fail(
            skill,
            uri,
            VerificationProblem::Digest {
                expected: listed.digest.clone(),
                actual: digest,
            },
        ));
    }
    Ok(())
}

/// Compares the frontmatter of a fetched `SKILL.md` with the entry's, field
/// by field.
pub fn check_frontmatter(skill: &Skill, text: &str) -> Result<(), SkillVerificationError> {
    let file = parse_frontmatter(text).map_err(|e| {
        fail(
            skill,
            &skill.uri,
            VerificationProblem::Frontmatter(e.to_string()),
        )
    })?;
    let mut fields: Vec<&String> = file.keys().chain(skill.frontmatter.keys()).collect();
    fields.sort();
    fields.dedup();
    for field in fields {
        let a = skill.frontmatter.get(field).unwrap_or(&Value::Null);
        let b = file.get(field).unwrap_or(&Value::Null);
        if a != b {
            return Err(fail(
                skill,
                &skill.uri,
                VerificationProblem::FrontmatterField {
                    field: field.clone(),
                    entry: a.to_string(),
                    file: b.to_string(),
                },
            ));
        }
    }
    Ok(())
}
