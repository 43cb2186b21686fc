//! The client as a task receiver (2025-11-25), against Tessera's server: a
//! tool sends `elicitation/create` and `sampling/createMessage` to the client
//! as tasks, follows them with `tasks/get`, `tasks/list`, `tasks/result` and
//! `tasks/cancel`, and reports what it saw. The client's handlers are held
//! by gates the tool opens, so every status it observes is deterministic.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Value, json};
use tessera_client::{Client, FormRequest};
use tessera_runtime::PeerError;
use tessera_server::{RequestContext, Server, tool};
use tessera_testkit::prelude::{bounded, builder, in_process};
use tessera_types::{
    CreateMessageRequestParams, CreateMessageResult, ElicitResult, ElicitValue, ErrorObject,
    JsonObject, ProtocolVersion,
};
use tokio::sync::{Notify, mpsc};

fn obj(v: Value) -> Option<JsonObject> {
    v.as_object().cloned()
}

/// A request to the client; a JSON-RPC error comes back as `{"error": …}`
/// so that the tool can report it.
async fn ask(ctx: &RequestContext, method: &str, params: Value) -> Value {
    match ctx.request_client(method, obj(params)).await {
        Ok(r) => Value::Object(r),
        Err(PeerError::Call(tessera_proto::CallError::Remote(e))) => {
            json!({"error": {"code": e.code, "message": e.message}})
        }
        Err(e) => json!({"error": {"code": 0, "message": e.to_string()}}),
    }
}

/// Elicits as a task and follows it: created, get (the handler is still
/// held), list, then opens the gate, waits for the result, gets again.
async fn elicit_as_task(ctx: RequestContext, gate: Arc<Notify>) -> Result<String, String> {
    let caps = ctx.client_capabilities().tasks.clone();
    let created = ask(
        &ctx,
        "elicitation/create",
        json!({
            "message": "Name?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
            "task": {"ttl": 60000}
        }),
    )
    .await;
    let id = created["task"]["taskId"].clone();
    let first = ask(&ctx, "tasks/get", json!({"taskId": id})).await;
    let list = ask(&ctx, "tasks/list", json!({})).await;
    gate.notify_one();
    let result = ask(&ctx, "tasks/result", json!({"taskId": id})).await;
    let last = ask(&ctx, "tasks/get", json!({"taskId": id})).await;
    let again = ask(&ctx, "tasks/cancel", json!({"taskId": id})).await;
    Ok(json!({
        "caps": caps, "created": created, "first": first, "list": list,
        "result": result, "last": last, "cancelAgain": again
    })
    .to_string())
}

/// Samples as a task whose handler never answers, and cancels it.
async fn sample_then_cancel(ctx: RequestContext) -> Result<String, String> {
    let created = ask(
        &ctx,
        "sampling/createMessage",
        json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
            "maxTokens": 10,
            "task": {}
        }),
    )
    .await;
    let id = created["task"]["taskId"].clone();
    let cancelled = ask(&ctx, "tasks/cancel", json!({"taskId": id})).await;
    let result = ask(&ctx, "tasks/result", json!({"taskId": id})).await;
    let unknown = ask(&ctx, "tasks/get", json!({"taskId": "no-such-task"})).await;
    Ok(
        json!({"created": created, "cancelled": cancelled, "result": result, "unknown": unknown})
            .to_string(),
    )
}

/// Sends a task-augmented elicitation to a client that is no task receiver.
async fn elicit_plain(ctx: RequestContext) -> Result<String, String> {
    let caps = ctx.client_capabilities().tasks.clone();
    let answer = ask(
        &ctx,
        "elicitation/create",
        json!({
            "message": "Name?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
            "task": {"ttl": 1000}
        }),
    )
    .await;
    let get = ask(&ctx, "tasks/get", json!({"taskId": "x"})).await;
    Ok(json!({"caps": caps, "answer": answer, "get": get}).to_string())
}

/// Dropped when the sampling handler's future is dropped (the task stopped).
struct Dropped(Option<tokio::sync::oneshot::Sender<()>>);

impl Drop for Dropped {
    fn drop(&mut self) {
        if let Some(t) = self.0.take() {
            let _ = t.send(());
        }
    }
}

async fn connect(
    server: &Server,
    gate: Arc<Notify>,
    receive: bool,
) -> (Client, mpsc::UnboundedReceiver<()>) {
    let (stopped_tx, stopped_rx) = mpsc::unbounded_channel();
    let mut b = builder(ProtocolVersion::V2025_11_25)
        .elicitation(move |_f: FormRequest| {
            let gate = gate.clone();
            async move {
                gate.notified().await;
                let content =
                    BTreeMap::from([("name".to_owned(), ElicitValue::String("Ada".into()))]);
                Ok::<_, ErrorObject>(ElicitResult::accept(content))
            }
        })
        .sampling(move |_r: CreateMessageRequestParams| {
            let (tx, rx) = tokio::sync::oneshot::channel();
            let stopped = stopped_tx.clone();
            tokio::spawn(async move {
                let _ = rx.await;
                let _ = stopped.send(());
            });
            async move {
                let _guard = Dropped(Some(tx));
                std::future::pending::<Result<CreateMessageResult, ErrorObject>>().await
            }
        });
    if receive {
        b = b.receive_tasks();
    }
    (in_process(server, b).await, stopped_rx)
}

