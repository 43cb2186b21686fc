use tessera_macros::tools;

struct Server;

#[tools(name = "x")]
impl Server {
    /// `crate` belongs on #[tools], not on each method.
    #[tool(crate = "::tessera_server")]
    async fn ping(&self) -> String {
        "pong".to_owned()
    }

    /// Not async.
    #[tool]
    fn pong(&self) -> String {
        "ping".to_owned()
    }
}

fn main() {}
