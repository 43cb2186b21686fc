use tessera_macros::tool;

/// A bare `String` parameter: arguments come in an `Args<T>` struct.
#[tool]
async fn greet(name: String) -> String {
    format!("hello {name}")
}

fn main() {}
