use tessera_macros::tool;

/// Misspells `name`.
#[tool(nmae = "ping")]
async fn ping() -> String {
    "pong".to_owned()
}

fn main() {}
