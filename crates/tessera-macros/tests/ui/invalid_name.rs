use tessera_macros::tool;

/// Spaces are not allowed in tool names.
#[tool(name = "say hello")]
async fn hello() -> String {
    "hello".to_owned()
}

fn main() {}
