//! [`FsResources`]: the files under a directory as resources.
//!
//! The provider never serves anything outside its root. A URI is taken
//! apart segment by segment, and it is refused before the file system is
//! touched when a segment is empty (an absolute path, `//`), is `.` or `..`
//! (also percent-encoded, `%2e%2e`), contains an encoded separator (`%2F`,
//! `%5C`) or a NUL byte, or has a malformed escape; a query or fragment is
//! refused too. The path is then canonicalised (resolving every symlink) and
//! must still lie under the canonical root; otherwise the file is "not
//! found", as are directories, hidden files (unless
//! [`include_hidden`](FsResources::include_hidden)) and anything unreadable.
//! Listing skips symlinks that lead outside the root and never follows
//! symlinked directories.
//!
//! What remains is the usual race of path-based access: someone who can
//! write inside the root can swap a checked directory for a symlink between
//! the check and the read.

use std::path::{Component, Path, PathBuf};

use tessera_types::{
    BlobResourceContents, ReadResourceResult, Resource, ResourceTemplate, TextResourceContents,
};

use super::provider::ResourceProvider;
use super::response::ResourceError;
use super::uri::{percent_decode, percent_encode};
use crate::context::RequestContext;

/// The files under a directory, as resources: listed (sorted by path,
/// paginated with the other resources), read as UTF-8 text or base64 blobs,
/// with MIME types guessed from the extension ([`guess_mime_type`]).
///
/// URIs are `file://` URIs of the files by default; with
/// [`base_uri`](FsResources::base_uri) they are that base followed by the
/// relative path, each segment percent-encoded.
///
/// ```no_run
/// use tessera_server::{FsResources, Server};
///
/// # fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let server = Server::builder()
///     .resources_from(FsResources::new("./docs")?.base_uri("docs:///"))
///     .build()?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct FsResources {
    root: PathBuf,
    base: String,
    name: String,
    include_hidden: bool,
    max_files: usize,
    max_depth: usize,
    max_file_size: u64,
}