fn server(gate: Arc<Notify>) -> Server {
    Server::builder()
        .tool(
            tool("elicit_as_task")
                .handler(move |ctx: RequestContext| elicit_as_task(ctx, gate.clone())),
        )
        .tool(tool("sample_then_cancel").handler(sample_then_cancel))
        .tool(tool("elicit_plain").handler(elicit_plain))
        .build()
        .unwrap()
}

async fn report(client: &Client, name: &str) -> Value {
    let r = bounded(name, client.call_tool(name, json!({})))
        .await
        .expect(name);
    assert_ne!(r.is_error, Some(true), "{name}: {:?}", r.content);
    serde_json::from_str(r.content[0].as_text().expect("text")).expect("a JSON report")
}

#[tokio::test]
async fn an_elicitation_runs_as_a_task_on_the_client() {
    let gate = Arc::new(Notify::new());
    let s = server(gate.clone());
    let (client, _) = connect(&s, gate, true).await;
    let r = report(&client, "elicit_as_task").await;
    assert_eq!(
        r["caps"],
        json!({"list": {}, "cancel": {}, "requests": {
            "sampling": {"createMessage": {}}, "elicitation": {"create": {}}
        }}),
        "{r}"
    );
    let id = r["created"]["task"]["taskId"].as_str().expect("a task id");
    assert_eq!(r["created"]["task"]["status"], "working", "{r}");
    assert_eq!(r["created"]["task"]["ttl"], 60000, "{r}");
    assert_eq!(r["first"]["taskId"], id, "{r}");
    assert_eq!(r["first"]["status"], "working", "{r}");
    assert_eq!(r["list"]["tasks"][0]["taskId"], id, "{r}");
    assert_eq!(r["result"]["action"], "accept", "{r}");
    assert_eq!(r["result"]["content"], json!({"name": "Ada"}), "{r}");
    assert_eq!(
        r["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"], id,
        "{r}"
    );
    assert_eq!(r["last"]["status"], "completed", "{r}");
    assert_eq!(r["cancelAgain"]["error"]["code"], -32602, "{r}");
    client.close().await;
}

