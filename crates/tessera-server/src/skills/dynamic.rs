//! Generated ("dynamic") skills: content produced on every read, published
//! with `"resources": "dynamic"` because it has no stable digests.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;
use tessera_runtime::BoxFuture;
use tessera_types::{JsonObject, Resource, Skill, SkillResources, is_valid_skill_name};

use super::catalog::{SkillsError, directory_resource, mime_of, skill_md_resource, uri_of};
use crate::resource::ResourceError;

/// One generated file of a dynamic skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillFile {
    /// The path relative to the skill's root, `/`-separated (`SKILL.md`,
    /// `data/today.csv`).
    pub path: String,
    /// The content.
    pub bytes: Vec<u8>,
    /// The MIME type (guessed from the name when `None`).
    pub mime_type: Option<String>,
}

impl SkillFile {
    /// A file at `path` with `bytes`.
    pub fn new(path: impl Into<String>, bytes: impl Into<Vec<u8>>) -> Self {
        SkillFile {
            path: path.into(),
            bytes: bytes.into(),
            mime_type: None,
        }
    }
}

/// A skill whose content is generated. Its entry carries
/// [`frontmatter`](DynamicSkill::frontmatter), which must be what the
/// generated `SKILL.md` begins with (hosts compare the two).
///
/// [`files`](DynamicSkill::files) is an `async fn` in implementations:
///
/// ```
/// use serde_json::json;
/// use tessera_server::ResourceError;
/// use tessera_server::skills::{DynamicSkill, SkillFile, Skills};
/// use tessera_types::JsonObject;
///
/// struct Hello;
///
/// impl DynamicSkill for Hello {
///     fn frontmatter(&self) -> JsonObject {
///         let v = json!({"name": "hello", "description": "Says hello."});
///         v.as_object().cloned().unwrap_or_default()
///     }
///     async fn files(&self) -> Result<Vec<SkillFile>, ResourceError> {
///         let md = "---\nname: hello\ndescription: Says hello.\n---\nSay hello.\n";
///         Ok(vec![SkillFile::new("SKILL.md", md)])
///     }
/// }
///
/// let skills = Skills::empty().dynamic("hello", Hello).unwrap();
/// # let _ = skills;
/// ```
pub trait DynamicSkill: Send + Sync + 'static {
    /// The frontmatter (`name` equal to the last segment of the skill
    /// path, a non-empty `description`).
    fn frontmatter(&self) -> JsonObject;

    /// The skill's files as they are now, `SKILL.md` included.
    fn files(&self) -> impl Future<Output = Result<Vec<SkillFile>, ResourceError>> + Send;
}

/// [`DynamicSkill`] as the server holds it (behind a trait object).
trait HeldSkill: Send + Sync + 'static {
    fn frontmatter(&self) -> JsonObject;
    fn files_boxed(&self) -> BoxFuture<'_, Result<Vec<SkillFile>, ResourceError>>;
}

impl<T: DynamicSkill> HeldSkill for T {
    fn frontmatter(&self) -> JsonObject {
        DynamicSkill::frontmatter(self)
    }
    fn files_boxed(&self) -> BoxFuture<'_, Result<Vec<SkillFile>, ResourceError>> {
        Box::pin(self.files())
    }
}

/// A registered dynamic skill.
pub(crate) struct DynamicEntry {
    pub uri: String,
    root: String,
    segments: Vec<String>,
    frontmatter: JsonObject,
    skill: Arc<dyn HeldSkill>,
}

impl DynamicEntry {
    pub fn new(skill_path: &str, skill: impl DynamicSkill) -> Result<Self, SkillsError> {
        let skill: Arc<dyn HeldSkill> = Arc::new(skill);
        let invalid = |problem: String| SkillsError::Invalid {
            skill: skill_path.to_owned(),
            problem,
        };
        let segments: Vec<String> = skill_path.split('/').map(str::to_owned).collect();
        if segments
            .iter()
            .any(|s| s.is_empty() || s == "." || s == "..")
        {
            return Err(invalid(
                "the skill path has an empty, . or .. segment".into(),
            ));
        }
        let name = segments.last().cloned().unwrap_or_default();
        if !is_valid_skill_name(&name) {
            return Err(invalid(format!("{name:?} is not a valid skill name")));
        }
        let frontmatter = skill.frontmatter();
        let head = super::FrontmatterHead::of(&frontmatter);
        if head.name.as_str() != Some(name.as_str()) {
            return Err(invalid(format!(
                "the frontmatter name does not match the last path segment {name:?}"
            )));
        }
        if !matches!(&head.description, Value::String(d) if !d.is_empty()) {
            return Err(invalid("the frontmatter has no description".into()));
        }
        let root = uri_of(&segments);
        Ok(DynamicEntry {
            uri: format!("{root}/SKILL.md"),
            root,
            segments,
            frontmatter,
            skill,
        })
    }

    pub fn entry(&self) -> Skill {
        Skill {
            uri: self.uri.clone(),
            frontmatter: self.frontmatter.clone(),
            resources: SkillResources::Dynamic,
        }
    }

    /// The resource `resources/list` shows for the skill.
    pub fn listed(&self) -> Resource {
        skill_md_resource(&self.uri, &self.frontmatter, None)
    }

    /// Whether `uri` is the skill's root or below it.
    pub fn owns(&self, uri: &str) -> bool {
        uri == self.root
            || uri
                .strip_prefix(self.root.as_str())
                .is_some_and(|rest| rest.starts_with('/'))
    }

    /// The files as they are now, by URI.
    async fn generate(&self) -> Result<BTreeMap<String, (SkillFile, String)>, ResourceError> {
        let mut out = BTreeMap::new();
        for f in self.skill.files_boxed().await? {
            let mut segments = self.segments.clone();
            segments.extend(f.path.split('/').map(str::to_owned));
            let mime = f
                .mime_type
                .clone()
                .unwrap_or_else(|| mime_of(f.path.rsplit('/').next().unwrap_or("")));
            out.insert(uri_of(&segments), (f, mime));
        }
        Ok(out)
    }

    /// Generates and returns file `uri` (`None`: no such file).
    pub async fn read(&self, uri: &str) -> Result<Option<(Vec<u8>, String)>, ResourceError> {
        let mut files = self.generate().await?;
        Ok(files.remove(uri).map(|(f, mime)| (f.bytes, mime)))
    }

    /// The direct children of directory `uri` (`None`: not a directory).
    pub async fn directory(&self, uri: &str) -> Result<Option<Vec<Resource>>, ResourceError> {
        let files = self.generate().await?;
        let prefix = format!("{uri}/");
        let mut children: BTreeMap<String, Resource> = BTreeMap::new();
        for (file_uri, (f, mime)) in &files {
            let Some(rest) = file_uri.strip_prefix(&prefix) else {
                continue;
            };
            match rest.split_once('/') {
                Some((dir, _)) => {
                    let child = format!("{prefix}{dir}");
                    children
                        .entry(child.clone())
                        .or_insert_with(|| directory_resource(&child, dir));
                }
                None => {
                    children.insert(
                        file_uri.clone(),
                        Resource {
                            uri: file_uri.clone(),
                            name: rest.to_owned(),
                            mime_type: Some(mime.clone()),
                            size: Some(f.bytes.len() as u64),
                            ..Resource::default()
                        },
                    );
                }
            }
        }
        if children.is_empty() && uri != self.root {
            return Ok(None);
        }
        Ok(Some(children.into_values().collect()))
    }
}
