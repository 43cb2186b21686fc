//! The `WWW-Authenticate` challenge of a protected MCP server.
//!
//! A server answers a request without a valid token with `401` and
//! `WWW-Authenticate: Bearer resource_metadata="…", scope="…"` (RFC 9728
//! §5.1, RFC 6750 §3), and a token that lacks a scope with `403` and
//! `error="insufficient_scope"`. [`BearerChallenge`] builds that header value
//! and parses it back, including from a header that lists several schemes.

use std::fmt;

/// One `Bearer` (or `DPoP`) challenge and its parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BearerChallenge {
    /// The auth scheme (`Bearer` unless parsed from a `DPoP` challenge).
    pub scheme: String,
    /// `realm`, if any.
    pub realm: Option<String>,
    /// RFC 9728: the URL of the protected resource metadata.
    pub resource_metadata: Option<String>,
    /// The scopes needed, space separated.
    pub scope: Option<String>,
    /// RFC 6750 error code: `invalid_request`, `invalid_token` or `insufficient_scope`.
    pub error: Option<String>,
    /// A human-readable description of the error.
    pub error_description: Option<String>,
    /// Other parameters, in the order they came.
    pub other: Vec<(String, String)>,
}

impl BearerChallenge {
    /// A `Bearer` challenge with no parameters.
    pub fn bearer() -> Self {
        BearerChallenge {
            scheme: "Bearer".to_owned(),
            ..Self::default()
        }
    }

    /// Sets `resource_metadata`.
    pub fn resource_metadata(mut self, url: impl Into<String>) -> Self {
        self.resource_metadata = Some(url.into());
        self
    }

    /// Sets `scope`.
    pub fn scope(mut self, scope: impl Into<String>) -> Self {
        self.scope = Some(scope.into());
        self
    }

    /// Sets `error` and, if given, `error_description`.
    pub fn error(mut self, code: impl Into<String>, description: Option<String>) -> Self {
        self.error = Some(code.into());
        self.error_description = description;
        self
    }

    /// The scopes of `scope`, split on spaces.
    pub fn scopes(&self) -> Vec<&str> {
        self.scope
            .as_deref()
            .map(|s| s.split_ascii_whitespace().collect())
            .unwrap_or_default()
    }

    /// Parses every challenge of a `WWW-Authenticate` value (several may be
    /// listed, comma separated). Malformed parts are skipped, never fatal.
    pub fn parse_all(header: &str) -> Vec<BearerChallenge> {
        let mut out: Vec<BearerChallenge> = Vec::new();
        let mut p = Parser {
            s: header.as_bytes(),
            i: 0,
        };
        loop {
            p.skip_ws_commas();
            if p.done() {
                break;
            }
            let Some(token) = p.token() else {
                // Not a token: skip one byte and go on.
                p.i += 1;
                continue;
            };
            p.skip_ws();
            if p.peek() == Some(b'=') {
                // `name=value` belongs to the challenge before it.
                p.i += 1;
                p.skip_ws();
                let value = p.value();
                if let Some(c) = out.last_mut() {
                    c.set(&token, value);
                }
                continue;
            }
            // A new scheme; it may be followed by a token68 (ignored here).
            out.push(BearerChallenge {
                scheme: token,
                ..Self::default()
            });
        }
        out
    }

    /// The first `Bearer` (or `DPoP`) challenge of a header value, if any.
    pub fn parse(header: &str) -> Option<BearerChallenge> {
        Self::parse_all(header).into_iter().find(|c| {
            c.scheme.eq_ignore_ascii_case("bearer") || c.scheme.eq_ignore_ascii_case("dpop")
        })
    }

    fn set(&mut self, name: &str, value: String) {
        match name.to_ascii_lowercase().as_str() {
            "realm" => self.realm = Some(value),
            "resource_metadata" => self.resource_metadata = Some(value),
            "scope" => self.scope = Some(value),
            "error" => self.error = Some(value),
            "error_description" => self.error_description = Some(value),
            _ => self.other.push((name.to_owned(), value)),
        }
    }
}

