//! Resources through the public API, over an in-memory connection, in both
//! eras: listing and pagination, templates, reads (text, blob, typed template
//! variables), errors per era, subscriptions (legacy `resources/subscribe`
//! and 2026-07-28 `subscriptions/listen`), list changes, cache hints.

use std::time::Duration;

use base64::Engine as _;
use serde::Deserialize;
use serde_json::{Value, json};
use tessera_client::EventStream;
use tessera_client::{Client, ClientError};
use tessera_server::{
    Blob, JsonContents, RequestContext, ResourceError, Server, State, Uri, UriVars, Vars, resource,
    resource_template,
};
use tessera_testkit::pair::{ERAS, in_process};
use tessera_types::{
    ClientCapabilities, JsonObject, ProtocolVersion, ResourceContents, TextResourceContents,
};

const LEGACY: ProtocolVersion = ProtocolVersion::V2025_11_25;
const MODERN: ProtocolVersion = ProtocolVersion::V2026_07_28;
const PNG: &[u8] = &[0x89, b'P', b'N', b'G', 0, 1, 2, 255];

struct App {
    greeting: String,
}

async fn readme() -> &'static str {
    "# Tessera\n"
}

async fn logo() -> Blob {
    Blob(PNG.to_vec())
}

async fn about(Uri(uri): Uri, ctx: RequestContext, State(app): State<App>) -> String {
    format!("{} from {uri} in {}", app.greeting, ctx.protocol_version())
}

async fn missing() -> Option<String> {
    None
}

async fn broken() -> Result<String, ResourceError> {
    Err(ResourceError::internal("the database is down"))
}

async fn parts() -> Vec<ResourceContents> {
    vec![
        TextResourceContents::new("", "one").into(),
        TextResourceContents::new("docs://parts#2", "two")
            .with_mime_type("text/x-two")
            .into(),
    ]
}

#[derive(Deserialize)]
struct Profile {
    id: u32,
    fields: Option<Vec<String>>,
}

async fn profile(Vars(p): Vars<Profile>) -> JsonContents<Value> {
    JsonContents(json!({"id": p.id, "fields": p.fields}))
}

#[derive(Deserialize)]
struct Tree {
    owner: String,
    #[serde(default)]
    path: Vec<String>,
}

async fn tree(Vars(t): Vars<Tree>) -> String {
    format!("{}:{}", t.owner, t.path.join("|"))
}

async fn raw_file(UriVars(v): UriVars) -> String {
    format!("path={}", v["path"])
}

fn builder() -> tessera_server::ServerBuilder<App> {
    Server::with_state(App {
        greeting: "hello".into(),
    })
    .name_version("resources-tests", "1.0")
    .resource(
        resource("docs://readme", "readme")
            .title("Read me")
            .description("The project's introduction")
            .mime_type("text/markdown")
            .handler(readme),
    )
    .resource(
        resource("data://logo", "logo")
            .mime_type("image/png")
            .size(PNG.len() as u64)
            .handler(logo),
    )
    .resource(resource("docs://about", "about").handler(about))
    .resource(resource("docs://missing", "missing").handler(missing))
    .resource(resource("docs://broken", "broken").handler(broken))
    .resource(
        resource("docs://parts", "parts")
            .mime_type("text/plain")
            .handler(parts),
    )
    .resource_template(
        resource_template("users://{id}/profile{?fields}", "profile")
            .mime_type("application/json")
            .handler(profile),
    )
    .resource_template(resource_template("tree://{owner}{/path*}", "tree").handler(tree))
    .resource_template(resource_template("raw://{+path}", "raw").handler(raw_file))
}

fn server() -> Server<App> {
    builder().build().unwrap()
}

async fn connect<S: Send + Sync + 'static>(server: &Server<S>, version: ProtocolVersion) -> Client {
    connect_with(server, version, ClientCapabilities::default()).await
}

async fn connect_with<S: Send + Sync + 'static>(
    server: &Server<S>,
    version: ProtocolVersion,
    caps: ClientCapabilities,
) -> Client {
    in_process(
        server,
        Client::builder("resources-tests", "1.0")
            .protocol_version(version)
            .capabilities(caps),
    )
    .await
}

