//! Connecting (command, URL-less stdio, configuration name, launch TARGET), the tools, resources,
//! prompts, logs and protocol stream of a connection, progress and cancel, timeouts, roots and
//! the console.

use std::time::Duration;

use serde_json::{Value, json};

use super::client::*;
use super::common;
use super::common::start_inspect;

#[tokio::test]
async fn tools_resources_prompts_logs_and_the_protocol_stream() {
    let inspector = start_inspect(&[], START);
    let api = Api::of(&inspector);
    let info = api.get("info").await;
    assert_eq!(info["connections"], json!([]));

    let conn = api.connect_reference("auto").await;
    assert_eq!(conn["era"], "modern");
    assert_eq!(conn["transport"], "stdio");
    assert_eq!(conn["serverInfo"]["name"], "tessera-reference");
    let id = conn["id"].as_u64().unwrap();

    // Tools: list and call.
    let tools = api.get(&format!("connections/{id}/tools")).await;
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        names.contains(&"echo") && names.contains(&"sleep"),
        "{names:?}"
    );
    let r = api
        .post(
            &format!("connections/{id}/tools/call"),
            json!({"name": "add", "arguments": {"a": 2, "b": 40}}),
        )
        .await;
    assert_eq!(r["result"]["content"][0]["text"], "42");
    assert_eq!(r["outputCheck"]["verdict"], "none");

    // A tool error is a result, not an API failure.
    let r = api
        .post(
            &format!("connections/{id}/tools/call"),
            json!({"name": "test_error_handling"}),
        )
        .await;
    assert_eq!(r["result"]["isError"], true);

    // Resources: list, templates, read.
    let res = api.get(&format!("connections/{id}/resources")).await;
    assert!(
        res["resources"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["uri"] == "test://static-text")
    );
    let t = api
        .get(&format!("connections/{id}/resource-templates"))
        .await;
    assert_eq!(
        t["resourceTemplates"][0]["uriTemplate"],
        "test://template/{id}/data"
    );
    let read = api
        .post(
            &format!("connections/{id}/resources/read"),
            json!({"uri": "test://static-text"}),
        )
        .await;
    assert!(read["result"]["contents"][0]["text"].is_string(), "{read}");

    // Prompts: list and get with arguments.
    let p = api.get(&format!("connections/{id}/prompts")).await;
    assert!(
        p["prompts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["name"] == "test_prompt_with_arguments")
    );
    let got = api
        .post(
            &format!("connections/{id}/prompts/get"),
            json!({"name": "test_prompt_with_arguments", "arguments": {"arg1": "one", "arg2": "two"}}),
        )
        .await;
    let text = got["result"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap();
    assert!(text.contains("one") && text.contains("two"), "{text}");

    // Any request (the Protocol tab's Replay); not the lifecycle's.
    let again = api
        .post(
            &format!("connections/{id}/request"),
            json!({"method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 1},
                   "_meta": {"progressToken": 7}}}),
        )
        .await;
    assert_eq!(again["result"]["content"][0]["text"], "2");
    api.expect(
        400,
        reqwest::Method::POST,
        &format!("connections/{id}/request"),
        Some(json!({"method": "initialize", "params": {}})),
    )
    .await;

    // Completion of a prompt argument.
    let done = api
        .post(
            &format!("connections/{id}/complete"),
            json!({"ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
                   "argument": {"name": "arg1", "value": "pa"}}),
        )
        .await;
    let values = done["result"]["completion"]["values"].as_array().unwrap();
    assert!(values.contains(&json!("paris")), "{done}");

    // Logs: in 2026-07-28 the level goes with each request; the tool logs.
    let c = api
        .post(
            &format!("connections/{id}/logging/level"),
            json!({"level": "debug"}),
        )
        .await;
    assert_eq!(c["logLevel"], "debug");
    api.post(
        &format!("connections/{id}/tools/call"),
        json!({"name": "test_tool_with_logging"}),
    )
    .await;

    // The stream replays every message, in order: requests, then their responses.
    let events = events_until(&api, |ev| {
        ev.iter().any(|e| e["type"] == "log")
            && protocol_methods(ev, "out")
                .iter()
                .filter(|m| *m == "tools/call")
                .count()
                >= 3
    })
    .await;
    let out = protocol_methods(&events, "out");
    let first = |m: &str| out.iter().position(|x| x == m).unwrap();
    assert_eq!(first("server/discover"), 0, "{out:?}");
    assert!(first("tools/list") < first("tools/call"));
    assert!(first("resources/read") < first("prompts/get"));
    let seqs: Vec<u64> = events.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");
    // The answer to `add` came back on the wire with the request's id.
    let add = events
        .iter()
        .find(|e| e["dir"] == "out" && e["message"]["params"]["name"] == "add")
        .unwrap();
    let answer = events
        .iter()
        .find(|e| e["dir"] == "in" && e["message"]["id"] == add["message"]["id"])
        .unwrap();
    assert_eq!(answer["message"]["result"]["content"][0]["text"], "42");
    assert!(add["seq"].as_u64() < answer["seq"].as_u64());
    let log = events.iter().find(|e| e["type"] == "log").unwrap();
    assert_eq!(log["connection"], id);
    assert_eq!(log["data"], "Tool execution started");

    // Disconnect: gone from the list; its calls answer 404.
    api.disconnect(id).await;
    assert_eq!(api.get("connections").await["connections"], json!([]));
    api.expect(
        404,
        reqwest::Method::GET,
        &format!("connections/{id}/tools"),
        None,
    )
    .await;
}

