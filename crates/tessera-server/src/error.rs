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
    /// A resource or resource template is malformed or registered twice.
    #[error("resource {uri:?}: {problem}")]
    InvalidResource {
        /// The URI or URI template.
        uri: String,
        /// What is wrong.
        problem: String,
    },
    /// A prompt is malformed or registered twice.
    #[error("prompt {prompt:?}: {problem}")]
    InvalidPrompt {
        /// The prompt's name.
        prompt: String,
        /// What is wrong.
        problem: String,
    },
    /// A completion provider refers to something that does not exist.
    #[error("completion provider for {target}: {problem}")]
    InvalidCompletion {
        /// What it completes (prompt argument or template variable).
        target: String,
        /// What is wrong.
        problem: String,
    },
    /// An extension is malformed or clashes with another one.
    #[error("extension {id:?}: {problem}")]
    InvalidExtension {
        /// The extension identifier.
        id: String,
        /// What is wrong.
        problem: String,
    },
    /// A method the application routes clashes with a core method, an
    /// extension's or another route of its own.
    #[error("method {method:?}: {problem}")]
    InvalidRoute {
        /// The method.
        method: String,
        /// What is wrong.
        problem: String,
    },
    /// A schema could not be compiled.
    #[error("tool {tool:?} has an invalid schema: {problem}")]
    InvalidSchema {
        /// The tool.
        tool: String,
        /// What is wrong.
        problem: String,
    },
}
