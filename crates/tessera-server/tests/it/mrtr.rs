//! Asking the client for input: multi round-trip requests (2026-07-28) and
//! server-to-client requests (legacy), from the same handler code.

use std::time::Duration;

use serde_json::{Value, json};
use tessera_server::{RequestContext, Server, tool};
use tessera_testkit::pair::serve_raw;
use tessera_types::{ElicitRequestParams, JsonObject};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

fn form(message: &str, prop: &str) -> ElicitRequestParams {
    serde_json::from_value(json!({
        "message": message,
        "requestedSchema": {"type": "object", "properties": {prop: {"type": "string"}}, "required": [prop]}
    }))
    .unwrap()
}

fn answer(ctx_answer: &tessera_types::ElicitResult, prop: &str) -> String {
    serde_json::to_value(ctx_answer).unwrap()["content"][prop]
        .as_str()
        .unwrap_or("?")
        .to_owned()
}

async fn two_questions(ctx: RequestContext) -> Result<String, String> {
    let a = ctx
        .elicit_as("name", form("Name?", "name"))
        .await
        .map_err(|e| e.to_string())?;
    let b = ctx
        .elicit_as("color", form("Color?", "color"))
        .await
        .map_err(|e| e.to_string())?;
    Ok(format!(
        "{} likes {}",
        answer(&a, "name"),
        answer(&b, "color")
    ))
}

async fn concurrent(ctx: RequestContext) -> Result<String, String> {
    let (a, r) = tokio::join!(ctx.elicit_with(form("Name?", "name")), ctx.roots());
    let a = a.map_err(|e| e.to_string())?;
    let r = r.map_err(|e| e.to_string())?;
    Ok(format!(
        "{} with {} roots",
        answer(&a, "name"),
        r.roots.len()
    ))
}

fn server() -> Server {
    Server::builder()
        .tool(tool("two_questions").handler(two_questions))
        .tool(tool("concurrent").handler(concurrent))
        .build()
        .unwrap()
}

/// A raw line peer over an in-memory pipe.
struct Wire {
    write: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    read: BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>,
}

impl Wire {
    fn start(server: Server) -> Wire {
        let (read, write) = serve_raw(&server, 1 << 20);
        Wire {
            write,
            read: BufReader::new(read),
        }
    }

    async fn send(&mut self, v: Value) {
        let mut line = serde_json::to_vec(&v).unwrap();
        line.push(b'\n');
        self.write.write_all(&line).await.unwrap();
    }

    async fn recv(&mut self) -> Value {
        let mut line = String::new();
        tokio::time::timeout(Duration::from_secs(10), self.read.read_line(&mut line))
            .await
            .expect("an answer in time")
            .unwrap();
        serde_json::from_str(&line).unwrap()
    }
}