impl FsResources {
    /// Serves the files under `root`, which must be an existing directory
    /// (it is canonicalised now).
    pub fn new(root: impl AsRef<Path>) -> std::io::Result<Self> {
        let root = std::fs::canonicalize(root.as_ref())?;
        if !root.is_dir() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("{} is not a directory", root.display()),
            ));
        }
        let base = file_uri_base(&root);
        Ok(FsResources {
            root,
            base,
            name: "files".into(),
            include_hidden: false,
            max_files: 10_000,
            max_depth: 32,
            max_file_size: 10 * 1024 * 1024,
        })
    }

    /// URIs are `base` followed by the relative path (a `/` is added to
    /// `base` when it does not end with one), for example `docs:///` gives
    /// `docs:///guide/intro.md`. The default is the `file://` URI of the root.
    pub fn base_uri(mut self, base: impl Into<String>) -> Self {
        let mut base = base.into();
        if !base.ends_with('/') {
            base.push('/');
        }
        self.base = base;
        self
    }

    /// The name of the provider's resource template (`files` by default).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Whether files and directories whose names start with `.` are listed
    /// and readable (not by default).
    pub fn include_hidden(mut self, on: bool) -> Self {
        self.include_hidden = on;
        self
    }

    /// At most this many files are listed (10,000 by default).
    pub fn max_files(mut self, n: usize) -> Self {
        self.max_files = n;
        self
    }

    /// Directories deeper than this are not listed (32 by default; reading
    /// is not limited).
    pub fn max_depth(mut self, n: usize) -> Self {
        self.max_depth = n;
        self
    }

    /// Larger files are not read (10 MiB by default).
    pub fn max_file_size(mut self, bytes: u64) -> Self {
        self.max_file_size = bytes;
        self
    }

    /// The canonical root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The URI prefix of every file.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// The URI of the file at `relative` (segments separated by `/`).
    pub fn uri_of(&self, relative: &str) -> String {
        let encoded: Vec<String> = relative
            .split('/')
            .map(|s| percent_encode(s, false))
            .collect();
        format!("{}{}", self.base, encoded.join("/"))
    }

    fn hidden(&self, name: &str) -> bool {
        !self.include_hidden && name.starts_with('.')
    }

    /// Whether a canonical path lies under the root, through no hidden
    /// directory (unless hidden files are served).
    fn servable(&self, canonical: &Path) -> bool {
        match canonical.strip_prefix(&self.root) {
            Ok(inside) => inside
                .components()
                .all(|c| c.as_os_str().to_str().is_some_and(|s| !self.hidden(s))),
            Err(_) => false,
        }
    }

    /// The checked path of a URI under the base: refused, or a path under
    /// the root (not yet canonicalised).
    fn path_of(&self, relative: &str) -> Result<PathBuf, ResourceError> {
        let refuse = |why: &str| ResourceError::invalid_params(format!("refused file URI: {why}"));
        if relative.is_empty() {
            return Err(ResourceError::NotFound);
        }
        if relative.contains(['?', '#']) {
            return Err(refuse("file URIs have no query or fragment"));
        }
        let mut path = self.root.clone();
        for raw in relative.split('/') {
            if raw.is_empty() {
                return Err(refuse("empty path segment (an absolute path or `//`)"));
            }
            let seg = percent_decode(raw).ok_or_else(|| refuse("malformed %-escape"))?;
            if seg.contains(['/', '\\']) {
                return Err(refuse("encoded path separator"));
            }
            if seg.contains('\0') {
                return Err(refuse("NUL byte"));
            }
            let mut parts = Path::new(&seg).components();
            let single =
                matches!(parts.next(), Some(Component::Normal(_))) && parts.next().is_none();
            if !single {
                return Err(refuse("`.` and `..` segments are not allowed"));
            }
            if self.hidden(&seg) {
                return Err(ResourceError::NotFound);
            }
            path.push(seg);
        }
        Ok(path)
    }

    /// Reads the file named by a relative URI path (blocking).
    fn read_blocking(
        &self,
        uri: &str,
        relative: &str,
    ) -> Result<ReadResourceResult, ResourceError> {
        let path = self.path_of(relative)?;
        let canonical = std::fs::canonicalize(&path).map_err(|_| ResourceError::NotFound)?;
        if !self.servable(&canonical) {
            return Err(ResourceError::NotFound);
        }
        let meta = std::fs::metadata(&canonical).map_err(|_| ResourceError::NotFound)?;
        if !meta.is_file() {
            return Err(ResourceError::NotFound);
        }
        if meta.len() > self.max_file_size {
            return Err(ResourceError::internal(format!(
                "the file is larger than {} bytes",
                self.max_file_size
            )));
        }
        let bytes = std::fs::read(&canonical).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied => {
                ResourceError::NotFound
            }
            _ => ResourceError::internal("the file could not be read"),
        })?;
        Ok(ReadResourceResult::new(vec![contents(
            uri, relative, bytes,
        )]))
    }

    /// Lists the files (blocking).
    fn list_blocking(&self) -> Result<Vec<Resource>, ResourceError> {
        let mut found: Vec<(String, u64)> = Vec::new();
        let mut dirs: Vec<(PathBuf, String, usize)> = vec![(self.root.clone(), String::new(), 0)];
        while let Some((dir, prefix, depth)) = dirs.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
            entries.sort_by_key(|e| e.file_name());
            for entry in entries.into_iter().rev() {
                let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                    continue;
                };
                if self.hidden(&name) {
                    continue;
                }
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                let rel = format!("{prefix}{name}");
                let path = entry.path();
                if kind.is_dir() {
                    if depth < self.max_depth {
                        dirs.push((path, format!("{rel}/"), depth + 1));
                    }
                    continue;
                }
                let meta = if kind.is_symlink() {
                    // Only files that stay inside the root; never directories (no cycles).
                    match std::fs::canonicalize(&path) {
                        Ok(target) if self.servable(&target) => std::fs::metadata(&target),
                        _ => continue,
                    }
                } else {
                    entry.metadata()
                };
                match meta {
                    Ok(m) if m.is_file() => found.push((rel, m.len())),
                    _ => continue,
                }
            }
            if found.len() >= self.max_files {
                break;
            }
        }
        found.sort();
        found.truncate(self.max_files);
        Ok(found
            .into_iter()
            .map(|(rel, size)| {
                let mut r = Resource::new(self.uri_of(&rel), rel.clone());
                r.mime_type = guess_mime_type(&rel).map(str::to_owned);
                r.size = Some(size);
                r
            })
            .collect())
    }
}

