//! An aggregator's only upstream configured with `"prefix": false`: its
//! tools, prompts, resources and templates are listed, called, read,
//! completed and subscribed to under their own names and URIs, its resource
//! updates name the upstream's URI, the gateway's rules, rate limits and
//! tool overrides apply to those names, and a configuration that would put it beside another
//! upstream is refused (at start, on `add_upstream`, on `reconfigure`)
//! while going from several upstreams to it in one step works.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use tessera_client::{Client, ClientEvent, EventStream, ListenStream};
use tessera_http::HttpClientTransport;
use tessera_proxy::{
    Aggregator, RateLimits, UpstreamConfig, UpstreamOptions, UpstreamSpec, parse_config,
};
use tessera_server::{Server, prompt, resource, resource_template, tool};
use tessera_testkit::bounded;
use tessera_types::{ProtocolVersion, SubscriptionFilter};
use tokio_util::sync::CancellationToken;

use crate::caller_credentials::{RECORDER_INSTRUCTIONS, Rig, Speaks, exchange_auth};

async fn hi() -> &'static str {
    "hi"
}

async fn hidden() -> &'static str {
    "secret"
}

async fn item(uri: tessera_server::Uri) -> String {
    format!("item {}", uri.0)
}

async fn ids(req: tessera_server::CompletionRequest) -> Vec<String> {
    req.complete_from(["7", "70", "8"])
}

/// What the upstream tells its clients.
const INSTRUCTIONS: &str = "Call greet to be greeted; read mem://doc first.";

/// Serves a server with tools `greet` and `secret`, prompt `hello`,
/// resource `mem://doc` and template `mem://items/{id}`, and instructions
/// naming them ([`INSTRUCTIONS`]); its URL, and the
/// server (to tell of changes).
async fn serve(stop: &CancellationToken) -> (String, Server) {
    let server = Server::builder()
        .name_version("plain", "1.0.0")
        .instructions(INSTRUCTIONS)
        .tool(tool("greet").description("Says hi").handler(hi))
        .tool(tool("secret").description("Denied").handler(hidden))
        .prompt(prompt("hello").handler(hi))
        .resource(resource("mem://doc", "doc").handler(|| async { "a doc" }))
        .resource_template(resource_template("mem://items/{id}", "item").handler(item))
        .complete_template_variable("mem://items/{id}", "id", ids)
        .build()
        .expect("builds");
    (crate::bridge::serve(server.clone(), stop).await, server)
}

/// Serves `agg` over HTTP; its URL.
async fn front(agg: &Aggregator, stop: &CancellationToken) -> String {
    crate::bridge::serve(agg.clone(), stop).await
}

async fn client(url: &str, version: ProtocolVersion) -> Client {
    bounded(
        "connecting",
        Client::builder("unprefixed-test", "1.0")
            .protocol_version(version)
            .connect_transport(HttpClientTransport::new(url).expect("transport")),
    )
    .await
    .expect("connects")
}

/// The aggregator of the upstream at `url` as `up` with `"prefix": false`,
/// `greet` renamed `wave`, a rule denying `secret`, and a limit of two
/// `prompts/get` of `hello` an hour.
async fn start(url: &str) -> Aggregator {
    let doc = json!({
        "mcpServers": {"up": {"url": url, "prefix": false,
                              "toolOverrides": {"greet": {"name": "wave"}}}},
        "gateway": {"rules": [
            {"name": "no secrets", "tools": "secret", "effect": "deny"},
            {"effect": "allow"}
        ], "rateLimits": [
            {"name": "hello twice", "prompts": "hello", "requests": 2, "perSeconds": 3600}
        ]}
    });
    let config = parse_config(&doc.to_string(), |_| None).expect("a good file");
    let agg = Aggregator::start(config.servers, UpstreamOptions::default()).expect("starts");
    agg.set_policy(config.gateway.policy);
    agg.set_rate_limits(RateLimits::new(config.gateway.rate_limits));
    assert!(bounded("up connects", agg.wait_connected("up", true)).await);
    agg
}

