//! The HTTP + SSE API of `tessera inspect` (docs/inspect.md), against a real
//! `tessera inspect` holding a real `tessera serve --stdio`, and its
//! security rules: the token, the Host and Origin checks, loopback binding.

mod common;

use std::process::Command;
use std::time::Duration;

use common::{Inspector, start_inspect};
use serde_json::{Value, json};

const START: Duration = Duration::from_secs(30);

/// A client of one inspector's API.
struct Api {
    http: reqwest::Client,
    base: String,
    token: String,
}

impl Api {
    fn of(i: &Inspector) -> Api {
        Api {
            http: reqwest::Client::new(),
            base: i.base.clone(),
            token: i.token.clone(),
        }
    }

    async fn send(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> (u16, Value) {
        let mut r = self
            .http
            .request(method, format!("{}/api/{path}", self.base))
            .bearer_auth(&self.token);
        if let Some(b) = body {
            r = r.json(&b);
        }
        let resp = r.send().await.expect("the inspector answers");
        let status = resp.status().as_u16();
        let text = resp.text().await.unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    async fn get(&self, path: &str) -> Value {
        let (s, v) = self.send(reqwest::Method::GET, path, None).await;
        assert_eq!(s, 200, "GET {path}: {v}");
        v
    }

    async fn post(&self, path: &str, body: Value) -> Value {
        let (s, v) = self.send(reqwest::Method::POST, path, Some(body)).await;
        assert_eq!(s, 200, "POST {path}: {v}");
        v
    }

    /// Connects to `tessera serve --stdio` in `era`.
    async fn connect_reference(&self, era: &str) -> Value {
        self.post(
            "connections",
            json!({"command": env!("CARGO_BIN_EXE_tessera"), "args": ["serve", "--stdio"], "era": era}),
        )
        .await
    }
}

/// The journal's event stream, read until `done` holds for the events so
/// far (or the deadline passes, which fails the test).
async fn events_until(api: &Api, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let mut resp = api
        .http
        .get(format!("{}/api/events?token={}", api.base, api.token))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let mut buf = String::new();
    let mut events = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let chunk = tokio::time::timeout_at(deadline, resp.chunk())
            .await
            .unwrap_or_else(|_| panic!("the events never matched; got {events:#?}"))
            .unwrap()
            .expect("the stream stays open");
        buf.push_str(std::str::from_utf8(&chunk).unwrap());
        while let Some(end) = buf.find("\n\n") {
            let block: String = buf.drain(..end + 2).collect();
            let is_message = !block.lines().any(|l| l.starts_with("event:"));
            for line in block.lines() {
                if let Some(d) = line.strip_prefix("data:") {
                    if is_message {
                        events.push(serde_json::from_str(d.trim()).unwrap());
                    }
                }
            }
        }
        if done(&events) {
            return events;
        }
    }
}

fn protocol_methods(events: &[Value], dir: &str) -> Vec<String> {
    events
        .iter()
        .filter(|e| e["type"] == "protocol" && e["dir"] == dir)
        .filter_map(|e| e["message"]["method"].as_str().map(str::to_owned))
        .collect()
}

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
    let (s, v) = api
        .send(
            reqwest::Method::POST,
            &format!("connections/{id}/request"),
            Some(json!({"method": "initialize", "params": {}})),
        )
        .await;
    assert_eq!(s, 400, "{v}");

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
    let (s, _) = api
        .send(reqwest::Method::DELETE, &format!("connections/{id}"), None)
        .await;
    assert_eq!(s, 204);
    assert_eq!(api.get("connections").await["connections"], json!([]));
    let (s, v) = api
        .send(
            reqwest::Method::GET,
            &format!("connections/{id}/tools"),
            None,
        )
        .await;
    assert_eq!(s, 404, "{v}");
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
    let (s, v) = api
        .send(
            reqwest::Method::POST,
            &format!("connections/{id}/calls/long-1/cancel"),
            None,
        )
        .await;
    assert_eq!(s, 204, "{v}");
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
    let (s, _) = api
        .send(
            reqwest::Method::POST,
            &format!("connections/{id}/calls/long-1/cancel"),
            None,
        )
        .await;
    assert_eq!(s, 404);
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
    let (s, v) = api
        .send(
            reqwest::Method::POST,
            &format!("connections/{id}/logging/level"),
            Some(json!({"level": "loud"})),
        )
        .await;
    assert_eq!(s, 400);
    assert!(
        v["error"]["message"].as_str().unwrap().contains("loud"),
        "{v}"
    );
    let (s, v) = api
        .send(
            reqwest::Method::POST,
            "connections",
            Some(json!({"url": "http://127.0.0.1:1/mcp", "command": "x"})),
        )
        .await;
    assert_eq!(s, 400, "{v}");
    // A body of the wrong shape is refused the same way, saying why.
    let (s, v) = api
        .send(
            reqwest::Method::POST,
            &format!("connections/{id}/tools/call"),
            Some(json!({"nam": "echo"})),
        )
        .await;
    assert_eq!(s, 422, "{v}");
    assert!(
        v["error"]["message"].as_str().unwrap().contains("nam"),
        "{v}"
    );
}

