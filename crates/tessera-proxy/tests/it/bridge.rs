//! The proxy between real Tessera clients and servers, in process, over
//! loopback HTTP: every pairing of a legacy (2025-11-25) or modern
//! (2026-07-28) client with an upstream that speaks both eras, only the
//! legacy one, or only 2026-07-28.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde::Deserialize;
use tessera_client::{CallOptions, Client, ClientEvent, FormRequest};
use tessera_http::{HttpClientTransport, McpHttp};
use tessera_proto::EngineConfig;
use tessera_proxy::{Proxy, UpstreamOptions, UpstreamSpec};
use tessera_server::{Args, RequestContext, Server, resource, tool};
use tessera_testkit::bounded;
use tessera_types::{
    ElicitRequestParams, ElicitResult, ElicitValue, ErrorObject, LoggingLevel, ProtocolVersion,
};
use tokio_util::sync::CancellationToken;

#[derive(Deserialize, schemars::JsonSchema)]
struct Text {
    text: String,
}

async fn echo(Args(a): Args<Text>) -> String {
    a.text
}

async fn greet(ctx: RequestContext) -> Result<String, String> {
    let form: ElicitRequestParams = serde_json::from_value(serde_json::json!({
        "message": "What is your name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    }))
    .map_err(|e| e.to_string())?;
    let answer = ctx.elicit_with(form).await.map_err(|e| e.to_string())?;
    let v = serde_json::to_value(answer.content).map_err(|e| e.to_string())?;
    Ok(format!("Hello, {}!", v["name"].as_str().unwrap_or("?")))
}

async fn chatty(ctx: RequestContext) -> &'static str {
    ctx.log(
        tessera_types::LoggingLevel::Info,
        Some("chatty"),
        serde_json::json!("working"),
    );
    ctx.progress(1.0, Some(2.0), Some("half"));
    ctx.progress(2.0, Some(2.0), Some("done"));
    "finished"
}

/// The protocol version the upstream sees the call in.
async fn version(ctx: RequestContext) -> String {
    ctx.protocol_version().to_string()
}

/// Two calls of `gate` wait for each other, so both are in flight at once.
static GATE: std::sync::LazyLock<tokio::sync::Barrier> =
    std::sync::LazyLock::new(|| tokio::sync::Barrier::new(2));

/// Logs before and after meeting another call of itself.
async fn gate(ctx: RequestContext, Args(a): Args<Text>) -> String {
    ctx.log(
        LoggingLevel::Info,
        None,
        serde_json::json!(format!("{} waits", a.text)),
    );
    GATE.wait().await;
    ctx.log(
        LoggingLevel::Info,
        None,
        serde_json::json!(format!("{} passed", a.text)),
    );
    a.text
}

async fn note() -> &'static str {
    "a note"
}

fn upstream_server() -> Server {
    Server::builder()
        .name_version("upstream", "7.0.0")
        .tool(
            tool("echo")
                .description("Sends the text back")
                .handler(echo),
        )
        .tool(tool("greet").description("Asks for a name").handler(greet))
        .tool(
            tool("chatty")
                .description("Logs and reports progress")
                .handler(chatty),
        )
        .tool(
            tool("version")
                .description("Names the protocol version of the call")
                .handler(version),
        )
        .tool(
            tool("gate")
                .description("Meets another call of itself")
                .handler(gate),
        )
        .resource(resource("test://note", "note").handler(note))
        .build()
        .expect("builds the upstream server")
}

/// Serves `factory` on a free loopback port until `stop` fires; returns the endpoint URL.
pub(crate) async fn serve<F: tessera_http::ServiceFactory>(
    factory: F,
    stop: &CancellationToken,
) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("binds");
    let addr = listener.local_addr().expect("address");
    let mcp = McpHttp::builder(factory)
        .bind_address(addr)
        .endpoint_path("/mcp")
        .build();
    let stop = stop.clone();
    tokio::spawn(async move {
        let _ = tessera_http::serve(listener, mcp, stop.cancelled_owned()).await;
    });
    format!("http://{addr}/mcp")
}

/// Which versions the upstream speaks.
#[derive(Clone, Copy, Debug)]
enum Speaks {
    Both,
    LegacyOnly,
    ModernOnly,
}