fn modern_call(id: i64, tool: &str, caps: Value, extra: Value) -> Value {
    let mut params = json!({
        "name": tool,
        "arguments": {},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": caps
        }
    });
    if let (Value::Object(p), Value::Object(e)) = (&mut params, extra) {
        p.extend(e);
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

fn elicit_accept(prop: &str, value: &str) -> Value {
    json!({"action": "accept", "content": {prop: value}})
}

#[tokio::test]
async fn modern_rounds_resume_the_handler() {
    let mut w = Wire::start(server());
    let caps = json!({"elicitation": {}});
    w.send(modern_call(1, "two_questions", caps.clone(), json!({})))
        .await;
    let r1 = w.recv().await;
    let res = &r1["result"];
    assert_eq!(res["resultType"], "input_required", "{r1}");
    assert_eq!(res["inputRequests"]["name"]["method"], "elicitation/create");
    let state1 = res["requestState"].as_str().unwrap().to_owned();

    w.send(modern_call(
        2,
        "two_questions",
        caps.clone(),
        json!({"inputResponses": {"name": elicit_accept("name", "Ada")}, "requestState": state1}),
    ))
    .await;
    let r2 = w.recv().await;
    let res = &r2["result"];
    assert_eq!(res["resultType"], "input_required", "{r2}");
    assert!(
        res["inputRequests"].get("name").is_none(),
        "answered questions are not asked again"
    );
    assert_eq!(
        res["inputRequests"]["color"]["method"],
        "elicitation/create"
    );
    let state2 = res["requestState"].as_str().unwrap().to_owned();
    assert_ne!(state1, state2);

    // The last round needs only the new answer: earlier ones travel in the state.
    w.send(modern_call(
        3,
        "two_questions",
        caps,
        json!({"inputResponses": {"color": elicit_accept("color", "green")}, "requestState": state2}),
    ))
    .await;
    let r3 = w.recv().await;
    assert_eq!(r3["id"], 3);
    assert_eq!(r3["result"]["resultType"], "complete");
    assert_eq!(r3["result"]["content"][0]["text"], "Ada likes green");
}

#[tokio::test]
async fn concurrent_questions_go_in_one_result() {
    let mut w = Wire::start(server());
    let caps = json!({"elicitation": {}, "roots": {}});
    w.send(modern_call(1, "concurrent", caps.clone(), json!({})))
        .await;
    let r = w.recv().await;
    let reqs = r["result"]["inputRequests"].as_object().unwrap().clone();
    assert_eq!(reqs.len(), 2, "{r}");
    let methods: Vec<&str> = reqs
        .values()
        .map(|v| v["method"].as_str().unwrap())
        .collect();
    assert!(methods.contains(&"elicitation/create") && methods.contains(&"roots/list"));
    let mut responses = JsonObject::new();
    for (k, v) in &reqs {
        let a = if v["method"] == "roots/list" {
            json!({"roots": [{"uri": "file:///a"}, {"uri": "file:///b"}]})
        } else {
            elicit_accept("name", "Lin")
        };
        responses.insert(k.clone(), a);
    }
    let state = r["result"]["requestState"].clone();
    w.send(modern_call(
        2,
        "concurrent",
        caps,
        json!({"inputResponses": responses, "requestState": state}),
    ))
    .await;
    let r = w.recv().await;
    assert_eq!(r["result"]["content"][0]["text"], "Lin with 2 roots", "{r}");
}

#[tokio::test]
async fn tampered_or_misapplied_state_is_refused() {
    let mut w = Wire::start(server());
    let caps = json!({"elicitation": {}, "roots": {}});
    w.send(modern_call(1, "two_questions", caps.clone(), json!({})))
        .await;
    let state = w.recv().await["result"]["requestState"]
        .as_str()
        .unwrap()
        .to_owned();

    let tampered = format!("{state}-TAMPERED");
    w.send(modern_call(
        2,
        "two_questions",
        caps.clone(),
        json!({"inputResponses": {"name": elicit_accept("name", "x")}, "requestState": tampered}),
    ))
    .await;
    let r = w.recv().await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(r["id"], 2);

    // A state issued for one tool is no good for another.
    w.send(modern_call(
        3,
        "concurrent",
        caps.clone(),
        json!({"requestState": state.clone()}),
    ))
    .await;
    assert_eq!(w.recv().await["error"]["code"], -32602);

    // Not a string.
    w.send(modern_call(
        4,
        "two_questions",
        caps.clone(),
        json!({"requestState": 7}),
    ))
    .await;
    assert_eq!(w.recv().await["error"]["code"], -32602);

    // inputResponses must be an object of objects.
    w.send(modern_call(
        5,
        "two_questions",
        caps,
        json!({"inputResponses": {"name": 3}}),
    ))
    .await;
    assert_eq!(w.recv().await["error"]["code"], -32602);
}

#[tokio::test]
async fn missing_answers_are_asked_again() {
    let mut w = Wire::start(server());
    let caps = json!({"elicitation": {}});
    w.send(modern_call(1, "two_questions", caps.clone(), json!({})))
        .await;
    let state = w.recv().await["result"]["requestState"].clone();
    w.send(modern_call(
        2,
        "two_questions",
        caps,
        json!({"inputResponses": {"unrelated": {"x": 1}}, "requestState": state}),
    ))
    .await;
    let r = w.recv().await;
    assert_eq!(r["result"]["resultType"], "input_required", "{r}");
    assert!(r["result"]["inputRequests"].get("name").is_some(), "{r}");
}

#[tokio::test]
async fn undeclared_capability_is_refused_with_32021() {
    let mut w = Wire::start(server());
    w.send(modern_call(
        1,
        "concurrent",
        json!({"elicitation": {}}),
        json!({}),
    ))
    .await;
    let r = w.recv().await;
    assert_eq!(r["error"]["code"], -32021, "{r}");
    assert!(r["error"]["data"]["requiredCapabilities"]["roots"].is_object());
}

#[tokio::test]
async fn legacy_clients_get_server_requests() {
    let mut w = Wire::start(server());
    w.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "t", "version": "1"}}}),
    )
    .await;
    assert_eq!(w.recv().await["result"]["protocolVersion"], "2025-11-25");
    w.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    w.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "two_questions", "arguments": {}}}))
        .await;
    for (prop, value) in [("name", "Ada"), ("color", "blue")] {
        let req = w.recv().await;
        assert_eq!(req["method"], "elicitation/create", "{req}");
        assert_eq!(
            req["params"]["requestedSchema"]["required"][0], prop,
            "questions come one after the other"
        );
        w.send(json!({"jsonrpc": "2.0", "id": req["id"], "result": elicit_accept(prop, value)}))
            .await;
    }
    let done = w.recv().await;
    assert_eq!(done["id"], 2);
    assert_eq!(done["result"]["content"][0]["text"], "Ada likes blue");
    assert!(
        done["result"].get("resultType").is_none(),
        "legacy results carry no resultType"
    );
}

#[tokio::test]
async fn legacy_client_without_the_capability_gets_a_tool_error() {
    let mut w = Wire::start(server());
    w.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}}),
    )
    .await;
    w.recv().await;
    w.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    w.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "two_questions", "arguments": {}}}))
        .await;
    let r = w.recv().await;
    assert_eq!(r["result"]["isError"], true, "{r}");
}
