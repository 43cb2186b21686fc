//! The inspector's HTTP API (documented in crates/tessera/guide/inspector.md): connections,
//! tools, resources, prompts, log level, and the event stream of the
//! [`Journal`](super::journal::Journal). Every route answers JSON; failures
//! are [`Problem`]s.

use std::convert::Infallible;

use axum::Json;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use futures::{Stream, StreamExt};
use serde::Deserialize;
use serde_json::{Value, json};
use tessera::client::{TaskOptions, ToolCallOutcome};
use tessera::types::{JsonObject, LoggingLevel, methods};
use tokio::sync::broadcast::error::RecvError;

use super::asks::Answer as AskAnswer;
use super::forward::{
    Answer, CompleteBody, PromptBody, Prompts, ReadBody, Resources, Templates, Tools, done,
    forward, list,
};
use super::hub::{Hub, Outcome, Spec};
use super::journal::Entry;
use super::output_check;
use super::problem::{Body, Problem};

/// The API routes (under `/api`), over the connections of `hub`.
pub fn routes(hub: Hub) -> Router {
    Router::new()
        .route("/api/info", get(info))
        .route("/api/events", get(events))
        .route("/api/config", get(config))
        .route(
            "/api/config/servers/{name}",
            put(config_put).delete(config_remove),
        )
        .route("/api/connections", get(list_connections).post(connect))
        .route("/api/connections/{id}", get(connection).delete(disconnect))
        .route("/api/connections/{id}/ping", post(ping))
        .route("/api/connections/{id}/tools", get(list::<Tools>))
        .route("/api/connections/{id}/tools/call", post(call_tool))
        .route("/api/connections/{id}/calls/{call}/cancel", post(cancel))
        .route("/api/connections/{id}/tasks", get(list_tasks))
        .route("/api/connections/{id}/server-tasks", get(server_tasks))
        .route(
            "/api/connections/{id}/tasks/{task}/cancel",
            post(cancel_task),
        )
        .route("/api/connections/{id}/resources", get(list::<Resources>))
        .route(
            "/api/connections/{id}/resource-templates",
            get(list::<Templates>),
        )
        .route(
            "/api/connections/{id}/resources/read",
            post(forward::<ReadBody>),
        )
        .route(
            "/api/connections/{id}/resources/subscribe",
            post(subscription::<true>),
        )
        .route(
            "/api/connections/{id}/resources/unsubscribe",
            post(subscription::<false>),
        )
        .route("/api/connections/{id}/prompts", get(list::<Prompts>))
        .route(
            "/api/connections/{id}/prompts/get",
            post(forward::<PromptBody>),
        )
        .route("/api/connections/{id}/logging/level", post(set_level))
        .route(
            "/api/connections/{id}/complete",
            post(forward::<CompleteBody>),
        )
        .route("/api/connections/{id}/load", post(load_start))
        .route("/api/load/{run}/stop", post(load_stop))
        .route("/api/connections/{id}/skills", get(skills_list))
        .route("/api/connections/{id}/skills/verify", post(skills_verify))
        .route("/api/connections/{id}/request", post(any_request))
        .route("/api/connections/{id}/apps/view", post(super::apps::view))
        .route(
            "/api/connections/{id}/documents",
            post(super::apps::document),
        )
        .route("/api/login", post(super::signin::start))
        .route("/api/asks", get(list_asks))
        .route(
            "/api/sampling-auto",
            get(get_auto_reply).put(put_auto_reply),
        )
        .route("/api/asks/{ask}", post(answer_ask))
        .route("/api/transcript", get(transcript))
        .with_state(hub)
}

async fn info(State(hub): State<Hub>) -> Answer {
    Ok(Json(json!({
        "version": env!("CARGO_PKG_VERSION"),
        "protocolVersions": tessera::types::ProtocolVersion::ALL.iter().map(|v| v.as_str()).collect::<Vec<_>>(),
        "connections": hub.list().iter().map(|c| c.describe()).collect::<Vec<_>>(),
        "sandboxPort": hub.sandbox_port(),
    })))
}

fn data(e: &Entry) -> Event {
    Event::default().id(e.seq.to_string()).data(&*e.text)
}

