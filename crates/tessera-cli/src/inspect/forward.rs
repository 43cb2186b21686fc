//! The API routes that are one MCP request each, as two generic handlers
//! instead of one handler per route: [`list`] (every page of a `*/list`,
//! answered under its key) and [`forward`] (a JSON body checked and turned
//! into a request's params, answered `{result}`). A route is a type naming
//! its method and what to do with the body or the list.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::{Path, State};
use futures::future::BoxFuture;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tessera::client::{Client, ClientError};
use tessera::types::{
    GetPromptRequestParams, JsonObject, Prompt, ReadResourceRequestParams, Resource,
    ResourceTemplate, Tool, methods,
};

use super::hub::{Connection, Hub, Outcome};
use super::problem::{Body, Problem};

/// What routes answer.
pub type Answer = Result<Json<Value>, Problem>;

/// The answer of a route: `v` written through a [`Value`], so that its
/// members come in name order whatever the order of its fields (as the
/// answers have always been written).
pub fn reply<T: Serialize>(v: T) -> Answer {
    serde_json::to_value(v).map(Json).map_err(|e| Problem {
        status: axum::http::StatusCode::INTERNAL_SERVER_ERROR,
        message: format!("writing the answer: {e}"),
        remote: None,
    })
}

/// A listing route: the method, its items, the answer it makes of them.
pub trait Listing {
    /// The `*/list` method (for errors).
    const METHOD: &'static str;
    /// One item of the list.
    type Item: Serialize + Send;
    /// Every page, through the client's pagination (bounded by its page limit).
    fn fetch(client: &Client) -> BoxFuture<'_, Result<Vec<Self::Item>, ClientError>>;
    /// The answer (remembering the items where the connection needs them).
    fn answer(c: &Connection, items: Vec<Self::Item>) -> Answer;
}

/// `GET …/tools`: remembered, to check results against `outputSchema`.
pub struct Tools;
/// `GET …/resources`: with the URIs followed.
pub struct Resources;
/// `GET …/resource-templates`.
pub struct Templates;
/// `GET …/prompts`.
pub struct Prompts;

/// The answer of `GET …/tools`.
#[derive(Serialize)]
struct ToolsAnswer<'a> {
    tools: &'a [Tool],
}

/// The answer of `GET …/resources`.
#[derive(Serialize)]
struct ResourcesAnswer {
    resources: Vec<Resource>,
    subscribed: Vec<String>,
}

/// The answer of `GET …/resource-templates`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TemplatesAnswer {
    resource_templates: Vec<ResourceTemplate>,
}

/// The answer of `GET …/prompts`.
#[derive(Serialize)]
struct PromptsAnswer {
    prompts: Vec<Prompt>,
}

impl Listing for Tools {
    const METHOD: &'static str = methods::TOOLS_LIST;
    type Item = Tool;
    fn fetch(client: &Client) -> BoxFuture<'_, Result<Vec<Tool>, ClientError>> {
        Box::pin(client.list_tools())
    }
    fn answer(c: &Connection, items: Vec<Tool>) -> Answer {
        let answer = reply(ToolsAnswer { tools: &items });
        c.remember_tools(items);
        answer
    }
}

impl Listing for Resources {
    const METHOD: &'static str = methods::RESOURCES_LIST;
    type Item = Resource;
    fn fetch(client: &Client) -> BoxFuture<'_, Result<Vec<Resource>, ClientError>> {
        Box::pin(client.list_resources())
    }
    fn answer(c: &Connection, resources: Vec<Resource>) -> Answer {
        reply(ResourcesAnswer {
            resources,
            subscribed: c.subscriptions.list(),
        })
    }
}

impl Listing for Templates {
    const METHOD: &'static str = methods::RESOURCES_TEMPLATES_LIST;
    type Item = ResourceTemplate;
    fn fetch(client: &Client) -> BoxFuture<'_, Result<Vec<ResourceTemplate>, ClientError>> {
        Box::pin(client.list_resource_templates())
    }
    fn answer(_c: &Connection, resource_templates: Vec<ResourceTemplate>) -> Answer {
        reply(TemplatesAnswer { resource_templates })
    }
}

