//! The Skills extension (`io.modelcontextprotocol/skills`, SEP-2640): skill
//! entries, the `skills/list`, `skills/get` and `resources/directory/read`
//! results, SHA-256 digests and `SKILL.md` frontmatter.
//!
//! A skill is a directory of files with a `SKILL.md` at its root, each file
//! a resource under `skill://<skill-path>/<file-path>`. Its entry carries
//! the verbatim frontmatter of `SKILL.md` and a complete manifest of its
//! files with digests and sizes (or `"dynamic"` for generated content).

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::JsonObject;
use crate::cache::CacheScope;
use crate::extension::ExtensionSettings;
use crate::macros::requests;
use crate::resource::Resource;

/// The extension identifier.
pub const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";

/// The MIME type of a directory resource.
pub const DIRECTORY_MIME_TYPE: &str = "inode/directory";

/// Files per skill every host must accept (`SKILL.md` included).
pub const MAX_SKILL_FILES: usize = 512;

/// Total bytes per skill every host must accept (16 MiB).
pub const MAX_SKILL_BYTES: u64 = 16 * 1024 * 1024;

/// The extension's settings in `capabilities.extensions`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SkillsSettings {
    /// The server implements `resources/directory/read`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub directory_read: Option<bool>,
}

impl ExtensionSettings for SkillsSettings {
    const ID: &'static str = SKILLS_EXTENSION;
}

/// One file of a skill, with the digest and size of its raw bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillResource {
    /// The file's resource URI.
    pub uri: String,
    /// `sha256:` and 64 lowercase hex digits.
    pub digest: String,
    /// Length of the raw content in bytes.
    pub size: u64,
}

/// A skill's files: a complete manifest, or `"dynamic"` for generated
/// content that has no stable digests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkillResources {
    /// Every file of the skill, each once, `SKILL.md` included.
    Files(Vec<SkillResource>),
    /// Generated content; nothing to verify against.
    Dynamic,
}

impl Serialize for SkillResources {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            SkillResources::Files(f) => f.serialize(s),
            SkillResources::Dynamic => s.serialize_str("dynamic"),
        }
    }
}

impl<'de> Deserialize<'de> for SkillResources {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::String(s) if s == "dynamic" => Ok(SkillResources::Dynamic),
            v @ Value::Array(_) => serde_json::from_value(v)
                .map(SkillResources::Files)
                .map_err(D::Error::custom),
            other => Err(D::Error::custom(format!(
                "skill resources must be an array or \"dynamic\", not {other}"
            ))),
        }
    }
}

/// The entry of one skill, as `skills/list` and `skills/get` return it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Skill {
    /// The URI of the skill's `SKILL.md`.
    pub uri: String,
    /// The `SKILL.md` frontmatter, verbatim, as JSON (`name` and
    /// `description` always present).
    pub frontmatter: JsonObject,
    /// The skill's files (required: an entry without them is invalid).
    pub resources: SkillResources,
}

impl Skill {
    /// The `name` of the frontmatter.
    pub fn name(&self) -> &str {
        crate::params::decode_tree_ref::<Names<'_>>(&self.frontmatter)
            .ok()
            .and_then(|n| n.name)
            .unwrap_or("")
    }

    /// The `description` of the frontmatter.
    pub fn description(&self) -> &str {
        crate::params::decode_tree_ref::<Described<'_>>(&self.frontmatter)
            .ok()
            .and_then(|d| d.description)
            .unwrap_or("")
    }

    /// The manifest entry of file `uri`, if the manifest lists it.
    pub fn file(&self, uri: &str) -> Option<&SkillResource> {
        match &self.resources {
            SkillResources::Files(f) => f.iter().find(|r| r.uri == uri),
            SkillResources::Dynamic => None,
        }
    }

    /// The skill's root directory URI (the `SKILL.md` URI without
    /// `/SKILL.md`).
    pub fn root(&self) -> &str {
        self.uri.strip_suffix("/SKILL.md").unwrap_or(&self.uri)
    }

    /// Resolves a path relative to the skill's root (`references/GUIDE.md`)
    /// to a URI; a path that is already a URI is returned as it is.
    pub fn resolve(&self, path: &str) -> String {
        if path.contains("://") {
            return path.to_owned();
        }
        format!("{}/{}", self.root(), path.trim_start_matches("./"))
    }
}

/// The result of `skills/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListSkillsResult {
    /// One page of entries.
    pub skills: Vec<Skill>,
    /// The cursor of the next page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// How long, in milliseconds, the client may cache the page. 2026-07-28.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Who may cache the page. 2026-07-28.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
}

impl ListSkillsResult {
    /// A page of `skills`, and the cursor of the next one.
    pub fn new(skills: Vec<Skill>, next_cursor: Option<String>) -> Self {
        ListSkillsResult {
            skills,
            next_cursor,
            ttl_ms: None,
            cache_scope: None,
        }
    }
}

/// The result of `skills/get`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetSkillResult {
    /// The entry.
    pub skill: Skill,
    /// How long, in milliseconds, the client may cache the entry. 2026-07-28.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Who may cache the entry. 2026-07-28.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
}