/// The journal as Server-Sent Events: `hello` (with how many old events
/// were dropped), the history kept, then each new event as it happens. A
/// stream that falls too far behind gets `lagged` and ends; the browser's
/// `EventSource` reconnects and receives the history again.
async fn events(State(hub): State<Hub>) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let (kept, dropped, live) = hub.journal().follow();
    let last = kept.last().map_or(0, |e| e.seq);
    let hello = Event::default()
        .event("hello")
        .data(json!({"dropped": dropped}).to_string());
    let head = futures::stream::iter(
        std::iter::once(hello)
            .chain(kept.iter().map(data))
            .collect::<Vec<_>>(),
    );
    let tail = futures::stream::unfold(Some(live), move |rx| async move {
        let mut rx = rx?;
        loop {
            match rx.recv().await {
                Ok(e) if e.seq <= last => continue,
                Ok(e) => return Some((data(&e), Some(rx))),
                Err(RecvError::Lagged(_)) => {
                    return Some((Event::default().event("lagged").data("{}"), None));
                }
                Err(RecvError::Closed) => return None,
            }
        }
    });
    Sse::new(head.chain(tail).map(Ok)).keep_alive(KeepAlive::default())
}

fn config_path(hub: &Hub) -> Result<std::path::PathBuf, Problem> {
    hub.config_path().map(Into::into).ok_or_else(|| {
        Problem::bad_request(
            "no configuration file: set $TESSERA_CONFIG (or $HOME) or give --config",
        )
    })
}

/// `PUT /api/config/servers/{name}`: adds or replaces a server of the file.
async fn config_put(
    State(hub): State<Hub>,
    Path(name): Path<String>,
    Body(entry): Body<Value>,
) -> Result<StatusCode, Problem> {
    super::config_file::put(&config_path(&hub)?, &name, entry)?;
    Ok(StatusCode::NO_CONTENT)
}

/// `DELETE /api/config/servers/{name}`.
async fn config_remove(
    State(hub): State<Hub>,
    Path(name): Path<String>,
) -> Result<StatusCode, Problem> {
    if super::config_file::remove(&config_path(&hub)?, &name)? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(Problem::not_found(format!(
            "no server {name:?} in the file"
        )))
    }
}

/// `GET /api/config`: the named servers of the configuration file, as the
/// Servers tab lists them (environment and header values left out: they
/// often hold secrets).
async fn config(State(hub): State<Hub>) -> Answer {
    let Some(path) = hub.config_path() else {
        return Ok(Json(json!({"path": null, "servers": []})));
    };
    let shown = path.display().to_string();
    let Some(text) = crate::config::read_text(path).map_err(Problem::bad_request)? else {
        return Ok(Json(json!({"path": shown, "exists": false, "servers": []})));
    };
    let file = crate::config::parse(path, &text).map_err(Problem::bad_request)?;
    let servers: Vec<Value> = file
        .mcp_servers
        .iter()
        .map(|(name, entry)| match entry.resolve() {
            Ok(crate::config::Named::Command { program, args, env }) => json!({
                "name": name, "command": program, "args": args,
                "env": env.into_iter().map(|(k, _)| k).collect::<Vec<_>>(),
            }),
            Ok(crate::config::Named::Url { url, headers }) => json!({
                "name": name, "url": url,
                "headers": headers.iter().filter_map(|h| h.split(':').next()).collect::<Vec<_>>(),
            }),
            Err(why) => json!({"name": name, "problem": why}),
        })
        .collect();
    Ok(Json(
        json!({"path": shown, "exists": true, "servers": servers}),
    ))
}

async fn list_connections(State(hub): State<Hub>) -> Answer {
    Ok(Json(json!({
        "connections": hub.list().iter().map(|c| c.describe()).collect::<Vec<_>>()
    })))
}

async fn connect(State(hub): State<Hub>, Body(spec): Body<Spec>) -> Answer {
    let conn = hub.connect(&spec).await?;
    Ok(Json(conn.describe()))
}

async fn connection(State(hub): State<Hub>, Path(id): Path<u64>) -> Answer {
    Ok(Json(hub.get(id)?.describe()))
}

async fn disconnect(State(hub): State<Hub>, Path(id): Path<u64>) -> Response {
    if hub.close(id).await {
        StatusCode::NO_CONTENT.into_response()
    } else {
        Problem::not_found(format!("no connection {id}")).into_response()
    }
}

async fn ping(State(hub): State<Hub>, Path(id): Path<u64>) -> Answer {
    let c = hub.get(id)?;
    let took = c
        .client
        .ping()
        .await
        .map_err(|e| Problem::client(&e, "ping"))?;
    Ok(Json(json!({"ms": took.as_secs_f64() * 1000.0})))
}

/// `POST …/tools/call`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CallBody {
    name: String,
    #[serde(default)]
    arguments: Option<JsonObject>,
    /// Names the call for progress events and `…/calls/{call}/cancel`.
    #[serde(default)]
    call_id: Option<String>,
    /// Call as a task (`tools/call` task-augmented in 2025-11-25; in
    /// 2026-07-28 the server decides, if the client declared the extension).
    #[serde(default)]
    task: bool,
    /// The task's lifetime in milliseconds (2025-11-25).
    #[serde(default)]
    ttl: Option<u64>,
}