async fn upstream(speaks: Speaks, stop: &CancellationToken) -> String {
    let server = upstream_server();
    let versions: Vec<ProtocolVersion> = match speaks {
        Speaks::Both => ProtocolVersion::ALL.to_vec(),
        Speaks::LegacyOnly => ProtocolVersion::ALL
            .iter()
            .copied()
            .filter(|v| *v < ProtocolVersion::V2026_07_28)
            .collect(),
        Speaks::ModernOnly => vec![ProtocolVersion::V2026_07_28],
    };
    serve(
        move || -> (EngineConfig, Server) {
            (
                server.engine_config().with_versions(versions.clone()),
                server.clone(),
            )
        },
        stop,
    )
    .await
}

/// A proxy in front of the upstream at `up`, served until `stop`; returns it
/// and its URL.
async fn proxy_to(up: &str, options: UpstreamOptions, stop: &CancellationToken) -> (Proxy, String) {
    proxy_of(UpstreamSpec::http(up, Default::default()), options, stop).await
}

/// A proxy in front of the upstream `spec`, served over HTTP until `stop`;
/// returns it and its URL.
pub(crate) async fn proxy_of(
    spec: UpstreamSpec,
    options: UpstreamOptions,
    stop: &CancellationToken,
) -> (Proxy, String) {
    let proxy = bounded(
        "the proxy connecting upstream",
        Proxy::connect(spec, options),
    )
    .await
    .expect("the proxy connects");
    let url = serve(proxy.clone(), stop).await;
    (proxy, url)
}

/// A client of the proxy at `url` that speaks `version` and offers nothing.
pub(crate) async fn plain_client(url: &str, version: ProtocolVersion, name: &str) -> Client {
    let t = HttpClientTransport::new(url).expect("transport");
    bounded(
        "connecting to the proxy",
        Client::builder(name, "1.0")
            .protocol_version(version)
            .connect_transport(t),
    )
    .await
    .expect("connects to the proxy")
}

/// An upstream speaking `speaks`, a proxy in front of it, and the proxy's URL.
async fn proxied(speaks: Speaks, stop: &CancellationToken) -> (Proxy, String) {
    let up = upstream(speaks, stop).await;
    proxy_to(&up, UpstreamOptions::default(), stop).await
}

async fn client(url: &str, version: ProtocolVersion, name: &'static str) -> Client {
    let t = HttpClientTransport::new(url).expect("transport");
    bounded(
        "connecting to the proxy",
        Client::builder("bridge-test", "1.0")
            .protocol_version(version)
            .elicitation(move |_form: FormRequest| async move {
                let mut c = BTreeMap::new();
                c.insert("name".to_owned(), ElicitValue::String(name.into()));
                Ok::<_, ErrorObject>(ElicitResult::accept(c))
            })
            .connect_transport(t),
    )
    .await
    .expect("connects to the proxy")
}

async fn exercise(speaks: Speaks, version: ProtocolVersion) {
    let stop = CancellationToken::new();
    let (proxy, url) = proxied(speaks, &stop).await;
    assert_eq!(proxy.server_info().name, "upstream");
    let c = client(&url, version, "Ada").await;
    assert_eq!(
        c.protocol_version(),
        version,
        "{speaks:?}: the client's own version"
    );
    assert_eq!(c.server_info().name, "upstream");

    let tools: Vec<String> = bounded("tools/list", c.list_tools())
        .await
        .expect("lists tools")
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(
        tools,
        ["echo", "greet", "chatty", "version", "gate"],
        "{speaks:?} {version}"
    );

    let r = bounded(
        "echo",
        c.call_tool("echo", serde_json::json!({"text": "hi"})),
    )
    .await
    .expect("calls echo");
    assert_eq!(r.content[0].as_text(), Some("hi"));

    // A tool error from upstream arrives as it is.
    let bad = bounded(
        "echo without text",
        c.call_tool("echo", serde_json::json!({})),
    )
    .await
    .expect("an isError result, not a protocol error");
    assert_eq!(bad.is_error, Some(true));

    // Progress is passed back to the caller.
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let mut options = CallOptions::new().on_progress(move |p| s.lock().unwrap().push(p.progress));
    if version == ProtocolVersion::V2026_07_28 {
        options = options.log_level(LoggingLevel::Info);
    } else {
        bounded("logging/setLevel", c.set_log_level(LoggingLevel::Info))
            .await
            .expect("sets the level");
    }
    let mut events = c.events();
    let mut params = tessera_types::CallToolRequestParams::new("chatty");
    params.arguments = Some(Default::default());
    let r = bounded("chatty", c.call_tool_with(params, &options))
        .await
        .expect("calls chatty");
    assert_eq!(r.content[0].as_text(), Some("finished"));
    assert_eq!(
        *seen.lock().unwrap(),
        vec![1.0, 2.0],
        "{speaks:?} {version}: progress"
    );
    let mut logged = false;
    while let Some(e) = events.try_recv() {
        if let ClientEvent::Log(m) = e {
            logged |= m.data == serde_json::json!("working");
        }
    }
    assert!(
        logged,
        "{speaks:?} {version}: the upstream's log message arrives"
    );

    c.close().await;
    proxy.close().await;
    stop.cancel();
}

