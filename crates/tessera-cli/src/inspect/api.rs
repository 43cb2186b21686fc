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
use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tessera::client::{TaskOptions, ToolCallOutcome};
use tessera::types::{CallToolRequestParams, JsonObject, LoggingLevel, methods};
use tokio::sync::broadcast::error::RecvError;

use super::asks::Answer as AskAnswer;
use super::forward::{
    Answer, CompleteBody, PromptBody, Prompts, ReadBody, Resources, Templates, Tools, done,
    forward, list, object_of, reply,
};
use super::hub::{Described, Hub, Outcome, Spec};
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

/// The answer of `GET /api/info`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Info {
    version: &'static str,
    protocol_versions: Vec<&'static str>,
    connections: Vec<Described>,
    sandbox_port: u16,
}

/// The answer of `GET /api/connections`.
#[derive(Serialize)]
struct Connections {
    connections: Vec<Described>,
}

async fn info(State(hub): State<Hub>) -> Answer {
    reply(Info {
        version: env!("CARGO_PKG_VERSION"),
        protocol_versions: tessera::types::ProtocolVersion::ALL
            .iter()
            .map(|v| v.as_str())
            .collect(),
        connections: hub.list().iter().map(|c| c.describe()).collect(),
        sandbox_port: hub.sandbox_port(),
    })
}

/// The `hello` event of the event stream.
#[derive(Serialize)]
struct Hello {
    dropped: u64,
}

/// A server of the configuration file, as the Servers tab lists it.
#[derive(Serialize)]
struct ConfigServer {
    name: String,
    #[serde(flatten)]
    shown: ServerShown,
}

/// What the Servers tab shows of a server: how it is reached (environment
/// and header values left out), or why it cannot be.
#[derive(Serialize)]
#[serde(untagged)]
enum ServerShown {
    /// A stdio server.
    Command {
        command: String,
        args: Vec<String>,
        env: Vec<String>,
    },
    /// An HTTP server.
    Url { url: String, headers: Vec<String> },
    /// A malformed entry.
    Problem { problem: String },
}

/// The answer of `GET /api/config`.
#[derive(Serialize)]
struct ConfigFile {
    path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    exists: Option<bool>,
    servers: Vec<ConfigServer>,
}

/// The answer of `POST …/ping`.
#[derive(Serialize)]
struct Pinged {
    ms: f64,
}

/// The answer of `GET …/tasks` and `…/server-tasks`.
#[derive(Serialize)]
struct TaskList<T> {
    tasks: Vec<T>,
}

/// The answer of `POST …/load`.
#[derive(Serialize)]
struct LoadStarted<R> {
    run: R,
}

/// The answer of `GET /api/asks`.
#[derive(Serialize)]
struct Asked<A> {
    asks: A,
}

/// The answer of `GET` and `PUT /api/sampling-auto`.
#[derive(Serialize)]
struct Auto<A> {
    auto: A,
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
        .data(serde_json::to_string(&Hello { dropped }).unwrap_or_default());
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
        return reply(ConfigFile {
            path: None,
            exists: None,
            servers: Vec::new(),
        });
    };
    let shown = path.display().to_string();
    let Some(text) = crate::config::read_text(path).map_err(Problem::bad_request)? else {
        return reply(ConfigFile {
            path: Some(shown),
            exists: Some(false),
            servers: Vec::new(),
        });
    };
    let file = crate::config::parse(path, &text).map_err(Problem::bad_request)?;
    let servers: Vec<ConfigServer> = file
        .mcp_servers
        .iter()
        .map(|(name, entry)| {
            let shown = match entry.resolve() {
                Ok(crate::config::Named::Command { program, args, env }) => ServerShown::Command {
                    command: program,
                    args,
                    env: env.into_iter().map(|(k, _)| k).collect(),
                },
                Ok(crate::config::Named::Url { url, headers }) => ServerShown::Url {
                    url,
                    headers: headers
                        .iter()
                        .filter_map(|h| h.split(':').next())
                        .map(str::to_owned)
                        .collect(),
                },
                Err(problem) => ServerShown::Problem { problem },
            };
            ConfigServer {
                name: name.clone(),
                shown,
            }
        })
        .collect();
    reply(ConfigFile {
        path: Some(shown),
        exists: Some(true),
        servers,
    })
}

async fn list_connections(State(hub): State<Hub>) -> Answer {
    reply(Connections {
        connections: hub.list().iter().map(|c| c.describe()).collect(),
    })
}

