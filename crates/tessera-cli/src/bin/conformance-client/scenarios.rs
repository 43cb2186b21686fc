//! The conformance scenarios that need no authorization.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tessera::client::{Client, ClientBuilder, ClientError};
use tessera::http::HttpClientTransport;
use tessera::types::loose::view;
use tessera::types::{ElicitResult, JsonObject, ProtocolVersion, Tool};

/// The arguments of a tool that takes none: `{}`.
#[derive(Serialize)]
pub(crate) struct NoArguments {}

/// The arguments of `add_numbers`.
#[derive(Serialize)]
struct AddNumbers {
    a: i64,
    b: i64,
}

/// The arguments of `json_schema_echo`.
#[derive(Serialize)]
struct SchemaEcho<'a> {
    schema: &'a JsonObject,
}

/// What the suite tells the client in `MCP_CONFORMANCE_CONTEXT` (only the
/// members read; any of them may be missing).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Context {
    #[serde(default)]
    tool_calls: Option<Value>,
}

/// One tool call the suite asks for.
#[derive(Deserialize)]
struct ToolCall {
    #[serde(default)]
    name: Option<Value>,
    #[serde(default, deserialize_with = "tessera::types::loose::present_value")]
    arguments: Option<Value>,
}

/// The members of an input schema [`sample_arguments`] reads.
#[derive(Deserialize)]
struct InputSchema {
    #[serde(default)]
    properties: Option<Value>,
}

/// A property of an input schema: its type.
#[derive(Deserialize)]
struct Property {
    #[serde(rename = "type", default)]
    kind: Option<Value>,
}

/// The client every scenario starts from: the suite's protocol version (if
/// it names one) and an elicitation handler that accepts with defaults.
pub(crate) fn builder() -> Result<ClientBuilder, String> {
    let b = Client::builder("tessera-conformance-client", env!("CARGO_PKG_VERSION")).elicitation(
        |_req| async move {
            // Accept and send nothing of our own: the client fills in the
            // schema's defaults (SEP-1034) before answering.
            Ok(ElicitResult::accept(Default::default()))
        },
    );
    match std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION") {
        Ok(v) => ProtocolVersion::parse(&v)
            .map(|v| b.clone().protocol_version(v))
            .ok_or_else(|| format!("unknown protocol version {v:?}")),
        // Suite 0.1 speaks the initialize handshake only.
        Err(_) => Ok(b.protocol_version(ProtocolVersion::V2025_11_25)),
    }
}

/// Runs one scenario against the mock server at `url`.
pub(crate) async fn run(url: &str, scenario: &str) -> Result<(), String> {
    let transport = HttpClientTransport::new(url).map_err(|e| e.to_string())?;
    let client = builder()?
        .connect_transport(transport)
        .await
        .map_err(|e: ClientError| format!("connect: {e}"))?;
    let outcome = play(&client, scenario).await;
    client.close().await;
    outcome
}

fn err(e: ClientError) -> String {
    e.to_string()
}