fn object(v: Value) -> JsonObject {
    match v {
        Value::Object(o) => o,
        other => panic!("not an object: {other}"),
    }
}

async fn call(client: &Client, method: &str, params: Value) -> Result<JsonObject, ClientError> {
    client.request_raw(method, Some(object(params))).await
}

async fn read(client: &Client, uri: &str) -> Result<JsonObject, ClientError> {
    call(client, "resources/read", json!({ "uri": uri })).await
}

#[track_caller]
fn code(r: &Result<JsonObject, ClientError>) -> i64 {
    match r {
        Ok(o) => panic!("expected an error, got {}", Value::Object(o.clone())),
        Err(e) => e
            .remote()
            .map_or_else(|| panic!("not a remote error: {e}"), |x| x.code),
    }
}

fn error_data(r: &Result<JsonObject, ClientError>) -> Option<Value> {
    r.as_ref()
        .err()
        .and_then(|e| e.remote())
        .and_then(|e| e.data.clone())
}

/// Follows `nextCursor` through every page of a list method.
async fn all_pages(client: &Client, method: &str, key: &str) -> (Vec<Value>, usize) {
    let mut items = Vec::new();
    let mut pages = 0;
    let mut cursor: Option<String> = None;
    loop {
        let params = match &cursor {
            Some(c) => json!({ "cursor": c }),
            None => json!({}),
        };
        let page = call(client, method, params).await.expect("page");
        pages += 1;
        check_cache_hints(client, &page);
        items.extend(page[key].as_array().expect("items").iter().cloned());
        match page.get("nextCursor").and_then(Value::as_str) {
            Some(c) => cursor = Some(c.to_owned()),
            None => return (items, pages),
        }
        assert!(pages < 100, "runaway pagination");
    }
}

/// 2026-07-28 results carry `ttlMs`/`cacheScope`; earlier ones do not.
#[track_caller]
fn check_cache_hints(client: &Client, result: &JsonObject) {
    if client.protocol_version() == MODERN {
        assert_eq!(result["ttlMs"], json!(60_000), "{result:?}");
        assert_eq!(result["cacheScope"], json!("public"));
        assert_eq!(result["resultType"], json!("complete"));
    } else {
        for k in ["ttlMs", "cacheScope", "resultType"] {
            assert!(
                !result.contains_key(k),
                "{k} in a legacy result: {result:?}"
            );
        }
    }
}

/// The next notification called `method` (others are skipped).
async fn next_notification(rx: &mut EventStream, method: &str) -> JsonObject {
    loop {
        let e = tokio::time::timeout(Duration::from_secs(10), rx.recv())
            .await
            .unwrap_or_else(|_| panic!("no {method} notification"))
            .expect("event stream open");
        if e.method() == Some(method) {
            return e.params().unwrap_or_default();
        }
    }
}

fn uris(items: &[Value]) -> Vec<String> {
    items
        .iter()
        .map(|r| r["uri"].as_str().expect("uri").to_owned())
        .collect()
}

#[tokio::test]
async fn capability_is_declared() {
    let s = server();
    for v in ERAS {
        let c = connect(&s, v).await;
        assert_eq!(
            serde_json::to_value(c.server_capabilities().resources).unwrap(),
            json!({"subscribe": true, "listChanged": true}),
            "{v}"
        );
    }
    let none = Server::builder().build().unwrap();
    assert!(none.capabilities().resources.is_none());
    let enabled = Server::builder().enable_resources().build().unwrap();
    assert!(enabled.capabilities().resources.is_some());
}