async fn connect(State(hub): State<Hub>, Body(spec): Body<Spec>) -> Answer {
    let conn = hub.connect(&spec).await?;
    reply(conn.describe())
}

async fn connection(State(hub): State<Hub>, Path(id): Path<u64>) -> Answer {
    reply(hub.get(id)?.describe())
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
    reply(Pinged {
        ms: took.as_secs_f64() * 1000.0,
    })
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
        return match outcome {
            ToolCallOutcome::Done(typed) => {
                let result = object_of(&typed)?;
                let check = output_check::check(c.tool(&body.name).as_ref(), &result);
                reply(Called::Done {
                    result,
                    output_check: check,
                    task: Some(None),
                })
            }
            ToolCallOutcome::Task(handle) => {
                let task_id = handle.id().to_owned();
                c.tasks.follow(c.id, handle, hub.journal().clone())?;
                reply(Called::Task {
                    task: Some(TaskStarted { task_id }),
                })
            }
        };
    }
    let mut params = CallToolRequestParams::new(body.name.clone());
    params.arguments = body.arguments;
    let outcome = c
        .call(
            hub.journal(),
            methods::TOOLS_CALL,
            object_of(&params)?,
            body.call_id,
        )
        .await?;
    match outcome {
        Outcome::Cancelled => done(Outcome::Cancelled),
        Outcome::Done(result) => {
            let check = output_check::check(c.tool(&body.name).as_ref(), &result);
            reply(Called::Done {
                result,
                output_check: check,
                task: None,
            })
        }
    }
}

/// The answer of `POST …/tools/call` when the call ended, or became a task.
#[derive(Serialize)]
#[serde(untagged)]
enum Called {
    /// The result, and its check against the tool's `outputSchema`.
    #[serde(rename_all = "camelCase")]
    Done {
        result: JsonObject,
        output_check: output_check::Verdict,
        /// `null` when the call was asked as a task but finished at once.
        #[serde(skip_serializing_if = "Option::is_none")]
        task: Option<Option<TaskStarted>>,
    },
    /// The task it became.
    Task { task: Option<TaskStarted> },
}

/// A task a call became.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TaskStarted {
    task_id: String,
}

async fn cancel(State(hub): State<Hub>, Path((id, call)): Path<(u64, String)>) -> Response {
    match hub.get(id) {
        Ok(c) if c.cancel(&call) => StatusCode::NO_CONTENT.into_response(),
        Ok(_) => Problem::not_found(format!("no call {call:?} in flight")).into_response(),
        Err(p) => p.into_response(),
    }
}

async fn list_tasks(State(hub): State<Hub>, Path(id): Path<u64>) -> Answer {
    reply(TaskList {
        tasks: hub.get(id)?.tasks.list(),
    })
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
    reply(TaskList { tasks: all })
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
    reply(LoadStarted { run })
}

async fn load_stop(State(hub): State<Hub>, Path(run): Path<u64>) -> Result<StatusCode, Problem> {
    if hub.runs().stop(run, hub.journal()) {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(Problem::not_found(format!("no load run {run}")))
    }
}

async fn skills_list(State(hub): State<Hub>, Path(id): Path<u64>) -> Answer {
    super::skills::list(&hub.get(id)?.client).await
}

async fn skills_verify(
    State(hub): State<Hub>,
    Path(id): Path<u64>,
    Body(body): Body<ReadBody>,
) -> Answer {
    super::skills::verify(&hub.get(id)?.client, &body.uri).await
}

/// `POST …/request`: any request (the Protocol tab's Replay).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RequestBody {
    method: String,
    #[serde(default)]
    params: Option<ParamsWithoutMeta>,
    #[serde(default)]
    call_id: Option<String>,
}

/// A request's params, its `_meta` left out.
#[derive(Debug, Deserialize)]
struct ParamsWithoutMeta {
    #[serde(rename = "_meta", default)]
    _meta: IgnoredAny,
    #[serde(flatten)]
    rest: JsonObject,
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
    // The client writes its own `_meta` (version, capabilities, progress token).
    let params = body.params.map(|p| p.rest).unwrap_or_default();
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
    let level: LoggingLevel = serde_json::from_value(Value::String(body.level.clone())).map_err(|_| {
        Problem::bad_request(format!(
            "level {:?}: expected debug, info, notice, warning, error, critical, alert or emergency",
            body.level
        ))
    })?;
    c.set_level(level).await?;
    reply(c.describe())
}

