//! The canonical URL of a resource (RFC 8707 §2, MCP "Canonical Server URI").

/// The canonical form of a resource URL: scheme and host lowercased, no
/// fragment, no trailing `/` on the path (`https://MCP.example.com/mcp/` →
/// `https://mcp.example.com/mcp`). A string that is not an absolute URL is
/// returned unchanged.
pub fn canonical_resource(s: &str) -> String {
    let Ok(mut u) = url::Url::parse(s) else {
        return s.to_owned();
    };
    u.set_fragment(None);
    // `Url` already lowercases the scheme and a domain host.
    let mut out = u.to_string();
    if u.query().is_none() && out.ends_with('/') {
        out.pop();
    }
    out
}

/// Whether two resource URLs name the same resource once canonicalised
/// (used to match a token's `aud` against this server).
pub fn same_resource(a: &str, b: &str) -> bool {
    a == b || canonical_resource(a) == canonical_resource(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_forms() {
        assert_eq!(
            canonical_resource("HTTPS://MCP.Example.com/mcp/"),
            "https://mcp.example.com/mcp"
        );
        assert_eq!(
            canonical_resource("https://mcp.example.com"),
            "https://mcp.example.com"
        );
        assert_eq!(
            canonical_resource("https://mcp.example.com:443/"),
            "https://mcp.example.com"
        );
        assert!(same_resource(
            "http://127.0.0.1:8080/mcp",
            "http://127.0.0.1:8080/mcp/"
        ));
        assert!(!same_resource(
            "https://a.example/mcp",
            "https://a.example/MCP"
        ));
        assert!(!same_resource(
            "https://a.example/mcp",
            "https://b.example/mcp"
        ));
        assert_eq!(canonical_resource("not a url"), "not a url");
    }
}