/// Elicitation through the proxy, in each pairing where it can be carried.
async fn elicit(speaks: Speaks, version: ProtocolVersion) -> Result<String, String> {
    let stop = CancellationToken::new();
    let (proxy, url) = proxied(speaks, &stop).await;
    let c = client(&url, version, "Grace").await;
    let out = bounded("greet", c.call_tool("greet", serde_json::json!({})))
        .await
        .map(|r| r.content[0].as_text().unwrap_or_default().to_owned())
        .map_err(|e| e.to_string());
    c.close().await;
    proxy.close().await;
    stop.cancel();
    out
}

#[tokio::test]
async fn legacy_client_through_to_a_server_of_both_eras() {
    exercise(Speaks::Both, ProtocolVersion::V2025_11_25).await;
}

#[tokio::test]
async fn modern_client_through_to_a_server_of_both_eras() {
    exercise(Speaks::Both, ProtocolVersion::V2026_07_28).await;
}

#[tokio::test]
async fn modern_client_through_to_a_legacy_only_server() {
    exercise(Speaks::LegacyOnly, ProtocolVersion::V2026_07_28).await;
}

#[tokio::test]
async fn legacy_client_through_to_a_modern_only_server() {
    exercise(Speaks::ModernOnly, ProtocolVersion::V2025_11_25).await;
}

#[tokio::test]
async fn oldest_client_through_to_a_modern_only_server() {
    exercise(Speaks::ModernOnly, ProtocolVersion::V2025_03_26).await;
}

#[tokio::test]
async fn elicitation_is_carried_between_eras() {
    // Legacy client, legacy session upstream: elicitation/create is passed down.
    assert_eq!(
        elicit(Speaks::Both, ProtocolVersion::V2025_11_25)
            .await
            .as_deref(),
        Ok("Hello, Grace!")
    );
    // Modern client, modern upstream: the input_required round passes through.
    assert_eq!(
        elicit(Speaks::Both, ProtocolVersion::V2026_07_28)
            .await
            .as_deref(),
        Ok("Hello, Grace!")
    );
    // Legacy client, 2026-07-28-only upstream: the proxy runs the input round
    // as an elicitation/create to the client.
    assert_eq!(
        elicit(Speaks::ModernOnly, ProtocolVersion::V2025_11_25)
            .await
            .as_deref(),
        Ok("Hello, Grace!")
    );
}

#[tokio::test]
async fn modern_listen_stream_over_a_legacy_upstream() {
    let stop = CancellationToken::new();
    let server = upstream_server();
    let legacy: Vec<ProtocolVersion> = ProtocolVersion::ALL
        .iter()
        .copied()
        .filter(|v| *v < ProtocolVersion::V2026_07_28)
        .collect();
    let s2 = server.clone();
    let up = serve(
        move || -> (EngineConfig, Server) {
            (s2.engine_config().with_versions(legacy.clone()), s2.clone())
        },
        &stop,
    )
    .await;
    let (proxy, url) = proxy_to(&up, UpstreamOptions::default(), &stop).await;
    let c = client(&url, ProtocolVersion::V2026_07_28, "x").await;
    let filter: tessera_types::SubscriptionFilter =
        serde_json::from_value(serde_json::json!({"toolsListChanged": true})).expect("filter");
    let mut stream = bounded("listen", c.listen(filter)).await.expect("listens");
    assert_eq!(
        serde_json::to_value(stream.acknowledged()).expect("json"),
        serde_json::json!({"toolsListChanged": true})
    );
    // A change upstream (a legacy list_changed) arrives on the stream.
    server.notify_list_changed(tessera_server::hub::ListKind::Tools);
    let n = bounded("the change notification", stream.recv())
        .await
        .expect("a notification");
    assert!(matches!(n, ClientEvent::ToolListChanged(_)), "{n:?}");
    drop(stream);
    c.close().await;
    proxy.close().await;
    stop.cancel();
}