#[tokio::test]
async fn a_sampling_task_is_cancelled_and_its_handler_stopped() {
    let gate = Arc::new(Notify::new());
    let s = server(gate.clone());
    let (client, mut stopped) = connect(&s, gate, true).await;
    let r = report(&client, "sample_then_cancel").await;
    assert_eq!(r["created"]["task"]["status"], "working", "{r}");
    assert_eq!(r["cancelled"]["status"], "cancelled", "{r}");
    assert!(
        r["result"]["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("cancelled")),
        "{r}"
    );
    assert_eq!(r["unknown"]["error"]["code"], -32602, "{r}");
    bounded("the sampling handler is stopped", stopped.recv())
        .await
        .expect("the handler's future was dropped");
    client.close().await;
}

#[tokio::test]
async fn without_receive_tasks_requests_are_answered_directly() {
    let gate = Arc::new(Notify::new());
    gate.notify_one();
    let s = server(gate.clone());
    let (client, _) = connect(&s, gate, false).await;
    let r = report(&client, "elicit_plain").await;
    assert_eq!(r["caps"], Value::Null, "no tasks capability: {r}");
    assert_eq!(r["answer"]["action"], "accept", "{r}");
    assert!(r["answer"].get("task").is_none(), "{r}");
    assert!(r["get"]["error"]["code"].as_i64().is_some(), "{r}");
    client.close().await;
}

/// The next `notifications/tasks/status` the scripted server received.
async fn next_status(notes: &mut tessera_testkit::pair::Notes) -> JsonObject {
    loop {
        let (method, params) = bounded("a status notification", notes.recv())
            .await
            .expect("the connection is open");
        if method == "notifications/tasks/status" {
            return params.expect("params");
        }
    }
}

/// Every status change of a task the client runs reaches the server that
/// created it, as the whole task and without related-task metadata:
/// completed, failed (with the reason) and cancelled.
#[tokio::test]
async fn status_changes_are_notified_to_the_server() {
    let gate = Arc::new(Notify::new());
    let held = gate.clone();
    let b = builder(ProtocolVersion::V2025_11_25)
        .elicitation(move |_f: FormRequest| {
            let gate = held.clone();
            async move {
                gate.notified().await;
                Ok::<_, ErrorObject>(ElicitResult::accept(BTreeMap::new()))
            }
        })
        .sampling(|_r: CreateMessageRequestParams| async {
            Err::<CreateMessageResult, _>(ErrorObject::new(-1, "no model here"))
        })
        .receive_tasks();
    let (client, server, mut notes) =
        tessera_testkit::pair::scripted(b, json!({}), &[], |_| async {
            unreachable!("the client sends no requests")
        })
        .await;
    let opts = tessera_proto::RequestOptions::default;
    let elicit = obj(json!({
        "message": "Anything?",
        "requestedSchema": {"type": "object", "properties": {}},
        "task": {"ttl": 30000}
    }));

    // Completed.
    let created = server
        .request("elicitation/create", elicit.clone(), opts())
        .await
        .expect("created");
    let id = created["task"]["taskId"].clone();
    gate.notify_one();
    let n = next_status(&mut notes).await;
    assert_eq!(n["taskId"], id);
    assert_eq!(n["status"], "completed");
    assert_eq!(n["ttl"], 30000);
    assert!(
        n["createdAt"].is_string() && n["lastUpdatedAt"].is_string(),
        "{n:?}"
    );
    assert!(!n.contains_key("_meta"), "no related-task metadata: {n:?}");
    let got = server
        .request("tasks/get", obj(json!({"taskId": id})), opts())
        .await
        .expect("tasks/get");
    assert_eq!(got["status"], "completed");

    // Failed, with the reason.
    let created = server
        .request(
            "sampling/createMessage",
            obj(json!({
                "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                "maxTokens": 5,
                "task": {}
            })),
            opts(),
        )
        .await
        .expect("created");
    let n = next_status(&mut notes).await;
    assert_eq!(n["taskId"], created["task"]["taskId"]);
    assert_eq!(n["status"], "failed");
    assert!(
        n["statusMessage"]
            .as_str()
            .is_some_and(|m| m.contains("no model here")),
        "{n:?}"
    );

    // Cancelled by the server: told once, and not again when the handler
    // would have finished.
    let created = server
        .request("elicitation/create", elicit, opts())
        .await
        .expect("created");
    let id = created["task"]["taskId"].clone();
    let cancelled = server
        .request("tasks/cancel", obj(json!({"taskId": id})), opts())
        .await
        .expect("tasks/cancel");
    assert_eq!(cancelled["status"], "cancelled");
    let n = next_status(&mut notes).await;
    assert_eq!((&n["taskId"], &n["status"]), (&id, &json!("cancelled")));
    gate.notify_one();
    server.request("ping", None, opts()).await.expect("ping");
    assert!(
        std::iter::from_fn(|| notes.try_recv().ok())
            .all(|(m, _)| m != "notifications/tasks/status"),
        "nothing after the terminal status"
    );
    client.close().await;
}

/// `tasks/list` over the wire: pages with opaque cursors, and `-32602` for
/// a cursor the client did not make.
#[tokio::test]
async fn tasks_list_is_paginated_over_the_wire() {
    let b = builder(ProtocolVersion::V2025_11_25)
        .elicitation(|_f: FormRequest| std::future::pending::<Result<ElicitResult, ErrorObject>>())
        .receive_tasks();
    let (client, server, _notes) = tessera_testkit::pair::scripted(b, json!({}), &[], |_| async {
        unreachable!("the client sends no requests")
    })
    .await;
    let opts = tessera_proto::RequestOptions::default;
    let total = tessera_client::MAX_RECEIVED_TASKS;
    let mut ids = Vec::new();
    for _ in 0..total {
        let created = server
            .request(
                "elicitation/create",
                obj(json!({
                    "message": "?",
                    "requestedSchema": {"type": "object", "properties": {}},
                    "task": {}
                })),
                opts(),
            )
            .await
            .expect("created");
        ids.push(created["task"]["taskId"].clone());
    }
    let mut listed = Vec::new();
    let mut params = json!({});
    let mut pages = 0;
    loop {
        let page = server
            .request("tasks/list", obj(params.clone()), opts())
            .await
            .expect("tasks/list");
        pages += 1;
        listed.extend(
            page["tasks"]
                .as_array()
                .expect("tasks")
                .iter()
                .map(|t| t["taskId"].clone()),
        );
        match page.get("nextCursor") {
            Some(c) => params = json!({"cursor": c}),
            None => break,
        }
    }
    assert!(pages > 1, "more than one page for {total} tasks");
    assert_eq!(listed, ids, "every task once, in creation order");
    let e = server
        .request("tasks/list", obj(json!({"cursor": "made-up"})), opts())
        .await
        .expect_err("an unknown cursor");
    match e {
        PeerError::Call(tessera_proto::CallError::Remote(e)) => assert_eq!(e.code, -32602),
        other => panic!("{other:?}"),
    }
    client.close().await;
}
