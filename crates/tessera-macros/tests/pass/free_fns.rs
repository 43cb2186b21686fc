//! `#[tool]`, `#[prompt]` and `#[resource]` on free functions, in the forms a
//! user may write them: visibility, raw identifiers, state, custom
//! extractors with `state = ...`, `impl Trait` returns and every extractor.

use schemars::JsonSchema;
use serde::Deserialize;
use tessera_macros::{prompt, resource, tool};
use tessera_server::{
    Args, FromRequest, HandlerInput, IntoToolResult, PromptArgsMap, RawArgs, Rejection,
    RequestBody, RequestContext, Server, State, UriVars,
};

mod handlers {
    use super::*;

    #[derive(Deserialize, JsonSchema)]
    pub struct Query {
        pub q: String,
    }

    /// Public in a module: the companion is public too.
    #[tool]
    pub async fn search(Args(q): Args<Query>, _cx: RequestContext) -> String {
        q.q
    }

    /// A raw identifier: the tool is named `type`.
    #[tool]
    pub(crate) async fn r#type(RawArgs(a): RawArgs) -> String {
        a.len().to_string()
    }
}

/// An `impl Trait` return type.
#[tool]
async fn opaque() -> impl IntoToolResult {
    "opaque"
}

/// Six extractors: the most a handler takes.
#[tool]
async fn six(
    _a: RequestContext,
    _b: RequestContext,
    _c: RequestContext,
    _d: RequestContext,
    _e: RequestContext,
    _f: RequestContext,
) {
}

struct Db {
    rows: u32,
}

/// An extractor of the user's own, for servers whose state is a `Db`; generic
/// over the body, so every kind of handler can take it.
struct Rows(u32);

impl<B: RequestBody> FromRequest<Db, B> for Rows {
    fn from_request(input: &mut HandlerInput<Db, B>) -> Result<Self, Rejection> {
        Ok(Rows(input.parts.state.rows))
    }
}

/// The same extractor in a prompt handler.
#[prompt(state = Db)]
async fn row_count(Rows(n): Rows) -> String {
    format!("{n} rows")
}

/// Needs `state = Db`: nothing in the signature says which state `Rows` wants.
#[tool(state = Db)]
async fn rows(Rows(n): Rows) -> String {
    n.to_string()
}

/// Takes the state directly: the state type is read from `State<Db>`.
#[tool]
async fn rows_again(State(db): State<Db>) -> String {
    db.rows.to_string()
}

/// A prompt over raw arguments.
#[prompt(name = "raw prompt")]
async fn raw_prompt(PromptArgsMap(m): PromptArgsMap) -> String {
    format!("{} arguments", m.len())
}

/// A template with raw variables.
#[resource(template = "items://{id}", name = "item", title = "Item")]
async fn item(UriVars(v): UriVars) -> String {
    v.get("id").cloned().unwrap_or_default()
}

fn main() {
    let search = handlers::search_tool::<()>();
    assert_eq!(search.definition().name, "search");
    assert_eq!(handlers::type_tool::<()>().definition().name, "type");
    assert_eq!(opaque_tool::<()>().definition().name, "opaque");
    Server::builder()
        .tool(search)
        .tool(handlers::type_tool())
        .tool(opaque_tool())
        .tool(six_tool())
        .prompt(raw_prompt_prompt())
        .resource_template(item_resource())
        .build()
        .expect("builds");
    let r = rows_tool();
    assert_eq!(r.definition().description.as_deref(), Some("Needs `state = Db`: nothing in the signature says which state `Rows` wants."));
    Server::with_state(Db { rows: 3 })
        .tool(r)
        .tool(rows_again_tool())
        .prompt(row_count_prompt())
        .build()
        .expect("builds");
    let p = raw_prompt_prompt::<()>();
    assert_eq!(p.definition().name, "raw prompt");
    let t = item_resource::<()>();
    assert_eq!(t.definition().name, "item");
    assert_eq!(t.definition().title.as_deref(), Some("Item"));
}