#[tokio::test]
async fn the_token_host_and_origin_are_checked() {
    let inspector = start_inspect(&[], START);
    let http = reqwest::Client::new();
    let url = format!("{}/api/connections", inspector.base);
    let status = |r: reqwest::Response| r.status().as_u16();

    // Missing token.
    let r = http.get(&url).send().await.unwrap();
    assert_eq!(status(r), 401);
    // Also for the event stream.
    let r = http
        .get(format!("{}/api/events", inspector.base))
        .send()
        .await
        .unwrap();
    assert_eq!(status(r), 401);
    // Wrong token (header or query).
    let r = http
        .get(&url)
        .bearer_auth("0".repeat(32))
        .send()
        .await
        .unwrap();
    assert_eq!(status(r), 401);
    let r = http
        .get(format!("{}/api/events?token=nope", inspector.base))
        .send()
        .await
        .unwrap();
    let s = r.status().as_u16();
    let body = r.text().await.unwrap();
    assert_eq!(s, 401);
    assert!(body.contains("wrong token"), "{body}");
    // The right token.
    let ok = http
        .get(&url)
        .bearer_auth(&inspector.token)
        .send()
        .await
        .unwrap();
    assert_eq!(status(ok), 200);
    // A foreign Origin, even with the token.
    let r = http
        .get(&url)
        .bearer_auth(&inspector.token)
        .header("Origin", "http://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(status(r), 403);
    // The inspector's own origin is fine.
    let r = http
        .post(&url)
        .bearer_auth(&inspector.token)
        .header("Origin", &inspector.base)
        .json(&json!({"command": ""}))
        .send()
        .await
        .unwrap();
    assert_eq!(status(r), 400);
    // A rebound name (DNS rebinding): refused even for the page.
    let port = inspector.base.rsplit(':').next().unwrap();
    let r = http
        .get(format!("{}/", inspector.base))
        .header("Host", format!("evil.example:{port}"))
        .send()
        .await
        .unwrap();
    assert_eq!(status(r), 403);
    // The page itself is served (no token needed), with a strict policy.
    let r = http
        .get(format!("{}/", inspector.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let csp = r.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(csp.contains("script-src 'self'"), "{csp}");
    assert!(r.text().await.unwrap().contains("tessera inspect"));
}

#[test]
fn a_non_loopback_host_is_refused_naming_the_flag() {
    let out = Command::new(env!("CARGO_BIN_EXE_tessera"))
        .args(["inspect", "--host", "0.0.0.0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--host") && err.contains("--dangerously-bind-all"),
        "{err}"
    );
}

/// Waits for the next question a server asks, and returns it.
async fn next_ask(api: &Api, after: u64) -> Value {
    let events = events_until(api, |ev| {
        ev.iter()
            .any(|e| e["type"] == "ask" && e["ask"].as_u64() > Some(after))
    })
    .await;
    events
        .into_iter()
        .find(|e| e["type"] == "ask" && e["ask"].as_u64() > Some(after))
        .unwrap()
}

#[tokio::test]
async fn the_page_answers_sampling_and_elicitation_and_exports_the_transcript() {
    let inspector = start_inspect(&[], START);
    let api = Api::of(&inspector);
    let mut seen = 0;
    for era in ["modern", "legacy"] {
        let id = api.connect_reference(era).await["id"].as_u64().unwrap();
        let last = api.get("asks").await["asks"].as_array().unwrap().len() as u64;
        assert_eq!(last, 0);
        let call = |name: &'static str, arguments: Value| {
            let api = Api::of(&inspector);
            tokio::spawn(async move {
                api.send(
                    reqwest::Method::POST,
                    &format!("connections/{id}/tools/call"),
                    Some(json!({"name": name, "arguments": arguments})),
                )
                .await
            })
        };
        // Sampling: the page replies as the model.
        let sampled = call("test_sampling", json!({"prompt": "Say hi"}));
        let ask = next_ask(&api, seen).await;
        assert_eq!(ask["kind"], "sampling", "{ask}");
        assert_eq!(ask["connection"], id);
        let n = ask["ask"].as_u64().unwrap();
        assert_eq!(api.get("asks").await["asks"][0]["ask"], n);
        let (s, v) = api
            .send(
                reqwest::Method::POST,
                &format!("asks/{n}"),
                Some(
                    json!({"reply": {"role": "assistant", "model": "m", "stopReason": "endTurn",
                                      "content": {"type": "text", "text": "hi from the page"}}}),
                ),
            )
            .await;
        assert_eq!(s, 204, "{v}");
        let (_, r) = sampled.await.unwrap();
        assert_eq!(
            r["result"]["content"][0]["text"], "LLM response: hi from the page",
            "{era}"
        );
        // Elicitation: the form's answer, then a decline.
        let elicited = call("test_elicitation", json!({"message": "Who are you?"}));
        let ask = next_ask(&api, n).await;
        assert_eq!(ask["kind"], "elicitation");
        assert_eq!(ask["message"], "Who are you?");
        assert_eq!(
            ask["requestedSchema"]["required"],
            json!(["username", "email"])
        );
        let n = ask["ask"].as_u64().unwrap();
        let (s, _) = api
            .send(
                reqwest::Method::POST,
                &format!("asks/{n}"),
                Some(json!({"reply": {"action": "accept",
                                      "content": {"username": "ada", "email": "ada@example.com"}}})),
            )
            .await;
        assert_eq!(s, 204);
        let text = elicited.await.unwrap().1["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(
            text.contains("action=accept") && text.contains("ada@example.com"),
            "{text}"
        );
        let rejected = call("test_sampling", json!({"prompt": "again"}));
        let n = next_ask(&api, n).await["ask"].as_u64().unwrap();
        seen = n;
        api.send(
            reqwest::Method::POST,
            &format!("asks/{n}"),
            Some(json!({"reject": "not now"})),
        )
        .await;
        // Legacy: the tool reports the refusal; 2026-07-28: the call fails with it.
        let (_, r) = rejected.await.unwrap();
        let shown = r.to_string();
        assert!(shown.contains("not now"), "{era}: {shown}");
        // Answering twice: the question is gone.
        let (s, _) = api
            .send(
                reqwest::Method::POST,
                &format!("asks/{n}"),
                Some(json!({"reject": "again"})),
            )
            .await;
        assert_eq!(s, 404);
        let (s, _) = api
            .send(reqwest::Method::DELETE, &format!("connections/{id}"), None)
            .await;
        assert_eq!(s, 204);
    }
    // The transcript: every event, the messages among them.
    let resp = reqwest::get(format!(
        "{}/api/transcript?token={}",
        inspector.base, inspector.token
    ))
    .await
    .unwrap();
    assert!(
        resp.headers()["content-disposition"]
            .to_str()
            .unwrap()
            .contains("attachment")
    );
    let t: Value = resp.json().await.unwrap();
    assert_eq!(t["format"], "tessera-inspect-transcript");
    let events = t["events"].as_array().unwrap();
    assert!(protocol_methods(events, "in").contains(&"sampling/createMessage".to_string()));
    assert!(events.iter().any(|e| e["type"] == "ask"));
}

#[tokio::test]
async fn a_tool_call_as_a_task_is_followed_to_its_end_or_cancelled() {
    let inspector = start_inspect(&[], START);
    let api = Api::of(&inspector);
    for era in ["legacy", "modern"] {
        let conn = api
            .post(
                "connections",
                json!({"command": env!("CARGO_BIN_EXE_tessera"), "args": ["serve", "--stdio"],
                       "era": era, "tasks": true}),
            )
            .await;
        assert_eq!(conn["tasksDeclared"], true);
        let id = conn["id"].as_u64().unwrap();
        let started = api
            .post(
                &format!("connections/{id}/tools/call"),
                json!({"name": "sleep", "arguments": {"ms": 200}, "task": true}),
            )
            .await;
        let task = started["task"]["taskId"].as_str().unwrap().to_owned();
        let events = events_until(&api, |ev| {
            ev.iter()
                .any(|e| e["type"] == "taskResult" && e["taskId"] == task.as_str())
        })
        .await;
        let end = events
            .iter()
            .find(|e| e["type"] == "taskResult" && e["taskId"] == task.as_str())
            .unwrap();
        assert_eq!(end["connection"], id);
        assert_eq!(
            end["result"]["content"][0]["text"], "slept 200 ms",
            "{era}: {end}"
        );
        assert!(
            events.iter().any(|e| e["type"] == "task"
                && e["taskId"] == task.as_str()
                && e["status"] == "completed"),
            "{era}"
        );
        // A long one, cancelled.
        let started = api
            .post(
                &format!("connections/{id}/tools/call"),
                json!({"name": "sleep", "arguments": {"ms": 60000}, "task": true}),
            )
            .await;
        let long = started["task"]["taskId"].as_str().unwrap().to_owned();
        let listed = api.get(&format!("connections/{id}/tasks")).await;
        assert!(
            listed["tasks"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t["taskId"] == long.as_str()),
            "{listed}"
        );
        let (s, v) = api
            .send(
                reqwest::Method::POST,
                &format!("connections/{id}/tasks/{long}/cancel"),
                None,
            )
            .await;
        assert_eq!(s, 204, "{v}");
        let events = events_until(&api, |ev| {
            ev.iter()
                .any(|e| e["type"] == "taskResult" && e["taskId"] == long.as_str())
        })
        .await;
        assert!(
            events.iter().any(|e| e["type"] == "task"
                && e["taskId"] == long.as_str()
                && e["status"] == "cancelled"),
            "{era}: {events:#?}"
        );
        let (s, _) = api
            .send(
                reqwest::Method::POST,
                &format!("connections/{id}/tasks/{long}/cancel"),
                None,
            )
            .await;
        assert_eq!(s, 404);
        // The server's own list: 2025-11-25 has tasks/list, the extension has none.
        let (s, v) = api
            .send(
                reqwest::Method::GET,
                &format!("connections/{id}/server-tasks"),
                None,
            )
            .await;
        if era == "legacy" {
            assert_eq!(s, 200, "{v}");
            assert!(
                v["tasks"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|t| t["taskId"] == task.as_str()),
                "{v}"
            );
        } else {
            assert_eq!(s, 409, "{v}");
        }
    }
}

#[tokio::test]
async fn resource_subscriptions_in_both_eras() {
    let inspector = start_inspect(&[], START);
    let api = Api::of(&inspector);
    for era in ["legacy", "modern"] {
        let id = api.connect_reference(era).await["id"].as_u64().unwrap();
        let uri = "test://watched-resource";
        let (s, v) = api
            .send(
                reqwest::Method::POST,
                &format!("connections/{id}/resources/subscribe"),
                Some(json!({"uri": uri})),
            )
            .await;
        assert_eq!(s, 204, "{era}: {v}");
        let listed = api.get(&format!("connections/{id}/resources")).await;
        assert_eq!(listed["subscribed"], json!([uri]));
        api.post(
            &format!("connections/{id}/tools/call"),
            json!({"name": "test_trigger_resource_update", "arguments": {"uri": uri}}),
        )
        .await;
        events_until(&api, |ev| {
            ev.iter()
                .any(|e| e["type"] == "changed" && e["connection"] == id && e["uri"] == uri)
        })
        .await;
        let (s, _) = api
            .send(
                reqwest::Method::POST,
                &format!("connections/{id}/resources/unsubscribe"),
                Some(json!({"uri": uri})),
            )
            .await;
        assert_eq!(s, 204);
        let listed = api.get(&format!("connections/{id}/resources")).await;
        assert_eq!(listed["subscribed"], json!([]));
    }
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
    let (s, v) = api
        .send(
            reqwest::Method::POST,
            "connections",
            Some(
                json!({"command": env!("CARGO_BIN_EXE_tessera"), "args": ["serve", "--stdio"],
                        "roots": ["https://example.com/"]}),
            ),
        )
        .await;
    assert_eq!(s, 400, "{v}");
    assert!(
        v["error"]["message"].as_str().unwrap().contains("file://"),
        "{v}"
    );
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
    let (s, v) = api
        .send(
            reqwest::Method::POST,
            "connections",
            Some(json!({"server": "missing"})),
        )
        .await;
    assert_eq!(s, 400);
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("reference"),
        "{v}"
    );
    let _ = std::fs::remove_dir_all(&dir);
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
    let (s, v) = api
        .send(
            reqwest::Method::POST,
            &format!("connections/{id}/tools/call"),
            Some(json!({"name": "slow_compute", "arguments": {"seconds": 5}})),
        )
        .await;
    assert_eq!(s, 504, "{v}");
    let (s, _) = api
        .send(
            reqwest::Method::POST,
            "connections",
            Some(json!({"command": "x", "timeout": -1})),
        )
        .await;
    assert_eq!(s, 400);
}