/// `file://` followed by the percent-encoded segments of an absolute path.
fn file_uri_base(root: &Path) -> String {
    let mut base = String::from("file://");
    for c in root.components() {
        if let Component::Normal(s) = c {
            base.push('/');
            base.push_str(&percent_encode(&s.to_string_lossy(), false));
        }
    }
    base.push('/');
    base
}

fn is_textual(mime: &str) -> bool {
    mime.starts_with("text/")
        || matches!(
            mime,
            "application/json"
                | "application/xml"
                | "application/yaml"
                | "application/toml"
                | "application/javascript"
                | "application/x-sh"
                | "image/svg+xml"
        )
}

/// Text for textual or unknown types that are UTF-8, a blob otherwise.
fn contents(uri: &str, relative: &str, bytes: Vec<u8>) -> tessera_types::ResourceContents {
    let mime = guess_mime_type(relative);
    let wants_text = mime.is_none_or(is_textual);
    if wants_text {
        match String::from_utf8(bytes) {
            Ok(text) => {
                return TextResourceContents::new(uri, text)
                    .with_mime_type(mime.unwrap_or("text/plain"))
                    .into();
            }
            Err(e) => {
                return BlobResourceContents::from_bytes(uri, e.as_bytes())
                    .with_mime_type(mime.unwrap_or("application/octet-stream"))
                    .into();
            }
        }
    }
    BlobResourceContents::from_bytes(uri, &bytes)
        .with_mime_type(mime.unwrap_or("application/octet-stream"))
        .into()
}

/// The MIME type of a file name, by its extension (the `mime_guess` table);
/// `None` when unknown. One exception: `.ts` is TypeScript here, not an MPEG
/// transport stream, since served directories are mostly source trees.
pub fn guess_mime_type(name: &str) -> Option<&'static str> {
    let path = Path::new(name);
    if path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("ts"))
    {
        return Some("text/x-typescript");
    }
    mime_guess::from_path(path).first_raw()
}

fn joined<T: Send + 'static>(
    r: Result<Result<T, ResourceError>, tokio::task::JoinError>,
) -> Result<T, ResourceError> {
    r.unwrap_or_else(|_| Err(ResourceError::internal("the file system task failed")))
}

impl ResourceProvider for FsResources {
    async fn list(&self) -> Result<Vec<Resource>, ResourceError> {
        let this = self.clone();
        joined(tokio::task::spawn_blocking(move || this.list_blocking()).await)
    }

    fn templates(&self) -> Vec<ResourceTemplate> {
        let mut t = ResourceTemplate::new(format!("{}{{+path}}", self.base), self.name.clone());
        t.description = Some("A file, by its path relative to the served directory".into());
        vec![t]
    }

    async fn read(
        &self,
        uri: &str,
        _context: &RequestContext,
    ) -> Option<Result<ReadResourceResult, ResourceError>> {
        let relative = uri.strip_prefix(self.base.as_str())?.to_owned();
        let this = self.clone();
        let uri = uri.to_owned();
        Some(joined(
            tokio::task::spawn_blocking(move || this.read_blocking(&uri, &relative)).await,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mime_types() {
        assert_eq!(guess_mime_type("a/b/main.RS"), Some("text/x-rust"));
        assert_eq!(guess_mime_type("logo.png"), Some("image/png"));
        assert_eq!(guess_mime_type("Makefile"), None);
        assert_eq!(guess_mime_type(".hidden"), None);
    }

    #[test]
    fn file_uris() {
        assert_eq!(file_uri_base(Path::new("/")), "file:///");
        assert_eq!(
            file_uri_base(Path::new("/srv/my docs")),
            "file:///srv/my%20docs/"
        );
    }

    #[test]
    fn textual_contents() {
        let c = contents("x:///a.txt", "a.txt", b"hello".to_vec());
        assert!(matches!(c, tessera_types::ResourceContents::Text(_)));
        let c = contents("x:///a.txt", "a.txt", vec![0xff, 0xfe]);
        assert!(matches!(c, tessera_types::ResourceContents::Blob(_)));
        let c = contents("x:///a.png", "a.png", b"text-ish".to_vec());
        assert!(matches!(c, tessera_types::ResourceContents::Blob(_)));
        let c = contents("x:///README", "README", b"plain".to_vec());
        assert!(matches!(c, tessera_types::ResourceContents::Text(_)));
    }
}
