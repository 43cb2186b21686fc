//! The reference server: every tool, resource and prompt the official
//! conformance suite expects, written with the public API only.

use schemars::JsonSchema;
use serde::Deserialize;
use tessera::server::{Args, BuildError, Server, tool};

/// Arguments of `echo`.
#[derive(Debug, Deserialize, JsonSchema)]
struct EchoArgs {
    /// The text to send back.
    text: String,
}

/// Arguments of `add`.
#[derive(Debug, Deserialize, JsonSchema)]
struct AddArgs {
    /// The first addend.
    a: f64,
    /// The second addend.
    b: f64,
}

async fn echo(Args(a): Args<EchoArgs>) -> String {
    a.text
}

async fn add(Args(x): Args<AddArgs>) -> String {
    format_number(x.a + x.b)
}

/// Prints whole numbers without a fractional part (`5`, not `5.0`).
fn format_number(n: f64) -> String {
    if n.is_finite() && n.fract() == 0.0 && n.abs() < 9.0e15 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

/// Builds the reference server.
pub fn server() -> Result<Server, BuildError> {
    Server::builder()
        .name_version("tessera-reference", env!("CARGO_PKG_VERSION"))
        .instructions("The Tessera reference server: echo, add, and the conformance fixtures.")
        .tool(
            tool("echo")
                .description("Sends the given text back")
                .handler(echo),
        )
        .tool(
            tool("add")
                .description("Adds two numbers and returns the sum as text")
                .handler(add),
        )
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_print_plainly() {
        assert_eq!(format_number(5.0), "5");
        assert_eq!(format_number(2.5), "2.5");
        assert_eq!(format_number(-3.0), "-3");
    }
}
