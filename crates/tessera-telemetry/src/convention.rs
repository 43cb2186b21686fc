//! The names the MCP semantic conventions give (OpenTelemetry GenAI
//! semantic conventions, `docs/gen-ai/mcp.md`, status Development): span
//! attributes, metric names, the advised histogram buckets, and how a span
//! is named.

/// `mcp.method.name` (Required): the request or notification method.
pub const MCP_METHOD_NAME: &str = "mcp.method.name";
/// `mcp.protocol.version` (Recommended): the MCP version in use.
pub const MCP_PROTOCOL_VERSION: &str = "mcp.protocol.version";
/// `mcp.session.id` (Recommended, when the request is part of a session).
pub const MCP_SESSION_ID: &str = "mcp.session.id";
/// `mcp.resource.uri` (Conditionally Required on spans for requests with a
/// resource URI; Opt-In on metrics).
pub const MCP_RESOURCE_URI: &str = "mcp.resource.uri";
/// `error.type` (Conditionally Required, if and only if the operation
/// fails): the JSON-RPC code as a string, or `tool_error`.
pub const ERROR_TYPE: &str = "error.type";
/// `gen_ai.tool.name` (Conditionally Required for tool operations).
pub const GEN_AI_TOOL_NAME: &str = "gen_ai.tool.name";
/// `gen_ai.prompt.name` (Conditionally Required for prompt operations).
pub const GEN_AI_PROMPT_NAME: &str = "gen_ai.prompt.name";
/// `gen_ai.operation.name` (Recommended): `execute_tool` for tool calls,
/// unset otherwise.
pub const GEN_AI_OPERATION_NAME: &str = "gen_ai.operation.name";
/// `gen_ai.tool.call.arguments` (Opt-In, sensitive).
pub const GEN_AI_TOOL_CALL_ARGUMENTS: &str = "gen_ai.tool.call.arguments";
/// `gen_ai.tool.call.result` (Opt-In, sensitive).
pub const GEN_AI_TOOL_CALL_RESULT: &str = "gen_ai.tool.call.result";
/// `jsonrpc.request.id` (Conditionally Required for requests).
pub const JSONRPC_REQUEST_ID: &str = "jsonrpc.request.id";
/// `rpc.response.status_code` (Conditionally Required when the response
/// carries an error code).
pub const RPC_RESPONSE_STATUS_CODE: &str = "rpc.response.status_code";
/// `network.transport` (Recommended): `pipe` for stdio, `tcp` for HTTP.
pub const NETWORK_TRANSPORT: &str = "network.transport";
/// `network.protocol.name` (Recommended when applicable): `http`.
pub const NETWORK_PROTOCOL_NAME: &str = "network.protocol.name";
/// `network.protocol.version` (Recommended when applicable).
pub const NETWORK_PROTOCOL_VERSION: &str = "network.protocol.version";
/// `server.address` (Recommended on the client side).
pub const SERVER_ADDRESS: &str = "server.address";
/// `server.port` (Recommended when `server.address` is set).
pub const SERVER_PORT: &str = "server.port";
/// `client.address` (Recommended on the server side).
pub const CLIENT_ADDRESS: &str = "client.address";
/// `client.port` (Recommended when `client.address` is set).
pub const CLIENT_PORT: &str = "client.port";

/// `gen_ai.operation.name` of a tool call.
pub const EXECUTE_TOOL: &str = "execute_tool";
/// `error.type` of a tool result with `isError: true`.
pub const TOOL_ERROR: &str = "tool_error";
/// `error.type` of a request the caller gave up on or that was cancelled
/// before its answer (no JSON-RPC code exists for it).
pub const CANCELLED: &str = "cancelled";
/// `error.type` of a request whose connection closed before its answer.
pub const CLOSED: &str = "closed";
/// `error.type` of a request that failed locally without a code (it could
/// not be sent, or the answer could not be read).
pub const OTHER: &str = "_OTHER";