#[tokio::test]
async fn list_is_paginated_in_registration_order() {
    let s = builder().page_size(2).build().unwrap();
    for v in ERAS {
        let c = connect(&s, v).await;
        let (items, pages) = all_pages(&c, "resources/list", "resources").await;
        assert_eq!(pages, 3, "{v}");
        assert_eq!(
            uris(&items),
            [
                "docs://readme",
                "data://logo",
                "docs://about",
                "docs://missing",
                "docs://broken",
                "docs://parts"
            ]
        );
        assert_eq!(
            items[0],
            json!({
                "uri": "docs://readme",
                "name": "readme",
                "title": "Read me",
                "description": "The project's introduction",
                "mimeType": "text/markdown"
            })
        );
        assert_eq!(items[1]["size"], json!(PNG.len()));
        // The same pages again: deterministic.
        let (again, _) = all_pages(&c, "resources/list", "resources").await;
        assert_eq!(again, items);
    }
}

#[tokio::test]
async fn bad_cursors_are_invalid_params() {
    let s = builder().page_size(2).build().unwrap();
    for v in ERAS {
        let c = connect(&s, v).await;
        let first = call(&c, "resources/list", json!({})).await.unwrap();
        let cursor = first["nextCursor"].as_str().unwrap().to_owned();
        let mut tampered = cursor.clone().into_bytes();
        let last = tampered.len() - 1;
        tampered[last] = if tampered[last] == b'A' { b'B' } else { b'A' };
        let tampered = String::from_utf8(tampered).unwrap();
        let r = call(&c, "resources/list", json!({ "cursor": tampered })).await;
        assert_eq!(code(&r), -32602, "{v}");
        let r = call(&c, "resources/list", json!({ "cursor": 7 })).await;
        assert_eq!(code(&r), -32602);
        let r = call(&c, "resources/list", json!({ "cursor": "garbage" })).await;
        assert_eq!(code(&r), -32602);
        // A cursor of the resource list is not one of the template list.
        let r = call(&c, "resources/templates/list", json!({ "cursor": cursor })).await;
        assert_eq!(code(&r), -32602);
        let templates = call(&c, "resources/templates/list", json!({}))
            .await
            .unwrap();
        let tc = templates["nextCursor"].as_str().unwrap();
        let r = call(&c, "resources/list", json!({ "cursor": tc })).await;
        assert_eq!(code(&r), -32602);
    }
}

#[tokio::test]
async fn templates_are_listed_and_paginated() {
    let s = builder().page_size(2).build().unwrap();
    for v in ERAS {
        let c = connect(&s, v).await;
        let (items, pages) = all_pages(&c, "resources/templates/list", "resourceTemplates").await;
        assert_eq!(pages, 2);
        let names: Vec<&str> = items
            .iter()
            .map(|t| t["uriTemplate"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "users://{id}/profile{?fields}",
                "tree://{owner}{/path*}",
                "raw://{+path}"
            ]
        );
        assert_eq!(items[0]["mimeType"], json!("application/json"));
        assert_eq!(items[0]["name"], json!("profile"));
    }
}

#[tokio::test]
async fn reads_text_and_blobs() {
    let s = server();
    for v in ERAS {
        let c = connect(&s, v).await;
        let r = read(&c, "docs://readme").await.unwrap();
        check_cache_hints(&c, &r);
        assert_eq!(
            r["contents"],
            json!([{"uri": "docs://readme", "mimeType": "text/markdown", "text": "# Tessera\n"}])
        );
        let r = read(&c, "data://logo").await.unwrap();
        check_cache_hints(&c, &r);
        let item = &r["contents"][0];
        assert_eq!(item["mimeType"], json!("image/png"));
        assert_eq!(item["uri"], json!("data://logo"));
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(item["blob"].as_str().unwrap())
            .unwrap();
        assert_eq!(bytes, PNG);
        let r = read(&c, "docs://parts").await.unwrap();
        assert_eq!(
            r["contents"],
            json!([
                {"uri": "docs://parts", "mimeType": "text/plain", "text": "one"},
                {"uri": "docs://parts#2", "mimeType": "text/x-two", "text": "two"}
            ])
        );
    }
}

#[tokio::test]
async fn handlers_take_extractors() {
    let s = server();
    for v in ERAS {
        let c = connect(&s, v).await;
        let r = read(&c, "docs://about").await.unwrap();
        assert_eq!(
            r["contents"][0]["text"],
            json!(format!("hello from docs://about in {v}"))
        );
        assert_eq!(r["contents"][0]["mimeType"], json!("text/plain"));
    }
}

