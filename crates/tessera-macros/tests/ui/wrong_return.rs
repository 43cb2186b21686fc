use tessera_macros::tool;

/// Not a tool result.
struct Report {
    lines: Vec<String>,
}

/// Returns a type that does not implement `IntoToolResult`.
#[tool]
async fn report() -> Report {
    Report { lines: Vec::new() }
}

fn main() {}