impl GetSkillResult {
    /// The result naming `skill`.
    pub fn new(skill: Skill) -> Self {
        GetSkillResult {
            skill,
            ttl_ms: None,
            cache_scope: None,
        }
    }
}

/// The result of `resources/directory/read`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadResourceDirectoryResult {
    /// The direct children (subdirectories have `mimeType: inode/directory`).
    pub resources: Vec<Resource>,
    /// The cursor of the next page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// How long, in milliseconds, the client may cache the page. 2026-07-28.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Who may cache the page. 2026-07-28.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
}

impl ReadResourceDirectoryResult {
    /// A page of `resources`, and the cursor of the next one.
    pub fn new(resources: Vec<Resource>, next_cursor: Option<String>) -> Self {
        ReadResourceDirectoryResult {
            resources,
            next_cursor,
            ttl_ms: None,
            cache_scope: None,
        }
    }
}

crate::cache::impl_cacheable!(
    ListSkillsResult,
    GetSkillResult,
    ReadResourceDirectoryResult
);

/// Parameters of `skills/get`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct GetSkillRequestParams {
    /// Reserved metadata (`_meta`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// The skill's URI (`skill://…/SKILL.md`).
    pub uri: String,
}

/// Parameters of `resources/directory/read`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ReadResourceDirectoryRequestParams {
    /// Reserved metadata (`_meta`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// The directory's URI.
    pub uri: String,
    /// Where to continue: the `nextCursor` of the previous page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

requests! {
    /// `skills/list` (Skills extension).
    ListSkillsRequest: crate::methods::SKILLS_LIST, crate::pagination::PaginatedRequestParams => ListSkillsResult;
    /// `skills/get` (Skills extension).
    GetSkillRequest: crate::methods::SKILLS_GET, GetSkillRequestParams => GetSkillResult;
    /// `resources/directory/read` (Skills extension).
    ReadResourceDirectoryRequest: crate::methods::RESOURCES_DIRECTORY_READ, ReadResourceDirectoryRequestParams => ReadResourceDirectoryResult;
}

/// The digest of `bytes` as skill entries write it: `sha256:<hex>`.
pub fn skill_digest(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in hash {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// Why a `SKILL.md` has no usable frontmatter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrontmatterError {
    /// The file does not start with a `---` line closed by another one.
    Missing,
    /// The block is not valid YAML, or not a mapping with string keys.
    Invalid(String),
    /// `name` or `description` is missing, empty or not a string.
    MissingField(&'static str),
}

impl std::fmt::Display for FrontmatterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FrontmatterError::Missing => {
                f.write_str("SKILL.md does not begin with a ---delimited YAML frontmatter block")
            }
            FrontmatterError::Invalid(why) => write!(f, "the frontmatter is not valid: {why}"),
            FrontmatterError::MissingField(field) => {
                write!(f, "the frontmatter has no non-empty string {field:?}")
            }
        }
    }
}

impl std::error::Error for FrontmatterError {}

/// The YAML frontmatter of a `SKILL.md`, rendered as a JSON object: the
/// block between a first line `---` and the next line `---` (a UTF-8 byte
/// order mark and CRLF line ends are accepted). `name` and `description`
/// must be non-empty strings.
pub fn parse_frontmatter(text: &str) -> Result<JsonObject, FrontmatterError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    let first = lines.next().ok_or(FrontmatterError::Missing)?;
    if first.trim_end_matches(['\r', '\n']) != "---" {
        return Err(FrontmatterError::Missing);
    }
    let mut block = String::new();
    let mut closed = false;
    for line in lines {
        if line
            .trim_end_matches(['\r', '\n'])
            .trim_end_matches([' ', '\t'])
            == "---"
        {
            closed = true;
            break;
        }
        block.push_str(line);
    }
    if !closed {
        return Err(FrontmatterError::Missing);
    }
    let value: Value =
        serde_yaml_ng::from_str(&block).map_err(|e| FrontmatterError::Invalid(e.to_string()))?;
    let object = match value {
        Value::Object(o) => o,
        Value::Null => JsonObject::new(),
        other => {
            return Err(FrontmatterError::Invalid(format!(
                "expected a mapping, found {}",
                kind(&other)
            )));
        }
    };
    for field in ["name", "description"] {
        match object.get(field) {
            Some(Value::String(s)) if !s.is_empty() => {}
            _ => return Err(FrontmatterError::MissingField(field)),
        }
    }
    Ok(object)
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a sequence",
        Value::Object(_) => "a mapping",
    }
}

/// The frontmatter's `name` (read where it is a string).
#[derive(Deserialize)]
struct Names<'a> {
    #[serde(borrow, default)]
    name: Option<&'a str>,
}

/// The frontmatter's `description` (read where it is a string).
#[derive(Deserialize)]
struct Described<'a> {
    #[serde(borrow, default)]
    description: Option<&'a str>,
}

