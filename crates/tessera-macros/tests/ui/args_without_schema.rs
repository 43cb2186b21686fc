use serde::Deserialize;
use tessera_macros::tool;
use tessera_server::Args;

/// Deserialize, but no `JsonSchema`: the tool's input schema cannot be made.
#[derive(Deserialize)]
struct Point {
    x: i32,
}

/// Reads a point.
#[tool]
async fn read_point(Args(p): Args<Point>) -> String {
    p.x.to_string()
}

fn main() {}
