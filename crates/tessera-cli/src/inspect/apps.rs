//! The Apps side of the API: `POST …/apps/view` fetches a tool's view (its
//! `_meta.ui.resourceUri`, read with `resources/read` and checked as the
//! Apps specification requires) and answers it with the Content-Security-
//! Policy the sandbox will enforce, so that the page can show that policy
//! (the specification's audit trail) before rendering; `POST …/documents`
//! keeps a PDF resource on the sandbox origin for the page to frame.

use axum::Json;
use axum::extract::{Path, State};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tessera::types::{ReadResourceRequestParams, Tool, ToolUiMeta, UiVisibility, methods};

use super::forward::{object_of, reply};
use super::hub::Hub;
use super::problem::{Body, Problem};
use super::sandbox;

/// `POST …/apps/view`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ViewBody {
    /// The tool whose view to fetch (as last listed on the connection).
    tool: String,
}

/// `POST /api/connections/{id}/apps/view`: `{uri, html, meta, policy,
/// refused, visibility}`.
pub async fn view(
    State(hub): State<Hub>,
    Path(id): Path<u64>,
    Body(body): Body<ViewBody>,
) -> Result<Json<Value>, Problem> {
    let c = hub.get(id)?;
    let tool: Tool = c.tool(&body.tool).ok_or_else(|| {
        Problem::not_found(format!(
            "no tool {:?} in the connection's last tools/list: list the tools first",
            body.tool
        ))
    })?;
    let ui = ToolUiMeta::of(&tool).unwrap_or_default();
    if ui.resource_uri.is_none() {
        return Err(Problem::bad_request(format!(
            "the tool {:?} names no view (_meta.ui.resourceUri)",
            body.tool
        )));
    }
    let view = c
        .client
        .read_app_view(&tool)
        .await
        .map_err(|e| Problem::client(&e, methods::RESOURCES_READ))?;
    let (policy, refused) = sandbox::policy(view.meta.csp.as_ref());
    let visibility: Vec<&str> = [UiVisibility::Model, UiVisibility::App]
        .into_iter()
        .filter(|v| ui.allows(*v))
        .map(|v| match v {
            UiVisibility::Model => "model",
            UiVisibility::App => "app",
        })
        .collect();
    reply(View {
        html: view.html,
        meta: view.meta,
        policy,
        refused,
        uri: view.uri,
        visibility,
    })
}

/// The answer of `POST …/apps/view`.
#[derive(Serialize)]
struct View<M, P, R> {
    html: String,
    meta: M,
    policy: P,
    refused: R,
    uri: String,
    visibility: Vec<&'static str>,
}

/// The members of a `resources/read` result a document is taken from.
#[derive(Deserialize)]
struct Read {
    #[serde(default, deserialize_with = "tessera::types::loose::lenient")]
    contents: Option<Vec<Value>>,
}

/// The members of one content of a `resources/read` result.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Content {
    #[serde(default)]
    mime_type: Option<Value>,
    #[serde(default)]
    blob: Option<Value>,
}

/// The answer of `POST …/documents`.
#[derive(Serialize)]
struct Document {
    path: String,
}

/// `POST …/documents`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DocumentBody {
    /// The resource to read.
    uri: String,
}

/// `POST /api/connections/{id}/documents`: reads the resource, keeps its
/// first PDF content on the sandbox origin and answers `{path}` (`/doc/ID`
/// there), for the page to frame.
pub async fn document(
    State(hub): State<Hub>,
    Path(id): Path<u64>,
    Body(body): Body<DocumentBody>,
) -> Result<Json<Value>, Problem> {
    use base64::Engine as _;
    let c = hub.get(id)?;
    let params = object_of(&ReadResourceRequestParams::new(body.uri.clone()))?;
    let read = match c
        .call(hub.journal(), methods::RESOURCES_READ, params, None)
        .await?
    {
        super::hub::Outcome::Done(r) => r,
        super::hub::Outcome::Cancelled => return Err(Problem::bad_request("cancelled")),
    };
    let read: Read = Read::deserialize(Value::Object(read)).unwrap_or(Read { contents: None });
    let pdf = read
        .contents
        .into_iter()
        .flatten()
        .filter_map(|c| tessera::types::loose::view::<Content>(&c))
        .find(|c| c.mime_type.as_ref().and_then(Value::as_str) == Some("application/pdf"));
    let blob = pdf
        .as_ref()
        .and_then(|c| c.blob.as_ref())
        .and_then(Value::as_str)
        .ok_or_else(|| {
            Problem::bad_request(format!(
                "{}: no application/pdf content given as a blob",
                body.uri
            ))
        })?;
    if blob.len() / 4 * 3 > sandbox::MAX_DOC_BYTES + 3 {
        return Err(Problem::limit(format!(
            "{}: over {} bytes, not shown",
            body.uri,
            sandbox::MAX_DOC_BYTES
        )));
    }
    let compact: String = blob.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(compact)
        .map_err(|e| Problem::bad_request(format!("{}: the blob is not base64: {e}", body.uri)))?;
    if !bytes.starts_with(b"%PDF-") {
        return Err(Problem::bad_request(format!(
            "{}: the content does not start as a PDF does (%PDF-)",
            body.uri
        )));
    }
    let doc = hub.documents().put(bytes).map_err(Problem::limit)?;
    reply(Document {
        path: format!("/doc/{doc}"),
    })
}