#[tokio::test]
async fn templates_read_typed_variables() {
    let s = server();
    for v in ERAS {
        let c = connect(&s, v).await;
        let r = read(&c, "users://42/profile").await.unwrap();
        check_cache_hints(&c, &r);
        let item = &r["contents"][0];
        assert_eq!(item["uri"], json!("users://42/profile"));
        assert_eq!(item["mimeType"], json!("application/json"));
        let body: Value = serde_json::from_str(item["text"].as_str().unwrap()).unwrap();
        assert_eq!(body, json!({"id": 42, "fields": null}));

        let r = read(&c, "users://7/profile?fields=name,email")
            .await
            .unwrap();
        let body: Value = serde_json::from_str(r["contents"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(body, json!({"id": 7, "fields": ["name", "email"]}));

        // Variables that do not fit the handler's type: -32602 naming the problem.
        let r = read(&c, "users://abc/profile").await;
        assert_eq!(code(&r), -32602, "{v}");
        let message = r.unwrap_err().remote().unwrap().message.clone();
        assert!(message.contains("u32"), "{message}");

        let r = read(&c, "tree://ana/src/lib.rs").await.unwrap();
        assert_eq!(r["contents"][0]["text"], json!("ana:src|lib.rs"));
        let r = read(&c, "tree://ana").await.unwrap();
        assert_eq!(r["contents"][0]["text"], json!("ana:"));
        let r = read(&c, "tree://S%C3%A3o%20Paulo/a%2Fb").await.unwrap();
        assert_eq!(r["contents"][0]["text"], json!("São Paulo:a/b"));

        let r = read(&c, "raw://a/b%20c.txt").await.unwrap();
        assert_eq!(r["contents"][0]["text"], json!("path=a/b c.txt"));
    }
}

#[tokio::test]
async fn not_found_has_the_code_of_the_era() {
    let s = server();
    for v in ERAS {
        let c = connect(&s, v).await;
        let want = if v == MODERN { -32602 } else { -32002 };
        for uri in [
            "docs://nothing-here",
            "docs://missing",
            "users://42/settings",
            "users://42/profile?unknown=1",
        ] {
            let r = read(&c, uri).await;
            assert_eq!(code(&r), want, "{v} {uri}");
            assert_eq!(error_data(&r), Some(json!({ "uri": uri })));
            assert_eq!(
                r.unwrap_err().remote().unwrap().message,
                "Resource not found"
            );
        }
    }
}

#[tokio::test]
async fn bad_requests_and_failures() {
    let s = server();
    for v in ERAS {
        let c = connect(&s, v).await;
        for bad in ["", "no-scheme", "docs://a b", "docs://%zz", "docs://{x}"] {
            let r = read(&c, bad).await;
            assert_eq!(code(&r), -32602, "{v} {bad:?}");
            assert_eq!(error_data(&r), Some(json!({ "uri": bad })));
        }
        assert_eq!(code(&call(&c, "resources/read", json!({})).await), -32602);
        assert_eq!(
            code(&call(&c, "resources/read", json!({"uri": 5})).await),
            -32602
        );
        let r = read(&c, "docs://broken").await;
        assert_eq!(code(&r), -32603);
        assert!(
            r.unwrap_err()
                .remote()
                .unwrap()
                .message
                .contains("the database is down")
        );
    }
}

async fn subscribe(c: &Client, uri: &str) -> JsonObject {
    call(c, "resources/subscribe", json!({ "uri": uri }))
        .await
        .expect("subscribed")
}

#[tokio::test]
async fn legacy_subscriptions_reach_only_subscribers() {
    let s = server();
    let a = connect(&s, LEGACY).await;
    let b = connect(&s, LEGACY).await;
    let mut a_rx = a.events();
    let mut b_rx = b.events();
    assert_eq!(subscribe(&a, "docs://readme").await, JsonObject::new());
    subscribe(&a, "data://logo").await;
    subscribe(&b, "data://logo").await;

    s.notify_resource_updated("docs://readme");
    s.notify_resource_updated("data://logo");
    let updated = "notifications/resources/updated";
    assert_eq!(
        next_notification(&mut a_rx, updated).await,
        object(json!({"uri": "docs://readme"}))
    );
    assert_eq!(
        next_notification(&mut a_rx, updated).await,
        object(json!({"uri": "data://logo"}))
    );
    // b's first update is the logo: it never got the readme's.
    assert_eq!(
        next_notification(&mut b_rx, updated).await,
        object(json!({"uri": "data://logo"}))
    );

    let r = call(&a, "resources/unsubscribe", json!({"uri": "docs://readme"})).await;
    assert_eq!(r.unwrap(), JsonObject::new());
    s.notify_resource_updated("docs://readme");
    s.notify_resource_updated("data://logo");
    assert_eq!(
        next_notification(&mut a_rx, updated).await,
        object(json!({"uri": "data://logo"}))
    );
    assert_eq!(
        next_notification(&mut b_rx, updated).await,
        object(json!({"uri": "data://logo"}))
    );

    // Bad params.
    assert_eq!(
        code(&call(&a, "resources/subscribe", json!({})).await),
        -32602
    );
    assert_eq!(
        code(&call(&a, "resources/subscribe", json!({"uri": "nope"})).await),
        -32602
    );
    assert_eq!(
        code(&call(&a, "resources/unsubscribe", json!({"uri": 1})).await),
        -32602
    );
}

#[tokio::test]
async fn modern_subscriptions_go_through_listen() {
    let s = server();
    let c = connect(&s, MODERN).await;
    // resources/subscribe is not part of 2026-07-28.
    let r = call(&c, "resources/subscribe", json!({"uri": "docs://readme"})).await;
    assert_eq!(code(&r), -32601);

    let mut rx = c.events();
    let peer = c.peer().clone();
    let listen = tokio::spawn(async move {
        peer.request(
            "subscriptions/listen",
            Some(object(json!({
                "notifications": {"resourceSubscriptions": ["docs://readme"], "resourcesListChanged": true}
            }))),
            tessera_proto::RequestOptions::default(),
        )
        .await
    });
    let ack = next_notification(&mut rx, "notifications/subscriptions/acknowledged").await;
    assert_eq!(
        ack["notifications"],
        json!({"resourceSubscriptions": ["docs://readme"], "resourcesListChanged": true})
    );
    let id = ack["_meta"]["io.modelcontextprotocol/subscriptionId"].clone();
    assert!(!id.is_null());

    s.notify_resource_updated("data://logo");
    s.notify_resource_updated("docs://readme");
    let n = next_notification(&mut rx, "notifications/resources/updated").await;
    assert_eq!(n["uri"], json!("docs://readme"), "only the subscribed URI");
    assert_eq!(n["_meta"]["io.modelcontextprotocol/subscriptionId"], id);

    s.add_resource(resource("docs://new", "new").handler(readme))
        .unwrap();
    let n = next_notification(&mut rx, "notifications/resources/list_changed").await;
    assert_eq!(n["_meta"]["io.modelcontextprotocol/subscriptionId"], id);
    listen.abort();
}

#[tokio::test]
async fn list_changes_are_announced() {
    let s = server();
    let c = connect(&s, LEGACY).await;
    let mut rx = c.events();
    let changed = "notifications/resources/list_changed";

    s.add_resource(resource("docs://late", "late").handler(readme))
        .unwrap();
    next_notification(&mut rx, changed).await;
    let (items, _) = all_pages(&c, "resources/list", "resources").await;
    assert!(uris(&items).contains(&"docs://late".to_owned()));
    assert_eq!(
        read(&c, "docs://late").await.unwrap()["contents"][0]["text"],
        json!("# Tessera\n")
    );
    // A duplicate is refused, and nothing is announced for it.
    assert!(
        s.add_resource(resource("docs://late", "again").handler(readme))
            .is_err()
    );

    assert!(s.remove_resource("docs://late"));
    next_notification(&mut rx, changed).await;
    assert!(!s.remove_resource("docs://late"));
    assert_eq!(code(&read(&c, "docs://late").await), -32002);

    s.add_resource_template(resource_template("late://{x}", "late").handler(raw_x))
        .unwrap();
    next_notification(&mut rx, changed).await;
    assert_eq!(
        read(&c, "late://7").await.unwrap()["contents"][0]["text"],
        json!("x=7")
    );
    assert!(s.remove_resource_template("late://{x}"));
    next_notification(&mut rx, changed).await;
    assert_eq!(code(&read(&c, "late://7").await), -32002);
}

async fn raw_x(UriVars(v): UriVars) -> String {
    format!("x={}", v["x"])
}

#[tokio::test]
async fn definitions_are_checked_at_build_time() {
    let dup = Server::builder()
        .resource(resource("docs://a", "a").handler(readme))
        .resource(resource("docs://a", "b").handler(readme))
        .build();
    assert!(dup.is_err());
    let bad_uri = Server::builder()
        .resource(resource("not a uri", "a").handler(readme))
        .build();
    assert!(bad_uri.is_err());
    let bad_template = Server::builder()
        .resource_template(resource_template("x://{unclosed", "t").handler(readme))
        .build();
    let e = bad_template.unwrap_err().to_string();
    assert!(e.contains("never closed"), "{e}");
}

async fn confirm(ctx: RequestContext) -> Result<String, ResourceError> {
    let form: tessera_types::ElicitRequestParams = serde_json::from_value(json!({
        "message": "Show the secret?",
        "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    }))
    .unwrap();
    let answer = ctx
        .elicit_as("confirm", form)
        .await
        .map_err(ResourceError::internal)?;
    Ok(format!(
        "action={}",
        serde_json::to_value(answer).unwrap()["action"]
    ))
}

#[tokio::test]
async fn modern_reads_can_ask_for_input() {
    let s = Server::builder()
        .resource(resource("docs://secret", "secret").handler(confirm))
        .build()
        .unwrap();
    let caps: ClientCapabilities = serde_json::from_value(json!({"elicitation": {}})).unwrap();
    let c = connect_with(&s, MODERN, caps).await;
    let first = read(&c, "docs://secret").await.unwrap();
    assert_eq!(first["resultType"], json!("input_required"));
    assert!(
        !first.contains_key("ttlMs"),
        "interim results carry no cache hints"
    );
    assert!(first["inputRequests"]["confirm"].is_object());
    let retry = call(
        &c,
        "resources/read",
        json!({
            "uri": "docs://secret",
            "inputResponses": {"confirm": {"action": "accept", "content": {"ok": true}}},
            "requestState": first["requestState"],
        }),
    )
    .await
    .unwrap();
    check_cache_hints(&c, &retry);
    assert_eq!(retry["contents"][0]["text"], json!("action=\"accept\""));
}

/// A private-cache server with its own lifetime: the hints of typed lists
/// (`resources/list`) and of results built as trees (`resources/read`) say
/// the same thing, in 2026-07-28 only.
#[tokio::test]
async fn private_cache_and_a_custom_ttl_reach_every_cacheable_result() {
    let server = Server::builder()
        .resource(resource("file:///readme.md", "readme").handler(readme))
        .private_cache()
        .cache_ttl(Duration::from_secs(5))
        .build()
        .expect("builds");
    let client = connect(&server, MODERN).await;
    let list = call(&client, "resources/list", json!({}))
        .await
        .expect("list");
    let read = call(
        &client,
        "resources/read",
        json!({"uri": "file:///readme.md"}),
    )
    .await
    .expect("read");
    for result in [&list, &read] {
        assert_eq!(result["ttlMs"], json!(5_000), "{result:?}");
        assert_eq!(result["cacheScope"], json!("private"), "{result:?}");
    }
    client.close().await;
    let legacy = connect(&server, LEGACY).await;
    let read = call(
        &legacy,
        "resources/read",
        json!({"uri": "file:///readme.md"}),
    )
    .await
    .expect("read");
    assert!(!read.contains_key("cacheScope"), "{read:?}");
    legacy.close().await;
}