/// The tool calls the suite asks for in `MCP_CONFORMANCE_CONTEXT`
/// (`{"toolCalls": [{"name", "arguments"}]}`), if any.
fn context_tool_calls() -> Vec<(String, Value)> {
    let Ok(text) = std::env::var("MCP_CONFORMANCE_CONTEXT") else {
        return Vec::new();
    };
    let Ok(ctx) = serde_json::from_str::<Value>(&text) else {
        return Vec::new();
    };
    let Some(ctx) = view::<Context>(&ctx) else {
        return Vec::new();
    };
    ctx.tool_calls
        .as_ref()
        .and_then(Value::as_array)
        .map(|calls| {
            calls
                .iter()
                .filter_map(|c| {
                    let c: ToolCall = view(c)?;
                    let name = c.name.as_ref()?.as_str()?.to_owned();
                    let arguments = c.arguments.unwrap_or_else(|| Value::Object(Map::new()));
                    Some((name, arguments))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Plausible arguments for a tool: a value of the declared type for every
/// property of its input schema.
fn sample_arguments(tool: &Tool) -> Value {
    let mut args = Map::new();
    let schema = InputSchema::deserialize(&tool.input_schema).ok();
    let props: Option<BTreeMap<String, Value>> = schema
        .and_then(|s| s.properties)
        .and_then(|p| serde_json::from_value(p).ok());
    for (name, prop) in props.into_iter().flatten() {
        let kind = view::<Property>(&prop).and_then(|p| p.kind);
        let v = match kind.as_ref().and_then(Value::as_str) {
            Some("integer") => Value::from(1),
            Some("number") => Value::from(1.5),
            Some("boolean") => Value::Bool(true),
            Some("object") => Value::Object(Map::new()),
            Some("array") => Value::Array(Vec::new()),
            _ => Value::from("sample"),
        };
        args.insert(name, v);
    }
    Value::Object(args)
}

/// Plays one scenario on a connected client.
async fn play(client: &Client, scenario: &str) -> Result<(), String> {
    match scenario {
        "tools_call" => {
            client.list_tools().await.map_err(err)?;
            let r = client
                .call_tool("add_numbers", AddNumbers { a: 5, b: 3 })
                .await
                .map_err(err)?;
            eprintln!(
                "add_numbers: {:?}",
                r.content.first().and_then(|c| c.as_text())
            );
        }
        "elicitation-sep1034-client-defaults" => {
            client
                .call_tool("test_client_elicitation_defaults", NoArguments {})
                .await
                .map_err(err)?;
        }
        "sse-retry" => {
            client
                .call_tool("test_reconnection", NoArguments {})
                .await
                .map_err(err)?;
        }
        "http-custom-headers" => {
            // tools/list first: it tells which parameters are mirrored.
            client.list_tools().await.map_err(err)?;
            for (name, args) in context_tool_calls() {
                client.call_tool(&name, args).await.map_err(err)?;
            }
        }
        "http-invalid-tool-headers" => {
            // The transport leaves tools with invalid x-mcp-header
            // annotations out of the list; call every tool that is left.
            for tool in client.list_tools().await.map_err(err)? {
                let args = sample_arguments(&tool);
                client.call_tool(&tool.name, args).await.map_err(err)?;
            }
        }
        "http-standard-headers" => {
            // Every method whose Mcp-Method (and Mcp-Name) header is checked,
            // on everything the mock server offers.
            for tool in client.list_tools().await.map_err(err)? {
                let args = sample_arguments(&tool);
                client.call_tool(&tool.name, args).await.map_err(err)?;
            }
            for r in client.list_resources().await.map_err(err)? {
                client.read_resource(&r.uri).await.map_err(err)?;
            }
            for p in client.list_prompts().await.map_err(err)? {
                client
                    .get_prompt(&p.name, Default::default())
                    .await
                    .map_err(err)?;
            }
        }
        "json-schema-2020-12-preservation" => {
            let tools = client.list_tools().await.map_err(err)?;
            let focal = tools
                .iter()
                .find(|t| t.name == "json_schema_2020_12_tool")
                .ok_or("json_schema_2020_12_tool is not listed")?;
            client
                .call_tool(
                    "json_schema_echo",
                    SchemaEcho {
                        schema: &focal.input_schema,
                    },
                )
                .await
                .map_err(err)?;
        }
        "sep-2322-client-request-state" => {
            client.list_tools().await.map_err(err)?;
            // An unrelated call while an input round is in flight must carry
            // nothing of it.
            let (a, b) = tokio::join!(
                client.call_tool("test_mrtr_echo_state", NoArguments {}),
                client.call_tool("test_mrtr_unrelated", NoArguments {}),
            );
            a.map_err(err)?;
            b.map_err(err)?;
            client
                .call_tool("test_mrtr_no_state", NoArguments {})
                .await
                .map_err(err)?;
            client
                .call_tool("test_mrtr_no_result_type", NoArguments {})
                .await
                .map_err(err)?;
        }
        "sep-2640-client-no-prefetch" => {
            // List only: a host fetches nothing before a skill is loaded.
            let skills = client.skills_list().await.map_err(err)?;
            eprintln!("skills listed: {}", skills.len());
        }
        s if s.starts_with("sep-2640-client-") => {
            // Load each listed skill (SKILL.md checked against its entry:
            // size, digest, frontmatter), then read its supporting files,
            // each checked too. A mismatch stops here: nothing unverified
            // is used, and no further file of that skill is read.
            for skill in client.skills_list().await.map_err(err)? {
                client.load_skill(&skill).await.map_err(err)?;
                if let tessera::types::SkillResources::Files(files) = &skill.resources {
                    for f in files.iter().filter(|f| f.uri != skill.uri) {
                        client.read_skill_file(&skill, &f.uri).await.map_err(err)?;
                    }
                }
            }
        }
        _ => {
            // initialize and anything else: connect and look around.
            let _ = client.list_tools().await;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn arguments_keep_their_shape() {
        assert_eq!(serde_json::to_value(NoArguments {}).unwrap(), json!({}));
        assert_eq!(
            serde_json::to_value(AddNumbers { a: 5, b: 3 }).unwrap(),
            json!({"a": 5, "b": 3})
        );
        let tool: Tool = serde_json::from_value(json!({"name": "t", "inputSchema": {
            "type": "object",
            "properties": {"n": {"type": "integer"}, "x": {"type": "number"}, "b": {"type": "boolean"},
                           "o": {"type": "object"}, "a": {"type": "array"}, "s": {"type": "string"},
                           "odd": true}
        }}))
        .unwrap();
        assert_eq!(
            sample_arguments(&tool),
            json!({"n": 1, "x": 1.5, "b": true, "o": {}, "a": [], "s": "sample", "odd": "sample"})
        );
    }
}