async fn list_asks(State(hub): State<Hub>) -> Answer {
    reply(Asked {
        asks: hub.asks().list(),
    })
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
    reply(Auto {
        auto: hub.asks().auto_reply(),
    })
}

async fn put_auto_reply(State(hub): State<Hub>, Body(body): Body<AutoReplyBody>) -> Answer {
    let auto = body.text.map(|text| super::asks::AutoReply {
        text,
        model: body.model.unwrap_or_else(|| "tessera-inspect".into()),
    });
    hub.asks()
        .set_auto_reply(auto)
        .map_err(Problem::bad_request)?;
    reply(Auto {
        auto: hub.asks().auto_reply(),
    })
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

/// The file `GET /api/transcript` answers (which `tessera replay` reads).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Transcript {
    format: &'static str,
    version: u32,
    tessera: &'static str,
    dropped_before: u64,
    events: Vec<Value>,
}

/// `GET /api/transcript`: every event the journal keeps, as one JSON file.
async fn transcript(State(hub): State<Hub>) -> Response {
    let (kept, dropped, _) = hub.journal().follow();
    let events: Vec<Value> = kept
        .iter()
        .filter_map(|e| serde_json::from_str(&e.text).ok())
        .collect();
    let body = serde_json::to_value(Transcript {
        format: "tessera-inspect-transcript",
        version: 1,
        tessera: env!("CARGO_PKG_VERSION"),
        dropped_before: dropped,
        events,
    })
    .unwrap_or_default();
    (
        [(
            axum::http::header::CONTENT_DISPOSITION,
            "attachment; filename=\"tessera-transcript.json\"",
        )],
        Json(body),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn v(x: impl Serialize) -> Value {
        reply(x).unwrap().0
    }

    #[test]
    fn answers_keep_their_shape() {
        let verdict = output_check::check(None, &JsonObject::new());
        assert_eq!(
            v(Called::Done {
                result: JsonObject::new(),
                output_check: verdict.clone(),
                task: Some(None),
            }),
            json!({"result": {}, "outputCheck": {"verdict": "none",
                   "detail": "the tool declares no outputSchema"}, "task": null})
        );
        assert_eq!(
            v(Called::Done {
                result: JsonObject::new(),
                output_check: verdict,
                task: None,
            })["task"],
            Value::Null
        );
        assert!(
            !v(Called::Done {
                result: JsonObject::new(),
                output_check: output_check::check(None, &JsonObject::new()),
                task: None,
            })
            .as_object()
            .unwrap()
            .contains_key("task")
        );
        assert_eq!(
            v(Called::Task {
                task: Some(TaskStarted {
                    task_id: "t".into()
                })
            }),
            json!({"task": {"taskId": "t"}})
        );
        assert_eq!(
            v(ConfigFile {
                path: None,
                exists: None,
                servers: Vec::new()
            }),
            json!({"path": null, "servers": []})
        );
        let servers = vec![
            ConfigServer {
                name: "a".into(),
                shown: ServerShown::Command {
                    command: "srv".into(),
                    args: vec!["-x".into()],
                    env: vec!["K".into()],
                },
            },
            ConfigServer {
                name: "b".into(),
                shown: ServerShown::Url {
                    url: "http://x".into(),
                    headers: vec!["Authorization".into()],
                },
            },
            ConfigServer {
                name: "c".into(),
                shown: ServerShown::Problem {
                    problem: "bad".into(),
                },
            },
        ];
        assert_eq!(
            v(ConfigFile {
                path: Some("/f".into()),
                exists: Some(true),
                servers
            }),
            json!({"path": "/f", "exists": true, "servers": [
                {"name": "a", "command": "srv", "args": ["-x"], "env": ["K"]},
                {"name": "b", "url": "http://x", "headers": ["Authorization"]},
                {"name": "c", "problem": "bad"}]})
        );
        assert_eq!(
            serde_json::to_string(&Hello { dropped: 3 }).unwrap(),
            r#"{"dropped":3}"#
        );
        assert_eq!(
            v(Transcript {
                format: "tessera-inspect-transcript",
                version: 1,
                tessera: "0",
                dropped_before: 0,
                events: Vec::new(),
            }),
            json!({"format": "tessera-inspect-transcript", "version": 1, "tessera": "0",
                   "droppedBefore": 0, "events": []})
        );
        let p: RequestBody =
            serde_json::from_value(json!({"method": "m", "params": {"_meta": {"x": 1}, "a": 2}}))
                .unwrap();
        assert_eq!(Value::Object(p.params.unwrap().rest), json!({"a": 2}));
    }
}
