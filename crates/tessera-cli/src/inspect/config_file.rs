//! Editing the configuration file of named servers from the page: add or
//! replace one server, remove one. The file is read as JSON and only
//! `mcpServers.NAME` changes, so what other MCP clients keep in it (other
//! members, other servers' unknown members) stays as it was; it is written
//! to a temporary file beside it, then renamed over it.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::problem::Problem;

use crate::config::MAX_CONFIG;

/// The longest server name.
const MAX_NAME: usize = 128;

/// The configuration file: its named servers, and every other member as
/// it was (other MCP clients keep their own settings in it).
#[derive(Debug, Default, Serialize, Deserialize)]
struct ConfigJson {
    #[serde(rename = "mcpServers", default)]
    mcp_servers: Map<String, Value>,
    #[serde(flatten)]
    other: Map<String, Value>,
}

/// The file (an empty `mcpServers` when there is none), with every member
/// kept.
fn read(path: &Path) -> Result<ConfigJson, Problem> {
    let shown = path.display();
    let Some(text) = crate::config::read_text(path).map_err(Problem::bad_request)? else {
        return Ok(ConfigJson::default());
    };
    let v: Value = serde_json::from_str(&text)
        .map_err(|e| Problem::bad_request(format!("{shown}: not JSON: {e}")))?;
    if !v.is_object() {
        return Err(Problem::bad_request(format!("{shown}: not a JSON object")));
    }
    ConfigJson::deserialize(v).map_err(|_| Problem::bad_request("\"mcpServers\" is not an object"))
}

fn write(path: &Path, file: &ConfigJson) -> Result<(), Problem> {
    let shown = path.display();
    // Through a `Value`: the members in name order, as the file was written.
    let v = serde_json::to_value(file).unwrap_or_default();
    let text = serde_json::to_string_pretty(&v).unwrap_or_default() + "\n";
    if text.len() as u64 > MAX_CONFIG {
        return Err(Problem::bad_request(format!(
            "{shown} would be over {MAX_CONFIG} bytes"
        )));
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| Problem::bad_request(format!("{shown}: {e}")))?;
    }
    let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
    std::fs::write(&tmp, text).map_err(|e| Problem::bad_request(format!("{shown}: {e}")))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Problem::bad_request(format!("{shown}: {e}"))
    })
}

/// Adds server `name` (or replaces it) with `entry`: `{command, args?,
/// env?}` or `{url, headers?}`, checked as the CLI checks entries.
pub fn put(path: &Path, name: &str, entry: Value) -> Result<(), Problem> {
    if name.is_empty() || name.len() > MAX_NAME || name.chars().any(char::is_control) {
        return Err(Problem::bad_request(format!(
            "server name {name:?}: 1 to {MAX_NAME} characters, no control characters"
        )));
    }
    let checked: crate::config::ServerEntry = serde_json::from_value(entry.clone())
        .map_err(|e| Problem::bad_request(format!("server {name:?}: {e}")))?;
    checked
        .resolve()
        .map_err(|why| Problem::bad_request(format!("server {name:?}: {why}")))?;
    let mut file = read(path)?;
    file.mcp_servers.insert(name.to_owned(), entry);
    write(path, &file)
}

/// Removes server `name`; false when the file has no such server.
pub fn remove(path: &Path, name: &str) -> Result<bool, Problem> {
    let mut file = read(path)?;
    if file.mcp_servers.remove(name).is_none() {
        return Ok(false);
    }
    write(path, &file)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read_value(path: &Path) -> Value {
        serde_json::to_value(read(path).unwrap()).unwrap()
    }

    #[test]
    fn edits_one_server_and_keeps_the_rest() {
        let dir = std::env::temp_dir().join(format!("tessera-config-edit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("mcp.json");
        put(&path, "a", json!({"command": "srv", "args": ["--stdio"]})).unwrap();
        let mut v = read_value(&path);
        v["theirs"] = json!({"keep": true});
        v["mcpServers"]["a"]["autoApprove"] = json!(["x"]);
        write(&path, &serde_json::from_value(v).unwrap()).unwrap();
        put(&path, "b", json!({"url": "http://127.0.0.1:9/mcp"})).unwrap();
        let v = read_value(&path);
        assert_eq!(v["theirs"], json!({"keep": true}));
        assert_eq!(v["mcpServers"]["a"]["autoApprove"], json!(["x"]));
        assert_eq!(v["mcpServers"]["b"]["url"], "http://127.0.0.1:9/mcp");
        assert!(remove(&path, "a").unwrap());
        assert!(!remove(&path, "a").unwrap());
        assert!(read_value(&path)["mcpServers"].get("a").is_none());
        let bad = put(&path, "c", json!({"command": "x", "url": "http://x"})).unwrap_err();
        assert!(bad.message.contains("either"), "{}", bad.message);
        assert!(put(&path, "", json!({"command": "x"})).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