async fn text_of_call(c: &Client, name: &str) -> String {
    let r = bounded("tools/call", c.call_tool(name, json!({})))
        .await
        .expect("called");
    r.content[0].as_text().expect("text").to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_only_upstream_is_listed_and_used_under_its_own_names() {
    let stop = CancellationToken::new();
    let (url, _server) = serve(&stop).await;
    let agg = start(&url).await;
    let proxy = front(&agg, &stop).await;
    for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
        let c = client(&proxy, version).await;
        let tools: Vec<String> = bounded("tools", c.list_tools())
            .await
            .expect("lists")
            .into_iter()
            .map(|t| t.name)
            .collect();
        // Renamed by its override, `secret` denied by the rule on its own
        // (unprefixed) name.
        assert_eq!(tools, ["wave"], "{version}");
        assert_eq!(text_of_call(&c, "wave").await, "hi", "{version}");
        for refused in ["secret", "greet", "up__wave"] {
            let e = bounded("refused call", c.call_tool(refused, json!({})))
                .await
                .expect_err(refused);
            assert_eq!(e.remote().map(|r| r.code), Some(-32602), "{refused}: {e}");
        }
        let prompts: Vec<String> = bounded("prompts", c.list_prompts())
            .await
            .expect("lists")
            .into_iter()
            .map(|p| p.name)
            .collect();
        assert_eq!(prompts, ["hello"], "{version}");
        bounded("prompts/get", c.get_prompt("hello", BTreeMap::new()))
            .await
            .expect("got");
        let resources: Vec<String> = bounded("resources", c.list_resources())
            .await
            .expect("lists")
            .into_iter()
            .map(|r| r.uri)
            .collect();
        assert_eq!(resources, ["mem://doc"], "{version}");
        let templates: Vec<String> = bounded("templates", c.list_resource_templates())
            .await
            .expect("lists")
            .into_iter()
            .map(|t| t.uri_template)
            .collect();
        assert_eq!(templates, ["mem://items/{id}"], "{version}");
        let read = bounded("resources/read", c.read_resource("mem://items/7"))
            .await
            .expect("read");
        let read = serde_json::to_value(&read.contents[0]).expect("serialises");
        assert_eq!(read["uri"], json!("mem://items/7"), "{version}");
        assert_eq!(read["text"], json!("item mem://items/7"), "{version}");
        let asked: tessera_types::CompleteRequestParams = serde_json::from_value(json!({
            "ref": {"type": "ref/resource", "uri": "mem://items/{id}"},
            "argument": {"name": "id", "value": "7"}
        }))
        .unwrap();
        let done = bounded("completion/complete", c.complete(asked))
            .await
            .expect("completed");
        assert_eq!(done.completion.values, ["7", "70"], "{version}");
        c.close().await;
    }
    // The limit on the unprefixed prompt: twice allowed (once per version
    // above), then refused.
    let c = client(&proxy, ProtocolVersion::V2025_11_25).await;
    let e = bounded("prompts/get", c.get_prompt("hello", BTreeMap::new()))
        .await
        .expect_err("over the limit");
    let data = e.remote().and_then(|r| r.data.clone()).expect("data");
    assert_eq!(data["limit"], json!("rateLimits[0] \"hello twice\""), "{e}");
    c.close().await;
    agg.close();
    stop.cancel();
}

/// The events of `events` until the update of `uri`.
pub(crate) async fn until_updated(events: &mut EventStream, uri: &str) {
    bounded("the resource update", async {
        loop {
            match events.recv().await {
                Some(ClientEvent::ResourceUpdated(p)) if p.uri == uri => return,
                Some(_) => {}
                None => panic!("the client closed before {uri} was updated"),
            }
        }
    })
    .await
}

