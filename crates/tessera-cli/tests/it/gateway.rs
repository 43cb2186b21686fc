//! `tessera proxy --config` as a gateway: three principals admitted by API
//! key, two upstreams (`tessera serve --stdio` each), and rules over claims
//! × upstream × tool/prompt/resource. Each principal's lists hold exactly
//! what the rules allow; a denied item is refused on use with the same
//! error as an item that does not exist (naming nothing else); a missing or
//! unknown key gets 401; `tessera proxy check` explains the decisions.

use crate::common;

use common::start_proxy_env;
use std::collections::BTreeSet;

use serde_json::json;
use tessera::client::Client;
use tessera::types::ProtocolVersion;
use tessera_http::HttpClientTransport;
use tessera_http::http::{HeaderMap, HeaderValue};
use tessera_testkit::bounded;

const TESSERA: &str = env!("CARGO_BIN_EXE_tessera");
const KEYS: [(&str, &str); 3] = [
    ("GW_TEST_ALICE", "alice-key-0123456789abcdef"),
    ("GW_TEST_BOB", "bob-key-0123456789abcdef"),
    ("GW_TEST_CAROL", "carol-key-0123456789abcdef"),
];

/// The configuration: two upstreams and the rules of the matrix.
fn config() -> serde_json::Value {
    let up = json!({"command": TESSERA, "args": ["serve", "--stdio"]});
    json!({
        "mcpServers": {"alpha": up, "beta": up},
        "gateway": {
            "apiKeys": [
                {"keyEnv": KEYS[0].0, "principal": {"sub": "alice", "groups": ["eng"]}},
                {"keyEnv": KEYS[1].0, "principal": {"sub": "bob", "groups": ["sales"]}},
                {"keyEnv": KEYS[2].0, "principal": {"sub": "carol"}}
            ],
            "rules": [
                {"name": "no test triggers", "tools": "test_*", "effect": "deny"},
                {"name": "eng owns alpha", "when": {"groups": "eng"}, "upstreams": "alpha",
                 "effect": "allow"},
                {"name": "eng echoes on beta", "when": {"groups": "eng"}, "upstreams": "beta",
                 "tools": "echo", "effect": "allow"},
                {"name": "sales echo and prompts", "when": {"groups": "sales"},
                 "tools": "echo", "prompts": "*", "effect": "allow"}
            ],
            "rateLimits": [
                {"name": "alice on beta", "when": {"sub": "alice"}, "upstreams": "beta",
                 "requests": 3, "perSeconds": 3600}
            ]
        }
    })
}

/// A client of the proxy with API key `key`.
async fn client(url: &str, key: &str) -> Client {
    let mut h = HeaderMap::new();
    h.insert("x-api-key", HeaderValue::from_str(key).unwrap());
    let t = HttpClientTransport::with_headers(url, h).unwrap();
    bounded(
        "connecting to the gateway",
        Client::builder("gateway-test", "1.0")
            .protocol_version(ProtocolVersion::V2025_11_25)
            .connect_transport(t),
    )
    .await
    .expect("connects")
}

/// What one principal sees: tool, prompt and resource names.
async fn seen(c: &Client) -> (BTreeSet<String>, BTreeSet<String>, BTreeSet<String>) {
    let tools = bounded("tools/list", c.list_tools()).await.unwrap();
    let prompts = bounded("prompts/list", c.list_prompts()).await.unwrap();
    let resources = bounded("resources/list", c.list_resources()).await.unwrap();
    (
        tools.into_iter().map(|t| t.name).collect(),
        prompts.into_iter().map(|p| p.name).collect(),
        resources.into_iter().map(|r| r.uri).collect(),
    )
}