/// The most bytes of a call id.
const MAX_CALL_ID: usize = 128;

async fn call_tool(
    State(hub): State<Hub>,
    Path(id): Path<u64>,
    Body(body): Body<CallBody>,
) -> Answer {
    let c = hub.get(id)?;
    if body.call_id.as_ref().is_some_and(|i| i.len() > MAX_CALL_ID) {
        return Err(Problem::bad_request(format!(
            "callId: at most {MAX_CALL_ID} bytes"
        )));
    }
    if body.task {
        let outcome = c
            .client
            .call_tool_as_task(
                &body.name,
                body.arguments,
                TaskOptions {
                    ttl: body.ttl,
                    ..TaskOptions::default()
                },
            )
            .await
            .map_err(|e| Problem::client(&e, methods::TOOLS_CALL))?;
        return Ok(Json(match outcome {
            ToolCallOutcome::Done(typed) => {
                let result = match serde_json::to_value(&typed) {
                    Ok(Value::Object(o)) => o,
                    _ => JsonObject::new(),
                };
                let check = output_check::check(c.tool(&body.name).as_ref(), &result);
                json!({"result": result, "outputCheck": check, "task": null})
            }
            ToolCallOutcome::Task(handle) => {
                let id = handle.id().to_owned();
                c.tasks.follow(c.id, handle, hub.journal().clone())?;
                json!({"task": {"taskId": id}})
            }
        }));
    }
    let mut params = JsonObject::new();
    params.insert("name".into(), json!(body.name));
    if let Some(a) = body.arguments {
        params.insert("arguments".into(), Value::Object(a));
    }
    let outcome = c
        .call(hub.journal(), methods::TOOLS_CALL, params, body.call_id)
        .await?;
    Ok(Json(match outcome {
        Outcome::Cancelled => json!({"cancelled": true}),
        Outcome::Done(result) => {
            let check = output_check::check(c.tool(&body.name).as_ref(), &result);
            json!({"result": result, "outputCheck": check})
        }
    }))
}

async fn cancel(State(hub): State<Hub>, Path((id, call)): Path<(u64, String)>) -> Response {
    match hub.get(id) {
        Ok(c) if c.cancel(&call) => StatusCode::NO_CONTENT.into_response(),
        Ok(_) => Problem::not_found(format!("no call {call:?} in flight")).into_response(),
        Err(p) => p.into_response(),
    }
}

async fn list_tasks(State(hub): State<Hub>, Path(id): Path<u64>) -> Answer {
    Ok(Json(json!({"tasks": hub.get(id)?.tasks.list()})))
}

/// The most pages of `tasks/list` read.
const MAX_TASK_PAGES: usize = 20;

/// `GET …/server-tasks`: the server's own list (2025-11-25 `tasks/list`;
/// the 2026-07-28 extension has none: 409).
async fn server_tasks(State(hub): State<Hub>, Path(id): Path<u64>) -> Answer {
    let c = hub.get(id)?;
    let mut all = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_TASK_PAGES {
        let (page, next) = c
            .client
            .list_tasks(cursor.as_deref())
            .await
            .map_err(|e| Problem::client(&e, methods::TASKS_LIST))?;
        all.extend(page.into_iter().map(|t| Value::Object(t.raw)));
        match next {
            Some(n) if Some(&n) != cursor.as_ref() => cursor = Some(n),
            _ => break,
        }
    }
    Ok(Json(json!({"tasks": all})))
}

async fn cancel_task(
    State(hub): State<Hub>,
    Path((id, task)): Path<(u64, String)>,
) -> Result<StatusCode, Problem> {
    hub.get(id)?.tasks.cancel(&task).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `POST …/resources/subscribe` (`ON`) or `…/unsubscribe`.
async fn subscription<const ON: bool>(
    State(hub): State<Hub>,
    Path(id): Path<u64>,
    Body(body): Body<ReadBody>,
) -> Result<StatusCode, Problem> {
    let c = hub.get(id)?;
    if ON {
        c.subscriptions
            .subscribe(&c.client, id, &body.uri, hub.journal())
            .await?;
    } else {
        c.subscriptions
            .unsubscribe(&c.client, id, &body.uri, hub.journal())
            .await?;
    }
    Ok(StatusCode::NO_CONTENT)
}

/// `POST …/load`: starts a load run of one tool; its progress comes as
/// `load` events, its summary as `loadDone`.
async fn load_start(
    State(hub): State<Hub>,
    Path(id): Path<u64>,
    Body(spec): Body<super::load::LoadSpec>,
) -> Answer {
    let c = hub.get(id)?;
    let run = hub
        .runs()
        .start(id, c.origin.clone(), spec, hub.journal().clone())?;
    Ok(Json(json!({"run": run})))
}

async fn load_stop(State(hub): State<Hub>, Path(run): Path<u64>) -> Result<StatusCode, Problem> {
    if hub.runs().stop(run, hub.journal()) {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(Problem::not_found(format!("no load run {run}")))
    }
}

async fn skills_list(State(hub): State<Hub>, Path(id): Path<u64>) -> Answer {
    Ok(Json(super::skills::list(&hub.get(id)?.client).await?))
}

async fn skills_verify(
    State(hub): State<Hub>,
    Path(id): Path<u64>,
    Body(body): Body<ReadBody>,
) -> Answer {
    Ok(Json(
        super::skills::verify(&hub.get(id)?.client, &body.uri).await?,
    ))
}

/// `POST …/request`: any request (the Protocol tab's Replay).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RequestBody {
    method: String,
    #[serde(default)]
    params: Option<JsonObject>,
    #[serde(default)]
    call_id: Option<String>,
}