/// The events of a listen `stream` until the update of `uri`.
pub(crate) async fn until_streamed(stream: &mut ListenStream, uri: &str) {
    bounded("the update on the stream", async {
        loop {
            match stream.recv().await {
                Some(ClientEvent::ResourceUpdated(p)) if p.uri == uri => return,
                Some(_) => {}
                None => panic!("the stream ended"),
            }
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resource_updates_name_the_upstreams_own_uri() {
    let stop = CancellationToken::new();
    let (url, server) = serve(&stop).await;
    let agg = start(&url).await;
    let proxy = front(&agg, &stop).await;

    // A legacy session subscribes; a 2026-07-28 one listens.
    let legacy = client(&proxy, ProtocolVersion::V2025_11_25).await;
    let mut events = legacy.events();
    bounded("subscribes", legacy.subscribe("mem://doc"))
        .await
        .expect("subscribed");
    let modern = client(&proxy, ProtocolVersion::V2026_07_28).await;
    let filter: SubscriptionFilter =
        serde_json::from_value(json!({"resourceSubscriptions": ["mem://doc"]})).unwrap();
    let mut stream = bounded("listens", modern.listen(filter))
        .await
        .expect("listens");
    assert_eq!(
        serde_json::to_value(stream.acknowledged()).unwrap(),
        json!({"resourceSubscriptions": ["mem://doc"]})
    );

    server.notify_resource_updated("mem://doc");
    until_updated(&mut events, "mem://doc").await;
    until_streamed(&mut stream, "mem://doc").await;

    legacy.close().await;
    modern.close().await;
    agg.close();
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_per_caller_upstream_goes_unprefixed_too() {
    // Token exchange, one connection per caller, and no prefixes.
    let auth = exchange_auth(None);
    let rig = Rig::start_entry(
        Speaks::LegacyOnly,
        move |up, te| json!({"url": up, "auth": auth(up, te), "prefix": false}),
    )
    .await;
    let alice = rig
        .client_speaking(&rig.token("alice", &[]), Some(ProtocolVersion::V2025_11_25))
        .await;
    let mut events = alice.events();
    let r = bounded("whoami", alice.call_tool("whoami", json!({})))
        .await
        .expect("called by its own name");
    let claims: Value = serde_json::from_str(r.content[0].as_text().unwrap()).unwrap();
    assert_eq!(claims["sub"], json!("alice"));
    bounded("subscribes", alice.subscribe("mem://doc"))
        .await
        .expect("subscribed");
    assert_eq!(rig.aggregator.caller_connections("up"), 1);
    rig.server.notify_resource_updated("mem://doc");
    until_updated(&mut events, "mem://doc").await;
    alice.close().await;
    rig.close();
}

fn entry(name: &str, url: &str, prefix: bool) -> UpstreamConfig {
    let mut e = UpstreamConfig::new(name, UpstreamSpec::http(url, Default::default()));
    e.prefix = prefix;
    e
}

async fn tool_names(c: &Client) -> Vec<String> {
    let mut t: Vec<String> = bounded("tools", c.list_tools())
        .await
        .expect("lists")
        .into_iter()
        .map(|t| t.name)
        .collect();
    t.sort();
    t
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unprefixed_upstream_is_only_ever_alone() {
    let stop = CancellationToken::new();
    let (url, _server) = serve(&stop).await;
    let e = Aggregator::start(
        vec![entry("a", &url, false), entry("b", &url, true)],
        UpstreamOptions::default(),
    )
    .expect_err("two upstreams, one unprefixed");
    assert!(
        e.to_string()
            .contains("server \"a\": prefix: false is allowed only for the only server"),
        "{e}"
    );

    let agg = Aggregator::start(
        vec![entry("a", &url, true), entry("b", &url, true)],
        UpstreamOptions::default(),
    )
    .expect("starts");
    assert!(bounded("a connects", agg.wait_connected("a", true)).await);
    assert!(bounded("b connects", agg.wait_connected("b", true)).await);
    let proxy = front(&agg, &stop).await;
    let c = client(&proxy, ProtocolVersion::V2025_11_25).await;
    assert_eq!(
        tool_names(&c).await,
        ["a__greet", "a__secret", "b__greet", "b__secret"]
    );
    // Neither one at a time nor all at once may an unprefixed upstream
    // join another: nothing changes.
    let e = agg
        .add_upstream(entry("a", &url, false))
        .expect_err("beside b");
    assert!(e.to_string().contains("prefix: false"), "{e}");
    let e = agg
        .reconfigure(
            vec![entry("a", &url, false), entry("c", &url, true)],
            |_| false,
        )
        .expect_err("beside c");
    assert!(e.to_string().contains("prefix: false"), "{e}");
    assert_eq!(agg.names(), ["a", "b"]);
    assert_eq!(
        tool_names(&c).await,
        ["a__greet", "a__secret", "b__greet", "b__secret"]
    );

    // From two to one unprefixed in one step, and back.
    let said = agg
        .reconfigure(vec![entry("a", &url, false)], |_| false)
        .expect("one upstream");
    assert_eq!(
        (said.changed, said.removed),
        (vec!["a".into()], vec!["b".into()])
    );
    assert!(bounded("a connects again", agg.wait_connected("a", true)).await);
    assert_eq!(tool_names(&c).await, ["greet", "secret"]);
    let said = agg
        .reconfigure(vec![entry("a", &url, true), entry("b", &url, true)], |_| {
            false
        })
        .expect("two upstreams");
    assert_eq!(
        (said.added, said.changed),
        (vec!["b".into()], vec!["a".into()])
    );
    assert!(bounded("a connects again", agg.wait_connected("a", true)).await);
    assert!(bounded("b connects again", agg.wait_connected("b", true)).await);
    assert_eq!(
        tool_names(&c).await,
        ["a__greet", "a__secret", "b__greet", "b__secret"]
    );
    c.close().await;
    agg.close();
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_only_unprefixed_upstreams_instructions_are_passed_on() {
    let stop = CancellationToken::new();
    let (url, _server) = serve(&stop).await;
    let instructions = |c: &Client| c.instructions().unwrap_or_default();
    // Prefixed (two upstreams): the instructions say how names are formed
    // (the upstreams' own name items by names clients do not see).
    let agg = Aggregator::start(
        vec![entry("a", &url, true), entry("b", &url, true)],
        UpstreamOptions::default(),
    )
    .expect("starts");
    assert!(bounded("a connects", agg.wait_connected("a", true)).await);
    assert!(bounded("b connects", agg.wait_connected("b", true)).await);
    let proxy = front(&agg, &stop).await;
    for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
        let c = client(&proxy, version).await;
        assert!(
            instructions(&c).starts_with("This endpoint aggregates the MCP servers a, b."),
            "{version}: {:?}",
            c.instructions()
        );
        c.close().await;
    }
    // The only upstream, shown by its own names: its own instructions, in
    // `initialize` and in `server/discover`.
    agg.reconfigure(vec![entry("a", &url, false)], |_| false)
        .expect("one upstream");
    assert!(bounded("a connects again", agg.wait_connected("a", true)).await);
    for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
        let c = client(&proxy, version).await;
        assert_eq!(instructions(&c), INSTRUCTIONS, "{version}");
        c.close().await;
    }
    agg.close();
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_per_caller_unprefixed_upstreams_instructions_are_passed_on_once_learned() {
    // Token exchange, one connection per caller, no prefixes: the
    // upstream's instructions are learned from a caller's own connection.
    let auth = exchange_auth(None);
    let rig = Rig::start_entry(
        Speaks::All,
        move |up, te| json!({"url": up, "auth": auth(up, te), "prefix": false}),
    )
    .await;
    let token = rig.token("alice", &[]);
    // No caller has reached it yet: the proxy says whom it fronts.
    for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
        let c = rig.client_speaking(&token, Some(version)).await;
        let said = c.instructions().unwrap_or_default();
        assert!(
            said.starts_with("This endpoint fronts the MCP server up;"),
            "{version}: {said:?}"
        );
        c.close().await;
    }
    assert_eq!(rig.aggregator.caller_connections("up"), 0);
    // Alice's use connects her own connection, whose handshake carries
    // the upstream's instructions: sessions begun since are told them as
    // they are (its names are the ones clients see), in `initialize` and
    // in `server/discover`.
    let alice = rig
        .client_speaking(&token, Some(ProtocolVersion::V2025_11_25))
        .await;
    bounded("whoami", alice.call_tool("whoami", json!({})))
        .await
        .expect("called by its own name");
    assert_eq!(rig.aggregator.caller_connections("up"), 1);
    for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
        let c = rig
            .client_speaking(&rig.token("bob", &[]), Some(version))
            .await;
        assert_eq!(
            c.instructions().as_deref(),
            Some(RECORDER_INSTRUCTIONS),
            "{version}"
        );
        c.close().await;
    }
    alice.close().await;
    rig.close();
}
