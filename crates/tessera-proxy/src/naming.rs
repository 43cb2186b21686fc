//! How an upstream's names are shown to clients of an
//! [`Aggregator`](crate::Aggregator): prefixed with the upstream's name
//! (tools and prompts `NAME__tool`, resource URIs `NAME+scheme:…`), or, for
//! an upstream configured with `"prefix": false` (allowed only when it is
//! the only one, so that names cannot collide), as the upstream's own.
//!
//! Everything that turns an upstream's name into the one a client sees, or
//! back, goes through a [`Naming`]: lists, routing, results' resource links,
//! resource update notifications and subscription topics.

/// The separator between an upstream's name and a tool or prompt name.
pub const NAME_SEPARATOR: &str = "__";
/// The separator between an upstream's name and a resource URI.
pub const URI_SEPARATOR: char = '+';

/// How one upstream's tools, prompts, resources and resource templates are
/// shown to clients.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Naming {
    upstream: String,
    prefixed: bool,
}

impl Naming {
    /// Names of upstream `upstream` shown with its name as a prefix.
    pub fn prefixed(upstream: impl Into<String>) -> Self {
        Naming {
            upstream: upstream.into(),
            prefixed: true,
        }
    }

    /// Names of upstream `upstream` shown as its own (the only upstream).
    pub fn unprefixed(upstream: impl Into<String>) -> Self {
        Naming {
            upstream: upstream.into(),
            prefixed: false,
        }
    }

    /// The upstream's name.
    pub fn upstream(&self) -> &str {
        &self.upstream
    }

    /// Whether names are shown with the upstream's name as a prefix.
    pub fn is_prefixed(&self) -> bool {
        self.prefixed
    }

    /// The name clients see for the upstream's tool or prompt `own`.
    pub fn name(&self, own: &str) -> String {
        if self.prefixed {
            format!("{}{NAME_SEPARATOR}{own}", self.upstream)
        } else {
            own.to_owned()
        }
    }

    /// The URI (or URI template) clients see for the upstream's `own`.
    pub fn uri(&self, own: &str) -> String {
        if self.prefixed {
            format!("{}{URI_SEPARATOR}{own}", self.upstream)
        } else {
            own.to_owned()
        }
    }

    /// The upstream's own name of the tool or prompt clients see as
    /// `shown`, when it is one of this upstream's.
    pub fn own_name<'a>(&self, shown: &'a str) -> Option<&'a str> {
        if !self.prefixed {
            return Some(shown);
        }
        let (n, rest) = shown.split_once(NAME_SEPARATOR)?;
        (n == self.upstream).then_some(rest)
    }

    /// The upstream's own URI of the resource clients see as `shown`, when
    /// it is one of this upstream's.
    pub fn own_uri<'a>(&self, shown: &'a str) -> Option<&'a str> {
        if !self.prefixed {
            return Some(shown);
        }
        let (n, rest) = shown.split_once(URI_SEPARATOR)?;
        (n == self.upstream).then_some(rest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixed_names_go_both_ways() {
        let n = Naming::prefixed("files");
        assert_eq!(n.name("read"), "files__read");
        assert_eq!(n.uri("file:///a"), "files+file:///a");
        assert_eq!(n.own_name("files__read__x"), Some("read__x"));
        assert_eq!(n.own_name("web__read"), None);
        assert_eq!(n.own_name("read"), None);
        assert_eq!(n.own_uri("files+file:///a+b"), Some("file:///a+b"));
        assert_eq!(n.own_uri("file:///a"), None);
    }

    #[test]
    fn unprefixed_names_are_the_upstreams_own() {
        let n = Naming::unprefixed("files");
        assert!(!n.is_prefixed());
        assert_eq!(n.name("read"), "read");
        assert_eq!(n.uri("file:///a"), "file:///a");
        assert_eq!(n.own_name("files__read"), Some("files__read"));
        assert_eq!(n.own_uri("file:///a"), Some("file:///a"));
    }
}
