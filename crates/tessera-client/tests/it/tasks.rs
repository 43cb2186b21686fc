//! The client's task API against an in-process server, in both eras: a call
//! that becomes a task, awaited with the input it needs answered by the
//! client's elicitation handler; a task cancelled through its handle; a
//! task's progress counted at the caller's callback. Also the order of an
//! elicitation form's properties as the client's form handler sees them.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tessera_client::task::TaskState;
use tessera_client::{CallOptions, TaskOptions, ToolCallOutcome};
use tessera_server::task::TaskStart;
use tessera_server::{RequestContext, Server, tool};
use tessera_testkit::prelude::{ERAS, bounded, builder, in_process};
use tessera_types::tasks::TaskStatus;
use tessera_types::tool::TaskSupport;
use tessera_types::{ElicitRequestParams, ElicitResult, ElicitValue, ErrorObject, ProtocolVersion};
use tokio::sync::{Notify, watch};

async fn ask_name(ctx: RequestContext) -> Result<String, String> {
    let form: ElicitRequestParams = serde_json::from_value(json!({
        "message": "Name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    }))
    .unwrap();
    let r = ctx.elicit_with(form).await.map_err(|e| e.to_string())?;
    let name = serde_json::to_value(&r).unwrap()["content"]["name"]
        .as_str()
        .unwrap_or("?")
        .to_owned();
    Ok(format!(
        "hello {name} from {}",
        ctx.task_id().map_or("no task", |_| "a task")
    ))
}

async fn forever(ctx: RequestContext) -> &'static str {
    ctx.cancelled().await;
    "stopped"
}

fn server() -> Server {
    Server::builder()
        .tool(
            tool("ask_name")
                .task_support(TaskSupport::Optional)
                .handler(ask_name),
        )
        .tool(
            tool("forever")
                .task_support(TaskSupport::Required)
                .handler(forever),
        )
        .build()
        .unwrap()
}

fn client_builder(v: ProtocolVersion) -> tessera_client::ClientBuilder {
    builder(v)
        .tasks()
        .elicitation(|_f: tessera_client::FormRequest| async move {
            let content = BTreeMap::from([("name".to_owned(), ElicitValue::String("Ada".into()))]);
            Ok::<_, ErrorObject>(ElicitResult::accept(content))
        })
}

#[tokio::test(start_paused = true)]
async fn a_task_is_awaited_with_its_input_answered() {
    for v in ERAS {
        let s = server();
        let client = in_process(&s, client_builder(v)).await;
        let out = bounded(
            "the call",
            client.call_tool_as_task(
                "ask_name",
                (),
                TaskOptions::default().ttl(Duration::from_secs(60)),
            ),
        )
        .await
        .unwrap();
        let ToolCallOutcome::Task(handle) = out else {
            panic!("{v}: expected a task, got {out:?}");
        };
        let mut seen: Vec<TaskStatus> = Vec::new();
        let result = bounded("the task", handle.wait(|s: &TaskState| seen.push(s.status)))
            .await
            .unwrap();
        assert_eq!(
            result.content[0].as_text(),
            Some("hello Ada from a task"),
            "{v}: {result:?}"
        );
        // Every change seen is reported once; the last one is the end.
        assert_eq!(seen.last(), Some(&TaskStatus::Completed), "{v}: {seen:?}");
        assert!(seen.windows(2).all(|w| w[0] != w[1]), "{v}: {seen:?}");
        let s = handle.status().await.unwrap();
        assert_eq!(s.status, TaskStatus::Completed, "{v}");
        if v == ProtocolVersion::V2025_11_25 {
            let (tasks, next) = client.list_tasks(None).await.unwrap();
            assert_eq!(tasks.len(), 1);
            assert_eq!(tasks[0].task_id, handle.id());
            assert_eq!(next, None);
        }
        client.close().await;
    }
}

#[tokio::test(start_paused = true)]
async fn a_task_is_cancelled_through_its_handle() {
    for v in ERAS {
        let s = server();
        let client = in_process(&s, client_builder(v)).await;
        let ToolCallOutcome::Task(handle) = client
            .call_tool_as_task("forever", (), TaskOptions::default())
            .await
            .unwrap()
        else {
            panic!("{v}: expected a task");
        };
        assert_eq!(handle.status().await.unwrap().status, TaskStatus::Working);
        handle.cancel().await.unwrap();
        assert_eq!(
            handle.status().await.unwrap().status,
            TaskStatus::Cancelled,
            "{v}"
        );
        let r = bounded("waiting on a cancelled task", handle.wait(|_| {})).await;
        assert!(r.is_err(), "{v}: {r:?}");
        client.close().await;
    }
}

/// A tool that reports progress twice, waits for the test's go-ahead (so the
/// call becomes a task in both designs), reports once more and finishes.
fn stepping_server(go: Arc<Notify>) -> Server {
    Server::builder()
        .tool(
            tool("steps")
                .task_support(TaskSupport::Optional)
                .task_start(TaskStart::AfterInput)
                .handler(move |ctx: RequestContext| {
                    let go = go.clone();
                    async move {
                        ctx.progress(1.0, Some(3.0), Some("one"));
                        ctx.progress(2.0, Some(3.0), Some("two"));
                        go.notified().await;
                        ctx.progress(3.0, Some(3.0), Some("three"));
                        "stepped"
                    }
                }),
        )
        .build()
        .unwrap()
}

#[tokio::test(start_paused = true)]
async fn task_progress_reaches_the_callback() {
    for v in ERAS {
        let go = Arc::new(Notify::new());
        let s = stepping_server(go.clone());
        let client = in_process(&s, client_builder(v)).await;
        let (count, mut counted) = watch::channel(Vec::<f64>::new());
        let options =
            CallOptions::new().on_progress(move |p| count.send_modify(|c| c.push(p.progress)));
        let out = bounded(
            "the call",
            client.call_tool_as_task(
                "steps",
                (),
                TaskOptions::default()
                    .ttl(Duration::from_secs(60))
                    .call_options(options),
            ),
        )
        .await
        .unwrap();
        let ToolCallOutcome::Task(handle) = out else {
            panic!("{v}: expected a task, got {out:?}");
        };
        // The two reports made before the call became a task arrive: in
        // 2025-11-25 as the task's progress, in 2026-07-28 on the call itself.
        bounded("two reports", counted.wait_for(|c| c.len() >= 2))
            .await
            .unwrap();
        go.notify_one();
        let result = bounded("the task", handle.wait(|_| {})).await.unwrap();
        assert_eq!(result.content[0].as_text(), Some("stepped"), "{v}");
        let seen = counted.borrow().clone();
        match v {
            // The token stays valid for the task's life: the third report
            // arrives too, before the result.
            ProtocolVersion::V2025_11_25 => assert_eq!(seen, [1.0, 2.0, 3.0], "{v}"),
            // The extension has no progress for tasks: only the call's two.
            _ => assert_eq!(seen, [1.0, 2.0], "{v}"),
        }
        client.close().await;
    }
}

/// What a booking form asks, in the order the struct declares it.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[allow(dead_code)]
struct Booking {
    /// Who books.
    name: String,
    /// How many come.
    guests: u32,
}

async fn book(ctx: RequestContext) -> Result<String, String> {
    let schema =
        tessera_server::schema::elicitation_schema::<Booking>().map_err(|e| e.to_string())?;
    let form = tessera_types::ElicitRequestFormParams::new("Book a table", schema);
    let r = ctx.elicit_with(form).await.map_err(|e| e.to_string())?;
    Ok(format!("{:?}", r.action))
}

/// A form made from a `#[derive(JsonSchema)]` struct reaches the client's
/// form handler with its properties in declaration order (name before
/// guests, which sorted JSON objects would swap), in both eras.
#[tokio::test(start_paused = true)]
async fn elicitation_forms_keep_their_declared_order() {
    for v in ERAS {
        let s = Server::builder()
            .tool(tool("book").handler(book))
            .build()
            .unwrap();
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let log = seen.clone();
        let b = builder(v).elicitation(move |f: tessera_client::FormRequest| {
            let log = log.clone();
            async move {
                let typed: Vec<String> = f.requested_schema.properties.keys().cloned().collect();
                let raw = tessera_types::property_order(&f.raw_schema);
                log.lock().unwrap().push((typed, raw));
                Ok::<_, ErrorObject>(ElicitResult::action(tessera_types::ElicitAction::Decline))
            }
        });
        let client = in_process(&s, b).await;
        let out = bounded("the call", client.call_tool("book", json!({}))).await;
        assert!(out.is_ok(), "{v}: {out:?}");
        let seen = seen.lock().unwrap().clone();
        assert_eq!(seen.len(), 1, "{v}");
        assert_eq!(seen[0].0, ["name", "guests"], "{v}");
        assert_eq!(seen[0].1, ["name", "guests"], "{v}");
        client.close().await;
    }
}
