//! The Skills extension (`io.modelcontextprotocol/skills`) on the client:
//! listing and getting skill entries, and loading a skill or reading one of
//! its files only after checking it against the entry.
//!
//! Nothing is fetched ahead of need: [`Client::skills_list`] and
//! [`Client::skills_get`] return entries only; [`Client::load_skill`] reads
//! `SKILL.md` (size, digest, then frontmatter compared field by field) and
//! [`Client::read_skill_file`] one supporting file (listed, size, digest).
//! A mismatch is [`ClientError::SkillVerification`], which says what did
//! not match, and the content is dropped. Skills are identified by the
//! pair of a server label the application chooses and the skill URI
//! ([`SkillKey`]); [`SkillCache`] keeps verified files under that key and
//! checks their digest again on every read.
//!
//! ```no_run
//! # async fn run(client: tessera_client::Client) -> Result<(), tessera_client::ClientError> {
//! for skill in client.skills_list().await? {
//!     println!("{}: {}", skill.name(), skill.description());
//! }
//! let entry = client.skills_get("skill://pdf-processing/SKILL.md").await?;
//! let loaded = client.load_skill(&entry).await?; // verified SKILL.md
//! let forms = client.read_skill_file(&entry, "references/FORMS.md").await?;
//! # let _ = (loaded, forms); Ok(()) }
//! ```

mod cache;
mod verify;

use serde_json::Value;
use tessera_types::methods;
use tessera_types::pagination::PaginatedRequestParams;
use tessera_types::{
    GetSkillRequest, GetSkillRequestParams, JsonObject, ListSkillsResult,
    ReadResourceDirectoryRequest, ReadResourceDirectoryRequestParams, ReadResourceDirectoryResult,
    ResourceContents, SKILLS_EXTENSION, Skill, SkillsSettings,
};

pub use cache::{SkillCache, SkillKey};
pub use verify::{
    SkillVerificationError, VerificationProblem, check_entry, check_file, check_frontmatter,
};

use crate::client::Client;
use crate::error::ClientError;

/// A skill whose `SKILL.md` was fetched and verified.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedSkill {
    /// The entry it was verified against (hold it while acting on the skill).
    pub entry: Skill,
    /// The `SKILL.md` text.
    pub text: String,
}

fn to_object<T: serde::Serialize>(v: &T) -> JsonObject {
    match serde_json::to_value(v) {
        Ok(Value::Object(o)) => o,
        _ => JsonObject::new(),
    }
}

impl Client {
    /// Whether the server declared the Skills extension.
    pub fn supports_skills(&self) -> bool {
        self.server_declares_extension(SKILLS_EXTENSION)
    }

    /// Whether the server declared `directoryRead: true`.
    pub fn supports_directory_read(&self) -> bool {
        matches!(
            self.server_extension::<SkillsSettings>(),
            Some(Ok(SkillsSettings {
                directory_read: Some(true)
            }))
        )
    }

    fn require_skills(&self) -> Result<(), ClientError> {
        if self.supports_skills() {
            Ok(())
        } else {
            Err(ClientError::Unsupported(format!(
                "the Skills extension ({SKILLS_EXTENSION})"
            )))
        }
    }

    /// One page of `skills/list`.
    pub async fn skills_list_page(
        &self,
        cursor: Option<&str>,
    ) -> Result<ListSkillsResult, ClientError> {
        self.require_skills()?;
        let params = cursor.map(|c| to_object(&PaginatedRequestParams::after(c)));
        let raw = self.request_raw(methods::SKILLS_LIST, params).await?;
        crate::client::decode(methods::SKILLS_LIST, raw)
    }

    /// Every entry of `skills/list`, following cursors (a repeated cursor
    /// or more pages than the client allows is an error). An empty or
    /// partial listing does not mean the server has no other skills: use
    /// [`Client::skills_get`] for a URI learnt elsewhere.
    pub async fn skills_list(&self) -> Result<Vec<Skill>, ClientError> {
        let mut all = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut cursor: Option<String> = None;
        let max = self.inner.settings.max_pages;
        for _ in 0..max {
            let page = self.skills_list_page(cursor.as_deref()).await?;
            all.extend(page.skills);
            match page.next_cursor {
                Some(c) if !c.is_empty() => {
                    if !seen.insert(c.clone()) {
                        return Err(ClientError::CursorLoop {
                            method: methods::SKILLS_LIST.into(),
                            cursor: c,
                        });
                    }
                    cursor = Some(c);
                }
                _ => return Ok(all),
            }
        }
        Err(ClientError::TooManyPages {
            method: methods::SKILLS_LIST.into(),
            pages: max,
        })
    }

