use tessera_macros::tool;

struct Server;

impl Server {
    /// A method marked #[tool] without #[tools] on its impl block.
    #[tool]
    async fn ping(&self) -> String {
        "pong".to_owned()
    }
}

fn main() {}
