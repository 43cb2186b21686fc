//! The runnable examples of Tessera live beside this file, one program each;
//! this library is empty. Run one from the repository root with
//! `cargo run -p tessera-examples --example NAME`:
//!
//! | example | what it shows |
//! |---|---|
//! | `echo_stdio` | the twenty-line server of the README, on stdio |
//! | `http_axum` | an MCP endpoint mounted inside an axum router beside other routes |
//! | `oauth_server` | the same endpoint behind OAuth 2.1 bearer tokens |
//! | `client_call` | a client that connects to any server and calls one tool (`--version V` pins the protocol version) |
//! | `ask_user` | a handler that asks the user (elicitation), in both eras |
