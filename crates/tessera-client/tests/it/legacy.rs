//! Legacy (2025-11-25) server-to-client requests sent raw by an in-process
//! server (bypassing its own capability checks): what the client refuses
//! and with which code, the sampling rules, URL elicitation with
//! `notifications/elicitation/complete` and the `-32042` error, roots
//! notifications and resource subscriptions.

use serde_json::{Value, json};
use tessera_client::{Client, ClientBuilder, ClientError, ClientEvent, UrlRequest, user_rejected};
use tessera_server::{ProtocolError, RawArgs, RequestContext, Server, resource, tool};
use tessera_testkit::prelude::*;
use tessera_types::{
    CreateMessageRequestParams, CreateMessageResult, ElicitAction, ErrorObject, ProtocolVersion,
    Root,
};

const LEGACY: ProtocolVersion = ProtocolVersion::V2025_11_25;

/// Sends `{method, params}` to the client as is; answers with the client's
/// result, or `error <code>: <message>`.
async fn ask(ctx: RequestContext, RawArgs(a): RawArgs) -> String {
    let method = a["method"].as_str().unwrap_or_default().to_owned();
    let params = a.get("params").and_then(Value::as_object).cloned();
    match ctx.request_client(&method, params).await {
        Ok(r) => Value::Object(r).to_string(),
        Err(e) => match e.remote() {
            Some(r) => format!("error {}: {}", r.code, r.message),
            None => format!("failed: {e}"),
        },
    }
}

/// Tells the client that a URL elicitation completed.
async fn complete(ctx: RequestContext, RawArgs(a): RawArgs) -> &'static str {
    let mut p = serde_json::Map::new();
    p.insert("elicitationId".into(), a["id"].clone());
    let _ = ctx
        .peer()
        .notify("notifications/elicitation/complete", Some(p), None);
    "sent"
}

/// Fails with `-32042`, naming one URL elicitation.
async fn needs_url() -> Result<String, ProtocolError> {
    Err(ProtocolError(
        ErrorObject::new(-32042, "This request requires more information.").with_data(json!({
            "elicitations": [{"mode": "url", "elicitationId": "e-42",
                "url": "https://mcp.example.com/connect?elicitationId=e-42",
                "message": "Authorization is required."}]
        })),
    ))
}

/// Logs "marker": notifications are handled in order, so every event before
/// it has been delivered once it arrives.
async fn marker(ctx: RequestContext) -> &'static str {
    ctx.log(tessera_types::LoggingLevel::Info, None, json!("marker"));
    "marked"
}

async fn readme() -> &'static str {
    "# readme"
}

fn server() -> Server {
    Server::builder()
        .tool(tool("ask").handler(ask))
        .tool(tool("complete").handler(complete))
        .tool(tool("needs_url").handler(needs_url))
        .tool(tool("marker").handler(marker))
        .resource(resource("docs://readme", "readme").handler(readme))
        .build()
        .unwrap()
}

async fn asked(client: &Client, method: &str, params: Value) -> String {
    let r = client
        .call_tool("ask", json!({"method": method, "params": params}))
        .await
        .unwrap();
    text(&r)
}

fn sampling_params(messages: Value, tools: bool) -> Value {
    let mut p = json!({"messages": messages, "maxTokens": 10});
    if tools {
        p["tools"] = json!([{"name": "get_weather", "inputSchema": {"type": "object"}}]);
    }
    p
}

fn hello() -> Value {
    json!([{"role": "user", "content": {"type": "text", "text": "hi"}}])
}

async fn connect(b: ClientBuilder) -> Client {
    in_process(&server(), b).await
}

