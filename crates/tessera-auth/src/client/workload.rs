//! Workload identity (SEP-1933): a platform-issued JWT — a Kubernetes
//! projected service-account token, a SPIFFE JWT-SVID, a cloud identity
//! token — presented as the RFC 7523 `jwt-bearer` grant, with no client
//! secret and no registration.
//!
//! The token is read where the platform keeps it, a file or an environment
//! variable, at every token request: platforms rotate the file in place
//! (Kubernetes swaps a symlink), so the next grant always presents the
//! token on disk now, never the one read at startup.

use std::io::Read as _;
use std::path::PathBuf;

use super::error::OAuthError;

/// The largest workload token read (bytes). Platform tokens are a few KB;
/// anything bigger is refused rather than sent.
pub const MAX_WORKLOAD_TOKEN_BYTES: usize = 64 * 1024;

/// Where a workload token is read from, at every token request.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum WorkloadToken {
    /// A file the platform writes (and rotates).
    File(PathBuf),
    /// An environment variable holding the token itself.
    Env(String),
}

impl WorkloadToken {
    /// The token in the file at `path`.
    pub fn file(path: impl Into<PathBuf>) -> WorkloadToken {
        WorkloadToken::File(path.into())
    }

    /// The token in the environment variable `name`.
    pub fn env(name: impl Into<String>) -> WorkloadToken {
        WorkloadToken::Env(name.into())
    }

    /// Where it comes from, for messages.
    pub fn describe(&self) -> String {
        match self {
            WorkloadToken::File(p) => format!("the workload token file {}", p.display()),
            WorkloadToken::Env(n) => format!("the workload token variable {n}"),
        }
    }

    /// Reads the token now: trimmed, at most [`MAX_WORKLOAD_TOKEN_BYTES`],
    /// and shaped as a signed JWT (three base64url parts).
    pub fn read(&self) -> Result<String, OAuthError> {
        let bad = |why: String| OAuthError::Unsupported(format!("{}: {why}", self.describe()));
        let text = match self {
            WorkloadToken::File(path) => {
                let file = std::fs::File::open(path).map_err(|e| bad(e.to_string()))?;
                let mut buf = Vec::new();
                file.take(MAX_WORKLOAD_TOKEN_BYTES as u64 + 1)
                    .read_to_end(&mut buf)
                    .map_err(|e| bad(e.to_string()))?;
                if buf.len() > MAX_WORKLOAD_TOKEN_BYTES {
                    return Err(bad(format!(
                        "over {MAX_WORKLOAD_TOKEN_BYTES} bytes, not a workload token"
                    )));
                }
                String::from_utf8(buf).map_err(|_| bad("not UTF-8 text".into()))?
            }
            WorkloadToken::Env(name) => {
                let v = std::env::var(name).map_err(|e| bad(e.to_string()))?;
                if v.len() > MAX_WORKLOAD_TOKEN_BYTES {
                    return Err(bad(format!(
                        "over {MAX_WORKLOAD_TOKEN_BYTES} bytes, not a workload token"
                    )));
                }
                v
            }
        };
        let token = text.trim();
        if token.is_empty() {
            return Err(bad("empty".into()));
        }
        let parts: Vec<&str> = token.split('.').collect();
        let base64url = |p: &str| {
            !p.is_empty()
                && p.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        };
        if parts.len() != 3 || !parts.iter().all(|p| base64url(p)) {
            return Err(bad(
                "not a signed JWT (three base64url parts separated by dots)".into(),
            ));
        }
        Ok(token.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_file_as_it_is_now() {
        let dir = std::env::temp_dir().join(format!("tessera-workload-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("token");
        let w = WorkloadToken::file(&path);
        assert!(matches!(w.read(), Err(OAuthError::Unsupported(m)) if m.contains("token file")));
        std::fs::write(&path, "aaa.bbb.ccc\n").unwrap();
        assert_eq!(w.read().unwrap(), "aaa.bbb.ccc");
        std::fs::write(&path, "ddd.eee.fff").unwrap();
        assert_eq!(w.read().unwrap(), "ddd.eee.fff", "re-read after rotation");
        std::fs::write(&path, "not a jwt").unwrap();
        assert!(matches!(w.read(), Err(OAuthError::Unsupported(m)) if m.contains("signed JWT")));
        std::fs::write(&path, "").unwrap();
        assert!(matches!(w.read(), Err(OAuthError::Unsupported(m)) if m.contains("empty")));
        std::fs::write(&path, "a".repeat(MAX_WORKLOAD_TOKEN_BYTES + 1)).unwrap();
        assert!(matches!(w.read(), Err(OAuthError::Unsupported(m)) if m.contains("bytes")));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
