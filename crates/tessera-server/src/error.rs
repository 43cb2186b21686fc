//! Errors found while building a server.

/// A mistake in the server's definition, found at build time.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// Tool names are 1–128 characters of `A-Z a-z 0-9 _ - .`.
    #[error("invalid tool name {0:?}: use 1 to 128 characters of A-Z, a-z, 0-9, '_', '-' and '.'")]
    InvalidToolName(String),
    /// Two tools share a name.
    #[error("two tools are named {0:?}; tool names must be unique")]
    DuplicateTool(String),
    /// `request_state_keys` was given an empty key ring.
    #[error("request_state_keys needs at least one key")]
    NoStateKeys,
    /// A schema could not be compiled.
    #[error("tool {tool:?} has an invalid schema: {problem}")]
    InvalidSchema {
        /// The tool.
        tool: String,
        /// What is wrong.
        problem: String,
    },
}
