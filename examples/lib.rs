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
//! | `apps_server` | an MCP App: a tool rendered by an HTML view that calls an app-only tool |
//! | `logging_layer` | a middleware layer that logs each request |
//! | `tool_allow_list` | a middleware layer that refuses tools not on a list |
//! | `tasks` | a long-running tool called as a task, in both task designs: waited for, polled, cancelled |
//! | `skills` | a skills directory and a generated skill, loaded by a client with verification |
//! | `redis_scale_out` | two instances sharing one Redis: a session moves from one to the other (needs a Redis URL) |
