use tessera_macros::tool;

/// `name` is a string.
#[tool(name = ping)]
async fn ping() -> String {
    "pong".to_owned()
}

/// A title given as a number.
#[tool(title = 3)]
async fn pong() -> String {
    "ping".to_owned()
}

/// Hints are booleans.
#[tool(annotations(read_only = "yes"))]
async fn pang() -> String {
    "pung".to_owned()
}

fn main() {}
