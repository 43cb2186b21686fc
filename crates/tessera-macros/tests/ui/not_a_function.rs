use tessera_macros::{tool, tools};

/// #[tool] on a struct.
#[tool]
struct Ping;

/// #[tools] on a function.
#[tools]
fn helpers() {}

/// #[tools] on a trait impl.
trait Named {
    fn name(&self) -> String;
}

#[tools]
impl Named for Ping {
    fn name(&self) -> String {
        "ping".into()
    }
}

fn main() {}
