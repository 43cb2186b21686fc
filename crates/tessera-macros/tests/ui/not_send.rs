use std::rc::Rc;

use tessera_macros::tool;

async fn pause() {}

/// Holds an `Rc` across an `.await`: the future is not `Send`.
#[tool]
async fn count() -> String {
    let shared = Rc::new(1);
    pause().await;
    shared.to_string()
}

fn main() {
    let _ = tessera_server::Server::builder().tool(count_tool());
}
