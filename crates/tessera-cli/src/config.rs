//! Named servers from the configuration file MCP clients share:
//! `{"mcpServers": {"NAME": {"command", "args", "env"} | {"url", "headers"}}}`.
//!
//! `--config FILE --server NAME` picks one; without `--config` the file is
//! `$TESSERA_CONFIG`, else `tessera/mcp.json` under the user's configuration
//! directory (`$XDG_CONFIG_HOME`, else `~/.config`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The configuration file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigFile {
    /// The servers, by name.
    #[serde(default)]
    pub mcp_servers: BTreeMap<String, ServerEntry>,
}

/// One server of the file: a command to start, or a URL. Unknown members
/// (`disabled`, `autoApprove`, …, written by other clients) are ignored.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ServerEntry {
    /// `stdio`, `http`, `streamable-http` or `sse` (optional; checked
    /// against `command`/`url` when given).
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
    /// The program of a stdio server.
    #[serde(default)]
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Extra environment variables for it.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// The URL of an HTTP server.
    #[serde(default)]
    pub url: Option<String>,
    /// Headers to send to it.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
}

/// A server picked from the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Named {
    /// Start this program with these arguments and extra environment.
    Command {
        /// The program.
        program: String,
        /// Its arguments.
        args: Vec<String>,
        /// Extra environment variables.
        env: Vec<(String, String)>,
    },
    /// Speak HTTP to this URL with these extra headers (`Name: value`).
    Url {
        /// The URL.
        url: String,
        /// Headers, in curl's `Name: value` form.
        headers: Vec<String>,
    },
}

/// The default configuration file: `$TESSERA_CONFIG`, else
/// `tessera/mcp.json` under `$XDG_CONFIG_HOME` or `~/.config`.
pub fn default_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("TESSERA_CONFIG").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("tessera").join("mcp.json"))
}

/// The largest configuration file read (or written, by the inspector).
pub const MAX_CONFIG: u64 = 1024 * 1024;

/// The text of the configuration file at `path` (at most [`MAX_CONFIG`]
/// bytes), `None` when there is no such file. Errors name the file.
pub fn read_text(path: &Path) -> Result<Option<String>, String> {
    let shown = path.display();
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{shown}: {e}")),
        Ok(m) if m.len() > MAX_CONFIG => return Err(format!("{shown}: over {MAX_CONFIG} bytes")),
        Ok(_) => {}
    }
    std::fs::read_to_string(path)
        .map(Some)
        .map_err(|e| format!("{shown}: {e}"))
}

/// Parses `text`, the configuration file at `path`.
pub fn parse(path: &Path, text: &str) -> Result<ConfigFile, String> {
    serde_json::from_str(text).map_err(|e| {
        format!(
            "{}: not a valid MCP configuration file: {e}",
            path.display()
        )
    })
}

/// Reads `path` and picks the server `name`. Errors are one line, naming the
/// file and what to change.
pub fn load(path: &Path, name: &str) -> Result<Named, String> {
    let shown = path.display();
    let text = read_text(path)
        .map_err(|e| format!("--config {e}"))?
        .ok_or_else(|| format!("--config {shown}: no such file"))?;
    let file = parse(path, &text).map_err(|e| format!("--config {e}"))?;
    let Some(entry) = file.mcp_servers.get(name) else {
        let known: Vec<&str> = file.mcp_servers.keys().map(String::as_str).collect();
        return Err(if known.is_empty() {
            format!("--config {shown}: no servers in \"mcpServers\"")
        } else {
            format!(
                "--server {name:?} is not in {shown}; it has: {}",
                known.join(", ")
            )
        });
    };
    entry
        .resolve()
        .map_err(|why| format!("--config {shown}: server {name:?}: {why}"))
}

impl ServerEntry {
    /// Checks the entry and turns it into a [`Named`] server.
    pub fn resolve(&self) -> Result<Named, String> {
        match (&self.command, &self.url) {
            (Some(_), Some(_)) => Err("give either \"command\" or \"url\", not both".into()),
            (None, None) => Err("needs \"command\" (a stdio server) or \"url\"".into()),
            (Some(program), None) => {
                if let Some(k) = self.kind.as_deref().filter(|k| *k != "stdio") {
                    return Err(format!("\"type\": {k:?} does not go with \"command\""));
                }
                if program.is_empty() {
                    return Err("\"command\" is empty".into());
                }
                if !self.headers.is_empty() {
                    return Err("\"headers\" apply to a \"url\" server only".into());
                }
                Ok(Named::Command {
                    program: program.clone(),
                    args: self.args.clone(),
                    env: self
                        .env
                        .iter()
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect(),
                })
            }
            (None, Some(url)) => {
                if let Some(k) = self.kind.as_deref().filter(|k| {
                    !matches!(*k, "http" | "streamable-http" | "streamableHttp" | "sse")
                }) {
                    return Err(format!("\"type\": {k:?} does not go with \"url\""));
                }
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return Err(format!("\"url\" {url:?} is not an http(s) URL"));
                }
                if !self.args.is_empty() || !self.env.is_empty() {
                    return Err("\"args\" and \"env\" apply to a \"command\" server only".into());
                }
                Ok(Named::Url {
                    url: url.clone(),
                    headers: self
                        .headers
                        .iter()
                        .map(|(k, v)| format!("{k}: {v}"))
                        .collect(),
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(text: &str) -> (PathBuf, PathBuf) {
        let dir = std::env::temp_dir().join(format!(
            "tessera-config-{}-{}",
            std::process::id(),
            text.len()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("mcp.json");
        std::fs::write(&f, text).unwrap();
        (dir, f)
    }

    #[test]
    fn picks_command_and_url_servers() {
        let (dir, f) = write(
            r#"{"mcpServers": {
                "local": {"command": "tessera", "args": ["serve", "--stdio"], "env": {"A": "1"}, "disabled": false},
                "remote": {"type": "http", "url": "http://127.0.0.1:1/mcp", "headers": {"Authorization": "Bearer x"}}
            }}"#,
        );
        assert_eq!(
            load(&f, "local").unwrap(),
            Named::Command {
                program: "tessera".into(),
                args: vec!["serve".into(), "--stdio".into()],
                env: vec![("A".into(), "1".into())],
            }
        );
        assert_eq!(
            load(&f, "remote").unwrap(),
            Named::Url {
                url: "http://127.0.0.1:1/mcp".into(),
                headers: vec!["Authorization: Bearer x".into()],
            }
        );
        let e = load(&f, "nope").unwrap_err();
        assert!(e.contains("local, remote"), "{e}");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn refuses_bad_entries_clearly() {
        let bad = |json: &str| {
            serde_json::from_str::<ServerEntry>(json)
                .unwrap()
                .resolve()
                .unwrap_err()
        };
        assert!(bad(r#"{}"#).contains("needs"));
        assert!(bad(r#"{"command": "a", "url": "http://x"}"#).contains("not both"));
        assert!(bad(r#"{"url": "ftp://x"}"#).contains("not an http(s) URL"));
        assert!(bad(r#"{"type": "sse", "command": "a"}"#).contains("does not go"));
        assert!(bad(r#"{"url": "http://x", "args": ["a"]}"#).contains("command"));
        let (dir, f) = write("{not json");
        assert!(load(&f, "x").unwrap_err().contains("not a valid"));
        let _ = std::fs::remove_dir_all(dir);
    }
}
