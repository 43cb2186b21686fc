//! `tessera discover TARGET`: who the server is, which era and version it
//! speaks, its capabilities, extensions and instructions.

use std::fmt::Write as _;
use std::process::ExitCode;

use clap::Args;
use serde::Deserialize;
use serde_json::Value;
use tessera::types::{Era, JsonObject};

use crate::connect::ClientOptions;
use crate::exit::Failure;
use crate::output;
use crate::peer_text;

/// `tessera discover`.
#[derive(Debug, Args)]
pub struct DiscoverArgs {
    /// The server's http(s) URL (or `-- COMMAND ARGS...` or --server NAME).
    #[arg(value_name = "URL")]
    positional: Vec<String>,
    #[command(flatten)]
    pub(crate) opts: ClientOptions,
}

/// Runs `tessera discover`. `--json` prints the result the connection
/// started with: the `server/discover` result (2026-07-28) or the
/// `initialize` result (legacy).
pub async fn run(a: DiscoverArgs) -> Result<ExitCode, Failure> {
    let mut words = a.positional;
    let target = a.opts.target.resolve(&mut words, 0)?;
    super::no_more(words.into_iter())?;
    let s = a.opts.connect_to(target).await?;
    let result = s.client.connect_result();
    let era = s.client.era();
    let version = s.client.protocol_version();
    let info = as_object(&s.client.server_info());
    // Every key the server sent: the typed value keeps those it does not model.
    let caps = as_object(&s.client.server_capabilities());
    let instructions = s.client.instructions();
    s.close().await;
    if a.opts.json {
        output::json_object(&result);
        return Ok(ExitCode::SUCCESS);
    }
    peer_text::print(&describe(
        era,
        version.as_str(),
        &info,
        &caps,
        instructions.as_deref(),
        &result,
    ));
    Ok(ExitCode::SUCCESS)
}

/// A typed value as the JSON object it serialises to.
fn as_object<T: serde::Serialize>(v: &T) -> JsonObject {
    match serde_json::to_value(v) {
        Ok(Value::Object(o)) => o,
        _ => JsonObject::new(),
    }
}

/// One capability: its key, then its flags (an object) or its value.
fn entry(key: &str, v: &Value) -> String {
    let text = match v {
        Value::Object(_) => format!("{key}{}", flags(v)),
        other => format!("{key}={other}"),
    };
    peer_text::line(&text).into_owned()
}

fn flags(v: &Value) -> String {
    match v.as_object() {
        Some(o) if !o.is_empty() => {
            let inner: Vec<String> = o
                .iter()
                .map(|(k, v)| match v {
                    Value::Bool(true) => k.clone(),
                    Value::Object(m) if m.is_empty() => k.clone(),
                    other => format!("{k}={other}"),
                })
                .collect();
            format!(" ({})", inner.join(", "))
        }
        _ => String::new(),
    }
}

/// The members of the server's `serverInfo` shown (each as sent).
#[derive(Debug, Default, Deserialize)]
struct ServerInfo {
    #[serde(default)]
    name: Option<Value>,
    #[serde(default)]
    version: Option<Value>,
    #[serde(default)]
    title: Option<Value>,
}

/// The members of a discovery result shown besides the server's.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Discovered {
    #[serde(default)]
    supported_versions: Option<Value>,
}

/// The readable description.
pub fn describe(
    era: Era,
    version: &str,
    info: &JsonObject,
    caps: &JsonObject,
    instructions: Option<&str>,
    result: &JsonObject,
) -> String {
    let info = ServerInfo::deserialize(info).unwrap_or_default();
    let result = Discovered::deserialize(result).unwrap_or_default();
    fn s(v: &Option<Value>) -> std::borrow::Cow<'_, str> {
        peer_text::line(v.as_ref().and_then(Value::as_str).unwrap_or(""))
    }
    let mut out = String::new();
    let mut server = format!("{} {}", s(&info.name), s(&info.version));
    if !s(&info.title).is_empty() {
        server.push_str(&format!(" ({})", s(&info.title)));
    }
    let _ = writeln!(out, "server:       {}", server.trim());
    let how = match era {
        Era::Legacy => "legacy (initialize handshake)",
        Era::Modern => "modern (server/discover, no session)",
    };
    let _ = writeln!(out, "era:          {how}");
    let _ = writeln!(out, "protocol:     {version}");
    if let Some(v) = result.supported_versions.as_ref().and_then(Value::as_array) {
        let v: Vec<&str> = v.iter().filter_map(Value::as_str).collect();
        let _ = writeln!(out, "supports:     {}", peer_text::line(&v.join(", ")));
    }
    let standard: Vec<String> = caps
        .iter()
        .filter(|(k, v)| !(matches!(k.as_str(), "extensions" | "experimental") && v.is_object()))
        .map(|(k, v)| entry(k, v))
        .collect();
    let _ = writeln!(
        out,
        "capabilities: {}",
        if standard.is_empty() {
            "(none)".to_owned()
        } else {
            standard.join(", ")
        }
    );
    for key in ["extensions", "experimental"] {
        if let Some(ext) = caps.get(key).and_then(Value::as_object) {
            let names: Vec<String> = ext.iter().map(|(k, v)| entry(k, v)).collect();
            let _ = writeln!(out, "{:<14}{}", format!("{key}:"), names.join(", "));
        }
    }
    if let Some(i) = instructions {
        let i = peer_text::block(i);
        let _ = writeln!(out, "instructions: {}", i.replace('\n', "\n              "));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn describes() {
        let o = |v: Value| v.as_object().unwrap().clone();
        let text = describe(
            Era::Modern,
            "2026-07-28",
            &o(json!({"name": "srv", "version": "1.0"})),
            &o(
                json!({"tools": {"listChanged": true}, "logging": {}, "extensions": {"io.x/y": {}}}),
            ),
            Some("Be nice"),
            &o(json!({"supportedVersions": ["2025-11-25", "2026-07-28"]})),
        );
        assert_eq!(
            text,
            "server:       srv 1.0\nera:          modern (server/discover, no session)\nprotocol:     2026-07-28\nsupports:     2025-11-25, 2026-07-28\ncapabilities: logging, tools (listChanged)\nextensions:   io.x/y\ninstructions: Be nice\n"
        );
    }

    #[test]
    fn shows_keys_it_does_not_model() {
        let o = |v: Value| v.as_object().unwrap().clone();
        let text = describe(
            Era::Legacy,
            "2025-11-25",
            &o(json!({"name": "srv", "version": "1.0"})),
            &o(json!({
                "tools": {"listChanged": true, "streaming": true},
                "com.example/holograms": {"depth": 3},
                "quantum": true,
                "experimental": {"com.example/beta": {}},
                "extensions": {"io.modelcontextprotocol/tasks": {"mode": "x"}}
            })),
            None,
            &JsonObject::new(),
        );
        assert!(
            text.contains(
                "capabilities: com.example/holograms (depth=3), quantum=true, tools (listChanged, streaming)\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("extensions:   io.modelcontextprotocol/tasks (mode=\"x\")\n"),
            "{text}"
        );
        assert!(text.contains("experimental: com.example/beta\n"), "{text}");
    }
}