#[tokio::test]
async fn progress_and_cancel_of_a_long_call() {
    let inspector = start_inspect(&[], START);
    let api = Api::of(&inspector);
    let id = api.connect_reference("auto").await["id"].as_u64().unwrap();
    let call = {
        let api = Api::of(&inspector);
        tokio::spawn(async move {
            api.post(
                &format!("connections/{id}/tools/call"),
                json!({"name": "sleep", "arguments": {"ms": 60000}, "callId": "long-1"}),
            )
            .await
        })
    };
    // Progress arrives, tagged with the call id; then cancel.
    events_until(&api, |ev| {
        ev.iter()
            .any(|e| e["type"] == "progress" && e["call"] == "long-1")
    })
    .await;
    api.expect(
        204,
        reqwest::Method::POST,
        &format!("connections/{id}/calls/long-1/cancel"),
        None,
    )
    .await;
    let answer = tokio::time::timeout(Duration::from_secs(10), call)
        .await
        .expect("a cancelled call answers at once")
        .unwrap();
    assert_eq!(answer, json!({"cancelled": true}));
    // The server was told.
    let events = events_until(&api, |ev| {
        protocol_methods(ev, "out")
            .iter()
            .any(|m| m == "notifications/cancelled")
    })
    .await;
    assert!(!events.is_empty());
    // An unknown call cannot be cancelled.
    api.expect(
        404,
        reqwest::Method::POST,
        &format!("connections/{id}/calls/long-1/cancel"),
        None,
    )
    .await;
}

#[tokio::test]
async fn legacy_era_and_a_launch_target() {
    // With a TARGET the inspector connects at launch.
    let bin = env!("CARGO_BIN_EXE_tessera");
    let inspector = start_inspect(&["--era", "legacy", "--", bin, "serve", "--stdio"], START);
    let api = Api::of(&inspector);
    let events = events_until(&api, |ev| {
        ev.iter()
            .any(|e| e["type"] == "connection" && e["state"] == "connected")
    })
    .await;
    let connected = events.iter().find(|e| e["state"] == "connected").unwrap();
    assert_eq!(connected["era"], "legacy");
    assert_eq!(connected["protocolVersion"], "2025-11-25");
    let id = connected["id"].as_u64().unwrap();
    assert_eq!(protocol_methods(&events, "out")[0], "initialize");
    // Legacy: the level is set with logging/setLevel.
    api.post(
        &format!("connections/{id}/logging/level"),
        json!({"level": "info"}),
    )
    .await;
    let events = events_until(&api, |ev| {
        protocol_methods(ev, "out")
            .iter()
            .any(|m| m == "logging/setLevel")
    })
    .await;
    assert!(!events.is_empty());
    // A bad request names what is wrong.
    let v = api
        .expect(
            400,
            reqwest::Method::POST,
            &format!("connections/{id}/logging/level"),
            Some(json!({"level": "loud"})),
        )
        .await;
    says(&v, "loud");
    api.expect(
        400,
        reqwest::Method::POST,
        "connections",
        Some(json!({"url": "http://127.0.0.1:1/mcp", "command": "x"})),
    )
    .await;
    // A body of the wrong shape is refused the same way, saying why.
    let v = api
        .expect(
            422,
            reqwest::Method::POST,
            &format!("connections/{id}/tools/call"),
            Some(json!({"nam": "echo"})),
        )
        .await;
    says(&v, "nam");
}

#[tokio::test]
async fn a_connection_waits_as_long_as_its_timeout() {
    let inspector = start_inspect(&[], START);
    let api = Api::of(&inspector);
    let conn = api
        .post(
            "connections",
            json!({"command": env!("CARGO_BIN_EXE_tessera"), "args": ["serve", "--stdio"],
                   "timeout": 0.5}),
        )
        .await;
    assert_eq!(conn["timeoutSeconds"], 0.5);
    let id = conn["id"].as_u64().unwrap();
    api.expect(
        504,
        reqwest::Method::POST,
        &format!("connections/{id}/tools/call"),
        Some(json!({"name": "slow_compute", "arguments": {"seconds": 5}})),
    )
    .await;
    api.expect(
        400,
        reqwest::Method::POST,
        "connections",
        Some(json!({"command": "x", "timeout": -1})),
    )
    .await;
}

