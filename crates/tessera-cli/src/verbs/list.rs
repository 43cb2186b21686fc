//! `tessera list tools|resources|templates|prompts TARGET`.

use std::collections::HashSet;
use std::process::ExitCode;
use tessera::types::methods;

use clap::{Args, ValueEnum};
use serde::Deserialize;
use serde_json::Value;
use tessera::types::{JsonObject, PaginatedRequestParams};

use crate::connect::{ClientOptions, Session};
use crate::exit::{Exit, Failure};
use crate::output;
use crate::peer_text;

/// A page of a `*/list` result: its cursor, and the rest as sent.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Page {
    #[serde(default)]
    next_cursor: Option<Value>,
    #[serde(flatten)]
    rest: JsonObject,
}

/// The most pages followed.
const MAX_PAGES: usize = 1000;

/// What `tessera list` lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ListWhat {
    /// Tools (tools/list).
    Tools,
    /// Resources (resources/list).
    Resources,
    /// Resource templates (resources/templates/list).
    Templates,
    /// Prompts (prompts/list).
    Prompts,
}

impl ListWhat {
    /// The method and the key of the items in its result.
    pub fn method(self) -> (&'static str, &'static str) {
        match self {
            ListWhat::Tools => (methods::TOOLS_LIST, "tools"),
            ListWhat::Resources => (methods::RESOURCES_LIST, "resources"),
            ListWhat::Templates => (methods::RESOURCES_TEMPLATES_LIST, "resourceTemplates"),
            ListWhat::Prompts => (methods::PROMPTS_LIST, "prompts"),
        }
    }
}

/// `tessera list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// What to list.
    what: ListWhat,
    /// The server's http(s) URL (or give `-- COMMAND ARGS...` or --server NAME).
    #[arg(value_name = "URL")]
    positional: Vec<String>,
    #[command(flatten)]
    pub(crate) opts: ClientOptions,
}

/// Fetches every page of a list; the result is the first page's object with
/// the items of all pages and no `nextCursor`.
pub async fn fetch_all(
    s: &Session,
    opts: &ClientOptions,
    what: ListWhat,
) -> Result<JsonObject, Failure> {
    let (method, key) = what.method();
    let call = opts.call_options(s);
    let mut seen = HashSet::new();
    let mut cursor: Option<String> = None;
    let mut all: Vec<Value> = Vec::new();
    let mut first: Option<JsonObject> = None;
    for _ in 0..MAX_PAGES {
        let params = cursor
            .as_ref()
            .map(|c| super::params_object(&PaginatedRequestParams::after(c.clone())));
        let mut page = s
            .client
            .request_raw_with(method, params, &call)
            .await
            .map_err(|e| Failure::client(e, method))?;
        let items = match page.remove(key) {
            Some(Value::Array(a)) => a,
            _ => {
                return Err(Failure::Coded(
                    Exit::Protocol,
                    anyhow::anyhow!("{method}: the result has no {key:?} array"),
                ));
            }
        };
        all.extend(items);
        let Page {
            next_cursor: next,
            rest: page,
        } = Page::deserialize(Value::Object(page))
            .map_err(|e| Failure::Coded(Exit::Protocol, anyhow::anyhow!("{method}: {e}")))?;
        first.get_or_insert(page);
        match next {
            Some(Value::String(c)) => {
                if !seen.insert(c.clone()) {
                    return Err(Failure::Coded(
                        Exit::Protocol,
                        anyhow::anyhow!("{method} returned the cursor {c:?} twice"),
                    ));
                }
                cursor = Some(c);
            }
            _ => {
                let mut out = first.unwrap_or_default();
                out.insert(key.into(), Value::Array(all));
                return Ok(out);
            }
        }
    }
    Err(Failure::Coded(
        Exit::Protocol,
        anyhow::anyhow!("{method} returned more than {MAX_PAGES} pages"),
    ))
}

/// Runs `tessera list`.
pub async fn run(a: ListArgs) -> Result<ExitCode, Failure> {
    let mut words = a.positional;
    let target = a.opts.target.resolve(&mut words, 0)?;
    super::no_more(words.into_iter())?;
    let s = a.opts.connect_to(target).await?;
    let r = fetch_all(&s, &a.opts, a.what).await;
    s.close().await;
    let r = r?;
    if a.opts.json {
        output::json_object(&r);
    } else {
        let key = a.what.method().1;
        let items = r
            .get(key)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        peer_text::print(&output::listing(key, &items));
    }
    Ok(ExitCode::SUCCESS)
}
