//! Roots: the directories and files the client exposes, checked before they
//! are offered (`file://` URIs without `..` segments).

use tessera_types::Root;

/// Checks a root: a `file://` URI (the only kind the specification allows)
/// with no `.` or `..` path segment, even percent-encoded.
pub fn check_root(root: &Root) -> Result<(), String> {
    let Some(rest) = root.uri.strip_prefix("file://") else {
        return Err(format!("root {:?} is not a file:// URI", root.uri));
    };
    let path = rest.split(['?', '#']).next().unwrap_or("");
    let decoded = path
        .replace("%2e", ".")
        .replace("%2E", ".")
        .replace("%2f", "/")
        .replace("%2F", "/")
        .replace("%5c", "/")
        .replace("%5C", "/")
        .replace('\\', "/");
    if decoded.split('/').any(|seg| seg == ".." || seg == ".") {
        return Err(format!(
            "root {:?} has a relative path segment (path traversal)",
            root.uri
        ));
    }
    if root.uri.contains(char::is_control) {
        return Err(format!("root {:?} has control characters", root.uri));
    }
    Ok(())
}

/// Checks every root.
pub(crate) fn check_roots(roots: &[Root]) -> Result<(), String> {
    roots.iter().try_for_each(check_root)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_clean_file_uris() {
        assert!(check_root(&Root::new("file:///home/u/project")).is_ok());
        assert!(check_root(&Root::new("https://example.com/")).is_err());
        assert!(check_root(&Root::new("file:///home/u/../etc")).is_err());
        assert!(check_root(&Root::new("file:///home/u/%2e%2E/etc")).is_err());
        assert!(check_root(&Root::new("file:///home/u/./x")).is_err());
        assert!(check_root(&Root::new("file:///home/u/..foo")).is_ok());
    }
}