/// The protocol version the upstream saw `c`'s call in.
async fn seen_upstream(c: &Client) -> String {
    let r = bounded("version", c.call_tool("version", serde_json::json!({})))
        .await
        .expect("calls version");
    r.content[0].as_text().unwrap_or_default().to_owned()
}

/// Waits for the next tool list change among `events`.
async fn tools_changed(events: &mut tessera_client::EventStream) {
    bounded("notifications/tools/list_changed", async {
        loop {
            match events.recv().await {
                Some(ClientEvent::ToolListChanged(_)) => return,
                Some(_) => continue,
                None => panic!("the client closed before the list change arrived"),
            }
        }
    })
    .await
}

#[tokio::test]
async fn legacy_sessions_share_the_modern_connection_until_they_need_their_own() {
    let stop = CancellationToken::new();
    let server = upstream_server();
    let s2 = server.clone();
    let up = serve(
        move || -> (EngineConfig, Server) {
            // An upstream that does not say its logs carry the request's tag
            // (as servers other than Tessera).
            let mut config = s2.engine_config();
            if let Some(x) = config.server.capabilities.experimental.as_mut() {
                x.remove(tessera_proto::meta_keys::REQUEST_TAG);
            }
            (config, s2.clone())
        },
        &stop,
    )
    .await;
    // (An HTTP upstream gets an upstream session per legacy session unless
    // asked; a stdio one shares by default.)
    let options = UpstreamOptions {
        share_legacy_sessions: Some(true),
        ..UpstreamOptions::default()
    };
    let (proxy, url) = proxy_to(&up, options, &stop).await;
    let a = client(&url, ProtocolVersion::V2025_11_25, "a").await;
    let b = client(&url, ProtocolVersion::V2025_11_25, "b").await;

    // Both legacy sessions are served as 2026-07-28 calls on the one
    // connection the proxy keeps.
    assert_eq!(seen_upstream(&a).await, "2026-07-28");
    assert_eq!(seen_upstream(&b).await, "2026-07-28");
    // A change upstream reaches each of them as a legacy notification.
    let (mut ea, mut eb) = (a.events(), b.events());
    server.notify_list_changed(tessera_server::hub::ListKind::Tools);
    tools_changed(&mut ea).await;
    tools_changed(&mut eb).await;
    // Elicitation still reaches the client (as an input round the proxy runs).
    let hello = bounded("greet", a.call_tool("greet", serde_json::json!({})))
        .await
        .expect("calls greet");
    assert_eq!(hello.content[0].as_text(), Some("Hello, a!"));

    // A session that sets a log level moves to an upstream session of its
    // own (this server's logs could not be routed back on a shared
    // connection), and gets its logs there; the other stays shared.
    bounded("logging/setLevel", b.set_log_level(LoggingLevel::Info))
        .await
        .expect("sets the level");
    assert_eq!(seen_upstream(&b).await, "2025-11-25");
    let mut logs = b.events();
    let r = bounded("chatty", b.call_tool("chatty", serde_json::json!({})))
        .await
        .expect("calls chatty");
    assert_eq!(r.content[0].as_text(), Some("finished"));
    let mut logged = false;
    while let Some(e) = logs.try_recv() {
        if let ClientEvent::Log(m) = e {
            logged |= m.data == serde_json::json!("working");
        }
    }
    assert!(logged, "the log of a pinned session arrives");
    assert_eq!(seen_upstream(&a).await, "2026-07-28");
    // Resource subscriptions move a session too.
    let c = client(&url, ProtocolVersion::V2025_06_18, "c").await;
    assert_eq!(seen_upstream(&c).await, "2026-07-28");
    bounded("resources/subscribe", c.subscribe("test://note"))
        .await
        .expect("subscribes");
    assert_eq!(seen_upstream(&c).await, "2025-06-18");
    // So does a client of the tasks extension (the server may answer any
    // call with a task), but not one that only runs the server's requests
    // as tasks (2025-11-25): the proxy sends it those as plain requests.
    let legacy =
        || Client::builder("bridge-test", "1.0").protocol_version(ProtocolVersion::V2025_11_25);
    let connect = |b: tessera_client::ClientBuilder| {
        let t = HttpClientTransport::new(&url).expect("transport");
        bounded("connecting to the proxy", b.connect_transport(t))
    };
    let e = connect(legacy().tasks()).await.expect("connects");
    assert_eq!(seen_upstream(&e).await, "2025-11-25");
    let f = connect(
        legacy()
            .elicitation(|_form: FormRequest| async {
                Ok::<_, ErrorObject>(ElicitResult::accept(BTreeMap::new()))
            })
            .receive_tasks(),
    )
    .await
    .expect("connects");
    assert_eq!(seen_upstream(&f).await, "2026-07-28");
    e.close().await;
    f.close().await;

    // The shared session still hears of changes, and so does the moved one
    // (from its own upstream session).
    let (mut ea, mut eb) = (a.events(), b.events());
    server.notify_list_changed(tessera_server::hub::ListKind::Tools);
    tools_changed(&mut ea).await;
    tools_changed(&mut eb).await;

    for x in [a, b, c] {
        x.close().await;
    }
    proxy.close().await;

    // By default a legacy session in front of an HTTP upstream gets an
    // upstream session of its own from the start.
    let (plain, url) = proxy_to(&up, UpstreamOptions::default(), &stop).await;
    let d = client(&url, ProtocolVersion::V2025_11_25, "d").await;
    assert_eq!(seen_upstream(&d).await, "2025-11-25");
    d.close().await;
    plain.close().await;
    stop.cancel();
}