impl fmt::Display for BearerChallenge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = if self.scheme.is_empty() {
            "Bearer"
        } else {
            &self.scheme
        };
        f.write_str(scheme)?;
        let named = [
            ("realm", &self.realm),
            ("error", &self.error),
            ("error_description", &self.error_description),
            ("scope", &self.scope),
            ("resource_metadata", &self.resource_metadata),
        ];
        let mut first = true;
        let mut put = |f: &mut fmt::Formatter<'_>, k: &str, v: &str| -> fmt::Result {
            f.write_str(if first { " " } else { ", " })?;
            first = false;
            write!(f, "{k}=\"")?;
            for c in v.chars() {
                if c == '"' || c == '\\' {
                    f.write_str("\\")?;
                }
                // Control characters cannot appear in a header value.
                if !c.is_control() {
                    write!(f, "{c}")?;
                }
            }
            f.write_str("\"")
        };
        for (k, v) in named {
            if let Some(v) = v {
                put(f, k, v)?;
            }
        }
        for (k, v) in &self.other {
            put(f, k, v)?;
        }
        Ok(())
    }
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn done(&self) -> bool {
        self.i >= self.s.len()
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.i += 1;
        }
    }

    fn skip_ws_commas(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b',')) {
            self.i += 1;
        }
    }

    fn token(&mut self) -> Option<String> {
        let start = self.i;
        while let Some(c) = self.peek() {
            let tchar = c.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~/".contains(&c);
            if !tchar {
                break;
            }
            self.i += 1;
        }
        (self.i > start).then(|| String::from_utf8_lossy(&self.s[start..self.i]).into_owned())
    }

    fn value(&mut self) -> String {
        if self.peek() != Some(b'"') {
            // A bare token (or a token68 padded with '=').
            let start = self.i;
            while let Some(c) = self.peek() {
                if c == b',' || c == b' ' || c == b'\t' {
                    break;
                }
                self.i += 1;
            }
            return String::from_utf8_lossy(&self.s[start..self.i]).into_owned();
        }
        self.i += 1;
        let mut out = Vec::new();
        while let Some(c) = self.peek() {
            self.i += 1;
            match c {
                b'"' => break,
                b'\\' => {
                    if let Some(n) = self.peek() {
                        out.push(n);
                        self.i += 1;
                    }
                }
                _ => out.push(c),
            }
        }
        String::from_utf8_lossy(&out).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_and_parses_back() {
        let c = BearerChallenge::bearer()
            .resource_metadata("https://mcp.example.com/.well-known/oauth-protected-resource/mcp")
            .scope("files:read files:write")
            .error("insufficient_scope", Some("needs \"write\"".into()));
        let text = c.to_string();
        assert!(text.starts_with("Bearer error=\"insufficient_scope\""));
        let back = BearerChallenge::parse(&text).unwrap();
        assert_eq!(back, c);
        assert_eq!(back.scopes(), ["files:read", "files:write"]);
    }

    #[test]
    fn picks_bearer_among_several_schemes() {
        let h =
            r#"Basic realm="x", Bearer realm="mcp", scope=read, resource_metadata="http://h/m""#;
        let all = BearerChallenge::parse_all(h);
        assert_eq!(all.len(), 2);
        let b = BearerChallenge::parse(h).unwrap();
        assert_eq!(b.realm.as_deref(), Some("mcp"));
        assert_eq!(b.scope.as_deref(), Some("read"));
        assert_eq!(b.resource_metadata.as_deref(), Some("http://h/m"));
    }

    #[test]
    fn garbage_does_not_panic() {
        for h in [
            "",
            "\"",
            "Bearer =",
            "Bearer a=\"unterminated",
            ",,,",
            "=x",
            "Bearer a=b=c",
        ] {
            let _ = BearerChallenge::parse_all(h);
        }
        assert!(BearerChallenge::parse("Basic realm=x").is_none());
    }
}