/// The operation duration on the sender (histogram, seconds).
pub const CLIENT_OPERATION_DURATION: &str = "mcp.client.operation.duration";
/// The operation duration on the receiver (histogram, seconds).
pub const SERVER_OPERATION_DURATION: &str = "mcp.server.operation.duration";
/// A session's duration on the client (histogram, seconds).
pub const CLIENT_SESSION_DURATION: &str = "mcp.client.session.duration";
/// A session's duration on the server (histogram, seconds).
pub const SERVER_SESSION_DURATION: &str = "mcp.server.session.duration";

/// The explicit bucket boundaries the convention advises for all four
/// duration histograms, in seconds.
pub const DURATION_BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// The longest text a peer can put into one attribute, span name or
/// status description (a tool name, a URI, an error message), in bytes:
/// longer text is cut, so a peer cannot make a span hold megabytes.
pub const MAX_TEXT_BYTES: usize = 1024;

/// `text` cut to at most `max` bytes, at a character boundary.
pub(crate) fn cut(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// `text` cut to [`MAX_TEXT_BYTES`], owned.
pub(crate) fn short(text: &str) -> String {
    cut(text, MAX_TEXT_BYTES).to_owned()
}

/// What a request is about, read from its params: the span name's target
/// and the attributes that name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target<'a> {
    /// `tools/call`: the tool's name.
    Tool(&'a str),
    /// `prompts/get`: the prompt's name.
    Prompt(&'a str),
    /// `resources/read`, `resources/subscribe`, `resources/unsubscribe`:
    /// the resource's URI.
    Resource(&'a str),
}

impl<'a> Target<'a> {
    /// The target of `method` given the string param `name` or `uri` it
    /// carries (`lookup` reads a top-level string param).
    pub fn of(method: &str, lookup: impl Fn(&str) -> Option<&'a str>) -> Option<Target<'a>> {
        match method {
            "tools/call" => lookup("name").map(Target::Tool),
            "prompts/get" => lookup("name").map(Target::Prompt),
            "resources/read" | "resources/subscribe" | "resources/unsubscribe" => {
                lookup("uri").map(Target::Resource)
            }
            _ => None,
        }
    }
}

/// The span name `{mcp.method.name} {target}`: the target is the tool or
/// prompt name, and a resource URI only when `uri_in_name` (high
/// cardinality: off by default); otherwise the method alone.
pub fn span_name(method: &str, target: Option<&Target<'_>>, uri_in_name: bool) -> String {
    match target {
        Some(Target::Tool(n) | Target::Prompt(n)) => {
            format!("{} {}", cut(method, MAX_TEXT_BYTES), cut(n, MAX_TEXT_BYTES))
        }
        Some(Target::Resource(u)) if uri_in_name => {
            format!("{} {}", cut(method, MAX_TEXT_BYTES), cut(u, MAX_TEXT_BYTES))
        }
        _ => short(method),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_convention() {
        let tool = Target::Tool("add");
        assert_eq!(
            span_name("tools/call", Some(&tool), false),
            "tools/call add"
        );
        let uri = Target::Resource("file:///a");
        assert_eq!(
            span_name("resources/read", Some(&uri), false),
            "resources/read"
        );
        assert_eq!(
            span_name("resources/read", Some(&uri), true),
            "resources/read file:///a"
        );
        assert_eq!(span_name("ping", None, true), "ping");
        let long = "é".repeat(MAX_TEXT_BYTES);
        let name = span_name("tools/call", Some(&Target::Tool(&long)), false);
        assert!(name.len() <= "tools/call ".len() + MAX_TEXT_BYTES);
        assert!(name.ends_with('é'));
    }

    #[test]
    fn targets_come_from_the_right_param() {
        let p = |k: &str| match k {
            "name" => Some("n"),
            "uri" => Some("u"),
            _ => None,
        };
        assert_eq!(Target::of("tools/call", p), Some(Target::Tool("n")));
        assert_eq!(Target::of("prompts/get", p), Some(Target::Prompt("n")));
        assert_eq!(Target::of("resources/read", p), Some(Target::Resource("u")));
        assert_eq!(Target::of("tools/list", p), None);
        assert_eq!(Target::of("tools/call", |_| None), None);
    }
}
