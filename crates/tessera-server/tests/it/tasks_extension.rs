//! The 2026-07-28 Tasks extension is a `ServerExtension` like any other
//! (`tessera_server::task::TasksExtension`), registered by every server: it
//! is declared, and its methods served, only when some tool can run as a
//! task; it serves 2026-07-28 requests and leaves 2025-11-25 ones (the same
//! method names) to the core.

use serde_json::{Value, json};
use tessera_client::{Client, ClientError};
use tessera_server::task::{TaskSupport, TasksExtension};
use tessera_server::{ExtensionRoutes, Server, ServerExtension, tool};
use tessera_testkit::pair::in_process;
use tessera_types::tasks::TASKS_EXTENSION;
use tessera_types::{Era, JsonObject, ProtocolVersion};

async fn connect(server: &Server, version: ProtocolVersion, tasks: bool) -> Client {
    let mut b = Client::builder("tasks-extension-tests", "1.0").protocol_version(version);
    if tasks {
        b = b.tasks();
    }
    in_process(server, b).await
}

fn params(v: Value) -> Option<JsonObject> {
    v.as_object().cloned()
}

/// The JSON-RPC error code of a request.
async fn code(client: &Client, method: &str, p: Value) -> i64 {
    match client.request_raw(method, params(p)).await {
        Ok(r) => panic!("{method} answered {r:?}"),
        Err(e) => match e {
            ClientError::Request(_) => e.remote().expect("a JSON-RPC error").code,
            other => panic!("{method}: {other}"),
        },
    }
}

fn plain_server() -> Server {
    Server::builder()
        .tool(tool("plain").handler(|| async { "plain" }))
        .build()
        .unwrap()
}

fn task_server(register: bool) -> Server {
    let mut b = Server::builder().tool(
        tool("slow")
            .task_support(TaskSupport::Optional)
            .handler(|| async { "slow" }),
    );
    if register {
        b = b.extension(TasksExtension::default());
    }
    b.build().unwrap()
}

#[test]
fn it_is_a_server_extension_for_the_modern_era() {
    let ext = TasksExtension::default();
    assert_eq!(ext.id(), TASKS_EXTENSION);
    let mut routes = ExtensionRoutes::default();
    ext.routes(&mut routes);
    let routed: Vec<_> = routes.request_methods().collect();
    assert_eq!(
        routed,
        [
            ("tasks/get", Some(Era::Modern)),
            ("tasks/update", Some(Era::Modern)),
            ("tasks/cancel", Some(Era::Modern))
        ]
    );
    assert_eq!(routes.notification_methods().count(), 0);
}

#[tokio::test]
async fn without_task_tools_it_is_neither_declared_nor_served() {
    let s = plain_server();
    let caps = serde_json::to_value(s.capabilities()).unwrap();
    assert!(caps.get("extensions").is_none(), "{caps}");
    assert!(caps.get("tasks").is_none(), "{caps}");
    let c = connect(&s, ProtocolVersion::V2026_07_28, true).await;
    assert!(!c.server_capabilities().has_extension(TASKS_EXTENSION));
    assert_eq!(code(&c, "tasks/get", json!({"taskId": "x"})).await, -32601);
    assert_eq!(
        code(&c, "tasks/cancel", json!({"taskId": "x"})).await,
        -32601
    );
    c.close().await;
}

#[tokio::test]
async fn with_task_tools_it_serves_modern_requests_and_leaves_legacy_ones_to_the_core() {
    for register in [false, true] {
        let s = task_server(register);
        let caps = serde_json::to_value(s.capabilities()).unwrap();
        assert_eq!(caps["extensions"], json!({TASKS_EXTENSION: {}}), "{caps}");
        assert!(
            caps["tasks"]["requests"]["tools"]["call"].is_object(),
            "{caps}"
        );

        let modern = connect(&s, ProtocolVersion::V2026_07_28, true).await;
        assert!(modern.server_capabilities().has_extension(TASKS_EXTENSION));
        let unknown = json!({"taskId": "no-such-task"});
        assert_eq!(code(&modern, "tasks/get", unknown.clone()).await, -32602);
        assert_eq!(code(&modern, "tasks/cancel", unknown.clone()).await, -32602);
        // Removed by the extension.
        assert_eq!(code(&modern, "tasks/result", unknown.clone()).await, -32601);
        assert_eq!(code(&modern, "tasks/list", json!({})).await, -32601);
        // A run of the tool as a task, read back through the extension.
        let r = modern
            .request_raw(
                "tools/call",
                params(json!({"name": "slow", "arguments": {}})),
            )
            .await
            .unwrap();
        assert_eq!(r["resultType"], "task", "{r:?}");
        let got = modern
            .request_raw("tasks/get", params(json!({"taskId": r["taskId"]})))
            .await
            .unwrap();
        assert_eq!(got["taskId"], r["taskId"]);
        modern.close().await;

        // A modern client that did not declare the extension.
        let undeclared = connect(&s, ProtocolVersion::V2026_07_28, false).await;
        assert_eq!(
            code(&undeclared, "tasks/get", unknown.clone()).await,
            -32021
        );
        undeclared.close().await;

        // 2025-11-25: the core's tasks methods, not the extension's.
        let legacy = connect(&s, ProtocolVersion::V2025_11_25, false).await;
        assert_eq!(code(&legacy, "tasks/get", unknown).await, -32602);
        let listed = legacy.request_raw("tasks/list", None).await.unwrap();
        assert_eq!(listed["tasks"], json!([]));
        legacy.close().await;
    }
}
