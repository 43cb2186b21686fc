use tessera_macros::tool;

/// `name` is a string; hints are booleans.
#[tool(name = ping, annotations(read_only = "yes"))]
async fn ping() -> String {
    "pong".to_owned()
}

/// A title given as a number.
#[tool(title = 3)]
async fn pong() -> String {
    "ping".to_owned()
}

fn main() {}
