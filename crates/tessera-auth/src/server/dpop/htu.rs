//! The `htu` comparison (RFC 9449 §4.3 check 9): the proof's URL against
//! the request's, without query and fragment, after syntax- and
//! scheme-based normalisation (RFC 3986 §6.2.2, §6.2.3).

use url::Url;

/// The URL a proof for a request to `path` must name: `origin` (the
/// externally visible scheme, host and port) with `path`.
pub(crate) fn expected(origin: &Url, path: &str) -> Option<Url> {
    let mut u = origin.clone();
    u.set_query(None);
    u.set_fragment(None);
    u.set_path(path);
    Some(normalise(u))
}

/// Parses and normalises a proof's `htu`. `Url` lowercases the scheme and
/// host, drops a default port, resolves `.` and `..`; here percent-escapes
/// are uppercased, and unreserved characters decoded, in the path.
pub(crate) fn parse(htu: &str) -> Option<Url> {
    let u = Url::parse(htu).ok()?;
    if !matches!(u.scheme(), "http" | "https") || u.host().is_none() {
        return None;
    }
    Some(normalise(u))
}

fn normalise(mut u: Url) -> Url {
    if u.path().is_empty() {
        u.set_path("/");
    }
    let path = u.path();
    if path.contains('%') {
        let mut out = String::with_capacity(path.len());
        let b = path.as_bytes();
        let mut i = 0;
        while i < b.len() {
            let hex = path.get(i + 1..i + 3).filter(|_| b[i] == b'%');
            if let Some(hex) = hex {
                if let Ok(v) = u8::from_str_radix(hex, 16) {
                    if v.is_ascii_alphanumeric() || matches!(v, b'-' | b'.' | b'_' | b'~') {
                        out.push(char::from(v));
                    } else {
                        out.push('%');
                        out.push_str(&hex.to_ascii_uppercase());
                    }
                    i += 3;
                    continue;
                }
            }
            out.push(char::from(b[i]));
            i += 1;
        }
        u.set_path(&out);
    }
    u
}

/// Whether the proof's `htu` names the request's URL: same scheme, host,
/// port and path, and no query or fragment in the proof's.
pub(crate) fn matches(proof: &Url, expected: &Url) -> bool {
    proof.query().is_none()
        && proof.fragment().is_none()
        && proof.scheme() == expected.scheme()
        && proof.host_str() == expected.host_str()
        && proof.port_or_known_default() == expected.port_or_known_default()
        && proof.path() == expected.path()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(htu: &str, origin: &str, path: &str) -> bool {
        let e = expected(&Url::parse(origin).unwrap(), path).unwrap();
        parse(htu).is_some_and(|p| matches(&p, &e))
    }

    #[test]
    fn normalised_comparison() {
        assert!(check(
            "http://127.0.0.1:8080/mcp",
            "http://127.0.0.1:8080",
            "/mcp"
        ));
        assert!(check(
            "HTTPS://MCP.Example.com:443/mcp",
            "https://mcp.example.com",
            "/mcp"
        ));
        assert!(check(
            "https://mcp.example.com/a/../mcp",
            "https://mcp.example.com",
            "/mcp"
        ));
        assert!(check("https://h/%6Dcp", "https://h", "/mcp"));
        assert!(check("https://h/a%2fb", "https://h", "/a%2Fb"));
        assert!(check("https://h", "https://h", "/"));
        assert!(!check("https://h/mcp?x=1", "https://h", "/mcp"));
        assert!(!check("https://h/mcp#f", "https://h", "/mcp"));
        assert!(!check("https://h/mcp?", "https://h", "/mcp"));
        assert!(!check("http://h/mcp", "https://h", "/mcp"));
        assert!(!check("https://h:8443/mcp", "https://h", "/mcp"));
        assert!(!check("https://other/mcp", "https://h", "/mcp"));
        assert!(!check("https://h/MCP", "https://h", "/mcp"));
        assert!(!check("https://h/mcp/", "https://h", "/mcp"));
        assert!(!check("mailto:x@h", "https://h", "/mcp"));
        assert!(!check("/mcp", "https://h", "/mcp"));
    }
}