/// The frontmatter's `metadata`, whatever its value.
#[derive(Default, Deserialize)]
#[serde(default)]
struct Declared {
    metadata: crate::Loose<JsonObject>,
}

/// Checks the Agent Skills rule on `metadata`: when present, a mapping
/// from strings to strings.
pub fn check_metadata(frontmatter: &JsonObject) -> Result<(), String> {
    let declared: Declared = crate::params::decode_tree(frontmatter).unwrap_or_default();
    match declared.metadata {
        crate::Loose::Absent => Ok(()),
        crate::Loose::Valid(m) => match m.iter().find(|(_, v)| !v.is_string()) {
            None => Ok(()),
            Some((k, _)) => Err(format!(
                "frontmatter metadata must map strings to strings ({k:?} is not a string)"
            )),
        },
        crate::Loose::Malformed(_) => {
            Err("frontmatter metadata must be a mapping of strings to strings".into())
        }
    }
}

/// Whether `name` follows the Agent Skills naming rules: 1 to 64
/// characters of lowercase ASCII letters, digits and hyphens, no leading,
/// trailing or doubled hyphen.
pub fn is_valid_skill_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

/// The skill name a `SKILL.md` URI implies (its second-to-last segment).
pub fn skill_name_of(uri: &str) -> Option<&str> {
    let rest = uri.split_once("://")?.1;
    let path = rest.strip_suffix("/SKILL.md")?;
    let name = path.rsplit('/').next()?;
    (!name.is_empty()).then_some(name)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn digests_are_sha256_lowercase_hex() {
        assert_eq!(
            skill_digest(b""),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            skill_digest("héllo\n".as_bytes()),
            skill_digest(&[0x68, 0xc3, 0xa9, 0x6c, 0x6c, 0x6f, 0x0a])
        );
    }

    #[test]
    fn frontmatter_is_rendered_verbatim() {
        let fm = parse_frontmatter(
            "---\r\nname: pdf\r\ndescription: Fill PDFs\r\nlicense: MIT\r\nmetadata:\r\n  version: \"2.1\"\r\n  tags: [a, b]\r\n---\r\nbody\n",
        )
        .unwrap();
        assert_eq!(
            Value::Object(fm),
            json!({"name": "pdf", "description": "Fill PDFs", "license": "MIT",
                   "metadata": {"version": "2.1", "tags": ["a", "b"]}})
        );
        assert_eq!(
            parse_frontmatter("no block"),
            Err(FrontmatterError::Missing)
        );
        assert_eq!(
            parse_frontmatter("---\nname: x\n"),
            Err(FrontmatterError::Missing)
        );
        assert_eq!(
            parse_frontmatter("---\nname: x\n---\n"),
            Err(FrontmatterError::MissingField("description"))
        );
        assert!(matches!(
            parse_frontmatter("---\n- a\n---\n"),
            Err(FrontmatterError::Invalid(_))
        ));
        assert!(matches!(
            parse_frontmatter("---\nname: [\n---\n"),
            Err(FrontmatterError::Invalid(_))
        ));
    }

    #[test]
    fn names_and_uris() {
        assert!(is_valid_skill_name("pdf-processing"));
        for bad in ["", "-a", "a-", "a--b", "Upper", "a_b", &"x".repeat(65)] {
            assert!(!is_valid_skill_name(bad), "{bad}");
        }
        assert_eq!(
            skill_name_of("skill://acme/billing/refunds/SKILL.md"),
            Some("refunds")
        );
        assert_eq!(skill_name_of("skill://git/SKILL.md"), Some("git"));
        assert_eq!(skill_name_of("skill://git/README.md"), None);
    }

    #[test]
    fn entries_round_trip_with_both_resource_forms() {
        let listed = json!({"uri": "skill://a/SKILL.md",
            "frontmatter": {"name": "a", "description": "d"},
            "resources": [{"uri": "skill://a/SKILL.md", "digest": "sha256:00", "size": 3}]});
        let s: Skill = serde_json::from_value(listed.clone()).unwrap();
        assert_eq!(s.root(), "skill://a");
        assert_eq!(s.resolve("refs/x.md"), "skill://a/refs/x.md");
        assert_eq!(s.file("skill://a/SKILL.md").unwrap().size, 3);
        assert_eq!(serde_json::to_value(&s).unwrap(), listed);
        let dynamic = json!({"uri": "skill://d/SKILL.md",
            "frontmatter": {"name": "d", "description": "d"}, "resources": "dynamic"});
        let d: Skill = serde_json::from_value(dynamic.clone()).unwrap();
        assert_eq!(d.resources, SkillResources::Dynamic);
        assert_eq!(serde_json::to_value(&d).unwrap(), dynamic);
        let bad = json!({"uri": "skill://d/SKILL.md",
            "frontmatter": {"name": "d", "description": "d"}, "resources": "static"});
        assert!(serde_json::from_value::<Skill>(bad).is_err());
        let missing = json!({"uri": "skill://d/SKILL.md",
            "frontmatter": {"name": "d", "description": "d"}});
        assert!(serde_json::from_value::<Skill>(missing).is_err());
    }
}
