//! The API routes that are one MCP request each, as two generic handlers
//! instead of one handler per route: [`list`] (every page of a `*/list`,
//! answered under its key) and [`forward`] (a JSON body checked and turned
//! into a request's params, answered `{result}`). A route is a type naming
//! its method and what to do with the body or the list.

use axum::Json;
use axum::extract::{Path, State};
use futures::future::BoxFuture;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tessera::client::{Client, ClientError};
use tessera::types::{JsonObject, methods};

use super::hub::{Connection, Hub, Outcome};
use super::problem::{Body, Problem};

/// What routes answer.
pub type Answer = Result<Json<Value>, Problem>;

/// Values of serialisable items (an item that does not serialise is left out).
fn values<T: serde::Serialize>(items: &[T]) -> Vec<Value> {
    items
        .iter()
        .filter_map(|i| serde_json::to_value(i).ok())
        .collect()
}

/// A listing route: the method, the answer's key, how to fetch every page.
pub trait Listing {
    /// The `*/list` method (for errors).
    const METHOD: &'static str;
    /// The member of the answer holding the items.
    const KEY: &'static str;
    /// Every page, through the client's pagination (bounded by its page limit).
    fn fetch(client: &Client) -> BoxFuture<'_, Result<Vec<Value>, ClientError>>;
    /// Adds to the answer, or remembers the items (nothing by default).
    fn finish(_c: &Connection, _items: &[Value], _answer: &mut Value) {}
}

/// `GET …/tools`: remembered, to check results against `outputSchema`.
pub struct Tools;
/// `GET …/resources`: with the URIs followed.
pub struct Resources;
/// `GET …/resource-templates`.
pub struct Templates;
/// `GET …/prompts`.
pub struct Prompts;

impl Listing for Tools {
    const METHOD: &'static str = methods::TOOLS_LIST;
    const KEY: &'static str = "tools";
    fn fetch(client: &Client) -> BoxFuture<'_, Result<Vec<Value>, ClientError>> {
        Box::pin(async move { client.list_tools().await.map(|t| values(&t)) })
    }
    fn finish(c: &Connection, items: &[Value], _answer: &mut Value) {
        c.remember_tools(items.to_vec());
    }
}

impl Listing for Resources {
    const METHOD: &'static str = methods::RESOURCES_LIST;
    const KEY: &'static str = "resources";
    fn fetch(client: &Client) -> BoxFuture<'_, Result<Vec<Value>, ClientError>> {
        Box::pin(async move { client.list_resources().await.map(|t| values(&t)) })
    }
    fn finish(c: &Connection, _items: &[Value], answer: &mut Value) {
        answer["subscribed"] = json!(c.subscriptions.list());
    }
}

impl Listing for Templates {
    const METHOD: &'static str = methods::RESOURCES_TEMPLATES_LIST;
    const KEY: &'static str = "resourceTemplates";
    fn fetch(client: &Client) -> BoxFuture<'_, Result<Vec<Value>, ClientError>> {
        Box::pin(async move { client.list_resource_templates().await.map(|t| values(&t)) })
    }
}

impl Listing for Prompts {
    const METHOD: &'static str = methods::PROMPTS_LIST;
    const KEY: &'static str = "prompts";
    fn fetch(client: &Client) -> BoxFuture<'_, Result<Vec<Value>, ClientError>> {
        Box::pin(async move { client.list_prompts().await.map(|t| values(&t)) })
    }
}

/// `GET …/{list}`: every item, under `L::KEY`.
pub async fn list<L: Listing>(State(hub): State<Hub>, Path(id): Path<u64>) -> Answer {
    let c = hub.get(id)?;
    let items = L::fetch(&c.client)
        .await
        .map_err(|e| Problem::client(&e, L::METHOD))?;
    let mut answer = json!({ L::KEY: items });
    L::finish(&c, &items, &mut answer);
    Ok(Json(answer))
}

/// A forwarding route: its body, the method it sends, the params it makes.
pub trait Forwarded: DeserializeOwned + Send {
    /// The request's method.
    const METHOD: &'static str;
    /// The params (or why the body is refused).
    fn params(self) -> Result<JsonObject, Problem>;
}

/// `POST …/resources/read`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadBody {
    /// The resource.
    pub uri: String,
}

impl Forwarded for ReadBody {
    const METHOD: &'static str = methods::RESOURCES_READ;
    fn params(self) -> Result<JsonObject, Problem> {
        let mut p = JsonObject::new();
        p.insert("uri".into(), json!(self.uri));
        Ok(p)
    }
}

/// `POST …/prompts/get`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PromptBody {
    name: String,
    #[serde(default)]
    arguments: Option<serde_json::Map<String, Value>>,
}

impl Forwarded for PromptBody {
    const METHOD: &'static str = methods::PROMPTS_GET;
    fn params(self) -> Result<JsonObject, Problem> {
        let mut p = JsonObject::new();
        p.insert("name".into(), json!(self.name));
        if let Some(a) = self.arguments {
            if let Some((k, _)) = a.iter().find(|(_, v)| !v.is_string()) {
                return Err(Problem::bad_request(format!(
                    "arguments.{k}: prompt arguments are strings"
                )));
            }
            p.insert("arguments".into(), Value::Object(a));
        }
        Ok(p)
    }
}

/// `POST …/complete`: the `completion/complete` params as they are.
#[derive(Debug, Deserialize)]
#[serde(transparent)]
pub struct CompleteBody(JsonObject);

impl Forwarded for CompleteBody {
    const METHOD: &'static str = methods::COMPLETION_COMPLETE;
    fn params(self) -> Result<JsonObject, Problem> {
        if !self.0.contains_key("ref") || !self.0.contains_key("argument") {
            return Err(Problem::bad_request(
                "give ref ({type: ref/prompt, name} or {type: ref/resource, uri}) and argument ({name, value})",
            ));
        }
        Ok(self.0)
    }
}

/// `POST …/{route}`: the body's request sent, `{result}` (or
/// `{cancelled: true}`).
pub async fn forward<B: Forwarded>(
    State(hub): State<Hub>,
    Path(id): Path<u64>,
    Body(body): Body<B>,
) -> Answer {
    let c = hub.get(id)?;
    let params = body.params()?;
    done(c.call(hub.journal(), B::METHOD, params, None).await?)
}

/// The answer of a finished call.
pub fn done(outcome: Outcome) -> Answer {
    match outcome {
        Outcome::Done(r) => Ok(Json(json!({"result": r}))),
        Outcome::Cancelled => Ok(Json(json!({"cancelled": true}))),
    }
}
