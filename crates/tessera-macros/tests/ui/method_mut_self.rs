use tessera_macros::tools;

struct Counter {
    n: u32,
}

#[tools]
impl Counter {
    /// Tools run concurrently: `&mut self` cannot be shared.
    #[tool]
    async fn bump(&mut self) -> String {
        self.n += 1;
        self.n.to_string()
    }
}

fn main() {}