impl Listing for Prompts {
    const METHOD: &'static str = methods::PROMPTS_LIST;
    type Item = Prompt;
    fn fetch(client: &Client) -> BoxFuture<'_, Result<Vec<Prompt>, ClientError>> {
        Box::pin(client.list_prompts())
    }
    fn answer(_c: &Connection, prompts: Vec<Prompt>) -> Answer {
        reply(PromptsAnswer { prompts })
    }
}

/// `GET …/{list}`: every item, under the list's key.
pub async fn list<L: Listing>(State(hub): State<Hub>, Path(id): Path<u64>) -> Answer {
    let c = hub.get(id)?;
    let items = L::fetch(&c.client)
        .await
        .map_err(|e| Problem::client(&e, L::METHOD))?;
    L::answer(&c, items)
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
        object_of(&ReadResourceRequestParams::new(self.uri))
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
        let mut p = GetPromptRequestParams::new(self.name);
        if let Some(a) = self.arguments {
            let mut arguments = BTreeMap::new();
            for (k, v) in a {
                let Value::String(v) = v else {
                    return Err(Problem::bad_request(format!(
                        "arguments.{k}: prompt arguments are strings"
                    )));
                };
                arguments.insert(k, v);
            }
            p.arguments = Some(arguments);
        }
        object_of(&p)
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

/// The answer of a call: `{result}`, or `{cancelled: true}`.
#[derive(Serialize)]
#[serde(untagged)]
pub enum Done {
    /// The server's result.
    Result {
        /// The result as the server sent it.
        result: JsonObject,
    },
    /// The page cancelled the call.
    Cancelled {
        /// Always `true`.
        cancelled: bool,
    },
}

/// The answer of a finished call.
pub fn done(outcome: Outcome) -> Answer {
    reply(match outcome {
        Outcome::Done(result) => Done::Result { result },
        Outcome::Cancelled => Done::Cancelled { cancelled: true },
    })
}

/// A serialisable value (params, a typed result) as the JSON object it
/// writes.
pub fn object_of<T: Serialize>(params: &T) -> Result<JsonObject, Problem> {
    match serde_json::to_value(params) {
        Ok(Value::Object(o)) => Ok(o),
        Ok(_) => Ok(JsonObject::new()),
        Err(e) => Err(Problem::bad_request(format!("the params: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn answers_and_params_keep_their_shape() {
        assert_eq!(
            done(Outcome::Cancelled).unwrap().0,
            json!({"cancelled": true})
        );
        assert_eq!(
            done(Outcome::Done(JsonObject::new())).unwrap().0,
            json!({"result": {}})
        );
        assert_eq!(
            reply(TemplatesAnswer {
                resource_templates: Vec::new()
            })
            .unwrap()
            .0,
            json!({"resourceTemplates": []})
        );
        let read = ReadBody {
            uri: "file:///a".into(),
        }
        .params()
        .unwrap();
        assert_eq!(Value::Object(read), json!({"uri": "file:///a"}));
        let prompt: PromptBody =
            serde_json::from_value(json!({"name": "p", "arguments": {"b": "2", "a": "1"}}))
                .unwrap();
        assert_eq!(
            Value::Object(prompt.params().unwrap()),
            json!({"name": "p", "arguments": {"a": "1", "b": "2"}})
        );
        let bad: PromptBody =
            serde_json::from_value(json!({"name": "p", "arguments": {"b": 2, "a": true}})).unwrap();
        assert!(
            bad.params()
                .unwrap_err()
                .message
                .starts_with("arguments.a:")
        );
        let bare: PromptBody = serde_json::from_value(json!({"name": "p"})).unwrap();
        assert_eq!(Value::Object(bare.params().unwrap()), json!({"name": "p"}));
    }
}
