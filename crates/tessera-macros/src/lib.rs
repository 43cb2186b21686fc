//! Attribute macros for Tessera servers: [`macro@tool`], [`macro@prompt`] and
//! [`macro@resource`] on async functions, [`macro@tools`] on impl blocks.
//!
//! They are sugar and nothing else: each expands into calls of the public
//! builder API of `tessera-server` (`tool("echo").description(..).handler(echo)`
//! and the like), so anything a macro does can be written by hand — the
//! hand-written form is shown with each macro. The function under the
//! attribute is kept as written and can still be called directly.
//!
//! ```
//! use std::sync::Arc;
//!
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//! use tessera_macros::{tool, tools};
//! use tessera_server::{Args, Server};
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct Echo {
//!     /// The text to send back.
//!     text: String,
//! }
//!
//! /// Sends the text back.
//! #[tool(annotations(read_only))]
//! async fn echo(Args(e): Args<Echo>) -> String {
//!     e.text
//! }
//!
//! struct Notes {
//!     notes: std::sync::Mutex<Vec<String>>,
//! }
//!
//! #[tools]
//! impl Notes {
//!     /// Adds a note.
//!     #[tool]
//!     async fn add_note(&self, Args(e): Args<Echo>) -> String {
//!         let mut notes = self.notes.lock().unwrap();
//!         notes.push(e.text);
//!         format!("{} notes", notes.len())
//!     }
//! }
//!
//! let notes = Arc::new(Notes { notes: Default::default() });
//! let server = notes
//!     .register(Server::builder())
//!     .tool(echo_tool())
//!     .build()
//!     .unwrap();
//! # let _ = server;
//! ```
//!
//! # The server state
//!
//! A route is generic over the server's state `S` (`ToolRoute<S>`, as in
//! `Server::with_state(S)`) unless the handler decides it: a `State<X>`
//! parameter makes the route a `ToolRoute<X>`. An extractor of your own that
//! implements `FromRequest<X, B>` only for one state `X` cannot be seen from the
//! signature: say `state = X` in the attribute.
//!
//! # Where the server API is found
//!
//! The expansion names the server API by path. The macros read the calling
//! crate's `Cargo.toml`: a dependency (or dev-dependency) on `tessera-server`
//! gives `::tessera_server`, else one on the `tessera` facade gives
//! `::tessera::server` (renamed dependencies are followed). When neither
//! fits — the API re-exported under another path, say — give the path with
//! `crate = "..."`, as in `#[tool(crate = "::my_sdk::mcp")]`.
//!
//! # Errors
//!
//! Misuse of an attribute is a compile error at the offending token: a
//! function that is not `async`, `self` in a free function, `&mut self` in a
//! method, an unknown argument (the message lists the known ones), a value of
//! the wrong type, an invalid tool or prompt name, a resource with neither or
//! both of `uri` and `template`.
//!
//! Mistakes in types are found by rustc. The expansion names the handler
//! trait's marker type (`.handler::<_, (R, T1, …), S>(f)`) instead of letting
//! rustc infer it, so that rustc reports the cause at the function's name —
//! "the trait bound `Point: JsonSchema` is not satisfied … required for
//! `Args<Point>` to implement `FromRequest<S, ToolCall>`", "future cannot be sent
//! between threads safely … has type `Rc<i32>` which is not `Send`", "the
//! trait bound `Report: IntoToolResult` is not satisfied" — rather than "the
//! trait `ToolHandler<_, _>` is not implemented for fn item", which names
//! neither the parameter nor the reason. `tests/ui` holds one case of each.

#![forbid(unsafe_code)]

mod attr;
mod crate_path;
mod doc;
mod free_fn;
mod impl_block;
mod route;
mod signature;

use proc_macro::TokenStream;

use attr::Kind;

/// Makes an async function a tool: keeps the function and adds
/// `<name>_tool()`, which returns its `ToolRoute`.
///
/// ```text
/// #[tool]
/// #[tool(
///     name = "math.add",          // default: the function's name
///     title = "Add",              // display name
///     description = "Adds",       // default: the doc comment
///     annotations(read_only, destructive = false, idempotent, open_world),
///     task_support = "optional", // "forbidden" (the default), "optional" or "required"
///     state = MyState,            // the server state, when the signature does not say
///     crate = "::tessera::server" // where the server API is (see the crate docs)
/// )]
/// ```
///
/// The function must be `async`, take at most six extractor parameters
/// (`Args<T>`, `RequestContext`, `State<S>`, …) and return a type that
/// implements `IntoToolResult`. Its input schema comes from its `Args<T>`,
/// its output schema from a `Structured<T>` return type. A hint written
/// without a value is `true`.
///
/// ```
/// use schemars::JsonSchema;
/// use serde::Deserialize;
/// use tessera_macros::tool;
/// use tessera_server::{Args, Server};
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Sum {
///     a: i64,
///     b: i64,
/// }
///
/// /// Adds two integers.
/// #[tool(name = "math.add", annotations(read_only, open_world = false))]
/// async fn add(Args(s): Args<Sum>) -> String {
///     (s.a + s.b).to_string()
/// }
///
/// let route = add_tool();
/// assert_eq!(route.definition().name, "math.add");
/// assert_eq!(route.definition().description.as_deref(), Some("Adds two integers."));
/// let server = Server::builder().tool(route).build().unwrap();
/// # let _ = server;
/// ```
///
/// The companion is, by hand:
///
/// ```
/// # use schemars::JsonSchema;
/// # use serde::Deserialize;
/// # use tessera_server::Args;
/// # #[derive(Deserialize, JsonSchema)]
/// # struct Sum { a: i64, b: i64 }
/// # async fn add(Args(s): Args<Sum>) -> String { (s.a + s.b).to_string() }
/// /// The `math.add` tool, handled by [`add`], as a `ToolRoute` to register with `ServerBuilder::tool`.
/// fn add_tool<S: Send + Sync + 'static>() -> tessera_server::ToolRoute<S> {
///     tessera_server::tool("math.add")
///         .description("Adds two integers.")
///         .edit(|tool| {
///             let hints = tool.annotations.get_or_insert_with(Default::default);
///             hints.read_only_hint = Some(true);
///             hints.open_world_hint = Some(false);
///         })
///         .handler::<_, (String, Args<Sum>), S>(add)
/// }
/// ```
///
/// (The marker type `(String, Args<Sum>)` — return type, then parameter
/// types — is what rustc would infer; naming it makes type errors point at
/// their cause.) For methods, see [`macro@tools`].
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    free_fn::expand(Kind::Tool, args.into(), item.into()).into()
}

/// Makes an async function a prompt: keeps the function and adds
/// `<name>_prompt()`, which returns its `PromptRoute`.
///
/// ```text
/// #[prompt]
/// #[prompt(
///     name = "code_review",       // default: the function's name
///     title = "Code review",      // display name
///     description = "...",        // default: the doc comment
///     state = MyState,            // the server state, when the signature does not say
///     crate = "::tessera::server" // where the server API is
/// )]
/// ```
///
/// The parameters are prompt extractors (`PromptArgs<T>`, whose fields become
/// the prompt's arguments, `PromptArgsMap`, `RequestContext`, `State<S>`, …);
/// the return type implements `IntoPromptResult`.
///
/// ```
/// use schemars::JsonSchema;
/// use serde::Deserialize;
/// use tessera_macros::prompt;
/// use tessera_server::{PromptArgs, Server};
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Review {
///     /// The code to review.
///     code: String,
/// }
///
/// /// Asks for a review of some code.
/// #[prompt(title = "Code review")]
/// async fn code_review(PromptArgs(r): PromptArgs<Review>) -> String {
///     format!("Please review:\n{}", r.code)
/// }
///
/// let server = Server::builder().prompt(code_review_prompt()).build().unwrap();
/// # let _ = server;
/// ```
///
/// By hand, `code_review_prompt` is
/// `tessera_server::prompt("code_review").title("Code review").description("Asks for a review of some code.").handler::<_, (String, PromptArgs<Review>), S>(code_review)`.
#[proc_macro_attribute]
pub fn prompt(args: TokenStream, item: TokenStream) -> TokenStream {
    free_fn::expand(Kind::Prompt, args.into(), item.into()).into()
}

/// Makes an async function a resource or a resource template: keeps the
/// function and adds `<name>_resource()`, which returns its `ResourceRoute`
/// (with `uri`) or `ResourceTemplateRoute` (with `template`).
///
/// ```text
/// #[resource(uri = "docs://readme")]            // one resource
/// #[resource(template = "users://{id}/profile")] // a family (RFC 6570)
/// #[resource(
///     uri = "...", or template = "...",
///     name = "readme",             // default: the function's name
///     title = "Readme",            // display name
///     description = "...",         // default: the doc comment
///     mime_type = "text/markdown", // also the default type of the contents
///     size = 1024,                 // bytes; `uri` only
///     state = MyState,             // the server state, when the signature does not say
///     crate = "::tessera::server"  // where the server API is
/// )]
/// ```
///
/// The parameters are resource extractors (`Uri`, `Vars<T>` for a template's
/// variables, `UriVars`, `RequestContext`, `State<S>`, …); the return type
/// implements `IntoResourceContents`. Register the route with
/// `ServerBuilder::resource` or, for a template, `resource_template`.
///
/// ```
/// use serde::Deserialize;
/// use tessera_macros::resource;
/// use tessera_server::{Server, Vars};
///
/// /// The project's readme.
/// #[resource(uri = "docs://readme", mime_type = "text/markdown")]
/// async fn readme() -> &'static str {
///     "# Tessera"
/// }
///
/// #[derive(Deserialize)]
/// struct User {
///     id: u64,
/// }
///
/// /// A user's profile.
/// #[resource(template = "users://{id}/profile")]
/// async fn profile(Vars(u): Vars<User>) -> String {
///     format!("user {}", u.id)
/// }
///
/// let server = Server::builder()
///     .resource(readme_resource())
///     .resource_template(profile_resource())
///     .build()
///     .unwrap();
/// # let _ = server;
/// ```
///
/// By hand, `readme_resource` is
/// `tessera_server::resource("docs://readme", "readme").description("The project's readme.").mime_type("text/markdown").handler::<_, (&'static str,), S>(readme)`,
/// and `profile_resource` starts with
/// `tessera_server::resource_template("users://{id}/profile", "profile")`.
#[proc_macro_attribute]
pub fn resource(args: TokenStream, item: TokenStream) -> TokenStream {
    free_fn::expand(Kind::Resource, args.into(), item.into()).into()
}

/// Makes the methods of an impl block marked `#[tool]`, `#[prompt]` or
/// `#[resource]` into routes whose handlers hold an `Arc` of the value.
///
/// ```text
/// #[tools]
/// #[tools(state = MyState, crate = "::tessera::server")]
/// impl MyServer { ... }
/// ```
///
/// Inside, `#[tool(...)]`, `#[prompt(...)]` and `#[resource(...)]` take the
/// same arguments as on free functions, less `state` and `crate` (given once,
/// on `#[tools]`). A marked method is `async` and takes `&self`,
/// `self: Arc<Self>` or no receiver at all; not `&mut self` (handlers run
/// concurrently: use a `Mutex` or atomics inside). Other methods are left
/// alone. The impl block may be generic (`impl<T: Store> MyServer<T>`).
///
/// Next to the block, a second impl block (with the same generics) gets, for
/// each kind of route present:
///
/// - `pub fn tool_routes(self: Arc<Self>) -> Vec<ToolRoute<S>>`
/// - `pub fn prompt_routes(self: Arc<Self>) -> Vec<PromptRoute<S>>`
/// - `pub fn resource_routes(self: Arc<Self>) -> Vec<ResourceRoute<S>>`
/// - `pub fn resource_template_routes(self: Arc<Self>) -> Vec<ResourceTemplateRoute<S>>`
///
/// and `pub fn register(self: Arc<Self>, builder: ServerBuilder<S>) ->
/// ServerBuilder<S>`, which passes every route to `ServerBuilder::tool`,
/// `prompt`, `resource` or `resource_template`. Each requires
/// `Self: Send + Sync + 'static`. `S` is generic unless a method takes
/// `State<X>` or `#[tools(state = X)]` is given.
///
/// ```
/// use std::sync::Arc;
///
/// use schemars::JsonSchema;
/// use serde::Deserialize;
/// use tessera_macros::tools;
/// use tessera_server::{Args, Server};
///
/// trait Store: Send + Sync + 'static {
///     fn get(&self, key: &str) -> Option<String>;
/// }
///
/// struct KeyValue<T> {
///     store: T,
/// }
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Key {
///     key: String,
/// }
///
/// #[tools]
/// impl<T: Store> KeyValue<T> {
///     /// Reads a value.
///     #[tool(annotations(read_only))]
///     async fn get(&self, Args(k): Args<Key>) -> Result<String, String> {
///         self.store.get(&k.key).ok_or_else(|| format!("no key {}", k.key))
///     }
///
///     /// Lists the keys.
///     #[resource(uri = "kv://keys")]
///     async fn keys(&self) -> String {
///         String::new()
///     }
/// }
///
/// struct Empty;
/// impl Store for Empty {
///     fn get(&self, _: &str) -> Option<String> {
///         None
///     }
/// }
///
/// let kv = Arc::new(KeyValue { store: Empty });
/// let server = kv.register(Server::builder()).build().unwrap();
/// # let _ = server;
/// ```
///
/// By hand, `tool_routes` builds each route around a clone of the `Arc`:
///
/// ```text
/// let this = Arc::clone(&self);
/// tessera_server::tool("get")
///     .description("Reads a value.")
///     .edit(|tool| { /* read_only_hint = Some(true) */ })
///     .handler::<_, (Result<String, String>, Args<Key>), S>(move |arg0: Args<Key>| {
///         let this = Arc::clone(&this);
///         async move { this.get(arg0).await }
///     })
/// ```
#[proc_macro_attribute]
pub fn tools(args: TokenStream, item: TokenStream) -> TokenStream {
    impl_block::expand(args.into(), item.into()).into()
}