/// The error message of a refused `tools/call`.
async fn refused_call(c: &Client, name: &str) -> String {
    let e = bounded(name, c.call_tool(name, json!({"text": "x"})))
        .await
        .expect_err(name);
    e.remote()
        .unwrap_or_else(|| panic!("{name}: not a JSON-RPC error: {e}"))
        .message
        .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_principals_see_and_use_what_the_rules_allow() {
    let dir = std::env::temp_dir().join(format!("tessera-gateway-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("gateway.json");
    std::fs::write(&file, config().to_string()).unwrap();
    let path = file.to_str().unwrap().to_owned();
    let (_proxy, url) = tokio::task::spawn_blocking(move || {
        start_proxy_env(&["--http", "127.0.0.1:0", "--config", &path], &KEYS)
    })
    .await
    .unwrap();

    // Everything each upstream offers, as the reference server lists it.
    let direct = bounded(
        "the reference server",
        Client::builder("gateway-test", "1.0").connect_child(&tessera::client::ChildCommand::new(
            TESSERA,
            ["serve", "--stdio"],
        )),
    )
    .await
    .unwrap();
    let (all_tools, all_prompts, all_resources) = seen(&direct).await;
    direct.close().await;
    assert!(all_tools.contains("echo") && all_tools.iter().any(|t| t.starts_with("test_")));
    assert!(!all_prompts.is_empty() && !all_resources.is_empty());
    let on = |up: &str, names: &BTreeSet<String>, sep: &str, keep: &dyn Fn(&str) -> bool| {
        names
            .iter()
            .filter(|n| keep(n))
            .map(|n| format!("{up}{sep}{n}"))
            .collect::<BTreeSet<_>>()
    };
    let union = |a: BTreeSet<String>, b: BTreeSet<String>| a.union(&b).cloned().collect();

    // Alice (eng): everything of alpha but the test triggers; echo on beta.
    let alice = client(&url, KEYS[0].1).await;
    // The upstreams connect in the background: wait (bounded) until both list tools.
    bounded("both upstreams listed", async {
        loop {
            let tools = alice.list_tools().await.expect("lists");
            let has = |n: &str| tools.iter().any(|t| t.name == n);
            if has("alpha__echo") && has("beta__echo") {
                break;
            }
            tokio::task::yield_now().await;
        }
    })
    .await;
    let (tools, prompts, resources) = seen(&alice).await;
    let expected = union(
        on("alpha", &all_tools, "__", &|n| !n.starts_with("test_")),
        on("beta", &all_tools, "__", &|n| n == "echo"),
    );
    assert_eq!(tools, expected);
    assert_eq!(prompts, on("alpha", &all_prompts, "__", &|_| true));
    assert_eq!(resources, on("alpha", &all_resources, "+", &|_| true));
    let r = bounded(
        "beta__echo",
        alice.call_tool("beta__echo", json!({"text": "hi"})),
    )
    .await
    .unwrap();
    assert_eq!(r.content[0].as_text(), Some("hi"));
    let uri = resources.iter().next().unwrap().clone();
    bounded("resources/read", alice.read_resource(&uri))
        .await
        .expect("alice reads alpha's resources");

    // Bob (sales): echo on both, every prompt, no resource.
    let bob = client(&url, KEYS[1].1).await;
    let (tools, prompts, resources) = seen(&bob).await;
    assert_eq!(
        tools,
        BTreeSet::from(["alpha__echo".to_owned(), "beta__echo".to_owned()])
    );
    assert_eq!(
        prompts,
        union(
            on("alpha", &all_prompts, "__", &|_| true),
            on("beta", &all_prompts, "__", &|_| true)
        )
    );
    assert!(resources.is_empty(), "{resources:?}");
    let e = bounded("bob reads", bob.read_resource(&uri))
        .await
        .expect_err("bob may not read");
    let m = e.remote().expect("a JSON-RPC error").message.clone();
    assert!(m.contains("is available to this caller"), "{m}");

    // Carol: no rule names her, so nothing.
    let carol = client(&url, KEYS[2].1).await;
    let (tools, prompts, resources) = seen(&carol).await;
    assert!(tools.is_empty() && prompts.is_empty() && resources.is_empty());

    // Refusals: a denied tool reads as one that does not exist, and names
    // only what was asked for.
    let denied = refused_call(&alice, "alpha__test_trigger_tool_change").await;
    let missing = refused_call(&alice, "gamma__no_such_tool").await;
    assert_eq!(
        denied.replace("alpha__test_trigger_tool_change", "NAME"),
        missing.replace("gamma__no_such_tool", "NAME")
    );
    for other in all_tools
        .iter()
        .filter(|t| t.as_str() != "test_trigger_tool_change")
    {
        assert!(!denied.contains(&format!("__{other}\"")), "{denied}");
    }
    let m = refused_call(&carol, "alpha__echo").await;
    assert!(
        m.contains("\"alpha__echo\"") && m.contains("is available"),
        "{m}"
    );
    let m = refused_call(&bob, "beta__test_trigger_tool_change").await;
    assert!(m.contains("is available"), "{m}");
    for c in [alice, bob, carol] {
        c.close().await;
    }

    // No key, or an unknown one: 401 before any MCP.
    let http = reqwest::Client::new();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "x", "version": "1"}}});
    for key in [None, Some("not-a-key-0123456789")] {
        let mut b = http
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(init.to_string());
        if let Some(k) = key {
            b = b.header("x-api-key", k);
        }
        let r = bounded("an unauthenticated POST", b.send()).await.unwrap();
        assert_eq!(r.status(), 401, "{key:?}");
        assert!(r.headers().contains_key("www-authenticate"));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn check_explains_the_deciding_rule() {
    let dir = std::env::temp_dir().join(format!("tessera-gateway-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("gateway.json");
    std::fs::write(&file, config().to_string()).unwrap();
    let check = |principal: &str, item: &[&str]| {
        let out = std::process::Command::new(TESSERA)
            .args(["proxy", "check", "--config"])
            .arg(&file)
            .args(["--principal", principal])
            .args(item)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let alice = r#"{"sub":"alice","groups":["eng"]}"#;
    let (code, out, _) = check(alice, &["--tool", "alpha__echo"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("allowed by rule rules[1] \"eng owns alpha\""),
        "{out}"
    );
    assert!(out.contains("claim groups = \"eng\""), "{out}");
    let (code, out, _) = check(alice, &["--tool", "alpha__test_trigger_tool_change"]);
    assert_eq!(code, Some(4), "{out}");
    assert!(
        out.contains("denied by rule rules[0] \"no test triggers\""),
        "{out}"
    );
    let (code, out, _) = check(r#"{"sub":"carol"}"#, &["--prompt", "beta__simple_prompt"]);
    assert_eq!(code, Some(4), "{out}");
    assert!(out.contains("none of the 4 rules matches prompt"), "{out}");
    let (code, out, _) = check(
        r#"{"sub":"bob","groups":["sales"]}"#,
        &["--resource", "beta+test://static-text"],
    );
    assert_eq!(code, Some(4), "{out}");
    let (code, _, err) = check("[1]", &["--tool", "alpha__echo"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("--principal must be a JSON object"), "{err}");
    let (code, _, err) = check(alice, &["--tool", "gamma__echo"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("UPSTREAM one of alpha, beta"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn check_takes_an_unprefixed_servers_own_names() {
    let dir = std::env::temp_dir().join(format!(
        "tessera-gateway-check-plain-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("gateway.json");
    let doc = json!({
        "mcpServers": {"alpha": {"command": TESSERA, "args": ["serve", "--stdio"],
                                 "prefix": false, "toolOverrides": {"echo": {"name": "say"}}}},
        "gateway": {"rules": [
            {"name": "no test triggers", "tools": "test_*", "effect": "deny"},
            {"effect": "allow"}
        ]}
    });
    std::fs::write(&file, doc.to_string()).unwrap();
    let check = |item: &[&str]| {
        let out = std::process::Command::new(TESSERA)
            .args(["proxy", "check", "--config"])
            .arg(&file)
            .args(item)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (code, out) = check(&["--tool", "test_trigger_tool_change"]);
    assert_eq!(code, Some(4), "{out}");
    assert!(
        out.contains("denied by rule rules[0] \"no test triggers\""),
        "{out}"
    );
    // A renamed tool by the name clients see; the rules speak of the upstream's.
    let (code, out) = check(&["--tool", "say"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("the upstream's \"echo\""), "{out}");
    let (code, out) = check(&["--resource", "test://static-text"]);
    assert_eq!(code, Some(0), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `GET /healthz` and `GET /readyz` answer without an API key; `/readyz`
/// gives each upstream's state, and is 200 while one is connected.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_probes_need_no_key_and_name_each_upstream() {
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead_url = format!("http://{}/mcp", dead.local_addr().unwrap());
    drop(dead);
    let dir = std::env::temp_dir().join(format!("tessera-gateway-health-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("gateway.json");
    let doc = json!({
        "mcpServers": {
            "alive": {"command": TESSERA, "args": ["serve", "--stdio"]},
            "dead": {"url": dead_url}
        },
        "gateway": {"apiKeys": [{"keyEnv": KEYS[0].0, "principal": {"sub": "alice"}}]}
    });
    std::fs::write(&file, doc.to_string()).unwrap();
    let path = file.to_str().unwrap().to_owned();
    let (_proxy, url) = tokio::task::spawn_blocking(move || {
        start_proxy_env(&["--http", "127.0.0.1:0", "--config", &path], &KEYS)
    })
    .await
    .unwrap();
    let base = url.trim_end_matches("/mcp").to_owned();
    let http = reqwest::Client::new();
    let r = bounded("/healthz", http.get(format!("{base}/healthz")).send())
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.json::<serde_json::Value>().await.unwrap()["status"], "ok");
    // `alive` connects in the background: ask (bounded) until it has.
    let body = bounded("alive connected", async {
        loop {
            let r = http.get(format!("{base}/readyz")).send().await.unwrap();
            let status = r.status();
            let body: serde_json::Value = r.json().await.unwrap();
            if body["upstreams"]["alive"] == "connected" {
                assert_eq!(status, 200, "{body}");
                break body;
            }
            assert_eq!(status, 503, "nothing connected yet: {body}");
            tokio::task::yield_now().await;
        }
    })
    .await;
    assert_eq!(
        body,
        json!({"ready": true, "upstreams": {"alive": "connected", "dead": "reconnecting"}})
    );
    // The MCP endpoint itself still wants a key.
    let r = bounded("POST without a key", http.post(&url).body("{}").send())
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A rate limit per principal × upstream: alice's fourth call to beta
/// within the hour is refused with the delay in `data`; her calls to alpha
/// and bob's to beta are not counted against it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_limit_holds_per_principal_and_upstream() {
    let dir = std::env::temp_dir().join(format!("tessera-gateway-rate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("gateway.json");
    std::fs::write(&file, config().to_string()).unwrap();
    let path = file.to_str().unwrap().to_owned();
    let (_proxy, url) = tokio::task::spawn_blocking(move || {
        start_proxy_env(&["--http", "127.0.0.1:0", "--config", &path], &KEYS)
    })
    .await
    .unwrap();
    let alice = client(&url, KEYS[0].1).await;
    let bob = client(&url, KEYS[1].1).await;
    bounded("both upstreams listed", async {
        loop {
            let tools = alice.list_tools().await.expect("lists");
            let has = |n: &str| tools.iter().any(|t| t.name == n);
            if has("alpha__echo") && has("beta__echo") {
                break;
            }
            tokio::task::yield_now().await;
        }
    })
    .await;
    let call = |c: &Client, tool: &'static str| {
        let c = c.clone();
        async move { bounded(tool, c.call_tool(tool, json!({"text": "x"}))).await }
    };
    for _ in 0..3 {
        call(&alice, "beta__echo").await.expect("within the limit");
    }
    let e = call(&alice, "beta__echo")
        .await
        .expect_err("over the limit");
    let e = e.remote().expect("a JSON-RPC error");
    assert!(e.message.contains("rate limit"), "{}", e.message);
    let data = e.data.as_ref().expect("data");
    let ms = data["retryAfterMs"].as_u64().expect("retryAfterMs");
    assert!(
        ms > 1000 && ms <= 1_200_000,
        "a third of an hour at most: {ms}"
    );
    assert_eq!(data["limit"], "rateLimits[0] \"alice on beta\"");
    // Other upstreams, other principals: not limited.
    for _ in 0..5 {
        call(&alice, "alpha__echo")
            .await
            .expect("alpha is not limited");
        call(&bob, "beta__echo").await.expect("bob is not limited");
    }
    alice.close().await;
    bob.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// Tool overrides: a tool renamed and re-described with an argument fixed
/// by the operator (gone from the schema, and a caller's value replaced),
/// another hidden; the rules still speak of the upstream's names.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overrides_rename_describe_hide_and_fix_arguments() {
    let dir = std::env::temp_dir().join(format!("tessera-gateway-over-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("gateway.json");
    let doc = json!({
        "mcpServers": {"alpha": {"command": TESSERA, "args": ["serve", "--stdio"],
            "toolOverrides": {
                "echo": {"name": "say", "description": "Says what the operator chose",
                         "arguments": {"text": "fixed by the operator"}},
                "greet": {"hidden": true}
            }}},
        "gateway": {
            "apiKeys": [{"keyEnv": KEYS[0].0, "principal": {"sub": "alice"}}],
            "rules": [{"when": {"sub": "alice"}, "tools": ["echo", "greet", "count"],
                       "effect": "allow"}]
        }
    });
    std::fs::write(&file, doc.to_string()).unwrap();
    let path = file.to_str().unwrap().to_owned();
    let (_proxy, url) = tokio::task::spawn_blocking(move || {
        start_proxy_env(&["--http", "127.0.0.1:0", "--config", &path], &KEYS)
    })
    .await
    .unwrap();
    let alice = client(&url, KEYS[0].1).await;
    let tools = bounded("alpha listed", async {
        loop {
            let tools = alice.list_tools().await.expect("lists");
            if !tools.is_empty() {
                break tools;
            }
            tokio::task::yield_now().await;
        }
    })
    .await;
    let names: BTreeSet<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, BTreeSet::from(["alpha__say", "alpha__count"]));
    let say = tools.iter().find(|t| t.name == "alpha__say").unwrap();
    assert_eq!(
        say.description.as_deref(),
        Some("Says what the operator chose")
    );
    let schema = serde_json::to_value(&say.input_schema).unwrap();
    assert!(schema["properties"].get("text").is_none(), "{schema}");
    let r = bounded(
        "alpha__say",
        alice.call_tool("alpha__say", json!({"text": "the caller's"})),
    )
    .await
    .unwrap();
    assert_eq!(r.content[0].as_text(), Some("fixed by the operator"));
    for gone in ["alpha__echo", "alpha__greet"] {
        let m = refused_call(&alice, gone).await;
        assert!(m.contains("is available to this caller"), "{gone}: {m}");
    }
    alice.close().await;
    // `check` takes the offered name.
    let out = std::process::Command::new(TESSERA)
        .args(["proxy", "check", "--config"])
        .arg(&file)
        .args(["--principal", r#"{"sub":"alice"}"#, "--tool", "alpha__say"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("the upstream's \"echo\""), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}
