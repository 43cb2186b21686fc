use tessera_macros::tool;

/// Forgot `async`.
#[tool]
fn ping() -> String {
    "pong".to_owned()
}

fn main() {}