    /// The entry of the skill whose `SKILL.md` is at `uri` (`-32602` from
    /// the server when it serves no such skill).
    pub async fn skills_get(&self, uri: &str) -> Result<Skill, ClientError> {
        self.require_skills()?;
        let r = self
            .request::<GetSkillRequest>(&GetSkillRequestParams {
                uri: uri.to_owned(),
                ..Default::default()
            })
            .await?;
        Ok(r.skill)
    }

    /// One page of `resources/directory/read` (only against a server that
    /// declared `directoryRead: true`).
    pub async fn read_directory(
        &self,
        uri: &str,
        cursor: Option<&str>,
    ) -> Result<ReadResourceDirectoryResult, ClientError> {
        if !self.supports_directory_read() {
            return Err(ClientError::Unsupported(
                "resources/directory/read (the server did not declare directoryRead)".into(),
            ));
        }
        self.request::<ReadResourceDirectoryRequest>(&ReadResourceDirectoryRequestParams {
            uri: uri.to_owned(),
            cursor: cursor.map(str::to_owned),
            ..Default::default()
        })
        .await
    }

    /// The raw bytes of resource `uri` (text as UTF-8, blobs decoded),
    /// unverified.
    async fn fetch_bytes(&self, uri: &str) -> Result<Option<Vec<u8>>, ClientError> {
        let read = self.read_resource(uri).await?;
        let part = read
            .contents
            .iter()
            .find(|c| c.uri() == uri)
            .or_else(|| read.contents.first());
        Ok(match part {
            None => None,
            Some(ResourceContents::Text(t)) => Some(t.text.clone().into_bytes()),
            Some(ResourceContents::Blob(b)) => {
                Some(b.decode().map_err(|e| ClientError::Protocol {
                    method: methods::RESOURCES_READ.into(),
                    reason: format!("the blob of {uri} is not base64: {e}"),
                })?)
            }
        })
    }

    /// Loads a skill: checks the entry, fetches `SKILL.md`, checks its size
    /// and digest, then its frontmatter against the entry's. A dynamic
    /// skill's `SKILL.md` can only be checked for its frontmatter.
    pub async fn load_skill(&self, skill: &Skill) -> Result<LoadedSkill, ClientError> {
        check_entry(skill)?;
        let bytes = self
            .fetch_bytes(&skill.uri)
            .await?
            .ok_or_else(|| verify::fail(skill, &skill.uri, VerificationProblem::NoContent))?;
        if skill.file(&skill.uri).is_some() {
            check_file(skill, &skill.uri, &bytes)?;
        }
        let text = String::from_utf8(bytes).map_err(|_| {
            verify::fail(
                skill,
                &skill.uri,
                VerificationProblem::Frontmatter("SKILL.md is not UTF-8".into()),
            )
        })?;
        check_frontmatter(skill, &text)?;
        Ok(LoadedSkill {
            entry: skill.clone(),
            text,
        })
    }

    /// Reads one file of a skill (`path` relative to the skill's root, or a
    /// full URI) and returns it only if the entry lists it with this size
    /// and digest. Files of dynamic skills cannot be verified and are
    /// refused ([`VerificationProblem::Dynamic`]).
    pub async fn read_skill_file(&self, skill: &Skill, path: &str) -> Result<Vec<u8>, ClientError> {
        check_entry(skill)?;
        let uri = skill.resolve(path);
        if skill.file(&uri).is_none() {
            // Nothing to verify against: do not even fetch it.
            let problem = match skill.resources {
                tessera_types::SkillResources::Dynamic => VerificationProblem::Dynamic,
                _ => VerificationProblem::NotListed,
            };
            return Err(verify::fail(skill, &uri, problem).into());
        }
        let bytes = self
            .fetch_bytes(&uri)
            .await?
            .ok_or_else(|| verify::fail(skill, &uri, VerificationProblem::NoContent))?;
        check_file(skill, &uri, &bytes)?;
        Ok(bytes)
    }
}
