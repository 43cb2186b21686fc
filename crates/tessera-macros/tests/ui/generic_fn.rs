use tessera_macros::tool;

/// A generic handler cannot be registered as one function.
#[tool]
async fn show<T: ToString + Default>() -> String {
    T::default().to_string()
}

fn main() {}