#[tokio::test]
async fn undeclared_requests_get_the_spec_codes() {
    let bare = connect(builder(LEGACY)).await;
    assert!(
        asked(
            &bare,
            "sampling/createMessage",
            sampling_params(hello(), false)
        )
        .await
        .starts_with("error -32601")
    );
    assert!(
        asked(&bare, "roots/list", Value::Null)
            .await
            .starts_with("error -32601")
    );
    assert!(
        asked(
            &bare,
            "elicitation/create",
            json!({"message": "m", "requestedSchema": {"type": "object", "properties": {}}})
        )
        .await
        .starts_with("error -32601")
    );
    // ping is always answered.
    assert_eq!(asked(&bare, "ping", Value::Null).await, "{}");

    let form_only = connect(builder(LEGACY).elicitation(fill_required)).await;
    let url =
        json!({"mode": "url", "elicitationId": "e1", "message": "m", "url": "https://x.example/"});
    let out = asked(&form_only, "elicitation/create", url).await;
    assert!(out.starts_with("error -32602"), "{out}");

    let url_only =
        connect(builder(LEGACY).url_elicitation(|_u: UrlRequest| async {
            Ok::<_, ErrorObject>(ElicitAction::Decline)
        }))
        .await;
    let form = json!({"message": "m", "requestedSchema": {"type": "object", "properties": {}}});
    let out = asked(&url_only, "elicitation/create", form).await;
    assert!(out.starts_with("error -32602"), "{out}");

    let no_tools = connect(builder(LEGACY).sampling(paris)).await;
    let out = asked(
        &no_tools,
        "sampling/createMessage",
        sampling_params(hello(), true),
    )
    .await;
    assert!(out.starts_with("error -32602"), "{out}");
    assert!(out.contains("sampling.tools"), "{out}");
}

#[tokio::test]
async fn sampling_requests_follow_the_tool_rules() {
    let client = connect(builder(LEGACY).sampling_with_tools(
        |p: CreateMessageRequestParams| async move {
            if p.system_prompt.as_deref() == Some("reject") {
                return Err(user_rejected("User rejected sampling request"));
            }
            Ok::<_, ErrorObject>(CreateMessageResult::text(
                "m",
                format!("{} messages", p.messages.len()),
            ))
        },
    ))
    .await;
    let good = json!([
        {"role": "user", "content": {"type": "text", "text": "weather?"}},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "a", "name": "get_weather", "input": {}},
            {"type": "tool_use", "id": "b", "name": "get_weather", "input": {}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "toolUseId": "a", "content": []},
            {"type": "tool_result", "toolUseId": "b", "content": []}]}
    ]);
    let out = asked(
        &client,
        "sampling/createMessage",
        sampling_params(good.clone(), true),
    )
    .await;
    assert!(out.contains("3 messages"), "{out}");

    let mut missing = good.clone();
    missing[2]["content"].as_array_mut().unwrap().pop();
    let out = asked(
        &client,
        "sampling/createMessage",
        sampling_params(missing, true),
    )
    .await;
    assert!(
        out.starts_with("error -32602") && out.contains("Tool result missing"),
        "{out}"
    );

    let mut mixed = good.clone();
    mixed[2]["content"]
        .as_array_mut()
        .unwrap()
        .push(json!({"type": "text", "text": "x"}));
    let out = asked(
        &client,
        "sampling/createMessage",
        sampling_params(mixed, true),
    )
    .await;
    assert!(
        out.starts_with("error -32602") && out.contains("mixed"),
        "{out}"
    );

    let mut p = sampling_params(hello(), false);
    p["systemPrompt"] = json!("reject");
    let out = asked(&client, "sampling/createMessage", p).await;
    assert_eq!(out, "error -1: User rejected sampling request");
}