async fn any_request(
    State(hub): State<Hub>,
    Path(id): Path<u64>,
    Body(body): Body<RequestBody>,
) -> Answer {
    let c = hub.get(id)?;
    if body.method == methods::INITIALIZE || body.method.starts_with("notifications/") {
        return Err(Problem::bad_request(format!(
            "{}: the connection's lifecycle and notifications belong to the client; connect again instead",
            body.method
        )));
    }
    let mut params = body.params.unwrap_or_default();
    // The client writes its own `_meta` (version, capabilities, progress token).
    params.remove("_meta");
    done(
        c.call(hub.journal(), &body.method, params, body.call_id)
            .await?,
    )
}

/// `POST …/logging/level`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LevelBody {
    level: String,
}

async fn set_level(
    State(hub): State<Hub>,
    Path(id): Path<u64>,
    Body(body): Body<LevelBody>,
) -> Answer {
    let c = hub.get(id)?;
    let level: LoggingLevel = serde_json::from_value(json!(body.level)).map_err(|_| {
        Problem::bad_request(format!(
            "level {:?}: expected debug, info, notice, warning, error, critical, alert or emergency",
            body.level
        ))
    })?;
    c.set_level(level).await?;
    Ok(Json(c.describe()))
}

async fn list_asks(State(hub): State<Hub>) -> Answer {
    Ok(Json(json!({"asks": hub.asks().list()})))
}

/// `PUT /api/sampling-auto`: `{"text", "model"?}` answers every sampling
/// request at once with that text; `{"text": null}` asks the user again.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AutoReplyBody {
    text: Option<String>,
    #[serde(default)]
    model: Option<String>,
}

async fn get_auto_reply(State(hub): State<Hub>) -> Answer {
    Ok(Json(json!({"auto": hub.asks().auto_reply()})))
}

async fn put_auto_reply(State(hub): State<Hub>, Body(body): Body<AutoReplyBody>) -> Answer {
    let reply = body.text.map(|text| super::asks::AutoReply {
        text,
        model: body.model.unwrap_or_else(|| "tessera-inspect".into()),
    });
    hub.asks()
        .set_auto_reply(reply)
        .map_err(Problem::bad_request)?;
    Ok(Json(json!({"auto": hub.asks().auto_reply()})))
}

/// `POST /api/asks/{ask}`: exactly one of `reply` (the result to send) and
/// `reject` (a message).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AskBody {
    #[serde(default)]
    reply: Option<Value>,
    #[serde(default)]
    reject: Option<String>,
}

async fn answer_ask(
    State(hub): State<Hub>,
    Path(ask): Path<u64>,
    Body(body): Body<AskBody>,
) -> Response {
    let answer = match (body.reply, body.reject) {
        (Some(r), None) => AskAnswer::Reply(r),
        (None, Some(why)) => AskAnswer::Reject(why),
        _ => {
            return Problem::bad_request("give exactly one of reply or reject").into_response();
        }
    };
    if hub.asks().answer(ask, answer) {
        StatusCode::NO_CONTENT.into_response()
    } else {
        Problem::not_found(format!("no question {ask} is waiting")).into_response()
    }
}

/// `GET /api/transcript`: every event the journal keeps, as one JSON file.
async fn transcript(State(hub): State<Hub>) -> Response {
    let (kept, dropped, _) = hub.journal().follow();
    let events: Vec<Value> = kept
        .iter()
        .filter_map(|e| serde_json::from_str(&e.text).ok())
        .collect();
    let body = json!({
        "format": "tessera-inspect-transcript",
        "version": 1,
        "tessera": env!("CARGO_PKG_VERSION"),
        "droppedBefore": dropped,
        "events": events,
    });
    (
        [(
            axum::http::header::CONTENT_DISPOSITION,
            "attachment; filename=\"tessera-transcript.json\"",
        )],
        Json(body),
    )
        .into_response()
}
