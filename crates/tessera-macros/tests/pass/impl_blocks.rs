//! `#[tools]` on impl blocks in the forms a user may write them: generics
//! with bounds and where clauses, a type parameter named `S`, methods
//! without `self`, an explicit `state`, a local re-export as `crate`.

use std::marker::PhantomData;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use tessera_macros::tools;
use tessera_server::{Args, RequestContext, Server, State};

mod mcp {
    //! The server API under another path, as a crate that re-exports it would.
    pub use tessera_server::*;
}

#[derive(Deserialize, JsonSchema)]
struct Id {
    id: u32,
}

/// A generic type whose parameter is called `S`: the generated methods pick
/// another name for the server state.
struct Repo<S, const N: usize> {
    store: PhantomData<S>,
}

#[tools(crate = "crate::mcp")]
impl<S, const N: usize> Repo<S, N>
where
    S: Default + ToString + Send + Sync + 'static,
{
    /// Shows the default of `S`.
    #[tool]
    async fn show(&self, Args(i): Args<Id>, _cx: RequestContext) -> String {
        format!("{}:{}:{N}", i.id, S::default().to_string())
    }

    /// No `self` at all.
    #[tool(name = "repo.size")]
    async fn size() -> String {
        N.to_string()
    }
}

struct Config {
    verbose: bool,
}

/// Methods that need the server state but do not extract it.
struct Ops;

#[tools(state = Config)]
impl Ops {
    /// Takes the context only.
    #[tool]
    async fn ping(&self, _cx: RequestContext) -> &'static str {
        "pong"
    }

    /// Takes the state.
    #[tool]
    async fn verbose(self: Arc<Self>, State(c): State<Config>) -> String {
        c.verbose.to_string()
    }
}

fn main() {
    let repo = Arc::new(Repo::<u8, 4> { store: PhantomData });
    let names: Vec<String> = Arc::clone(&repo)
        .tool_routes::<()>()
        .iter()
        .map(|r| r.definition().name.clone())
        .collect();
    assert_eq!(names, ["show", "repo.size"]);
    repo.register(Server::builder()).build().expect("builds");

    let ops: Vec<tessera_server::ToolRoute<Config>> = Arc::new(Ops).tool_routes();
    assert_eq!(ops.len(), 2);
    Arc::new(Ops)
        .register(Server::with_state(Config { verbose: true }))
        .build()
        .expect("builds");
}