#[tokio::test]
async fn url_elicitation_and_its_completion() {
    let client = connect(builder(LEGACY).url_elicitation(|u: UrlRequest| async move {
        assert_eq!(u.elicitation_id.as_deref(), Some("e1"));
        Ok::<_, ErrorObject>(ElicitAction::Accept)
    }))
    .await;
    let mut events = client.events();
    let url = json!({"mode": "url", "elicitationId": "e1", "message": "Connect", "url": "https://x.example/"});
    assert_eq!(
        asked(&client, "elicitation/create", url).await,
        r#"{"action":"accept"}"#
    );

    // Unknown ids are ignored; a known one completes once.
    client
        .call_tool("complete", json!({"id": "unknown"}))
        .await
        .unwrap();
    client
        .call_tool("complete", json!({"id": "e1"}))
        .await
        .unwrap();
    client
        .call_tool("complete", json!({"id": "e1"}))
        .await
        .unwrap();
    bounded("completion", client.elicitation_completed("e1")).await;
    client.call_tool("marker", json!({})).await.unwrap();
    let mut completions = Vec::new();
    loop {
        match bounded("events", events.recv()).await.expect("events") {
            ClientEvent::ElicitationComplete(p) => completions.push(p.elicitation_id),
            ClientEvent::Log(l) if l.data == json!("marker") => break,
            _ => {}
        }
    }
    assert_eq!(completions, ["e1"]);
}

#[tokio::test]
async fn the_url_elicitation_required_error() {
    let client = connect(builder(LEGACY).url_elicitation(|u: UrlRequest| async move {
        assert_eq!(u.host(), Some("mcp.example.com"));
        Ok::<_, ErrorObject>(ElicitAction::Accept)
    }))
    .await;
    let e = client.call_tool("needs_url", json!({})).await.unwrap_err();
    assert_eq!(e.remote().map(|r| r.code), Some(-32042));
    let ClientError::UrlElicitationRequired { elicitations, .. } = e else {
        panic!("expected UrlElicitationRequired, got {e}")
    };
    assert_eq!(elicitations[0].elicitation_id.as_deref(), Some("e-42"));
    let actions = client.consent_to_urls(&elicitations).await.unwrap();
    assert_eq!(actions, [ElicitAction::Accept]);
    client
        .call_tool("complete", json!({"id": "e-42"}))
        .await
        .unwrap();
    bounded("completion", client.elicitation_completed("e-42")).await;
}

#[tokio::test]
async fn roots_changes_are_announced_in_the_legacy_era() {
    let (client, _peer, mut notes) = scripted(
        builder(LEGACY).roots(two_roots()),
        json!({}),
        &[],
        |_| async { Ok(serde_json::Map::new()) },
    )
    .await;
    assert_eq!(
        serde_json::to_value(client.capabilities()).unwrap(),
        json!({"roots": {"listChanged": true}})
    );
    client
        .set_roots(vec![Root::new("file:///tmp/work")])
        .unwrap();
    let (method, _) = bounded("the notification", notes.recv()).await.unwrap();
    assert_eq!(method, "notifications/roots/list_changed");
    assert_eq!(client.roots(), [Root::new("file:///tmp/work")]);
    assert!(matches!(
        client.set_roots(vec![Root::new("file:///a/../b")]),
        Err(ClientError::Config(_))
    ));
    // A client built with an invalid root does not connect.
    let bad = builder(LEGACY).roots(vec![Root::new("http://x/")]);
    let (a, _b) = tokio::io::duplex(64);
    let (r, w) = tokio::io::split(a);
    assert!(matches!(
        bad.connect_io(r, w).await,
        Err(ClientError::Config(_))
    ));
}

#[tokio::test]
async fn legacy_resource_subscriptions_deliver_updates() {
    let server = server();
    let client = in_process(&server, builder(LEGACY).cache(true)).await;
    let mut events = client.events();
    client.subscribe("docs://readme").await.unwrap();
    server.notify_resource_updated("docs://readme");
    loop {
        match bounded("the update", events.recv()).await {
            Some(ClientEvent::ResourceUpdated(p)) => {
                assert_eq!(p.uri, "docs://readme");
                break;
            }
            Some(_) => {}
            None => panic!("events ended"),
        }
    }
    client.unsubscribe("docs://readme").await.unwrap();
    // Legacy results carry no caching hints: nothing is cached.
    client.read_resource("docs://readme").await.unwrap();
    client.read_resource("docs://readme").await.unwrap();
    assert_eq!(client.cache_stats().hits, 0);
    // There is no listen() in the legacy era.
    assert!(matches!(
        client.listen(Default::default()).await,
        Err(ClientError::Unsupported(_))
    ));
}
