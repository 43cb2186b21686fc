//! The public extension API, both roles and both eras: declarations read by
//! the peer, extension methods in both directions, extension notifications,
//! entries added to a core result's `_meta`.

use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tessera_client::{ClientExtension, ClientRoutes};
use tessera_server::{
    DeclaredSettings, ExtensionRoutes, RequestContext, Server, ServerExtension, tool,
};
use tessera_testkit::prelude::{ERAS, bounded, builder, in_process, obj};
use tessera_types::{
    CacheScope, Cacheable, Era, ErrorObject, ExtensionSettings, JsonObject, ListToolsResult,
};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct DemoSettings {
    #[serde(default)]
    level: u32,
}

impl ExtensionSettings for DemoSettings {
    const ID: &'static str = "com.example/demo";
}

/// The server half: `demo/echo` (answers with what the client declared),
/// `demo/ask` (asks the client `demo/question` in the legacy era), takes
/// `notifications/demo/poke`, adds its entry to every `tools/list` result's
/// `_meta`.
#[derive(Default)]
struct DemoServer {
    pokes: Arc<Mutex<Vec<JsonObject>>>,
}

#[derive(Deserialize)]
struct EchoParams {
    x: i64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct EchoResult {
    params: Value,
    client_level: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ttl_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_scope: Option<CacheScope>,
}

impl Cacheable for EchoResult {
    fn cache_fields_mut(&mut self) -> (&mut Option<u64>, &mut Option<CacheScope>) {
        (&mut self.ttl_ms, &mut self.cache_scope)
    }
}

/// No params.
#[derive(Deserialize)]
struct NoParams {}

#[derive(Serialize)]
struct AskResult {
    answer: JsonObject,
}

impl ServerExtension for DemoServer {
    fn id(&self) -> &str {
        DemoSettings::ID
    }
    fn settings(&self) -> DeclaredSettings {
        DeclaredSettings::of(&DemoSettings { level: 7 })
    }
    fn routes(&self, routes: &mut ExtensionRoutes) {
        routes.method("demo/echo", |request, p: EchoParams| async move {
            let declared = request
                .context()
                .client_extension::<DemoSettings>()
                .transpose()
                .map_err(|e| ErrorObject::invalid_params(e.to_string()))?;
            let mut result = EchoResult {
                params: json!({"x": p.x}),
                client_level: declared.map(|d| d.level),
                ttl_ms: None,
                cache_scope: None,
            };
            request.cache_hints(&mut result);
            Ok(result)
        });
        routes.method("demo/ask", |request, _: NoParams| async move {
            let ctx = request.context().clone();
            let _ = ctx.peer().notify("notifications/demo/tick", None, None);
            let answer = ctx
                .request_client("demo/question", Some(obj(json!({"q": "colour?"}))))
                .await
                .map_err(|e| ErrorObject::internal(e.to_string()))?;
            Ok(AskResult { answer })
        });
        let pokes = self.pokes.clone();
        routes.notification_method("notifications/demo/poke", move |p: JsonObject, _peer| {
            pokes.lock().unwrap().push(p);
            async {}
        });
    }
    fn on_tools_list(&self, context: &RequestContext, result: &mut ListToolsResult) {
        result.meta.get_or_insert_with(JsonObject::new).insert(
            DemoSettings::ID.into(),
            json!({"clientDeclared": context.client_declares_extension(DemoSettings::ID)}),
        );
    }
}

/// The client half: declares level 3 and answers `demo/question`.
struct DemoClient {
    notes: Arc<Mutex<Vec<String>>>,
}

/// `demo/question`'s params and answer.
#[derive(Deserialize)]
struct Question {
    q: Value,
}

#[derive(Serialize)]
struct Reply {
    asked: Value,
    reply: &'static str,
}

impl ClientExtension for DemoClient {
    fn id(&self) -> &str {
        DemoSettings::ID
    }
    fn settings(&self) -> DeclaredSettings {
        DeclaredSettings::of(&DemoSettings { level: 3 })
    }
    fn routes(&self, routes: &mut ClientRoutes) {
        routes.method("demo/question", |p: Question| async move {
            Ok(Reply {
                asked: p.q,
                reply: "blue",
            })
        });
        let notes = self.notes.clone();
        routes.notification_method("notifications/demo/tick", move |_: JsonObject| {
            notes
                .lock()
                .unwrap()
                .push("notifications/demo/tick".to_owned());
        });
    }
}

async fn noop() -> &'static str {
    "ok"
}

fn server(pokes: Arc<Mutex<Vec<JsonObject>>>) -> Server {
    Server::builder()
        .tool(tool("noop").handler(noop))
        .extension(DemoServer { pokes })
        .build()
        .unwrap()
}

#[tokio::test]
async fn declarations_methods_and_result_fields_in_both_eras() {
    for version in ERAS {
        let pokes = Arc::new(Mutex::new(Vec::new()));
        let notes = Arc::new(Mutex::new(Vec::new()));
        let srv = server(pokes.clone());
        let client = in_process(
            &srv,
            builder(version).extension(DemoClient {
                notes: notes.clone(),
            }),
        )
        .await;

        // Each side reads the other's typed settings.
        let declared = client.server_extension::<DemoSettings>().unwrap().unwrap();
        assert_eq!(declared.level, 7, "{version}");
        assert!(client.capabilities().has_extension(DemoSettings::ID));

        // An extension method, with the client's declaration seen per request.
        let r = bounded(
            "demo/echo",
            client.request_raw("demo/echo", Some(obj(json!({"x": 1})))),
        )
        .await
        .unwrap();
        assert_eq!(r["params"], json!({"x": 1}), "{version}");
        assert_eq!(r["clientLevel"], json!(3), "{version}");
        match version.era() {
            Era::Modern => assert!(r.contains_key("ttlMs") && r.contains_key("cacheScope")),
            Era::Legacy => assert!(!r.contains_key("ttlMs")),
        }

        // A core result with the extension's field.
        let tools = bounded("tools/list", client.request_raw("tools/list", None))
            .await
            .unwrap();
        assert_eq!(
            tools["_meta"][DemoSettings::ID],
            json!({"clientDeclared": true}),
            "{version}"
        );

        // A server-to-client extension request (legacy sessions only: a
        // 2026-07-28 server cannot send requests of its own).
        if version.era() == Era::Legacy {
            let r = bounded("demo/ask", client.request_raw("demo/ask", None))
                .await
                .unwrap();
            assert_eq!(r["answer"], json!({"asked": "colour?", "reply": "blue"}));
            // The notification sent before the answer reached the client extension.
            assert_eq!(*notes.lock().unwrap(), ["notifications/demo/tick"]);
        }

        // An extension notification reaches the server extension (it is
        // handled before the next request's answer in a legacy session).
        let _ = client
            .peer()
            .notify("notifications/demo/poke", Some(obj(json!({"n": 1}))), None);
        if version.era() == Era::Legacy {
            bounded("ping", client.ping()).await.unwrap();
            assert_eq!(pokes.lock().unwrap().len(), 1);
        }

        // Unknown methods stay unknown.
        let e = bounded("demo/nope", client.request_raw("demo/nope", None)).await;
        assert!(e.is_err());
        client.close().await;
    }
}

#[test]
fn clashing_extensions_fail_the_build() {
    let e = Server::builder()
        .extension(DemoServer::default())
        .extension(DemoServer::default())
        .build()
        .unwrap_err();
    assert!(e.to_string().contains("registered twice"), "{e}");
}
