use tessera_macros::tool;

/// `readonly` is not a hint; `read_only` is.
#[tool(annotations(readonly))]
async fn ping() -> String {
    "pong".to_owned()
}

fn main() {}
