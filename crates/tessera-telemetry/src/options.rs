//! What a [`Telemetry`](crate::Telemetry) records beyond the convention's
//! defaults.

/// Opt-in recording. The defaults follow the convention: no resource URI
/// in span names or metrics (high cardinality), no tool arguments or
/// results (sensitive).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Options {
    /// Name `resources/*` spans `{method} {uri}` (default off).
    pub uri_in_span_name: bool,
    /// Put `mcp.resource.uri` on the duration metrics too (default off).
    pub resource_uri_in_metrics: bool,
    /// Record `gen_ai.tool.call.arguments` and `gen_ai.tool.call.result`
    /// (default off: they may hold sensitive data).
    pub record_tool_payloads: bool,
    /// The longest recorded payload, in bytes (default 4096): longer JSON
    /// text is cut.
    pub max_payload_bytes: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            uri_in_span_name: false,
            resource_uri_in_metrics: false,
            record_tool_payloads: false,
            max_payload_bytes: 4096,
        }
    }
}
