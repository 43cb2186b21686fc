//! TARGET: where a client verb connects.

use std::ffi::OsString;

use crate::Failure;

/// A server to talk to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A stdio server to start: program and arguments (after `--`).
    Command(Vec<OsString>),
    /// An http(s) URL.
    Url(String),
}

impl Target {
    /// Picks the target from the words after `--` and the positional words
    /// before it (a URL is the last positional word).
    pub fn resolve(
        positional: &mut Vec<String>,
        after_dashes: Vec<OsString>,
    ) -> Result<Target, Failure> {
        let url_last = positional
            .last()
            .is_some_and(|w| w.starts_with("http://") || w.starts_with("https://"));
        match (url_last, after_dashes.is_empty()) {
            (true, true) => Ok(Target::Url(positional.pop().unwrap_or_default())),
            (false, false) => Ok(Target::Command(after_dashes)),
            (true, false) => Err(Failure::Usage(
                "give one target: either an http(s) URL or `-- COMMAND ARGS...`, not both".into(),
            )),
            (false, true) => Err(Failure::Usage(
                "missing target: add `-- COMMAND ARGS...` (a stdio server to start) or an http(s) URL".into(),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves() {
        let mut p = vec!["echo".to_string(), "http://x/mcp".to_string()];
        assert_eq!(
            Target::resolve(&mut p, vec![]).unwrap(),
            Target::Url("http://x/mcp".into())
        );
        assert_eq!(p, vec!["echo".to_string()]);
        let mut p = vec![];
        assert!(matches!(
            Target::resolve(&mut p, vec!["srv".into()]),
            Ok(Target::Command(_))
        ));
        assert!(Target::resolve(&mut vec![], vec![]).is_err());
    }
}