#[tokio::test]
async fn the_servers_of_the_configuration_file_are_listed_and_connect() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("inspect-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("mcp.json");
    std::fs::write(
        &file,
        json!({"mcpServers": {
            "reference": {"command": env!("CARGO_BIN_EXE_tessera"), "args": ["serve", "--stdio"],
                          "env": {"SECRET_TOKEN": "do-not-show"}},
            "remote": {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer do-not-show"}},
            "broken": {"command": "x", "url": "http://127.0.0.1:9/mcp"},
        }})
        .to_string(),
    )
    .unwrap();
    let inspector =
        common::start_inspect_env(&[], &[("TESSERA_CONFIG", file.to_str().unwrap())], START);
    let api = Api::of(&inspector);
    let config = api.get("config").await;
    assert_eq!(config["path"], file.to_str().unwrap());
    let names: Vec<&str> = config["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["broken", "reference", "remote"]);
    assert!(config["servers"][0]["problem"].is_string());
    assert_eq!(config["servers"][1]["env"], json!(["SECRET_TOKEN"]));
    assert_eq!(config["servers"][2]["headers"], json!(["Authorization"]));
    assert!(!config.to_string().contains("do-not-show"));
    let conn = api
        .post(
            "connections",
            json!({"server": "reference", "era": "legacy"}),
        )
        .await;
    assert_eq!(conn["serverInfo"]["name"], "tessera-reference");
    assert_eq!(conn["era"], "legacy");
    let v = api
        .expect(
            400,
            reqwest::Method::POST,
            "connections",
            Some(json!({"server": "missing"})),
        )
        .await;
    says(&v, "reference");

    // Edited from the page: one server added, then removed; the rest stays.
    api.expect(
        204,
        reqwest::Method::PUT,
        "config/servers/added",
        Some(json!({"command": "srv", "args": ["--stdio"]})),
    )
    .await;
    let names = |c: &Value| -> Vec<String> {
        c["servers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        names(&api.get("config").await),
        ["added", "broken", "reference", "remote"]
    );
    api.expect(
        400,
        reqwest::Method::PUT,
        "config/servers/bad",
        Some(json!({"command": "x", "url": "http://127.0.0.1:9/mcp"})),
    )
    .await;
    api.expect(204, reqwest::Method::DELETE, "config/servers/added", None)
        .await;
    api.expect(404, reqwest::Method::DELETE, "config/servers/added", None)
        .await;
    // `--server NAME` as the launch TARGET.
    let named = common::start_inspect_env(
        &["--server", "reference"],
        &[("TESSERA_CONFIG", file.to_str().unwrap())],
        START,
    );
    let events = events_until(&Api::of(&named), |ev| {
        ev.iter()
            .any(|e| e["type"] == "connection" && e["state"] == "connected")
    })
    .await;
    let connected = events.iter().find(|e| e["state"] == "connected").unwrap();
    assert_eq!(connected["serverInfo"]["name"], "tessera-reference");
    let kept: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(
        kept["mcpServers"]["reference"]["env"]["SECRET_TOKEN"],
        "do-not-show"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn the_roots_given_at_connect_answer_the_server() {
    let inspector = start_inspect(&[], START);
    let api = Api::of(&inspector);
    for era in ["legacy", "modern"] {
        let id = api
            .post(
                "connections",
                json!({"command": env!("CARGO_BIN_EXE_tessera"), "args": ["serve", "--stdio"],
                       "era": era, "roots": ["file:///tmp/inspected-project"]}),
            )
            .await["id"]
            .as_u64()
            .unwrap();
        let r = api
            .post(
                &format!("connections/{id}/tools/call"),
                json!({"name": "test_input_required_result_list_roots"}),
            )
            .await;
        let shown = r["result"].to_string();
        assert!(
            shown.contains("file:///tmp/inspected-project"),
            "{era}: {shown}"
        );
    }
    // Roots are file:// URIs.
    let v = api
        .expect(
            400,
            reqwest::Method::POST,
            "connections",
            Some(
                json!({"command": env!("CARGO_BIN_EXE_tessera"), "args": ["serve", "--stdio"],
                        "roots": ["https://example.com/"]}),
            ),
        )
        .await;
    says(&v, "file://");
}

#[tokio::test]
async fn a_stdio_servers_stderr_is_on_the_console() {
    let inspector = start_inspect(&[], START);
    let api = Api::of(&inspector);
    let script = format!(
        "echo 'starting up' >&2; exec '{}' serve --stdio",
        env!("CARGO_BIN_EXE_tessera")
    );
    let id = api
        .post(
            "connections",
            json!({"command": "sh", "args": ["-c", script]}),
        )
        .await["id"]
        .as_u64()
        .unwrap();
    let events = events_until(&api, |ev| {
        ev.iter()
            .any(|e| e["type"] == "console" && e["line"] == "starting up")
    })
    .await;
    let line = events.iter().find(|e| e["type"] == "console").unwrap();
    assert_eq!(line["connection"], id);
    assert_eq!(line["cut"], false);
}