/// The log messages among `events` so far.
fn logs(events: &mut tessera_client::EventStream) -> Vec<serde_json::Value> {
    let mut out = Vec::new();
    while let Some(e) = events.try_recv() {
        if let ClientEvent::Log(m) = e {
            out.push(m.data);
        }
    }
    out
}

/// `a` and `b` call `gate` (with `options`) so that both calls are in
/// flight together; each client must get exactly its own two log messages.
async fn gated_calls_log_apart(a: &Client, b: &Client, options: CallOptions) {
    let (mut ea, mut eb) = (a.events(), b.events());
    let call = |c: &Client, text: &str| {
        let mut params = tessera_types::CallToolRequestParams::new("gate");
        params.arguments =
            Some(serde_json::from_value(serde_json::json!({"text": text})).expect("arguments"));
        let (c, options) = (c.clone(), options.clone());
        async move { c.call_tool_with(params, &options).await }
    };
    let (ra, rb) = bounded("two gated calls", async {
        tokio::join!(call(a, "a"), call(b, "b"))
    })
    .await;
    assert_eq!(ra.expect("a's call").content[0].as_text(), Some("a"));
    assert_eq!(rb.expect("b's call").content[0].as_text(), Some("b"));
    assert_eq!(
        logs(&mut ea),
        [serde_json::json!("a waits"), serde_json::json!("a passed")]
    );
    assert_eq!(
        logs(&mut eb),
        [serde_json::json!("b waits"), serde_json::json!("b passed")]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_of_calls_in_flight_together_reach_their_own_clients() {
    let stop = CancellationToken::new();
    let (proxy, url) = proxied(Speaks::Both, &stop).await;
    let a = client(&url, ProtocolVersion::V2026_07_28, "a").await;
    let b = client(&url, ProtocolVersion::V2026_07_28, "b").await;
    // Both calls are in flight on the proxy's one upstream connection when
    // the messages are logged.
    gated_calls_log_apart(&a, &b, CallOptions::new().log_level(LoggingLevel::Info)).await;
    a.close().await;
    b.close().await;
    proxy.close().await;
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_sessions_with_a_log_level_stay_shared_when_the_server_tags_its_logs() {
    let stop = CancellationToken::new();
    let server = upstream_server();
    assert!(
        server
            .capabilities()
            .experimental
            .is_some_and(|x| x.contains_key(tessera_proto::meta_keys::REQUEST_TAG)),
        "a Tessera server that logs says its logs carry the request's tag"
    );
    let options = UpstreamOptions {
        share_legacy_sessions: Some(true),
        ..UpstreamOptions::default()
    };
    let s2 = server.clone();
    let up = serve(
        move || -> (EngineConfig, Server) { (s2.engine_config(), s2.clone()) },
        &stop,
    )
    .await;
    let (proxy, url) = proxy_to(&up, options, &stop).await;
    let a = client(&url, ProtocolVersion::V2025_11_25, "a").await;
    let b = client(&url, ProtocolVersion::V2025_11_25, "b").await;
    for c in [&a, &b] {
        bounded("logging/setLevel", c.set_log_level(LoggingLevel::Info))
            .await
            .expect("sets the level");
        assert_eq!(seen_upstream(c).await, "2026-07-28");
    }
    // The sessions' level (set above) applies to their calls.
    gated_calls_log_apart(&a, &b, CallOptions::new()).await;
    a.close().await;
    b.close().await;
    proxy.close().await;
    stop.cancel();
}
